#include "hwbvh/scene/ray_gen.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include <glm/geometric.hpp>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

constexpr std::size_t kGrain = 1024;  // rays (or tiles) per parallel task: enough work to amortise a task
constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;

// Generator ids mixed into the random key, so one seed gives unrelated AO and random-ray sequences.
enum class Stream : uint32_t { Ao = 1, Random = 2 };

// PCG hash (Jarzynski and Olano 2020): one LCG step, then the RXS-M-XS output permutation. A bijection on
// 32-bit values with good avalanche, cheap enough to key every sample separately.
constexpr uint32_t pcg_hash(uint32_t v) {
  const uint32_t state = v * 747796405u + 2891336453u;
  const uint32_t word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

uint32_t sample_key(uint64_t seed, Stream stream, uint32_t index, uint32_t sample) {
  uint32_t h = pcg_hash(static_cast<uint32_t>(stream));
  h = pcg_hash(h ^ static_cast<uint32_t>(seed >> 32));
  h = pcg_hash(h ^ static_cast<uint32_t>(seed));
  h = pcg_hash(h ^ index);
  return pcg_hash(h ^ sample);
}

/// The k-th uniform number in [0, 1) of a key: the top 24 bits, exactly representable as a float.
float uniform(uint32_t key, uint32_t k) { return static_cast<float>(pcg_hash(key + k) >> 8) * 0x1p-24f; }


uint32_t checked_count(uint64_t count) {
  if (count > std::numeric_limits<uint32_t>::max()) {
    throw_bad_input("", "too many rays (" + std::to_string(count) + "; at most 2^32 - 1)");
  }
  return static_cast<uint32_t>(count);
}

/// True if the waves cover the rays in order, each with 1..kTileRays rays.
bool waves_consistent(const RayBatch& b) {
  if (b.rays.empty()) return b.wave_begin.empty();
  if (b.wave_begin.empty() || b.wave_begin.front() != 0) return false;
  for (std::size_t w = 0; w < b.wave_count(); ++w) {
    const auto [first, last] = b.wave_range(w);
    if (last <= first || last - first > kTileRays) return false;
  }
  return true;
}

/// Secondary generators rely on the primary batch's invariants; a hand-made batch may break them.
void check_hits(const RayBatch& primary, std::span<const SurfaceHit> hits) {
  if (hits.size() != primary.rays.size()) {
    throw_bad_input("", "got " + std::to_string(hits.size()) + " hits for " + std::to_string(primary.rays.size()) +
                            " primary rays");
  }
  if (!waves_consistent(primary)) throw_bad_input("", "primary ray batch has inconsistent waves");
  if (!primary.pixel.empty() && primary.pixel.size() != primary.rays.size()) {
    throw_bad_input("", "primary ray batch has " + std::to_string(primary.pixel.size()) + " pixels for " +
                            std::to_string(primary.rays.size()) + " rays");
  }
}

/// A hit that can spawn rays: a valid hit with a finite position and a usable normal.
bool usable(const SurfaceHit& hit) {
  return hit.valid && is_finite(hit.position) && is_finite(hit.normal) && glm::dot(hit.normal, hit.normal) > 0.0f;
}

/// Where secondary rays of a hit start: moved off the surface, towards the side the primary ray came from.
struct Spawn {
  Vec3 origin;
  Vec3 normal;  // unit, facing the primary ray's origin
};

Spawn spawn(const SurfaceHit& hit, const Ray& primary, float offset_epsilon) {
  Vec3 n = unit_vector(hit.normal);
  if (glm::dot(n, primary.direction) > 0.0f) n = -n;
  // The hit point's rounding error scales with the coordinates that produced it (origin + t * direction).
  const float scale = std::max(max_abs(hit.position), max_abs(primary.origin));
  return {hit.position + (offset_epsilon * scale) * n, n};
}

/// Secondary rays are planned sequentially (which primary ray and sample goes to which slot, and the waves),
/// then filled in parallel, so the result cannot depend on the thread count.
struct Job {
  uint32_t ray;
  uint32_t sample;
};

struct Plan {
  std::vector<Job> jobs;
  RayBatch batch;  // wave_begin, pixel and image size filled; rays sized
};

template <class Keep>
Plan plan_secondary(const RayBatch& primary, uint32_t samples, Keep keep) {
  Plan plan;
  plan.batch.width = primary.width;
  plan.batch.height = primary.height;
  std::vector<uint32_t> kept;
  for (std::size_t w = 0; w < primary.wave_count(); ++w) {
    const auto [first, last] = primary.wave_range(w);
    kept.clear();
    for (std::size_t i = first; i < last; ++i) {
      if (keep(i)) kept.push_back(static_cast<uint32_t>(i));
    }
    if (kept.empty()) continue;
    for (uint32_t s = 0; s < samples; ++s) {
      plan.batch.wave_begin.push_back(checked_count(plan.jobs.size()));
      for (uint32_t i : kept) plan.jobs.push_back({i, s});
    }
  }
  checked_count(plan.jobs.size());
  plan.batch.rays.resize(plan.jobs.size());
  if (!primary.pixel.empty()) {
    plan.batch.pixel.resize(plan.jobs.size());
    for (std::size_t j = 0; j < plan.jobs.size(); ++j) plan.batch.pixel[j] = primary.pixel[plan.jobs[j].ray];
  }
  return plan;
}

/// Cosine-weighted direction around unit `n`: a uniform point on the unit disk lifted to the hemisphere
/// (Malley's method), in the branchless orthonormal basis of Duff et al. 2017, "Building an Orthonormal
/// Basis, Revisited", JCGT 6(1).
Vec3 cosine_direction(Vec3 n, float u1, float u2) {
  const float r = std::sqrt(u1), phi = kTwoPi * u2;
  const float x = r * std::cos(phi), y = r * std::sin(phi), z = std::sqrt(std::max(0.0f, 1.0f - u1));
  const float sign = std::copysign(1.0f, n.z);
  const float a = -1.0f / (sign + n.z);
  const float b = n.x * n.y * a;
  const Vec3 t1{1.0f + sign * n.x * n.x * a, sign * b, -sign * n.x};
  const Vec3 t2{b, sign + n.y * n.y * a, -n.y};
  return glm::normalize(x * t1 + y * t2 + z * n);
}

}  // namespace

