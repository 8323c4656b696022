#include "hwbvh/emu/oracle.h"

#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu {
namespace {

using Tri = blob::GeometrySection::Tri;
constexpr float kInf = std::numeric_limits<float>::infinity();

/// Geometry 0: the unit square [0,1]^2 at z = 0 as two triangles (primitive 0 below the diagonal x = y,
/// primitive 1 above). Geometry 1 at z = -1 / -2: primitive 0 is a real triangle flagged degenerate (the
/// oracle must not see it), primitive 1 a large triangle at z = -2 under everything.
/// Triangles are listed out of order on purpose: ids, not positions in the list, decide Embree's ids.
blob::GeometrySection tiny_scene() {
  blob::GeometrySection g;
  g.positions = {{0, 0, 0},    {1, 0, 0},    {1, 1, 0},  {0, 1, 0},     // square
                 {-10, -10, -2}, {10, -10, -2}, {0, 10, -2},             // floor
                 {-10, -10, -1}, {10, -10, -1}, {0, 10, -1}};            // flagged degenerate
  g.triangles = {Tri{{4, 5, 6}, 1, 1, 0}, Tri{{0, 1, 2}, 0, 0, 0}, Tri{{7, 8, 9}, 1, 0, blob::kTriDegenerate},
                 Tri{{0, 2, 3}, 0, 1, 0}};
  return g;
}

Ray down(float x, float y, float tmin = 0.0f, float tmax = kInf) { return Ray{{x, y, 5}, {0, 0, -1}, tmin, tmax}; }

TEST(Oracle, ClosestHitsCarryOurIds) {
  const Oracle oracle(tiny_scene(), "tiny", 1);
  const OracleHit a = oracle.trace_closest(down(0.75f, 0.25f));
  EXPECT_TRUE(a.hit);
  EXPECT_FLOAT_EQ(a.t, 5.0f);
  EXPECT_EQ(a.geometry, 0u);
  EXPECT_EQ(a.primitive, 0u);
  EXPECT_NEAR(a.barycentrics.x, 0.5f, 1e-6f);  // (0.75, 0.25) = v0 + 0.5 (v1 - v0) + 0.25 (v2 - v0)
  EXPECT_NEAR(a.barycentrics.y, 0.25f, 1e-6f);
  EXPECT_GT(a.normal.z, 0.0f);

  const OracleHit b = oracle.trace_closest(down(0.25f, 0.75f));
  EXPECT_EQ(b.geometry, 0u);
  EXPECT_EQ(b.primitive, 1u);

  // Off the square: through the flagged-degenerate triangle (ignored) onto the floor.
  const OracleHit c = oracle.trace_closest(down(2.0f, 0.5f));
  EXPECT_TRUE(c.hit);
  EXPECT_FLOAT_EQ(c.t, 7.0f);
  EXPECT_EQ(c.geometry, 1u);
  EXPECT_EQ(c.primitive, 1u);

  // tmin beyond the square reaches the floor; tmax short of everything misses.
  EXPECT_EQ(oracle.trace_closest(down(0.75f, 0.25f, 6.0f)).geometry, 1u);
  const OracleHit miss = oracle.trace_closest(down(0.75f, 0.25f, 0.0f, 4.0f));
  EXPECT_FALSE(miss.hit);
  EXPECT_EQ(miss.geometry, kNoIndex);
  EXPECT_FALSE(oracle.trace_closest(Ray{{0.5f, 0.5f, 5}, {0, 0, 1}}).hit);  // pointing away
}

// Embree refuses rays beyond about 1.8e18 (an assertion in its ray validity check) and its triangle test overflows
// past about 2^42, so the oracle hands it the scene and the rays scaled by a power of two: a scene 2^64 times the
// tiny one gives the same hits, t scaled exactly.
TEST(Oracle, HugeScenesAreTracedScaled) {
  const float scale = 0x1p64f;
  blob::GeometrySection big = tiny_scene();
  for (Vec3& p : big.positions) p *= scale;
  const Oracle small(tiny_scene(), "tiny", 1), huge(big, "huge", 1);
  for (const Ray& r : {down(0.75f, 0.25f), down(0.25f, 0.75f), down(2.0f, 0.5f), down(0.75f, 0.25f, 6.0f)}) {
    const Ray scaled{r.origin * scale, r.direction, r.tmin * scale, r.tmax * scale};
    const OracleHit a = small.trace_closest(r), b = huge.trace_closest(scaled);
    EXPECT_TRUE(b.hit);
    EXPECT_EQ(b.t, a.t * scale);
    EXPECT_EQ(b.geometry, a.geometry);
    EXPECT_EQ(b.primitive, a.primitive);
    EXPECT_EQ(b.barycentrics, a.barycentrics);
    EXPECT_EQ(huge.occluded(scaled), small.occluded(r));
  }
  // A ray from beyond Embree's range even after scaling: a clear error, not Embree's assertion.
  EXPECT_THROW((void)small.trace_closest(Ray{{0.5f, 0.5f, 1e30f}, {0, 0, -1}}), Error);
}

/// A two-level scene: BLAS 0 is the unit square (geometry 0, primitive 0 below the diagonal x = y), BLAS 1 a large
/// floor triangle at z = -2 (Geometry-section geometry 1, its own geometry 0). Instance nodes, in node order:
/// the square moved 10 along x (mask 0x01, instance index 2), the square mirrored in x and moved to x in [19, 20]
/// (mask 0x02, index 0), the floor moved down to z = -3 (mask 0x04, index 1). Scaled by `scale` throughout.
struct TwoLevelScene {
  blob::GeometrySection geometry;
  blob::Levels levels;
  std::vector<blob::InstanceSideband> sideband;
  [[nodiscard]] OracleInstances instances() const { return {&levels, sideband}; }
};

TwoLevelScene two_level_scene(float scale = 1.0f) {
  TwoLevelScene s;
  s.geometry.positions = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {-100, -100, -2}, {100, -100, -2}, {0, 100, -2}};
  for (Vec3& p : s.geometry.positions) p *= scale;
  s.geometry.triangles = {Tri{{0, 1, 2}, 0, 0, 0}, Tri{{0, 2, 3}, 0, 1, 0}, Tri{{4, 5, 6}, 1, 0, 0}};
  s.levels.blases = {blob::BlasRange{128, 128, 0, 1, 0, 2}, blob::BlasRange{256, 128, 1, 1, 2, 1}};
  s.levels.instances = {{0, 0x01}, {0, 0x02}, {1, 0x04}};
  const auto place = [&](uint32_t index, float sx, Vec3 t) {
    blob::InstanceSideband r;
    r.instance_index = index;
    r.object_to_world = {{{sx, 0, 0, t.x * scale}, {0, 1, 0, t.y * scale}, {0, 0, 1, t.z * scale}}};
    s.sideband.push_back(r);
  };
  place(2, 1.0f, {10, 0, 0});
  place(0, -1.0f, {20, 0, 0});
  place(1, 1.0f, {0, 0, -1});
  return s;
}

