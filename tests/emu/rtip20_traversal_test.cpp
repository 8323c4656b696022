// The RT IP 2.0 (TraceRay2_0) and BVH4x2 (TraceRay3_0) loops: tiny hand-built trees whose steps, tests and stack
// traffic are known exactly, then random scenes checked against the Embree oracle and across thread counts.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include <glm/geometric.hpp>

#include "emu/rtip20_nodes.h"
#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/build/builder.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/emu/rtip20_traversal.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna3/tree_check.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test4;
using rdna3::kInvalidNode;
constexpr uint32_t I = kInvalidNode;
constexpr uint32_t kRoot = 0x15;

Ray ray_x(Vec3 origin, float tmin = 0.0f, float tmax = 100.0f) { return Ray{origin, {1.0f, 0.0f, 0.0f}, tmin, tmax}; }

enum class Loop { Rtip20, Bvh4x2 };

TraceOutput trace(Loop loop, const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& o,
                  const Executor& ex = Executor(1)) {
  return loop == Loop::Rtip20 ? trace_rays_rtip20(section, rays, o, ex) : trace_rays_bvh4x2(section, rays, o, ex);
}

RayResult trace_one(Loop loop, const std::vector<uint32_t>& section, const Ray& ray, const TraceOptions& o = {}) {
  const Bvh4Section s = Bvh4Section::from(section);
  return loop == Loop::Rtip20 ? trace_ray_rtip20(s, ray, o) : trace_ray_bvh4x2(s, ray, o);
}

std::vector<uint32_t> node_sequence(Loop loop, const std::vector<uint32_t>& section, const Ray& ray,
                                    TraceOptions o = {}) {
  o.record_node_sequence = true;
  return trace(loop, Bvh4Section::from(section), std::span<const Ray>(&ray, 1), o).node_sequences.at(0);
}

// Root with two lone triangles: walls at x = 2 (primitive 0, slot 4) and x = 4 (primitive 1, slot 5).
std::vector<uint32_t> two_walls() {
  Bvh4Image img;
  img.box(2, I, {child(tri_ptr(4), wall_box(2)), child(tri_ptr(5), wall_box(4))}, 2);
  img.triangles(4, kRoot, wall(2, 0));
  img.triangles(5, kRoot, wall(4, 1, 7));
  return img.section();
}

TEST(Rtip20Traversal, TwoWallsExactCounts) {
  const RayResult r = trace_one(Loop::Rtip20, two_walls(), ray_x({0, 0, 0}));
  ASSERT_EQ(r.fault, NodeFault::None);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.t, 2.0f);
  EXPECT_EQ(r.primitive_id, 0u);
  EXPECT_EQ(r.geometry_id, 0u);
  EXPECT_EQ(r.barycentrics, Vec2(0.25f, 0.25f));
  EXPECT_FALSE(r.front_face);  // the wall's normal points along +x, like the ray
  RayCounters c;
  c.steps = 3;  // root (pushes wall 4, returns wall 2), wall 2 (pop), wall 4 (pop: TERMINAL)
  c.box_node_steps = 1;
  c.primitive_node_steps = 2;
  c.box_tests = 4;
  c.triangle_tests = 2;
  c.stack_pushes = 1;
  c.stack_pops = 1;
  c.max_stack_depth = 1;
  EXPECT_EQ(r.counters, c);
  EXPECT_EQ(node_sequence(Loop::Rtip20, two_walls(), ray_x({0, 0, 0})),
            (std::vector<uint32_t>{kRoot, tri_ptr(4), tri_ptr(5)}));
}