RayBatch make_batch(std::vector<Ray> rays) {
  RayBatch batch;
  const uint32_t count = checked_count(rays.size());
  for (uint32_t i = 0; i < count; i += kTileRays) batch.wave_begin.push_back(i);
  batch.rays = std::move(rays);
  return batch;
}

uint64_t primary_tile_count(uint32_t width, uint32_t height) {
  return uint64_t{(width + kTileWidth - 1) / kTileWidth} * ((height + kTileHeight - 1) / kTileHeight);
}

RayBatch primary_rays(const Camera& camera, uint32_t width, uint32_t height, const Executor& executor) {
  return primary_tiles(camera, width, height, 0, primary_tile_count(width, height), executor);
}

RayBatch primary_tiles(const Camera& camera, uint32_t width, uint32_t height, uint64_t first_tile, uint64_t tiles,
                       const Executor& executor) {
  validate_camera(camera);
  if (width == 0 || height == 0) throw_bad_input("", "image size must be at least 1 x 1");
  checked_count(uint64_t{width} * height);
  const uint32_t tiles_x = (width + kTileWidth - 1) / kTileWidth;
  const uint64_t tile_count = primary_tile_count(width, height);
  if (first_tile > tile_count || tiles > tile_count - first_tile)
    throw_bad_input("", "tiles " + std::to_string(first_tile) + " + " + std::to_string(tiles) + " outside the " +
                            std::to_string(tile_count) + " tiles of the image");
  // Pixels of the tiles t: full rows of tiles above it, then the tiles to its left in its row.
  const auto tile_width = [&](uint64_t t) { return std::min(kTileWidth, width - static_cast<uint32_t>(t % tiles_x) * kTileWidth); };
  const auto tile_height = [&](uint64_t t) {
    return std::min(kTileHeight, height - static_cast<uint32_t>(t / tiles_x) * kTileHeight);
  };
  const auto pixels_before = [&](uint64_t t) {
    const uint64_t row = t / tiles_x, column = t % tiles_x;
    return row * kTileHeight * width + column * kTileWidth * tile_height(t);
  };
  RayBatch batch;
  batch.width = width;
  batch.height = height;
  batch.first_ray = static_cast<uint32_t>(pixels_before(first_tile));
  batch.wave_begin.reserve(tiles);
  uint32_t next = 0;
  for (uint64_t t = first_tile; t < first_tile + tiles; ++t) {
    batch.wave_begin.push_back(next);
    next += tile_width(t) * tile_height(t);
  }
  batch.rays.resize(next);
  batch.pixel.resize(next);

  // Camera basis; pixel row 0 is at the top (towards +up).
  const Vec3 forward = unit_vector(camera.target - camera.eye);
  const Vec3 right = glm::normalize(glm::cross(forward, camera.up));
  const Vec3 up = glm::cross(right, forward);
  const float tan_half = std::tan(0.5f * camera.fov_deg * std::numbers::pi_v<float> / 180.0f);
  const float aspect = static_cast<float>(width) / static_cast<float>(height);

  executor.for_ranges(0, batch.wave_begin.size(), kGrain / kTileRays, [&](std::size_t b, std::size_t e) {
    for (std::size_t w = b; w < e; ++w) {
      const uint64_t t = first_tile + w;
      const uint32_t x0 = static_cast<uint32_t>(t % tiles_x) * kTileWidth;
      const uint32_t y0 = static_cast<uint32_t>(t / tiles_x) * kTileHeight;
      uint32_t k = batch.wave_begin[w];
      for (uint32_t y = y0; y < std::min(y0 + kTileHeight, height); ++y) {
        for (uint32_t x = x0; x < std::min(x0 + kTileWidth, width); ++x, ++k) {
          const float fx = (static_cast<float>(x) + 0.5f) / static_cast<float>(width);
          const float fy = (static_cast<float>(y) + 0.5f) / static_cast<float>(height);
          const float sx = (2.0f * fx - 1.0f) * tan_half * aspect, sy = (1.0f - 2.0f * fy) * tan_half;
          batch.rays[k] = Ray{camera.eye, glm::normalize(forward + sx * right + sy * up)};
          batch.pixel[k] = y * width + x;
        }
      }
    }
  });
  return batch;
}

