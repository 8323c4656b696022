#pragma once
// Ray generation: primary rays in wave-sized pixel tiles, ambient-occlusion, shadow and reflection rays from primary hits,
// and uniform random rays through the scene. Everything is seeded and reproducible: random numbers come from
// a counter-based hash (PCG hash, Jarzynski and Olano 2020, "Hash Functions for GPU Rendering", JCGT 9(3))
// keyed by (seed, generator, ray index, sample), so the rays never depend on the thread count.
// The ray order and wave grouping are documented in docs/rays.md.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/scene/camera.h"

namespace hwbvh {

inline constexpr uint32_t kTileWidth = 8;   ///< pixels per primary-ray tile, horizontally
inline constexpr uint32_t kTileHeight = 4;  ///< pixels per primary-ray tile, vertically
inline constexpr uint32_t kTileRays = kTileWidth * kTileHeight;  ///< 32: one tile fills one wave32

/// Rays in the order they are traced, grouped into waves of at most kTileRays (32) rays.
struct RayBatch {
  std::vector<Ray> rays;
  /// Per ray, the image pixel it belongs to as y * width + x; empty when the rays have no image.
  std::vector<uint32_t> pixel;
  /// Index of the first ray of each wave, ascending; wave i ends where wave i + 1 begins (the last one at
  /// rays.size()). Every wave holds 1..kTileRays rays; partial waves come from partial tiles or missed pixels.
  std::vector<uint32_t> wave_begin;
  uint32_t width = 0;   ///< image size the pixel indices refer to; 0 when there is no image
  uint32_t height = 0;
  /// Index of rays[0] among all rays of its kind, when the batch is a part of them (primary_tiles, random_rays'
  /// range): what keys the random numbers of the secondary rays derived from it.
  uint32_t first_ray = 0;

  [[nodiscard]] std::size_t wave_count() const { return wave_begin.size(); }
  /// The rays of wave i as an index range [first, second).
  [[nodiscard]] std::pair<std::size_t, std::size_t> wave_range(std::size_t i) const {
    return {wave_begin[i], i + 1 < wave_begin.size() ? wave_begin[i + 1] : rays.size()};
  }
};

/// Wraps rays without an image (random rays, a rays file): consecutive groups of kTileRays form the waves.
[[nodiscard]] RayBatch make_batch(std::vector<Ray> rays);

/// One primary ray per pixel centre of a width x height image, normalised directions, tmin 0, tmax inf.
/// Order: 8 x 4 pixel tiles in row-major tile order, pixels row-major inside a tile; each tile is one wave.
/// Tiles on the right and bottom border skip pixels outside the image (partial waves).
/// Throws hwbvh::Error(BadInput) for a zero size or an invalid camera (validate_camera).
[[nodiscard]] RayBatch primary_rays(const Camera& camera, uint32_t width, uint32_t height,
                                    const Executor& executor = Executor(1));
/// The number of tiles (waves) of primary_rays' image.
[[nodiscard]] uint64_t primary_tile_count(uint32_t width, uint32_t height);
/// Tiles [first_tile, first_tile + tiles) of primary_rays' image: its rays, pixels and waves from there on, with
/// first_ray the index of the first one. Batch after batch they are primary_rays' rays.
[[nodiscard]] RayBatch primary_tiles(const Camera& camera, uint32_t width, uint32_t height, uint64_t first_tile,
                                     uint64_t tiles, const Executor& executor = Executor(1));

/// What the tracer found for one primary ray, as input to secondary rays.
struct SurfaceHit {
  Vec3 position{0.0f};
  Vec3 normal{0.0f};   ///< geometric normal, any length and either side; zero or non-finite = not usable
  bool valid = false;  ///< false for a miss
};

struct AoOptions {
  uint32_t samples = 4;  ///< rays per hit
  float max_distance = std::numeric_limits<float>::infinity();  ///< tmax of every AO ray
  /// The origin moves this far along the normal, relative to the largest coordinate magnitude of the hit
  /// point and of the primary ray's origin (the scale of the hit point's rounding error).
  float offset_epsilon = 1e-4f;
  uint64_t seed = 0;
};

/// Ambient-occlusion rays: `samples` cosine-weighted directions in the hemisphere on the side of the
/// surface the primary ray came from, for every valid hit. hits[i] belongs to primary.rays[i]
/// (hits.size() must equal primary.rays.size()). Each AO ray keeps its primary ray's pixel.
/// Sample s of primary ray i is random in (seed, primary.first_ray + i, s) only. Waves: for each primary wave and each sample,
/// one wave with that sample of the wave's valid hits (a GPU wave looping over its samples).
/// Throws hwbvh::Error(BadInput) for mismatched sizes, zero samples or a non-positive max_distance.
[[nodiscard]] RayBatch ao_rays(const RayBatch& primary, std::span<const SurfaceHit> hits, const AoOptions& options,
                               const Executor& executor = Executor(1));

/// The default point light: above the top of `scene_bounds` (+y) by half the box diagonal, offset a quarter
/// of the extent towards +x and +z so shadows fall diagonally in the auto_frame view.
[[nodiscard]] Vec3 default_light(const Aabb& scene_bounds);

/// Shadow rays from every valid hit (origin offset as in AoOptions::offset_epsilon, on the side the primary
/// ray came from) towards the point `light`, normalised direction, tmax just short of the light
/// (distance * (1 - offset_epsilon)). Hits at the light itself get no ray. Waves follow the primary waves,
/// without the skipped hits. Throws hwbvh::Error(BadInput) for mismatched sizes or a non-finite light.
[[nodiscard]] RayBatch shadow_rays(const RayBatch& primary, std::span<const SurfaceHit> hits, Vec3 light,
                                   float offset_epsilon = 1e-4f, const Executor& executor = Executor(1));

/// Mirror-reflection rays (one bounce): from every usable hit (origin offset as in AoOptions::offset_epsilon, on the
/// side the primary ray came from), direction the primary direction reflected about the unit normal
/// (d - 2 (d . n) n, normalised), tmin 0, tmax inf, traced as closest-hit rays. Waves follow the primary waves,
/// without the skipped hits. Throws hwbvh::Error(BadInput) for mismatched sizes.
[[nodiscard]] RayBatch reflection_rays(const RayBatch& primary, std::span<const SurfaceHit> hits,
                                       float offset_epsilon = 1e-4f, const Executor& executor = Executor(1));

/// `count` rays through the scene: origins uniform on the sphere of 1.5 x the bounds' circumradius around
/// its centre, each aimed at a uniform random point inside the box; normalised, tmin 0, tmax inf. Ray i is
/// random in (seed, i) only. Throws hwbvh::Error(BadInput) for empty bounds.
[[nodiscard]] RayBatch random_rays(const Aabb& bounds, uint32_t count, uint64_t seed,
                                   const Executor& executor = Executor(1));
/// Rays [first, first + count) of random_rays' sequence (first_ray = first; waves of 32 from there, so `first`
/// a multiple of 32 keeps random_rays' waves).
[[nodiscard]] RayBatch random_rays(const Aabb& bounds, uint32_t first, uint32_t count, uint64_t seed,
                                   const Executor& executor = Executor(1));

}  // namespace hwbvh