TEST(Bvh4x2Traversal, TwoWallsExactCounts) {
  const RayResult r = trace_one(Loop::Bvh4x2, two_walls(), ray_x({0, 0, 0}));
  ASSERT_EQ(r.fault, NodeFault::None);
  EXPECT_EQ(r.t, 2.0f);
  EXPECT_EQ(r.primitive_id, 0u);
  EXPECT_EQ(r.barycentrics, Vec2(0.25f, 0.25f));
  EXPECT_FALSE(r.front_face);
  RayCounters c;
  c.steps = 2;  // (root, -), then both walls in one dual intersect
  c.box_node_steps = 1;
  c.primitive_node_steps = 2;
  c.box_tests = 4;
  c.triangle_tests = 2;
  c.stack_pushes = 2;
  c.stack_pops = 2;
  c.max_stack_depth = 2;
  EXPECT_EQ(r.counters, c);
  // Each step records its first node, the earlier of the two.
  EXPECT_EQ(node_sequence(Loop::Bvh4x2, two_walls(), ray_x({0, 0, 0})), (std::vector<uint32_t>{kRoot, tri_ptr(4)}));
}

// Root with a pair node (wall(2) and its partner, referenced through triangle 1) and a lone wall at x = 6.
std::vector<uint32_t> pair_and_wall() {
  Bvh4Image img;
  img.box(2, I, {child(tri_ptr(4, 1), wall_box(2)), child(tri_ptr(5), wall_box(6))}, 3);
  img.triangles(4, kRoot, wall(2, 5), wall_partner(2, 6));
  img.triangles(5, kRoot, wall(6, 7));
  return img.section();
}

TEST(Rtip20Traversal, PairTakesTwoStepsTriangleOneFirst) {
  // (y, z) = (2, 2) lies in triangle 1 (the partner) only.
  const Ray ray = ray_x({0, 2, 2});
  const RayResult r = trace_one(Loop::Rtip20, pair_and_wall(), ray);
  EXPECT_EQ(r.t, 2.0f);
  EXPECT_EQ(r.primitive_id, 6u);
  EXPECT_EQ(r.barycentrics, Vec2(0.25f, 0.5f));  // in the partner's own vertex order
  EXPECT_EQ(r.counters.steps, 4u);                // root, triangle 1, triangle 0, wall 6
  EXPECT_EQ(r.counters.primitive_node_steps, 3u);
  EXPECT_EQ(r.counters.triangle_tests, 3u);
  EXPECT_EQ(r.counters.stack_pushes, 1u);  // triangle 0 follows triangle 1 without touching the stack
  EXPECT_EQ(r.counters.stack_pops, 1u);
  EXPECT_EQ(node_sequence(Loop::Rtip20, pair_and_wall(), ray),
            (std::vector<uint32_t>{kRoot, tri_ptr(4, 1), tri_ptr(4, 0), tri_ptr(5)}));
  // Triangle 0 is hit through the second step of the pair.
  const RayResult r0 = trace_one(Loop::Rtip20, pair_and_wall(), ray_x({0, 0, 0}));
  EXPECT_EQ(r0.primitive_id, 5u);
  EXPECT_EQ(r0.counters.steps, 4u);
}

TEST(Bvh4x2Traversal, PairTakesOneStep) {
  const Ray ray = ray_x({0, 2, 2});
  const RayResult r = trace_one(Loop::Bvh4x2, pair_and_wall(), ray);
  EXPECT_EQ(r.t, 2.0f);
  EXPECT_EQ(r.primitive_id, 6u);
  EXPECT_EQ(r.barycentrics, Vec2(0.25f, 0.5f));
  EXPECT_EQ(r.counters.steps, 3u);  // root; triangle 1 + triangle 0; wall 6 alone
  EXPECT_EQ(r.counters.primitive_node_steps, 3u);
  EXPECT_EQ(r.counters.triangle_tests, 3u);
  EXPECT_EQ(node_sequence(Loop::Bvh4x2, pair_and_wall(), ray),
            (std::vector<uint32_t>{kRoot, tri_ptr(4, 1), tri_ptr(5)}));
}