OracleHit expect_hit(const OracleHit& h, uint32_t instance, uint32_t geometry, uint32_t primitive, float t) {
  EXPECT_TRUE(h.hit);
  EXPECT_EQ(h.instance, instance);
  EXPECT_EQ(h.geometry, geometry);
  EXPECT_EQ(h.primitive, primitive);
  EXPECT_FLOAT_EQ(h.t, t);
  return h;
}

TEST(Oracle, InstancesReportTheirIndexLocalIdsAndHonourTheRayMask) {
  const TwoLevelScene s = two_level_scene();
  const Oracle oracle(s.geometry, "two-level", 1, nullptr, s.instances());
  expect_hit(oracle.trace_closest(down(10.75f, 0.25f)), 2, 0, 0, 5.0f);
  expect_hit(oracle.trace_closest(down(10.25f, 0.75f)), 2, 0, 1, 5.0f);
  // Mirrored: world x 19.25 is object x 0.75, below the diagonal; Ng stays in object space.
  EXPECT_GT(expect_hit(oracle.trace_closest(down(19.25f, 0.25f)), 0, 0, 0, 5.0f).normal.z, 0.0f);
  // The floor is BLAS 1's geometry 0 (the Geometry section's geometry 1).
  expect_hit(oracle.trace_closest(down(5.0f, 0.5f)), 1, 0, 0, 8.0f);
  // Masks: the square at x 10 is skipped without bit 0, the floor below it found instead; no common bit, no hit.
  expect_hit(oracle.trace_closest(down(10.75f, 0.25f), 0x06), 1, 0, 0, 8.0f);
  EXPECT_FALSE(oracle.trace_closest(down(19.25f, 0.25f), 0x01).hit);
  EXPECT_FALSE(oracle.trace_closest(down(10.75f, 0.25f), 0x00).hit);
  EXPECT_TRUE(oracle.occluded(down(19.25f, 0.25f), 0x02));
  EXPECT_FALSE(oracle.occluded(down(19.25f, 0.25f), 0x01));
  EXPECT_FALSE(oracle.occluded(down(10.75f, 0.25f, 0.0f, 6.0f), 0x04));  // the floor lies beyond tmax
}

