#pragma once
// Ray history in .rra files: the rays of a `hwbvh stats` run and what the emulator counted for each, as the
// HistoryMetadata + HistoryTokensRaw chunk pair Mesa's RADV writes per ray-tracing dispatch
// (src/amd/vulkan/radv_rra.c radv_rra_dump_trace, radv_rra.h radv_rra_ray_history_metadata) and RRA loads
// (GPUOpen-Tools/radeon_raytracing_analyzer, source/backend/rra_async_ray_history_loader.cpp,
// ray_history/ray_history.h, ray_history/raytracing_counter.h). Token layout and the counter mapping: docs/rra.md §6.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/rtip31/traversal.h"

namespace hwbvh::rra {

inline constexpr char kHistoryMetadataChunk[] = "HistoryMetadata";
inline constexpr char kHistoryTokensChunk[] = "HistoryTokensRaw";
inline constexpr uint32_t kHistoryChunkVersion = 2;  ///< RADV_RRA_RAY_HISTORY_CHUNK_VERSION
inline constexpr uint32_t kHistoryMetadataBytes = 136;

// Vulkan ray flags (GL_EXT_ray_tracing) the begin token carries for occlusion rays, and the triangle hit kinds.
inline constexpr uint32_t kRayFlagTerminateOnFirstHit = 0x4;
inline constexpr uint32_t kRayFlagSkipClosestHitShader = 0x8;
inline constexpr uint32_t kHitKindFrontFacing = 0xFE;
inline constexpr uint32_t kHitKindBackFacing = 0xFF;

/// One traced ray as its begin and end tokens hold it.
struct HistoryRay {
  uint32_t launch_index = 0;  ///< the token's ray id: x + y * width (RADV's launch index)
  uint64_t accel_struct_address = 0;  ///< the structure the ray was traced against (a RawAccelStruct's address)
  uint32_t ray_flags = 0;
  uint32_t cull_mask = 0xFF;
  Ray ray;
  bool hit = false;  ///< end token: primitive and geometry index not both 0xFFFFFFFF
  float t = 0.0f;    ///< 0 for a miss
  uint32_t primitive_index = 0xFFFFFFFFu, geometry_index = 0xFFFFFFFFu;
  uint32_t instance_index = 0;  ///< 24 bits
  uint32_t hit_kind = 0;        ///< kHitKindFrontFacing / kHitKindBackFacing; 0 for a miss
  uint32_t iterations = 0;              ///< traversal loop iterations (RayCounters::steps)
  uint32_t instance_intersections = 0;  ///< instance nodes intersected (RayCounters::instance_node_steps)
  friend bool operator==(const HistoryRay& a, const HistoryRay& b) {
    const auto fields = [](const HistoryRay& h) {
      return std::tie(h.launch_index, h.accel_struct_address, h.ray_flags, h.cull_mask, h.ray.origin, h.ray.direction,
                      h.ray.tmin, h.ray.tmax, h.hit, h.t, h.primitive_index, h.geometry_index, h.instance_index,
                      h.hit_kind, h.iterations, h.instance_intersections);
    };
    return fields(a) == fields(b);
  }
};

/// One dispatch: its size (depth 1) and its rays in token order.
struct HistoryDispatch {
  uint32_t width = 0, height = 0;
  std::vector<HistoryRay> rays;
  friend bool operator==(const HistoryDispatch&, const HistoryDispatch&) = default;
};

/// The dispatch of one ray type of a stats run: with `pixel` (camera-derived rays) the image's width x height and
/// each ray at its pixel, several rays sharing one for AO; without, rays.size() x 1. `any_hit` marks occlusion rays.
/// Throws hwbvh::Error(BadInput) if a count or id does not fit the token fields (30-bit ray ids, 24-bit instances).
HistoryDispatch history_dispatch(uint32_t width, uint32_t height, std::span<const uint32_t> pixel,
                                 std::span<const Ray> rays, std::span<const emu::RayResult> results, bool any_hit,
                                 uint32_t cull_mask, uint64_t accel_struct_address);

/// One ray of a dispatch as history_dispatch makes it: `launch_index` its pixel, or its index without an image.
HistoryRay history_ray(uint32_t launch_index, const Ray& ray, const emu::RayResult& result, bool any_hit,
                       uint32_t cull_mask, uint64_t accel_struct_address);

/// The two chunks' data, as RADV writes them (uncompressed; neither has a chunk header).
std::vector<std::byte> history_metadata(const HistoryDispatch& dispatch);
std::vector<std::byte> history_tokens(const HistoryDispatch& dispatch);
/// The metadata of a width x height dispatch of `rays` rays, without the rays at hand.
std::vector<std::byte> history_metadata(uint32_t width, uint32_t height, uint64_t rays);
/// The tokens of `ray` in a dispatch `width` wide (a dispatch without an image: any width above its ids, e.g.
/// kMaxHistoryRays), appended to `out`: history_tokens is these, ray after ray.
void append_history_tokens(std::vector<std::byte>& out, const HistoryRay& ray, uint32_t width);
inline constexpr uint32_t kMaxHistoryRays = uint32_t{1} << 30;  ///< 30-bit ray ids

/// Parses one dispatch's chunk data after every check RRA's loader makes, and that the token stream is well formed:
/// every token inside the chunk, ray ids inside the dispatch, begin tokens at the coordinate of their id, each ray
/// one begin token, other tokens, one end token. Throws hwbvh::Error(BadInput) naming `name` and the problem.
HistoryDispatch read_history(uint32_t metadata_version, std::span<const std::byte> metadata, uint32_t tokens_version,
                             std::span<const std::byte> tokens, const std::string& name);

}  // namespace hwbvh::rra