TEST(Bvh4Traversal, MissAnyHitAndTmin) {
  for (Loop loop : {Loop::Rtip20, Loop::Bvh4x2}) {
    SCOPED_TRACE(loop == Loop::Rtip20 ? "rtip20" : "bvh4x2");
    const RayResult miss = trace_one(loop, two_walls(), ray_x({0, 10, 10}));
    EXPECT_FALSE(miss.hit);
    EXPECT_EQ(miss.counters.steps, 1u);
    TraceOptions shadow;
    shadow.any_hit = true;
    const RayResult any = trace_one(loop, two_walls(), ray_x({0, 0, 0}), shadow);
    EXPECT_TRUE(any.hit);
    EXPECT_EQ(any.counters.steps, 2u);  // stops on the first accepted hit, before that step's stack operation
    const RayResult late = trace_one(loop, two_walls(), ray_x({0, 0, 0}, 3.0f));
    EXPECT_EQ(late.t, 4.0f);  // reported along the caller's ray
    EXPECT_EQ(late.geometry_id, 7u);
    TraceOptions cull;
    cull.flags.cull_back_facing = true;
    EXPECT_FALSE(trace_one(loop, two_walls(), ray_x({0, 0, 0}), cull).hit);
  }
}

// Root with four box children along +x, each over one lone triangle. The ray passes (y, z) = (2.5, 2.5): inside
// every box, missing the walls in boxes a, b, c (they cover y + z <= 2) and hitting the partner in box d at x = 8.
std::vector<uint32_t> four_boxes() {
  Bvh4Image img;
  img.box(2, I,
          {child(box_ptr(4), wall_box(2)), child(box_ptr(6), wall_box(4)), child(box_ptr(8), wall_box(6)),
           child(box_ptr(10), wall_box(8))},
          4);
  for (uint32_t i = 0; i < 4; ++i) {
    img.box(4 + 2 * i, kRoot, {child(tri_ptr(12 + i), wall_box(2.0f + 2.0f * i))}, 1);
  }
  for (uint32_t i = 0; i < 3; ++i) img.triangles(12 + i, box_ptr(4 + 2 * i), wall(2.0f + 2.0f * i, i));
  img.triangles(15, box_ptr(10), wall_partner(8, 3));
  return img.section();
}

TEST(Rtip20Traversal, OverflowThenWalkBackExactSequence) {
  TraceOptions o;
  o.stack.size = 2;
  const Ray ray = ray_x({0, 2.5f, 2.5f});
  const RayResult r = trace_one(Loop::Rtip20, four_boxes(), ray, o);
  EXPECT_EQ(r.t, 8.0f);
  EXPECT_EQ(r.primitive_id, 3u);
  // The root pushes d, c, b into two entries (d is lost); a, b and c are searched; popping below c finds an
  // INVALID_NODE left by a pop, so the loop walks back: triangle c -> box c -> root, which re-pushes only d.
  // After the hit in d, walk-back climbs d -> root -> (no parent) and the ray ends.
  const uint32_t a = box_ptr(4), b = box_ptr(6), c = box_ptr(8), d = box_ptr(10);
  EXPECT_EQ(node_sequence(Loop::Rtip20, four_boxes(), ray, o),
            (std::vector<uint32_t>{kRoot, a, tri_ptr(12), b, tri_ptr(13), c, tri_ptr(14), c, kRoot, d, tri_ptr(15),
                                   d, kRoot}));
  RayCounters want;
  want.steps = 13;
  want.walk_back_steps = 4;
  want.box_node_steps = 9;
  want.primitive_node_steps = 4;
  want.box_tests = 36;
  want.triangle_tests = 4;
  want.stack_pushes = 4;
  want.stack_pops = 3;
  want.stack_lost = 1;
  want.max_stack_depth = 2;
  EXPECT_EQ(r.counters, want);
  // A 16-entry stack never overflows here.
  const RayResult big = trace_one(Loop::Rtip20, four_boxes(), ray);
  EXPECT_EQ(big.t, 8.0f);
  EXPECT_EQ(big.counters.walk_back_steps, 0u);
  EXPECT_EQ(big.counters.steps, 9u);
}