// The huge-scene scaling also scales the instances' translations: a two-level scene 2^64 times the small one gives
// the same hits, t scaled exactly.
TEST(Oracle, HugeInstancedScenesAreTracedScaled) {
  const float scale = 0x1p64f;
  const TwoLevelScene a = two_level_scene(), b = two_level_scene(scale);
  const Oracle small(a.geometry, "small", 1, nullptr, a.instances()), huge(b.geometry, "huge", 1, nullptr, b.instances());
  for (const Ray& r : {down(10.75f, 0.25f), down(19.25f, 0.25f), down(5.0f, 0.5f)}) {
    const Ray scaled{r.origin * scale, r.direction, r.tmin * scale, r.tmax * scale};
    const OracleHit h = small.trace_closest(r);
    expect_hit(huge.trace_closest(scaled), h.instance, h.geometry, h.primitive, h.t * scale);
  }
}

TEST(Oracle, AgreementCountsTheInstance) {
  const OracleHit embree{true, 5.0f, 0, 1, {0.3f, 0.3f}, {}, 3};  // inside its triangle: not an edge crack
  EXPECT_EQ(compare(OracleHit{true, 5.0f, 0, 1, {}, {}, 3}, embree), Disagreement::None);
  // Same geometry and primitive in another instance farther away: not the same hit.
  EXPECT_EQ(compare(OracleHit{true, 6.0f, 0, 1, {}, {}, 4}, embree), Disagreement::DifferentPrimitiveFarther);
}

TEST(Oracle, Occlusion) {
  const Oracle oracle(tiny_scene(), "tiny", 1);
  EXPECT_TRUE(oracle.occluded(down(0.5f, 0.2f)));
  EXPECT_FALSE(oracle.occluded(down(0.5f, 0.2f, 0.0f, 4.9f)));
  EXPECT_TRUE(oracle.occluded(down(0.5f, 0.2f, 0.0f, 5.1f)));
  EXPECT_FALSE(oracle.occluded(down(2.0f, 0.5f, 0.0f, 6.5f)));  // only the ignored degenerate at t = 6
  EXPECT_FALSE(oracle.occluded(down(50.0f, 0.5f)));
}

TEST(Oracle, SparseGeometryIdsAndEmptySection) {
  blob::GeometrySection g = tiny_scene();
  for (Tri& t : g.triangles) t.geometry += 5;
  const Oracle oracle(g);
  EXPECT_EQ(oracle.trace_closest(down(0.75f, 0.25f)).geometry, 5u);
  EXPECT_EQ(oracle.trace_closest(down(2.0f, 0.5f)).geometry, 6u);

  const Oracle empty(blob::GeometrySection{});
  EXPECT_FALSE(empty.trace_closest(down(0.5f, 0.5f)).hit);
  EXPECT_FALSE(empty.occluded(down(0.5f, 0.5f)));
}

TEST(Oracle, RejectsInconsistentSections) {
  const auto expect_bad = [](const blob::GeometrySection& g, const std::string& problem) {
    try {
      const Oracle oracle(g, "scene.hwbvh");
      ADD_FAILURE() << "accepted, expected: " << problem;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("scene.hwbvh: ", 0), 0u) << what;
      EXPECT_NE(what.find(problem), std::string::npos) << what;
    }
  };
  blob::GeometrySection g = tiny_scene();
  g.triangles[1].v[2] = 10;
  expect_bad(g, "triangle 1 vertex index 10 is out of range (10 positions)");
  g = tiny_scene();
  g.triangles[3].primitive = 0;  // duplicate of triangle 1
  expect_bad(g, "geometry 0 primitive ids are not 0..1");
  g = tiny_scene();
  g.triangles[0].primitive = 2;  // a gap
  expect_bad(g, "geometry 1 primitive ids are not 0..1 (triangle 0 has primitive id 2)");
  g = tiny_scene();
  g.triangles[0].geometry = 1u << 24;
  expect_bad(g, "geometry id 16777216");
}

TEST(Oracle, ParallelQueriesMatchSequentialOnes) {
  const Oracle oracle(tiny_scene(), "tiny", 2);
  const RayBatch rays = random_rays(Aabb{{-3, -3, -2}, {3, 3, 0}}, 4000, 3);
  std::vector<OracleHit> serial(rays.rays.size()), parallel(rays.rays.size());
  std::vector<char> occ_serial(rays.rays.size()), occ_parallel(rays.rays.size());
  for (std::size_t i = 0; i < rays.rays.size(); ++i) {
    serial[i] = oracle.trace_closest(rays.rays[i]);
    occ_serial[i] = oracle.occluded(rays.rays[i]);
  }
  Executor(2).for_each(0, rays.rays.size(), [&](std::size_t i) {
    parallel[i] = oracle.trace_closest(rays.rays[i]);
    occ_parallel[i] = oracle.occluded(rays.rays[i]);
  }, 64);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < serial.size(); ++i) {
    EXPECT_EQ(compare(parallel[i], serial[i]), Disagreement::None);
    EXPECT_EQ(serial[i].t, parallel[i].t);
    EXPECT_EQ(occ_serial[i], occ_parallel[i]);
    EXPECT_EQ(static_cast<bool>(occ_serial[i]), serial[i].hit);
    hits += serial[i].hit;
  }
  EXPECT_GT(hits, 1000u);
}

