// Ray-history chunks (docs/rra.md §6): written in the form of RADV's radv_rra_dump_trace, read with every check of
// RRA's RraAsyncRayHistoryLoader plus the bounds it takes on trust.
#include "hwbvh/rra/ray_history.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include <fmt/format.h>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"

namespace hwbvh::rra {
namespace {

using blob::append_le32;
using blob::append_le64;
using blob::load_le32;
using blob::load_le64;

// Metadata records: {kind u32, padding u32, payload size u64}, then the payload (RRA RayHistoryMetadataInfo).
constexpr uint32_t kRecordBytes = 16;
constexpr uint32_t kCounterInfoKind = 1, kDispatchSizeKind = 2, kTraversalFlagsKind = 3;
constexpr uint32_t kCounterInfoBytes = 64;  ///< RADV's radv_rra_ray_history_counter, RRA's CounterInfo_V0
constexpr uint32_t kDispatchSizeBytes = 16;
constexpr uint32_t kTraversalFlagsBytes = 8;
constexpr uint32_t kCounterModeRayHistoryLight = 1;  ///< TRACERAY_COUNTER_MODE_RAYHISTORY_LIGHT: begin/end only
constexpr uint32_t kCounterLostTokenBytes = 48;      ///< offset of lostTokenBytes in the counter info
constexpr uint32_t kMaxCounterMajor = 2;             ///< RRA counter.h GPURT_COUNTER_MAJOR_VERSION

// Tokens: an id dword (ray id [29:0], bit 31: a control dword follows), then either a control dword (type [15:0],
// payload length in dwords [23:16], data [31:24]) and its payload, or one dword (a node pointer).
constexpr uint32_t kRayIdMask = kMaxHistoryRays - 1;
constexpr uint64_t kMaxRayIds = kMaxHistoryRays;
constexpr uint32_t kControlBit = 0x80000000u;
constexpr uint32_t kTokenBegin = 0, kTokenEnd = 3, kTokenEnd2 = 9, kTokenBegin2 = 10;
constexpr uint32_t kBeginDwords = 16, kBegin2Dwords = 19, kEndDwords = 2, kEnd2Dwords = 6;
constexpr uint32_t kRaysPerWave = 32;  ///< RADV's wave id: launch index / 32
constexpr uint32_t kTokenBytesPerRay = 4 * (4 + kBeginDwords + kEnd2Dwords);  ///< id and control dwords twice

uint32_t control(uint32_t type, uint32_t dwords) { return type | dwords << 16; }

void append_f32(std::vector<std::byte>& out, float value) { append_le32(out, std::bit_cast<uint32_t>(value)); }
float load_f32(std::span<const std::byte> bytes, std::size_t offset) {
  return std::bit_cast<float>(load_le32(bytes, offset));
}

}  // namespace

HistoryDispatch history_dispatch(uint32_t width, uint32_t height, std::span<const uint32_t> pixel,
                                 std::span<const Ray> rays, std::span<const emu::RayResult> results, bool any_hit,
                                 uint32_t cull_mask, uint64_t accel_struct_address) {
  HistoryDispatch d;
  d.width = pixel.empty() ? static_cast<uint32_t>(rays.size()) : width;
  d.height = pixel.empty() ? 1 : height;
  if (rays.size() > kMaxRayIds || uint64_t{d.width} * d.height > kMaxRayIds)
    throw_bad_input("", fmt::format("{} rays in a {}x{} dispatch: ray-history ray ids have 30 bits", rays.size(),
                                    d.width, d.height));
  for (std::size_t i = 0; i < rays.size(); ++i)
    d.rays.push_back(history_ray(pixel.empty() ? static_cast<uint32_t>(i) : pixel[i], rays[i], results[i], any_hit,
                                 cull_mask, accel_struct_address));
  return d;
}

HistoryRay history_ray(uint32_t launch_index, const Ray& ray, const emu::RayResult& r, bool any_hit,
                       uint32_t cull_mask, uint64_t accel_struct_address) {
  HistoryRay h;
  h.launch_index = launch_index;
  h.accel_struct_address = accel_struct_address;
  h.ray_flags = any_hit ? kRayFlagTerminateOnFirstHit | kRayFlagSkipClosestHitShader : 0u;
  h.cull_mask = cull_mask;
  h.ray = ray;
  h.iterations = static_cast<uint32_t>(r.counters.steps);
  h.instance_intersections = static_cast<uint32_t>(r.counters.instance_node_steps);
  if (r.hit) {
    if (r.instance_index > 0xFFFFFFu)
      throw_bad_input("", fmt::format("instance {}: the ray-history end token has 24 bits for it", r.instance_index));
    h.hit = true;
    h.t = r.t;
    h.primitive_index = r.primitive_id;
    h.geometry_index = r.geometry_id;
    h.instance_index = r.instance_index;
    h.hit_kind = r.front_face ? kHitKindFrontFacing : kHitKindBackFacing;
  }
  return h;
}

std::vector<std::byte> history_metadata(const HistoryDispatch& d) {
  return history_metadata(d.width, d.height, d.rays.size());
}

std::vector<std::byte> history_metadata(uint32_t width, uint32_t height, uint64_t rays) {
  std::vector<std::byte> out;
  const auto record = [&](uint32_t kind, uint64_t size) {
    append_le32(out, kind);
    append_le32(out, 0);
    append_le64(out, size);
  };
  record(kCounterInfoKind, kCounterInfoBytes);
  for (uint32_t v : {width, height, 1u}) append_le32(out, v);
  for (int i = 0; i < 3; ++i) append_le32(out, 0);  // hit-group, miss and pipeline shader counts: no shaders
  append_le64(out, 0);                               // pipeline hash
  append_le32(out, kCounterModeRayHistoryLight);
  append_le32(out, 0);  // counter mask
  append_le32(out, 0);  // counter stride
  append_le32(out, static_cast<uint32_t>(rays * kTokenBytesPerRay));  // token data size
  append_le32(out, 0);            // lost token bytes: none, the history is complete
  append_le32(out, 0);            // ray id range: the whole dispatch
  append_le32(out, 0xFFFFFFFFu);
  append_le32(out, 0);  // pipeline type: ray tracing
  record(kDispatchSizeKind, kDispatchSizeBytes);
  for (uint32_t v : {width, height, 1u, 0u}) append_le32(out, v);
  record(kTraversalFlagsKind, kTraversalFlagsBytes);
  append_le64(out, 0);  // box sort mode and node pointer flags: RRA's loader does not read them
  return out;
}

std::vector<std::byte> history_tokens(const HistoryDispatch& d) {
  std::vector<std::byte> out;
  out.reserve(d.rays.size() * kTokenBytesPerRay);
  for (const HistoryRay& h : d.rays) append_history_tokens(out, h, d.width);
  return out;
}

void append_history_tokens(std::vector<std::byte>& out, const HistoryRay& h, uint32_t width) {
  append_le32(out, h.launch_index | kControlBit);
  append_le32(out, control(kTokenBegin, kBeginDwords));
  append_le32(out, h.launch_index / kRaysPerWave);
  append_le32(out, h.launch_index % width);
  append_le32(out, h.launch_index / width);
  append_le32(out, 0);
  append_le64(out, h.accel_struct_address);
  append_le32(out, h.ray_flags);
  append_le32(out, h.cull_mask & 0xFFu);  // SBT offset and stride, miss index: 0 (no shaders)
  for (int k = 0; k < 3; ++k) append_f32(out, h.ray.origin[k]);
  append_f32(out, h.ray.tmin);
  for (int k = 0; k < 3; ++k) append_f32(out, h.ray.direction[k]);
  append_f32(out, h.ray.tmax);

  append_le32(out, h.launch_index | kControlBit);
  append_le32(out, control(kTokenEnd2, kEnd2Dwords));
  append_le32(out, h.primitive_index);
  append_le32(out, h.geometry_index);
  append_le32(out, h.instance_index | h.hit_kind << 24);
  append_le32(out, h.iterations);
  append_le32(out, h.instance_intersections);
  append_f32(out, h.t);
}

HistoryDispatch read_history(uint32_t metadata_version, std::span<const std::byte> metadata, uint32_t tokens_version,
                             std::span<const std::byte> tokens, const std::string& name) {
  const auto fail = [&](const std::string& chunk, const std::string& problem) {
    throw_bad_input(name, fmt::format("{} chunk: {}", chunk, problem));
  };
  for (const auto& [chunk, version] : {std::pair{kHistoryMetadataChunk, metadata_version},
                                       std::pair{kHistoryTokensChunk, tokens_version}})
    if ((version >> 16) > kMaxCounterMajor)
      fail(chunk, fmt::format("version 0x{:x}: major version above {} (RRA refuses it too)", version,
                              kMaxCounterMajor));

  // RRA walks the records and reads the dispatch size from the counter info; RADV writes the same size again.
  HistoryDispatch d;
  bool counter_info = false;
  for (uint64_t at = 0; at < metadata.size();) {
    if (metadata.size() - at < kRecordBytes)
      fail(kHistoryMetadataChunk, fmt::format("truncated record at byte {}", at));
    const uint32_t kind = load_le32(metadata, at);
    const uint64_t size = load_le64(metadata, at + 8);
    at += kRecordBytes;
    if (size > metadata.size() - at)
      fail(kHistoryMetadataChunk, fmt::format("record of kind {} at byte {}: {} bytes, past the chunk's end", kind,
                                              at - kRecordBytes, size));
    const auto payload = metadata.subspan(at, size);
    if (kind == kCounterInfoKind) {
      if (size < kCounterInfoBytes)
        fail(kHistoryMetadataChunk, fmt::format("counter info of {} bytes, needs {}", size, kCounterInfoBytes));
      d.width = load_le32(payload, 0);
      d.height = load_le32(payload, 4);
      if (load_le32(payload, 8) != 1)
        fail(kHistoryMetadataChunk, fmt::format("dispatch depth {}: hwbvh reads 2D dispatches", load_le32(payload, 8)));
      if (uint64_t{d.width} * d.height > kMaxRayIds)
        fail(kHistoryMetadataChunk, fmt::format("a {}x{} dispatch: more rays than 30-bit ids", d.width, d.height));
      if (const uint32_t lost = load_le32(payload, kCounterLostTokenBytes); lost != 0)
        fail(kHistoryMetadataChunk, fmt::format("{} token bytes lost: a partial history (RRA refuses it too)", lost));
      counter_info = true;
    } else if (kind == kDispatchSizeKind && counter_info) {
      if (size < 12 || load_le32(payload, 0) != d.width || load_le32(payload, 4) != d.height ||
          load_le32(payload, 8) != 1)
        fail(kHistoryMetadataChunk, "the dispatch size disagrees with the counter info");
    }
    at += size;  // other kinds (traversal flags, user markers) carry nothing hwbvh reads
  }
  if (!counter_info) fail(kHistoryMetadataChunk, "no counter info record (the dispatch size)");
  const uint64_t ids = uint64_t{d.width} * d.height;

  // Per ray id, the ray whose begin token is open (rays may interleave in the stream, as a GPU writes them).
  std::unordered_map<uint32_t, std::size_t> open;
  for (uint64_t at = 0; at < tokens.size();) {
    const auto where = [&](const std::string& problem) {
      fail(kHistoryTokensChunk, fmt::format("token at byte {}: {}", at, problem));
    };
    if (tokens.size() - at < 8) where("truncated");
    const uint32_t id_dword = load_le32(tokens, at);
    const uint32_t id = id_dword & kRayIdMask;
    if ((id_dword & kControlBit) == 0) {
      // A node-pointer token, or 8 zero bytes of padding, which RRA skips.
      if (id_dword != 0 || load_le32(tokens, at + 4) != 0) {
        if (id >= ids) where(fmt::format("ray id {} outside the {}x{} dispatch", id, d.width, d.height));
        if (!open.contains(id)) where(fmt::format("ray {}: a node token outside a begin and end token", id));
      }
      at += 8;
      continue;
    }
    if (id >= ids) where(fmt::format("ray id {} outside the {}x{} dispatch", id, d.width, d.height));
    const uint32_t ctrl = load_le32(tokens, at + 4);
    const uint32_t type = ctrl & 0xFFFFu, dwords = (ctrl >> 16) & 0xFFu;
    if (tokens.size() - at - 8 < uint64_t{dwords} * 4)
      where(fmt::format("type {}: {} payload dwords, past the chunk's end", type, dwords));
    const auto payload = tokens.subspan(at + 8, uint64_t{dwords} * 4);
    const auto expect_dwords = [&](uint32_t want) {
      if (dwords != want) where(fmt::format("type {}: {} payload dwords, the type has {}", type, dwords, want));
    };
    const auto it = open.find(id);
    if (type == kTokenBegin || type == kTokenBegin2) {
      expect_dwords(type == kTokenBegin ? kBeginDwords : kBegin2Dwords);
      if (it != open.end()) where(fmt::format("ray {}: a begin token before the previous ray's end token", id));
      HistoryRay h;
      h.launch_index = id;
      const uint32_t x = load_le32(payload, 4), y = load_le32(payload, 8), z = load_le32(payload, 12);
      if (z != 0 || x >= d.width || y >= d.height || uint64_t{y} * d.width + x != id)
        where(fmt::format("ray {}: begin token at coordinate ({}, {}, {}), the id's is ({}, {}, 0)", id, x, y, z,
                          id % d.width, id / d.width));
      h.accel_struct_address = load_le64(payload, 16);
      h.ray_flags = load_le32(payload, 24);
      h.cull_mask = load_le32(payload, 28) & 0xFFu;
      for (int k = 0; k < 3; ++k) {
        h.ray.origin[k] = load_f32(payload, 32 + 4 * k);
        h.ray.direction[k] = load_f32(payload, 48 + 4 * k);
      }
      h.ray.tmin = load_f32(payload, 44);
      h.ray.tmax = load_f32(payload, 60);
      open.emplace(id, d.rays.size());
      d.rays.push_back(h);
    } else if (it == open.end()) {
      where(fmt::format("ray {}: a token of type {} before its begin token", id, type));
    } else if (type == kTokenEnd || type == kTokenEnd2) {
      expect_dwords(type == kTokenEnd ? kEndDwords : kEnd2Dwords);
      HistoryRay& h = d.rays[it->second];
      h.primitive_index = load_le32(payload, 0);
      h.geometry_index = load_le32(payload, 4);
      h.hit = !(h.primitive_index == 0xFFFFFFFFu && h.geometry_index == 0xFFFFFFFFu);  // RRA's IsMiss
      if (type == kTokenEnd2) {
        h.instance_index = load_le32(payload, 8) & 0xFFFFFFu;
        h.hit_kind = load_le32(payload, 8) >> 24;
        h.iterations = load_le32(payload, 12);
        h.instance_intersections = load_le32(payload, 16);
        h.t = load_f32(payload, 20);
      }
      open.erase(it);
    }
    at += 8 + uint64_t{dwords} * 4;  // any-hit, intersection and other tokens: counted by RRA, not read here
  }
  if (!open.empty()) {
    uint32_t first = kRayIdMask;
    for (const auto& [id, ray] : open) first = std::min(first, id);
    fail(kHistoryTokensChunk, fmt::format("{} rays without an end token, the first ray {}", open.size(), first));
  }
  return d;
}

}  // namespace hwbvh::rra
