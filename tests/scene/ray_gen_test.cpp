#include "hwbvh/scene/ray_gen.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <glm/geometric.hpp>
#include <gtest/gtest.h>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

/// Bitwise equality of two ray lists (so -0 vs 0 or a last-bit difference counts).
bool same_rays(const std::vector<Ray>& a, const std::vector<Ray>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Ray)) == 0);
}

bool same_batch(const RayBatch& a, const RayBatch& b) {
  return same_rays(a.rays, b.rays) && a.pixel == b.pixel && a.wave_begin == b.wave_begin && a.width == b.width &&
         a.height == b.height;
}

const Camera kCamera{{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 45.0f};

TEST(PrimaryRays, FirstWaveIsTheTopLeftTile) {
  const RayBatch b = primary_rays(kCamera, 16, 8);
  ASSERT_EQ(b.rays.size(), 128u);
  EXPECT_EQ(b.wave_begin, (std::vector<uint32_t>{0, 32, 64, 96}));
  for (uint32_t k = 0; k < 32; ++k) EXPECT_EQ(b.pixel[k], (k / 8) * 16 + k % 8) << k;
  // Second tile: x 8..15 of rows 0..3; third tile: rows 4..7 of x 0..7.
  EXPECT_EQ(b.pixel[32], 8u);
  EXPECT_EQ(b.pixel[63], 3u * 16 + 15);
  EXPECT_EQ(b.pixel[64], 4u * 16);
}

TEST(PrimaryRays, PartialTilesSkipMissingPixels) {
  const RayBatch b = primary_rays(kCamera, 10, 5);
  ASSERT_EQ(b.rays.size(), 50u);
  EXPECT_EQ(b.wave_begin, (std::vector<uint32_t>{0, 32, 40, 48}));  // 8x4, 2x4, 8x1, 2x1
  EXPECT_EQ(b.wave_count(), 4u);
  EXPECT_EQ(b.wave_range(3), (std::pair<std::size_t, std::size_t>{48, 50}));
  std::vector<uint32_t> sorted = b.pixel;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(b.pixel[32], 8u);  // tile (1, 0) starts at x = 8, y = 0
  EXPECT_EQ(b.pixel[33], 9u);
  EXPECT_EQ(b.pixel[34], 18u);
  EXPECT_EQ(b.pixel[40], 40u);  // tile (0, 1): row 4
  EXPECT_EQ(b.pixel[49], 49u);
}

TEST(PrimaryRays, DirectionsFollowTheCamera) {
  const RayBatch one = primary_rays(kCamera, 1, 1);
  ASSERT_EQ(one.rays.size(), 1u);
  EXPECT_EQ(one.rays[0].origin, kCamera.eye);
  EXPECT_EQ(one.rays[0].direction, Vec3(0, 0, -1));
  EXPECT_EQ(one.rays[0].tmin, 0.0f);
  EXPECT_TRUE(std::isinf(one.rays[0].tmax));

  const RayBatch b = primary_rays(kCamera, 8, 4);
  const Ray& top_left = b.rays[0];
  const Ray& bottom_right = b.rays[31];
  EXPECT_LT(top_left.direction.x, 0.0f);
  EXPECT_GT(top_left.direction.y, 0.0f);  // row 0 is the top of the image
  EXPECT_GT(bottom_right.direction.x, 0.0f);
  EXPECT_LT(bottom_right.direction.y, 0.0f);
  for (const Ray& r : b.rays) EXPECT_NEAR(glm::length(r.direction), 1.0f, 1e-6f);
}

TEST(PrimaryRays, RejectsZeroSizeAndBadCamera) {
  EXPECT_THROW((void)primary_rays(kCamera, 0, 4), Error);
  EXPECT_THROW((void)primary_rays(Camera{{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 45}, 4, 4), Error);
}

TEST(PrimaryRays, IdenticalAtAnyThreadCount) {
  const RayBatch a = primary_rays(kCamera, 203, 117, Executor(1));
  const RayBatch b = primary_rays(kCamera, 203, 117, Executor(2));
  EXPECT_TRUE(same_batch(a, b));
}

/// A hit per primary ray on the plane z = 0 (the camera looks down -z from z = 5), every `skip`-th a miss.
std::vector<SurfaceHit> plane_hits(const RayBatch& primary, Vec3 normal, uint32_t skip = 0) {
  std::vector<SurfaceHit> hits(primary.rays.size());
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const Ray& r = primary.rays[i];
    hits[i] = {r.origin + (-r.origin.z / r.direction.z) * r.direction, normal, skip == 0 || i % skip != 0};
  }
  return hits;
}

TEST(AoRays, CosineWeightedAroundTheFacingNormal) {
  const RayBatch primary = primary_rays(Camera{{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 10.0f}, 32, 32);
  // The normal given points away from the camera: AO must use the side the primary ray came from (+z).
  const auto hits = plane_hits(primary, {0, 0, -3});
  const RayBatch ao = ao_rays(primary, hits, AoOptions{.samples = 64, .max_distance = 2.0f, .seed = 7});
  ASSERT_EQ(ao.rays.size(), 32u * 32u * 64u);
  double sum_cos = 0, sum_cos2 = 0, sum_x = 0, sum_y = 0;
  for (const Ray& r : ao.rays) {
    const double c = r.direction.z;
    ASSERT_GT(c, 0.0);
    sum_cos += c;
    sum_cos2 += c * c;
    sum_x += r.direction.x;
    sum_y += r.direction.y;
    EXPECT_EQ(r.tmax, 2.0f);
    EXPECT_GT(r.origin.z, 0.0f);  // moved off the surface towards the camera
  }
  const double n = static_cast<double>(ao.rays.size());
  EXPECT_NEAR(sum_cos / n, 2.0 / 3.0, 0.005);   // E[cos] under a cos/pi density
  EXPECT_NEAR(sum_cos2 / n, 1.0 / 2.0, 0.005);  // E[cos^2]
  EXPECT_NEAR(sum_x / n, 0.0, 0.01);
  EXPECT_NEAR(sum_y / n, 0.0, 0.01);
}

TEST(AoRays, OriginOffsetIsRelativeToCoordinateMagnitude) {
  const RayBatch primary = make_batch({Ray{{1000, 0, 5}, {0, 0, -1}}});
  const std::vector<SurfaceHit> hits{{{1000, 0, 0}, {0, 0, 1}, true}};
  const RayBatch ao = ao_rays(primary, hits, AoOptions{.samples = 1, .offset_epsilon = 1e-4f});
  ASSERT_EQ(ao.rays.size(), 1u);
  EXPECT_FLOAT_EQ(ao.rays[0].origin.z, 0.1f);
  EXPECT_TRUE(ao.pixel.empty());  // the primary rays had no image
}

TEST(AoRays, WavesFollowPrimaryWavesPerSampleAndSkipMisses) {
  const RayBatch primary = primary_rays(kCamera, 16, 4);  // two tiles
  const auto hits = plane_hits(primary, {0, 0, 1}, 4);    // every 4th ray misses: 24 hits per tile
  const RayBatch ao = ao_rays(primary, hits, AoOptions{.samples = 2});
  ASSERT_EQ(ao.rays.size(), 96u);
  EXPECT_EQ(ao.wave_begin, (std::vector<uint32_t>{0, 24, 48, 72}));
  EXPECT_EQ(ao.width, 16u);
  EXPECT_EQ(ao.height, 4u);
  // Wave 0 and wave 1 are samples 0 and 1 of the same pixels, in primary order.
  for (uint32_t k = 0; k < 24; ++k) {
    EXPECT_EQ(ao.pixel[k], ao.pixel[24 + k]);
    EXPECT_EQ(ao.rays[k].origin, ao.rays[24 + k].origin);
    EXPECT_NE(ao.rays[k].direction, ao.rays[24 + k].direction);
  }
  EXPECT_EQ(ao.pixel[0], primary.pixel[1]);  // primary ray 0 missed
}

TEST(AoRays, SeededAndIdenticalAtAnyThreadCount) {
  const RayBatch primary = primary_rays(kCamera, 64, 32);
  const auto hits = plane_hits(primary, {0.3f, 0.1f, 1}, 5);
  const AoOptions options{.samples = 5, .max_distance = 1.0f, .seed = 42};
  const RayBatch a = ao_rays(primary, hits, options, Executor(1));
  const RayBatch b = ao_rays(primary, hits, options, Executor(2));
  const RayBatch c = ao_rays(primary, hits, options, Executor(1));
  EXPECT_TRUE(same_batch(a, b));
  EXPECT_TRUE(same_batch(a, c));
  AoOptions other = options;
  other.seed = 43;
  const RayBatch d = ao_rays(primary, hits, other);
  EXPECT_FALSE(same_rays(a.rays, d.rays));
  EXPECT_EQ(a.pixel, d.pixel);
}

// Batches of tiles, and the AO rays of each batch's hits, put end to end are the whole image's: what lets stats
// trace an image batch by batch.
TEST(PrimaryTiles, BatchAfterBatchGiveTheWholeImagesRaysAndAoRays) {
  const uint32_t width = 37, height = 23;  // partial tiles on the right and at the bottom
  const RayBatch whole = primary_rays(kCamera, width, height);
  const AoOptions options{.samples = 3, .max_distance = 1.0f, .seed = 9};
  const RayBatch whole_ao = ao_rays(whole, plane_hits(whole, {0.3f, 0.1f, 1}, 5), options);
  const uint64_t tiles = primary_tile_count(width, height);
  EXPECT_EQ(tiles, whole.wave_count());
  for (const uint64_t step : {uint64_t{1}, uint64_t{4}, uint64_t{7}, tiles}) {
    RayBatch joined, joined_ao;
    for (uint64_t first = 0; first < tiles; first += step) {
      const RayBatch part = primary_tiles(kCamera, width, height, first, std::min(step, tiles - first), Executor(2));
      EXPECT_EQ(part.first_ray, joined.rays.size());
      for (uint32_t w : part.wave_begin) joined.wave_begin.push_back(static_cast<uint32_t>(joined.rays.size()) + w);
      joined.rays.insert(joined.rays.end(), part.rays.begin(), part.rays.end());
      joined.pixel.insert(joined.pixel.end(), part.pixel.begin(), part.pixel.end());
      // Hits keyed by the global ray index, as plane_hits does for the whole image.
      std::vector<SurfaceHit> hits = plane_hits(whole, {0.3f, 0.1f, 1}, 5);
      hits = std::vector<SurfaceHit>(hits.begin() + part.first_ray, hits.begin() + part.first_ray + part.rays.size());
      const RayBatch ao = ao_rays(part, hits, options);
      joined_ao.rays.insert(joined_ao.rays.end(), ao.rays.begin(), ao.rays.end());
      joined_ao.pixel.insert(joined_ao.pixel.end(), ao.pixel.begin(), ao.pixel.end());
    }
    joined.width = width;
    joined.height = height;
    EXPECT_TRUE(same_batch(joined, whole)) << step;
    EXPECT_TRUE(same_rays(joined_ao.rays, whole_ao.rays)) << step;
    EXPECT_EQ(joined_ao.pixel, whole_ao.pixel) << step;
  }
  EXPECT_THROW((void)primary_tiles(kCamera, width, height, tiles, 1), Error);
}

TEST(RandomRays, RangesPutTogetherAreTheWholeSequence) {
  const Aabb box{{-1, -2, -3}, {1, 2, 3}};
  const RayBatch whole = random_rays(box, 1000, 5);
  std::vector<Ray> joined;
  for (uint32_t first = 0; first < 1000; first += 96) {
    const RayBatch part = random_rays(box, first, std::min(96u, 1000 - first), 5, Executor(2));
    EXPECT_EQ(part.first_ray, first);
    joined.insert(joined.end(), part.rays.begin(), part.rays.end());
  }
  EXPECT_TRUE(same_rays(joined, whole.rays));
}

TEST(AoRays, RejectsBadArguments) {
  const RayBatch primary = primary_rays(kCamera, 8, 4);
  const auto hits = plane_hits(primary, {0, 0, 1});
  EXPECT_THROW((void)ao_rays(primary, std::span(hits).first(5), AoOptions{}), Error);
  EXPECT_THROW((void)ao_rays(primary, hits, AoOptions{.samples = 0}), Error);
  EXPECT_THROW((void)ao_rays(primary, hits, AoOptions{.max_distance = 0.0f}), Error);
  RayBatch no_waves = primary;
  no_waves.wave_begin.clear();
  EXPECT_THROW((void)ao_rays(no_waves, hits, AoOptions{}), Error);
  RayBatch short_pixels = primary;
  short_pixels.pixel.pop_back();
  EXPECT_THROW((void)shadow_rays(short_pixels, hits, Vec3{0, 0, 9}), Error);
  RayBatch wide_wave = make_batch(std::vector<Ray>(40));
  wide_wave.wave_begin = {0};  // 40 rays in one wave
  EXPECT_THROW((void)shadow_rays(wide_wave, std::vector<SurfaceHit>(40), Vec3{0, 0, 9}), Error);
}

TEST(ShadowRays, AimJustShortOfTheLight) {
  const RayBatch primary = primary_rays(kCamera, 16, 8);
  const auto hits = plane_hits(primary, {0, 0, 1}, 3);
  const Vec3 light{1, 2, 10};
  const RayBatch s = shadow_rays(primary, hits, light, 1e-4f, Executor(2));
  EXPECT_EQ(s.rays.size(), 128u - 43u);
  for (const Ray& r : s.rays) {
    const float distance = glm::length(light - r.origin);
    EXPECT_NEAR(glm::length(r.direction), 1.0f, 1e-6f);
    EXPECT_LT(r.tmax, distance);
    EXPECT_GT(r.tmax, distance * 0.999f);
    EXPECT_LT(glm::length(r.origin + r.tmax * r.direction - light), 0.01f);
  }
  EXPECT_TRUE(same_batch(s, shadow_rays(primary, hits, light, 1e-4f, Executor(1))));
  EXPECT_EQ(s.wave_count(), 4u);
}

TEST(ReflectionRays, MirrorThePrimaryDirectionAboutTheFacingNormal) {
  const RayBatch primary = primary_rays(kCamera, 16, 8);
  // The plane's normal points away from the camera: the mirror uses the side the ray came from either way.
  for (const Vec3 normal : {Vec3{0, 0, 1}, Vec3{0, 0, -1}}) {
    const auto hits = plane_hits(primary, normal, 3);
    const RayBatch r = reflection_rays(primary, hits, 1e-4f, Executor(2));
    EXPECT_EQ(r.rays.size(), 128u - 43u);
    EXPECT_EQ(r.wave_count(), 4u);
    std::size_t k = 0;
    for (std::size_t i = 0; i < primary.rays.size(); ++i) {
      if (!hits[i].valid) continue;
      const Vec3 d = primary.rays[i].direction;
      const Ray& ray = r.rays[k];
      EXPECT_EQ(r.pixel[k], primary.pixel[i]);
      // z flips, x and y are kept: a mirror in a plane z = const.
      EXPECT_NEAR(ray.direction.x, d.x, 1e-6f);
      EXPECT_NEAR(ray.direction.y, d.y, 1e-6f);
      EXPECT_NEAR(ray.direction.z, -d.z, 1e-6f);
      EXPECT_EQ(ray.tmin, 0.0f);
      EXPECT_EQ(ray.tmax, std::numeric_limits<float>::infinity());
      // Offset off the surface towards the camera's side.
      EXPECT_GT((ray.origin.z - hits[i].position.z) * -d.z, 0.0f);
      ++k;
    }
    EXPECT_TRUE(same_batch(r, reflection_rays(primary, hits, 1e-4f, Executor(1))));
  }
  EXPECT_THROW((void)reflection_rays(primary, std::vector<SurfaceHit>(3)), Error);
}

TEST(ShadowRays, DefaultLightIsAboveTheScene) {
  const Aabb box{{-1, 0, -2}, {3, 4, 2}};
  const Vec3 light = default_light(box);
  EXPECT_GT(light.y, box.max.y);
  EXPECT_GE(light.x, box.min.x);
  EXPECT_LE(light.x, box.max.x);
  EXPECT_GE(light.z, box.min.z);
  EXPECT_LE(light.z, box.max.z);
  EXPECT_THROW((void)default_light(Aabb{}), Error);
}

/// Slab test: does the line of `r` (t >= 0) pass through `box` (slightly grown for rounding)?
bool passes_through(const Ray& r, const Aabb& box) {
  float t0 = 0.0f, t1 = std::numeric_limits<float>::infinity();
  for (int k = 0; k < 3; ++k) {
    const float inv = 1.0f / r.direction[k];
    float a = (box.min[k] - 1e-3f - r.origin[k]) * inv, b = (box.max[k] + 1e-3f - r.origin[k]) * inv;
    if (a > b) std::swap(a, b);
    t0 = std::max(t0, a);
    t1 = std::min(t1, b);
  }
  return t0 <= t1;
}

TEST(RandomRays, StartOutsideAndPassThroughTheBox) {
  const Aabb box{{-1, 0, 2}, {3, 1, 5}};
  const RayBatch b = random_rays(box, 3000, 1, Executor(2));
  ASSERT_EQ(b.rays.size(), 3000u);
  EXPECT_TRUE(b.pixel.empty());
  EXPECT_EQ(b.wave_count(), 94u);  // 93 full waves and one of 24
  const float radius = 1.5f * 0.5f * glm::length(box.extent());
  for (const Ray& r : b.rays) {
    EXPECT_NEAR(glm::length(r.origin - box.center()), radius, 1e-4f * radius);
    EXPECT_FALSE(box.contains(r.origin));
    EXPECT_TRUE(passes_through(r, box));
  }
}

TEST(RandomRays, SeededAndIdenticalAtAnyThreadCount) {
  const Aabb box{{0, 0, 0}, {1, 2, 3}};
  const RayBatch a = random_rays(box, 5000, 9, Executor(1));
  EXPECT_TRUE(same_batch(a, random_rays(box, 5000, 9, Executor(2))));
  EXPECT_FALSE(same_rays(a.rays, random_rays(box, 5000, 10).rays));
  // Seeds differing only in the high 32 bits give different rays too.
  EXPECT_FALSE(same_rays(a.rays, random_rays(box, 5000, 9 + (uint64_t{1} << 32)).rays));
  EXPECT_THROW((void)random_rays(Aabb{}, 10, 0), Error);
}

TEST(RandomRays, PointBoundsStillGiveValidRays) {
  const RayBatch b = random_rays(Aabb::of_point({1, 2, 3}), 64, 0);
  for (const Ray& r : b.rays) EXPECT_NEAR(glm::length(r.direction), 1.0f, 1e-6f);
}

TEST(MakeBatch, GroupsConsecutiveRaysIntoWaves) {
  EXPECT_EQ(make_batch(std::vector<Ray>(70)).wave_begin, (std::vector<uint32_t>{0, 32, 64}));
  EXPECT_TRUE(make_batch({}).wave_begin.empty());
}

}  // namespace
}  // namespace hwbvh