// AO rays spawned from Embree's own hits on the square must not hit the square again (the origin offset works).
TEST(Oracle, AoRaysFromHitsDoNotSelfIntersect) {
  const Oracle oracle(tiny_scene());
  const RayBatch primary = primary_rays(Camera{{0.5f, 0.5f, 3}, {0.5f, 0.5f, 0}, {0, 1, 0}, 15.0f}, 16, 16);
  std::vector<SurfaceHit> hits(primary.rays.size());
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const Ray& r = primary.rays[i];
    const OracleHit h = oracle.trace_closest(r);
    ASSERT_EQ(h.geometry, 0u);
    hits[i] = {r.origin + h.t * r.direction, h.normal, true};
  }
  const RayBatch ao = ao_rays(primary, hits, AoOptions{.samples = 8, .max_distance = 10.0f, .seed = 1});
  for (const Ray& r : ao.rays) EXPECT_FALSE(oracle.occluded(r));
  const RayBatch shadows = shadow_rays(primary, hits, Vec3{0.5f, 0.5f, 10});
  for (const Ray& r : shadows.rays) EXPECT_FALSE(oracle.occluded(r));
}

/// A hit in the middle of its triangle (far from every edge), or at the given barycentrics.
OracleHit hit(float t, uint32_t geometry, uint32_t primitive, Vec2 barycentrics = {0.25f, 0.25f}) {
  return {true, t, geometry, primitive, barycentrics};
}

TEST(Compare, EveryCause) {
  const OracleHit miss{};
  EXPECT_EQ(compare(miss, miss), Disagreement::None);
  EXPECT_EQ(compare(miss, hit(1, 0, 0)), Disagreement::EmuMissEmbreeHit);
  EXPECT_EQ(compare(hit(1, 0, 0), miss), Disagreement::EmuHitEmbreeMiss);
  EXPECT_EQ(compare(hit(1, 0, 3), hit(1.5f, 0, 3)), Disagreement::None);              // same ids, any t
  EXPECT_EQ(compare(hit(100.009f, 0, 3), hit(100, 0, 4)), Disagreement::None);        // edge: within 1e-4
  EXPECT_EQ(compare(hit(100.02f, 0, 3), hit(100, 0, 4)), Disagreement::DifferentPrimitiveFarther);
  EXPECT_EQ(compare(hit(99.98f, 0, 3), hit(100, 0, 4)), Disagreement::DifferentPrimitiveCloser);
  EXPECT_EQ(compare(hit(2, 1, 3), hit(2, 0, 3)), Disagreement::None);                 // tie, other geometry
  EXPECT_EQ(compare(hit(2, 1, 3), hit(1, 0, 3)), Disagreement::DifferentPrimitiveFarther);
  EXPECT_EQ(compare(hit(0, 1, 3), hit(0, 0, 3)), Disagreement::None);                 // t = 0 does not divide by 0
  EXPECT_EQ(compare(true, true), Disagreement::None);
  EXPECT_EQ(compare(false, false), Disagreement::None);
  EXPECT_EQ(compare(true, false), Disagreement::OcclusionMismatch);
  EXPECT_EQ(compare(false, true), Disagreement::OcclusionMismatch);
  EXPECT_STREQ(disagreement_name(Disagreement::DifferentPrimitiveCloser), "different-primitive-closer");
  EXPECT_STREQ(disagreement_name(Disagreement::EdgeCrack), "edge-crack");
}