TEST(Bvh4x2Traversal, OverflowThenWalkBackExactSequence) {
  TraceOptions o;
  o.stack.size = 2;
  const Ray ray = ray_x({0, 2.5f, 2.5f});
  const RayResult r = trace_one(Loop::Bvh4x2, four_boxes(), ray, o);
  EXPECT_EQ(r.t, 8.0f);
  EXPECT_EQ(r.primitive_id, 3u);
  // (root) pushes d, c, b, a into two entries (d, c lost); (a, b); (ta, tb) drains the ring -> walk back from the
  // later node tb: box b, then the root re-pushes c, d; (c, d); (tc, td) hits; walk back td -> d -> root -> done.
  const uint32_t a = box_ptr(4), b = box_ptr(6), c = box_ptr(8), d = box_ptr(10);
  EXPECT_EQ(node_sequence(Loop::Bvh4x2, four_boxes(), ray, o),
            (std::vector<uint32_t>{kRoot, a, tri_ptr(12), b, kRoot, c, tri_ptr(14), d, kRoot}));
  RayCounters want;
  want.steps = 9;
  want.walk_back_steps = 4;
  want.box_node_steps = 9;
  want.primitive_node_steps = 4;
  want.box_tests = 36;
  want.triangle_tests = 4;
  want.stack_pushes = 10;
  want.stack_pops = 8;
  want.stack_lost = 2;
  want.max_stack_depth = 2;
  EXPECT_EQ(r.counters, want);
}

TEST(Bvh4Traversal, FaultsStepLimitAndNaN) {
  for (Loop loop : {Loop::Rtip20, Loop::Bvh4x2}) {
    SCOPED_TRACE(loop == Loop::Rtip20 ? "rtip20" : "bvh4x2");
    // A child pointer past the section, a procedural node, an unused triangle type.
    for (const uint32_t bad : {tri_ptr(4000), (4u << 3) | 7u, tri_ptr(4, 2)}) {
      Bvh4Image img;
      img.box(2, I, {child(bad, wall_box(2))}, 1);
      img.triangles(4, kRoot, wall(2, 0));
      const RayResult r = trace_one(loop, img.section(), ray_x({0, 0, 0}));
      EXPECT_EQ(r.fault, bad == tri_ptr(4000) ? NodeFault::OutOfRange : NodeFault::UnsupportedNode);
      EXPECT_EQ(r.fault_node, bad);
      EXPECT_EQ(r.counters.steps, 1u);  // the faulting step is not counted
    }
    // A malformed triangle id.
    {
      Bvh4Image img;
      img.box(2, I, {child(tri_ptr(4), wall_box(2))}, 1);
      img.triangles(4, kRoot, wall(2, 0));
      img.slot_dwords(4)[15] |= 3;  // triangle 0: I source 3
      EXPECT_EQ(trace_one(loop, img.section(), ray_x({0, 0, 0})).fault, NodeFault::MalformedPrimitive);
    }
    // A cycle: the root is its own child.
    {
      Bvh4Image img;
      img.box(2, I, {child(kRoot, wall_box(2))}, 0);
      TraceOptions o;
      o.step_limit = 50;
      const RayResult r = trace_one(loop, img.section(), ray_x({0, 0, 0}), o);
      EXPECT_EQ(r.counters.step_limit_hits, 1u);
      EXPECT_EQ(r.counters.steps, 50u);
    }
    const RayResult nan = trace_one(loop, two_walls(), Ray{{NAN, 0, 0}, {1, 0, 0}, 0, 10});
    EXPECT_FALSE(nan.hit);
    EXPECT_EQ(nan.counters.steps, 0u);
  }
  EXPECT_THROW(Bvh4Section::from(std::vector<uint32_t>(32, 0u)), Error);
  std::vector<uint32_t> truncated = two_walls();
  truncated.pop_back();
  EXPECT_THROW(Bvh4Section::from(truncated), Error);
}