RayBatch ao_rays(const RayBatch& primary, std::span<const SurfaceHit> hits, const AoOptions& options,
                 const Executor& executor) {
  check_hits(primary, hits);
  if (options.samples == 0) throw_bad_input("", "ambient occlusion needs at least one sample per hit");
  if (!(options.max_distance > 0.0f)) throw_bad_input("", "ambient occlusion distance must be positive");

  Plan plan = plan_secondary(primary, options.samples, [&](std::size_t i) { return usable(hits[i]); });
  executor.for_ranges(0, plan.jobs.size(), kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) {
      const auto [i, s] = plan.jobs[j];
      const Spawn from = spawn(hits[i], primary.rays[i], options.offset_epsilon);
      const uint32_t key = sample_key(options.seed, Stream::Ao, primary.first_ray + i, s);
      const Vec3 dir = cosine_direction(from.normal, uniform(key, 0), uniform(key, 1));
      plan.batch.rays[j] = Ray{from.origin, dir, 0.0f, options.max_distance};
    }
  });
  return std::move(plan.batch);
}

Vec3 default_light(const Aabb& b) {
  if (b.empty()) throw_bad_input("", "cannot place a light for an empty scene");
  const Vec3 c = b.center(), e = b.extent();
  const Vec3 light{c.x + 0.25f * e.x, b.max.y + 0.5f * vector_length(e), c.z + 0.25f * e.z};
  if (!std::isfinite(light.x) || !std::isfinite(light.y) || !std::isfinite(light.z)) {
    throw_bad_input("", "the scene spans more than the float range: no place for the shadow rays' light above it; "
                        "trace other ray types (--rays)");
  }
  return light;
}