TEST(Compare, EdgeCracksAreMissesNextToAnEdgeOfEmbreesTriangle) {
  const OracleHit miss{};
  // Within 1e-4 of each of the three edges: u = 0, v = 0, u + v = 1 (the fandisk case: u + v = 1 - 2e-6).
  for (const Vec2 b : {Vec2{0.00005f, 0.5f}, Vec2{0.5f, 0.00005f}, Vec2{0.5f, 0.499998f}, Vec2{0.0f, 0.0f}}) {
    EXPECT_EQ(compare(miss, hit(1, 0, 0, b)), Disagreement::EdgeCrack) << b.x << " " << b.y;
    EXPECT_EQ(compare(hit(2, 0, 1), hit(1, 0, 0, b)), Disagreement::EdgeCrack) << b.x << " " << b.y;
    // Closer hits, other causes and agreeing rays are unchanged by the edge.
    EXPECT_EQ(compare(hit(0.5f, 0, 1), hit(1, 0, 0, b)), Disagreement::DifferentPrimitiveCloser);
    EXPECT_EQ(compare(hit(1, 0, 0), hit(1, 0, 0, b)), Disagreement::None);
    EXPECT_EQ(compare(hit(1.00001f, 0, 1), hit(1, 0, 0, b)), Disagreement::None);
  }
  // Just past the threshold: an ordinary miss / farther hit.
  EXPECT_EQ(compare(miss, hit(1, 0, 0, {0.0002f, 0.5f})), Disagreement::EmuMissEmbreeHit);
  EXPECT_EQ(compare(hit(2, 0, 1), hit(1, 0, 0, {0.3f, 0.6997f})), Disagreement::DifferentPrimitiveFarther);
  AgreementStats a;
  a.add(miss, hit(1, 0, 0, {0.5f, 0.5f}));
  EXPECT_EQ(a.count(Disagreement::EdgeCrack), 1u);
  EXPECT_EQ(a.disagreeing(), 1u);
}

TEST(AgreementStats, CountsCausesAndWorstError) {
  AgreementStats a;
  EXPECT_EQ(a.add(hit(1, 0, 0), hit(1.5f, 0, 0)), Disagreement::None);
  EXPECT_EQ(a.add(OracleHit{}, hit(1, 0, 0)), Disagreement::EmuMissEmbreeHit);
  EXPECT_EQ(a.add(OracleHit{}, OracleHit{}), Disagreement::None);
  AgreementStats b;
  b.add(true, false);
  b.add(hit(3, 0, 1), hit(2, 0, 2));
  b.add(hit(4, 0, 1), OracleHit{});
  a += b;
  EXPECT_EQ(a.rays(), 6u);
  EXPECT_EQ(a.agreeing(), 2u);
  EXPECT_EQ(a.disagreeing(), 4u);
  EXPECT_EQ(a.count(Disagreement::OcclusionMismatch), 1u);
  EXPECT_EQ(a.count(Disagreement::DifferentPrimitiveFarther), 1u);
  EXPECT_EQ(a.count(Disagreement::EmuHitEmbreeMiss), 1u);
  EXPECT_EQ(a.count(Disagreement::EmuMissEmbreeHit), 1u);
  EXPECT_EQ(a.count(Disagreement::DifferentPrimitiveCloser), 0u);
  EXPECT_DOUBLE_EQ(a.worst_relative_t_error, 0.5);  // (3 - 2) / 2 beats (1.5 - 1) / 1.5
  AgreementStats c = b;
  c += AgreementStats{};
  EXPECT_EQ(c, b);
}

// 22 disagreeing rays of 16,777,216 (a 4096 x 4096 image) are 99.99987 %: shown rounded down, never as 100 %.
TEST(AgreementStats, PercentIsRoundedDownSoThatADisagreementNeverReadsAHundred) {
  AgreementStats a;
  a.by_cause[static_cast<std::size_t>(Disagreement::None)] = 16'777'216 - 22;
  a.by_cause[static_cast<std::size_t>(Disagreement::EdgeCrack)] = 11;
  a.by_cause[static_cast<std::size_t>(Disagreement::EmuMissEmbreeHit)] = 11;
  EXPECT_EQ(a.percent_text(), "99.999%");
  EXPECT_EQ(a.percent_text(1), "99.9%");
  EXPECT_EQ(a.percent_text(0), "99%");
  EXPECT_EQ(a.causes_text(), "11 emu-miss-embree-hit, 11 edge-crack");
  AgreementStats half;
  half.add(true, true);
  half.add(true, false);
  EXPECT_EQ(half.percent_text(), "50.000%");
  AgreementStats all;
  all.add(true, true);
  EXPECT_EQ(all.percent_text(), "100.000%");
  EXPECT_EQ(all.causes_text(), "");
  EXPECT_EQ(AgreementStats{}.percent_text(2), "100.00%");  // no ray ran: nothing disagreed
  AgreementStats third;  // 1 of 3: 33.333...% rounded down
  third.add(true, true);
  third.add(true, false);
  third.add(false, true);
  EXPECT_EQ(third.percent_text(), "33.333%");
}

}  // namespace
}  // namespace hwbvh::emu