// ---------------------------------------------------------------------------------------------------------------
// Random scenes against the oracle
// ---------------------------------------------------------------------------------------------------------------

struct Encoded {
  Scene scene;
  rdna3::EncodedBvh bvh;
};

Encoded encode_scene(Scene scene) {
  build::BuildOptions bo;
  rdna3::configure_build(bo);
  Encoded e;
  e.bvh = rdna3::encode(scene, build::build_wide_bvh4(scene, bo).bvh, {});
  e.scene = std::move(scene);
  return e;
}

// Rays from outside through the scene, plus rays from inside with short extents and tmin.
std::vector<Ray> mixed_rays(const Aabb& bounds, uint32_t count, uint32_t seed) {
  std::vector<Ray> rays = random_rays(bounds, count / 2, seed).rays;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> x(bounds.min.x, bounds.max.x), y(bounds.min.y, bounds.max.y),
      z(bounds.min.z, bounds.max.z);
  const float diagonal = glm::length(bounds.extent());
  for (uint32_t i = rays.size(); i < count; ++i) {
    const Vec3 o{x(rng), y(rng), z(rng)}, target{x(rng), y(rng), z(rng)};
    rays.push_back(Ray{o, target - o, i % 3 == 0 ? 0.05f : 0.0f, i % 5 == 0 ? 0.3f : 2.0f * diagonal});
  }
  return rays;
}

// At least 99.99% of the rays agree with Embree (closest hit, and occlusion for the same rays as shadow rays).
// Disagreements are listed, not failed on one by one: grazing an edge, the non-watertight Möller–Trumbore test
// and Embree's robust test may decide differently.
void expect_oracle_agreement(const Encoded& e, const std::vector<Ray>& rays, Loop loop, const TraceOptions& o) {
  const blob::GeometrySection geometry = blob::decode_geometry(blob::encode_geometry(e.scene), e.scene.source);
  const Oracle oracle(geometry, e.scene.source, 1);
  const Bvh4Section section = Bvh4Section::from(e.bvh.dwords);
  const TraceOutput out = trace(loop, section, rays, o, Executor(2));
  TraceOptions shadow = o;
  shadow.any_hit = true;
  const TraceOutput occ = trace(loop, section, rays, shadow, Executor(2));
  AgreementStats closest, occlusion;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const RayResult& r = out.rays[i];
    ASSERT_EQ(r.fault, NodeFault::None) << "ray " << i;
    ASSERT_EQ(r.counters.step_limit_hits, 0u) << "ray " << i;
    const Disagreement d = closest.add(OracleHit{r.hit, r.t, r.geometry_id, r.primitive_id},
                                       oracle.trace_closest(rays[i]));
    if (d != Disagreement::None) {
      std::cout << e.scene.source << " ray " << i << ": " << disagreement_name(d) << " (emulator t " << r.t
                << ", stack entries lost " << r.counters.stack_lost << ")\n";
    }
    occlusion.add(occ.rays[i].hit, oracle.occluded(rays[i]));
  }
  EXPECT_GE(closest.agreeing() * 10000, closest.rays() * 9999) << closest.disagreeing() << " of " << rays.size();
  EXPECT_GE(occlusion.agreeing() * 10000, occlusion.rays() * 9999) << occlusion.disagreeing() << " of " << rays.size();
  const RayCounters total = out.total_counters();
  EXPECT_EQ(total.box_tests, 4 * total.box_node_steps);
  EXPECT_EQ(total.obb_steps, 0u);
  if (loop == Loop::Rtip20) {
    EXPECT_EQ(total.steps, total.box_node_steps + total.primitive_node_steps);
    EXPECT_EQ(total.triangle_tests, total.primitive_node_steps);
  } else {
    EXPECT_LE(total.steps, total.box_node_steps + total.primitive_node_steps);
    EXPECT_LE(total.box_node_steps + total.primitive_node_steps, 2 * total.steps);
  }
}