RayBatch shadow_rays(const RayBatch& primary, std::span<const SurfaceHit> hits, Vec3 light, float offset_epsilon,
                     const Executor& executor) {
  check_hits(primary, hits);
  if (!is_finite(light)) throw_bad_input("", "light position must be finite");

  Plan plan = plan_secondary(primary, 1, [&](std::size_t i) {
    return usable(hits[i]) && spawn(hits[i], primary.rays[i], offset_epsilon).origin != light;
  });
  executor.for_ranges(0, plan.jobs.size(), kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) {
      const uint32_t i = plan.jobs[j].ray;
      const Vec3 origin = spawn(hits[i], primary.rays[i], offset_epsilon).origin;
      const float distance = vector_length(light - origin);
      plan.batch.rays[j] = Ray{origin, (light - origin) / distance, 0.0f, distance * (1.0f - offset_epsilon)};
    }
  });
  return std::move(plan.batch);
}

RayBatch reflection_rays(const RayBatch& primary, std::span<const SurfaceHit> hits, float offset_epsilon,
                         const Executor& executor) {
  check_hits(primary, hits);
  Plan plan = plan_secondary(primary, 1, [&](std::size_t i) { return usable(hits[i]); });
  executor.for_ranges(0, plan.jobs.size(), kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) {
      const uint32_t i = plan.jobs[j].ray;
      const Spawn from = spawn(hits[i], primary.rays[i], offset_epsilon);
      const Vec3 d = primary.rays[i].direction;
      plan.batch.rays[j] = Ray{from.origin, unit_vector(d - (2.0f * glm::dot(d, from.normal)) * from.normal)};
    }
  });
  return std::move(plan.batch);
}

RayBatch random_rays(const Aabb& bounds, uint32_t count, uint64_t seed, const Executor& executor) {
  return random_rays(bounds, 0, count, seed, executor);
}

RayBatch random_rays(const Aabb& bounds, uint32_t first, uint32_t count, uint64_t seed, const Executor& executor) {
  checked_count(uint64_t{first} + count);
  if (bounds.empty()) throw_bad_input("", "cannot aim random rays at an empty scene");
  const Vec3 center = bounds.center(), extent = bounds.extent();
  const float circumradius = 0.5f * vector_length(extent);
  // Strictly outside the box, so an origin never coincides with its target.
  const float radius = circumradius > 0.0f ? 1.5f * circumradius : 1.0f;
  if (!std::isfinite(radius) || !std::isfinite(center.x) || !std::isfinite(center.y) || !std::isfinite(center.z)) {
    throw_bad_input("", "the scene spans more than the float range: random rays cannot start outside it; trace "
                        "other ray types (--rays)");
  }

  std::vector<Ray> rays(count);
  executor.for_ranges(0, count, kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const uint32_t key = sample_key(seed, Stream::Random, first + static_cast<uint32_t>(i), 0);
      // Uniform on the sphere: z uniform in [-1, 1], azimuth uniform (Archimedes).
      const float z = 1.0f - 2.0f * uniform(key, 0), phi = kTwoPi * uniform(key, 1);
      const float r = std::sqrt(std::max(0.0f, 1.0f - z * z));
      const Vec3 origin = center + radius * Vec3{r * std::cos(phi), r * std::sin(phi), z};
      const Vec3 target = bounds.min + extent * Vec3{uniform(key, 2), uniform(key, 3), uniform(key, 4)};
      rays[i] = Ray{origin, unit_vector(target - origin)};
    }
  });
  RayBatch batch = make_batch(std::move(rays));
  batch.first_ray = first;
  return batch;
}

}  // namespace hwbvh
