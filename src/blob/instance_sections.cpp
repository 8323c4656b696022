#include "hwbvh/blob/instance_sections.h"

#include <cmath>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "message.h"

namespace hwbvh::blob {
namespace {

constexpr uint64_t kLevelsHeaderBytes = 16;  // u64 top bytes, u32 BLAS count, u32 instance count
constexpr uint64_t kBlasBytes = 32;
constexpr uint64_t kInstanceLevelBytes = 8;
constexpr std::size_t kWorldBoundsBytes = 24;

}  // namespace

std::vector<std::byte> encode_instance_sideband(std::span<const InstanceSideband> records) {
  std::vector<std::byte> out;
  out.reserve(records.size() * kSidebandRecordBytes);
  for (const InstanceSideband& r : records) {
    append_le32(out, r.instance_index);
    append_le32(out, (r.instance_id & 0xFFFFFFu) | (r.flags & 0xFFu) << 24);
    append_le32(out, r.blas_metadata_size);
    append_le32(out, 0);
    for (const auto& row : r.object_to_world)
      for (float v : row) append_le32(out, float_bits(v));
  }
  return out;
}

std::vector<InstanceSideband> decode_instance_sideband(std::span<const std::byte> bytes, const std::string& file) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, "instance-sideband section: " + problem); };
  if (bytes.size() % kSidebandRecordBytes != 0 || bytes.empty())
    fail(detail::cat(bytes.size(), " bytes, not a whole number of 64-byte records"));
  std::vector<InstanceSideband> records(bytes.size() / kSidebandRecordBytes);
  std::vector<bool> seen(records.size(), false);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::size_t at = i * kSidebandRecordBytes;
    InstanceSideband& r = records[i];
    r.instance_index = load_le32(bytes, at);
    const uint32_t id_and_flags = load_le32(bytes, at + 4);
    r.instance_id = id_and_flags & 0xFFFFFFu;
    r.flags = id_and_flags >> 24;
    r.blas_metadata_size = load_le32(bytes, at + 8);
    for (int row = 0; row < 3; ++row) {
      for (int c = 0; c < 4; ++c) {
        const float v = bits_float(load_le32(bytes, at + 16 + 4 * (4 * row + c)));
        if (!std::isfinite(v)) fail(detail::cat("record ", i, " has a non-finite object-to-world matrix"));
        r.object_to_world[row][c] = v;
      }
    }
    if (r.instance_index >= records.size() || seen[r.instance_index])
      fail(detail::cat("record ", i, " has instance index ", r.instance_index,
                       ", not one of 0..n-1 used once (n = ", records.size(), ")"));
    seen[r.instance_index] = true;
  }
  return records;
}

std::vector<std::byte> encode_levels(const Levels& levels) {
  std::vector<std::byte> out;
  append_le64(out, levels.top_bytes);
  append_le32(out, static_cast<uint32_t>(levels.blases.size()));
  append_le32(out, static_cast<uint32_t>(levels.instances.size()));
  for (const BlasRange& b : levels.blases) {
    append_le64(out, b.address);
    append_le64(out, b.bytes);
    append_le32(out, b.first_geometry);
    append_le32(out, b.geometry_count);
    append_le32(out, b.first_triangle);
    append_le32(out, b.triangle_count);
  }
  for (const InstanceLevel& i : levels.instances) {
    append_le32(out, i.blas);
    append_le32(out, i.mask);
  }
  return out;
}

Levels decode_levels(std::span<const std::byte> bytes, const std::string& file, uint64_t node_bytes,
                     uint32_t geometry_count, uint32_t triangle_count) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, "levels section: " + problem); };
  if (bytes.size() < kLevelsHeaderBytes) fail(detail::cat(bytes.size(), " bytes, too short for its counts"));
  Levels levels;
  levels.top_bytes = load_le64(bytes, 0);
  const uint32_t blas_count = load_le32(bytes, 8);
  const uint32_t instance_count = load_le32(bytes, 12);
  const uint64_t expected = kLevelsHeaderBytes + kBlasBytes * blas_count + kInstanceLevelBytes * instance_count;
  if (bytes.size() != expected)
    fail(detail::cat(bytes.size(), " bytes, but ", blas_count, " BLASes and ", instance_count, " instances need ",
                     expected));
  if (blas_count == 0 || instance_count == 0) fail("a two-level BVH needs at least one BLAS and one instance");
  if (levels.top_bytes == 0 || levels.top_bytes % kLevelUnitBytes != 0 || levels.top_bytes > node_bytes)
    fail(detail::cat("the top level's ", levels.top_bytes, " bytes are not whole 128-byte nodes inside the ",
                     node_bytes, "-byte node section"));
  uint64_t end = levels.top_bytes;
  std::size_t at = kLevelsHeaderBytes;
  levels.blases.resize(blas_count);
  for (uint32_t i = 0; i < blas_count; ++i, at += kBlasBytes) {
    BlasRange& b = levels.blases[i];
    b.address = load_le64(bytes, at);
    b.bytes = load_le64(bytes, at + 8);
    b.first_geometry = load_le32(bytes, at + 16);
    b.geometry_count = load_le32(bytes, at + 20);
    b.first_triangle = load_le32(bytes, at + 24);
    b.triangle_count = load_le32(bytes, at + 28);
    if (b.address % kLevelUnitBytes != 0 || b.bytes % kLevelUnitBytes != 0 || b.bytes < 2 * kLevelUnitBytes || b.address < end ||
        b.address > node_bytes || node_bytes - b.address < b.bytes) {
      fail(detail::cat("BLAS ", i, " (bytes ", b.address, " + ", b.bytes,
                       ") is not whole 128-byte nodes after the previous level inside the node section"));
    }
    end = b.address + b.bytes;
    if (uint64_t{b.first_geometry} + b.geometry_count > geometry_count ||
        uint64_t{b.first_triangle} + b.triangle_count > triangle_count) {
      fail(detail::cat("BLAS ", i, " names geometries or triangles past the geometry section's"));
    }
  }
  levels.instances.resize(instance_count);
  for (uint32_t i = 0; i < instance_count; ++i, at += kInstanceLevelBytes) {
    InstanceLevel& inst = levels.instances[i];
    inst.blas = load_le32(bytes, at);
    inst.mask = load_le32(bytes, at + 4);
    if (inst.blas >= blas_count || inst.mask > 0xFFu)
      fail(detail::cat("instance node ", i, " names BLAS ", inst.blas, " (of ", blas_count, ") or mask ", inst.mask));
  }
  return levels;
}

std::vector<std::byte> encode_world_bounds(const Aabb& bounds) {
  std::vector<std::byte> out;
  for (const Vec3& corner : {bounds.min, bounds.max})
    for (int k = 0; k < 3; ++k) append_le32(out, float_bits(corner[k]));
  return out;
}

Aabb decode_world_bounds(std::span<const std::byte> bytes, const std::string& file) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, "world-bounds section: " + problem); };
  if (bytes.size() != kWorldBoundsBytes) fail(detail::cat(bytes.size(), " bytes, not ", kWorldBoundsBytes));
  Aabb box;
  for (int k = 0; k < 3; ++k) {
    box.min[k] = bits_float(load_le32(bytes, 4 * static_cast<std::size_t>(k)));
    box.max[k] = bits_float(load_le32(bytes, 12 + 4 * static_cast<std::size_t>(k)));
    if (!std::isfinite(box.min[k]) || !std::isfinite(box.max[k]) || !(box.min[k] <= box.max[k]))
      fail("not a finite box with min <= max on every axis");
  }
  return box;
}

}  // namespace hwbvh::blob