class RandomScenes : public testing::TestWithParam<Loop> {};

TEST_P(RandomScenes, SoupAgreesWithTheOracleAtEveryStackSize) {
  const Encoded e = encode_scene(hwbvh::test::random_triangle_soup(1500, 11, 10.0f, 0.8f, 2));
  ASSERT_TRUE(rdna3::check_encoded_tree(e.bvh.dwords, &e.scene).ok());
  const std::vector<Ray> rays = mixed_rays(e.scene.bounds(), 3000, 5);
  for (uint32_t size : {16u, 8u, 2u}) {
    SCOPED_TRACE(testing::Message() << "stack " << size);
    TraceOptions o;
    o.stack.size = size;
    expect_oracle_agreement(e, rays, GetParam(), o);
  }
}

TEST_P(RandomScenes, MeshesWithPairsAgreeWithTheOracle) {
  for (const char* name : {"rotated-objects.obj", "overflow-fan.obj", "alpha-cards.obj"}) {
    SCOPED_TRACE(name);
    const Encoded e = encode_scene(load_obj(test::project_scene(name)));
    EXPECT_GT(e.bvh.stats.pair_nodes, 0u);
    expect_oracle_agreement(e, mixed_rays(e.scene.bounds(), 10000, 17), GetParam(), {});
  }
  const Encoded grid = encode_scene(hwbvh::test::quad_grid(30));
  expect_oracle_agreement(grid, mixed_rays(Aabb{{-1, -1, -3}, {31, 31, 3}}, 10000, 23), GetParam(), {});
}

TEST_P(RandomScenes, IdenticalAtAnyThreadCount) {
  const Encoded e = encode_scene(hwbvh::test::random_triangle_soup(1500, 3, 10.0f, 0.8f, 2));
  const std::vector<Ray> rays = mixed_rays(e.scene.bounds(), 600, 3);
  TraceOptions o;
  o.stack.size = 4;
  o.record_node_sequence = true;
  const Bvh4Section section = Bvh4Section::from(e.bvh.dwords);
  const TraceOutput a = trace(GetParam(), section, rays, o, Executor(1));
  const TraceOutput b = trace(GetParam(), section, rays, o, Executor(3));
  EXPECT_TRUE(a.rays == b.rays);
  EXPECT_TRUE(a.waves == b.waves);
  EXPECT_TRUE(a.node_sequences == b.node_sequences);
  for (std::size_t i = 0; i < rays.size(); ++i) EXPECT_EQ(a.node_sequences[i].size(), a.rays[i].counters.steps);
  EXPECT_GT(a.total_counters().walk_back_steps, 0u);
  const WaveStats w = a.total_waves();
  EXPECT_EQ(w.lanes, rays.size());
  EXPECT_EQ(w.active_lane_steps, a.total_counters().steps);
}

INSTANTIATE_TEST_SUITE_P(Bvh4, RandomScenes, testing::Values(Loop::Rtip20, Loop::Bvh4x2),
                         [](const testing::TestParamInfo<Loop>& info) {
                           return info.param == Loop::Rtip20 ? std::string("Rtip20") : std::string("Bvh4x2");
                         });

TEST(Bvh4Comparison, DualIntersectTakesFewerStepsOnTheSameTree) {
  const Encoded e = encode_scene(load_obj(test::project_scene("rotated-objects.obj")));
  const std::vector<Ray> rays = random_rays(e.scene.bounds(), 2000, 9).rays;
  const Bvh4Section section = Bvh4Section::from(e.bvh.dwords);
  const RayCounters r20 = trace(Loop::Rtip20, section, rays, {}, Executor(2)).total_counters();
  const RayCounters x2 = trace(Loop::Bvh4x2, section, rays, {}, Executor(2)).total_counters();
  EXPECT_LT(x2.steps, r20.steps);
  EXPECT_GT(r20.steps, 0u);
}

}  // namespace
}  // namespace hwbvh::emu
