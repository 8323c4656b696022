// The RT IP 2.0 (TraceRay2_0) and BVH4x2 (TraceRay3_0) loops: tiny hand-built trees whose steps, tests and stack
// traffic are known exactly, then random scenes checked against the Embree oracle and across thread counts.
#include <gtest/gtest.h>

#include <cmath>

#include "emu/rtip20/nodes.h"
#include "emu/traversal_fixture.h"
#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna3/tree_check.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test;
using namespace hwbvh::emu::test4;
using rdna3::kInvalidNode;
constexpr uint32_t I = kInvalidNode;
constexpr uint32_t kRoot = 0x15;

RayResult trace_one(Loop loop, const std::vector<uint32_t>& section, const Ray& ray, const TraceOptions& o = {}) {
  const Bvh4Section s = Bvh4Section::from(section);
  return loop == Loop::Rtip20 ? trace_ray_rtip20(s, ray, o) : trace_ray_bvh4x2(s, ray, o);
}

std::vector<uint32_t> node_sequence(Loop loop, const std::vector<uint32_t>& section, const Ray& ray,
                                    TraceOptions o = {}) {
  o.record_node_sequence = true;
  return fetched_nodes(trace(loop, Bvh4Section::from(section), std::span<const Ray>(&ray, 1), o).node_sequences.at(0));
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
  ASSERT_NO_FATAL_FAILURE(expect_nearer_wall_hit(r));
  // Steps: root (pushes wall 4, returns wall 2), wall 2 (pop), wall 4 (pop: TERMINAL).
  EXPECT_EQ(r.counters, (RayCounters{.steps = 3, .box_node_steps = 1, .primitive_node_steps = 2, .box_tests = 4,
                                     .triangle_tests = 2, .stack_pushes = 1, .stack_pops = 1, .max_stack_depth = 1, .blas_steps = 3}));
  EXPECT_EQ(node_sequence(Loop::Rtip20, two_walls(), ray_x({0, 0, 0})),
            (std::vector<uint32_t>{kRoot, tri_ptr(4), tri_ptr(5)}));
}

TEST(Bvh4x2Traversal, TwoWallsExactCounts) {
  const RayResult r = trace_one(Loop::Bvh4x2, two_walls(), ray_x({0, 0, 0}));
  ASSERT_NO_FATAL_FAILURE(expect_nearer_wall_hit(r));
  // Steps: (root, -), then both walls in one dual intersect.
  EXPECT_EQ(r.counters, (RayCounters{.steps = 2, .box_node_steps = 1, .primitive_node_steps = 2, .box_tests = 4,
                                     .triangle_tests = 2, .stack_pushes = 2, .stack_pops = 2, .max_stack_depth = 2, .blas_steps = 2}));
  // A dual step records both nodes it reads, the second flagged as part of the same step, each a 64-byte triangle
  // node with one triangle test; the root is a 128-byte fp32 box node with 4 box tests.
  EXPECT_EQ(node_sequence(Loop::Bvh4x2, two_walls(), ray_x({0, 0, 0})),
            (std::vector<uint32_t>{kRoot, tri_ptr(4), tri_ptr(5)}));
  TraceOptions o;
  o.record_node_sequence = true;
  const Ray ray = ray_x({0, 0, 0});
  const auto fetches = trace(Loop::Bvh4x2, Bvh4Section::from(two_walls()), std::span<const Ray>(&ray, 1), o)
                           .node_sequences.at(0);
  ASSERT_EQ(fetches.size(), 3u);
  EXPECT_EQ(fetches[0], (NodeFetch{.node = kRoot, .offset_64 = 2, .blocks_64 = 2, .box_tests = 4}));
  EXPECT_EQ(fetches[1], (NodeFetch{.node = tri_ptr(4), .offset_64 = 4, .blocks_64 = 1, .triangle_tests = 1}));
  EXPECT_EQ(fetches[2], (NodeFetch{.node = tri_ptr(5), .offset_64 = 5, .blocks_64 = 1, .triangle_tests = 1,
                                   .same_step = true}));
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
            (std::vector<uint32_t>{kRoot, tri_ptr(4, 1), tri_ptr(4, 0), tri_ptr(5)}));  // the pair's step reads both
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
const Ray kThroughFourBoxes = ray_x({0, 2.5f, 2.5f});  // the ray four_boxes() is made for

// four_boxes() with a two-entry stack: the hit in box d (checked here), and the nodes the loop visits.
struct OverflowRun {
  RayResult result;
  std::vector<uint32_t> sequence;
};
OverflowRun trace_overflowing(Loop loop) {
  TraceOptions o;
  o.stack.size = 2;
  OverflowRun run{trace_one(loop, four_boxes(), kThroughFourBoxes, o),
                  node_sequence(loop, four_boxes(), kThroughFourBoxes, o)};
  EXPECT_EQ(run.result.t, 8.0f);
  EXPECT_EQ(run.result.primitive_id, 3u);
  return run;
}

TEST(Rtip20Traversal, OverflowThenWalkBackExactSequence) {
  const OverflowRun run = trace_overflowing(Loop::Rtip20);
  const uint32_t a = box_ptr(4), b = box_ptr(6), c = box_ptr(8), d = box_ptr(10);
  // The root pushes d, c, b into two entries (d is lost); a, b and c are searched; popping below c finds an
  // INVALID_NODE left by a pop, so the loop walks back: triangle c -> box c -> root, which re-pushes only d.
  // After the hit in d, walk-back climbs d -> root -> (no parent) and the ray ends.
  EXPECT_EQ(run.sequence, (std::vector<uint32_t>{kRoot, a, tri_ptr(12), b, tri_ptr(13), c, tri_ptr(14), c, kRoot, d,
                                                 tri_ptr(15), d, kRoot}));
  EXPECT_EQ(run.result.counters,
            (RayCounters{.steps = 13, .box_node_steps = 9, .primitive_node_steps = 4, .box_tests = 36,
                         .triangle_tests = 4, .stack_pushes = 4, .stack_pops = 3, .stack_lost = 1,
                         .walk_back_steps = 4, .max_stack_depth = 2, .blas_steps = 13}));
  // A 16-entry stack never overflows here.
  const RayResult big = trace_one(Loop::Rtip20, four_boxes(), kThroughFourBoxes);
  EXPECT_EQ(big.t, 8.0f);
  EXPECT_EQ(big.counters.walk_back_steps, 0u);
  EXPECT_EQ(big.counters.steps, 9u);
}

TEST(Bvh4x2Traversal, OverflowThenWalkBackExactSequence) {
  const OverflowRun run = trace_overflowing(Loop::Bvh4x2);
  const uint32_t a = box_ptr(4), b = box_ptr(6), c = box_ptr(8), d = box_ptr(10);
  // (root) pushes d, c, b, a into two entries (d, c lost); (a, b); (ta, tb) drains the ring -> walk back from the
  // later node tb: box b, then the root re-pushes c, d; (c, d); (tc, td) hits; walk back td -> d -> root -> done.
  EXPECT_EQ(run.sequence, (std::vector<uint32_t>{kRoot, a, b, tri_ptr(12), tri_ptr(13), b, kRoot, c, d, tri_ptr(14),
                                                 tri_ptr(15), d, kRoot}));
  EXPECT_EQ(run.result.counters,
            (RayCounters{.steps = 9, .box_node_steps = 9, .primitive_node_steps = 4, .box_tests = 36,
                         .triangle_tests = 4, .stack_pushes = 10, .stack_pops = 8, .stack_lost = 2,
                         .walk_back_steps = 4, .max_stack_depth = 2, .blas_steps = 9}));
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
  bvh_build::BuildOptions bo;
  rdna3::configure_build(bo);
  Encoded e;
  e.bvh = rdna3::encode(scene, bvh_build::build_wide_bvh4(scene, bo).bvh, {});
  e.scene = std::move(scene);
  return e;
}

// The loop's closest hits and occlusion agree with the oracle (traversal_fixture.h), and its counters add up.
void expect_loop_agrees_with_oracle(const Encoded& e, const std::vector<Ray>& rays, Loop loop,
                                    const TraceOptions& o) {
  const Bvh4Section section = Bvh4Section::from(e.bvh.dwords);
  const TraceOutput out = trace(loop, section, rays, o, Executor(2));
  TraceOptions shadow = o;
  shadow.any_hit = true;
  expect_oracle_agreement(e.scene, rays, out, trace(loop, section, rays, shadow, Executor(2)));
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
    expect_loop_agrees_with_oracle(e, rays, GetParam(), o);
  }
}

TEST_P(RandomScenes, MeshesWithPairsAgreeWithTheOracle) {
  for (const char* name : {"rotated-objects.obj", "overflow-fan.obj", "alpha-cards.obj"}) {
    SCOPED_TRACE(name);
    const Encoded e = encode_scene(load_obj(hwbvh::test::project_scene(name)));
    EXPECT_GT(e.bvh.stats.pair_nodes, 0u);
    expect_loop_agrees_with_oracle(e, mixed_rays(e.scene.bounds(), 10000, 17), GetParam(), {});
  }
  const Encoded grid = encode_scene(hwbvh::test::quad_grid(30));
  expect_loop_agrees_with_oracle(grid, mixed_rays(Aabb{{-1, -1, -3}, {31, 31, 3}}, 10000, 23), GetParam(), {});
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
  expect_identical_runs(a, b);
  EXPECT_GT(a.total_counters().walk_back_steps, 0u);
}

INSTANTIATE_TEST_SUITE_P(Bvh4, RandomScenes, testing::Values(Loop::Rtip20, Loop::Bvh4x2),
                         [](const testing::TestParamInfo<Loop>& info) {
                           return info.param == Loop::Rtip20 ? std::string("Rtip20") : std::string("Bvh4x2");
                         });

TEST(Bvh4Comparison, DualIntersectTakesFewerStepsOnTheSameTree) {
  const Encoded e = encode_scene(load_obj(hwbvh::test::project_scene("rotated-objects.obj")));
  const std::vector<Ray> rays = random_rays(e.scene.bounds(), 2000, 9).rays;
  const Bvh4Section section = Bvh4Section::from(e.bvh.dwords);
  const RayCounters r20 = trace(Loop::Rtip20, section, rays, {}, Executor(2)).total_counters();
  const RayCounters x2 = trace(Loop::Bvh4x2, section, rays, {}, Executor(2)).total_counters();
  EXPECT_LT(x2.steps, r20.steps);
  EXPECT_GT(r20.steps, 0u);
}

// Camera rays go in 8x4 pixel tiles, one tile per wave, partial tiles at the image's edges (ray_gen.h): both loops
// trace exactly those waves, as the RT IP 3.1 and Xe3 emulators do, with the same per-ray results as consecutive
// waves of 32 give (only the wave statistics depend on how rays are grouped).
TEST(Bvh4Traversal, CameraTilesAreTheWaves) {
  const Encoded e = encode_scene(load_obj(hwbvh::test::project_scene("rotated-objects.obj")));
  const Bvh4Section section = Bvh4Section::from(e.bvh.dwords);
  const RayBatch batch = primary_rays(auto_frame(e.scene.bounds(), 20.0f / 10.0f), 20, 10);
  ASSERT_EQ(batch.wave_begin.size(), 9u);  // 3 x 3 tiles, the last column 4 pixels wide and the last row 2 high
  for (const Loop loop : {Loop::Rtip20, Loop::Bvh4x2}) {
    SCOPED_TRACE(loop == Loop::Rtip20 ? "rtip20" : "bvh4x2");
    TraceOptions o;
    o.record_node_sequence = true;
    const TraceOutput tiles = loop == Loop::Rtip20
                                  ? trace_rays_rtip20(section, batch.rays, batch.wave_begin, o, Executor(2))
                                  : trace_rays_bvh4x2(section, batch.rays, batch.wave_begin, o, Executor(2));
    const TraceOutput flat = trace(loop, section, batch.rays, o, Executor(2));
    ASSERT_EQ(tiles.waves.size(), batch.wave_begin.size());
    EXPECT_EQ(flat.waves.size(), 7u);  // 200 rays in waves of 32
    for (std::size_t w = 0; w < tiles.waves.size(); ++w) {
      const std::size_t end = w + 1 < batch.wave_begin.size() ? batch.wave_begin[w + 1] : batch.rays.size();
      EXPECT_EQ(tiles.waves[w].lanes, end - batch.wave_begin[w]) << "wave " << w;
    }
    EXPECT_EQ(tiles.node_sequences, flat.node_sequences);
    for (std::size_t i = 0; i < batch.rays.size(); ++i) {
      EXPECT_EQ(tiles.rays[i].hit, flat.rays[i].hit) << i;
      EXPECT_EQ(tiles.rays[i].t, flat.rays[i].t) << i;
      EXPECT_EQ(tiles.rays[i].counters.steps, flat.rays[i].counters.steps) << i;
    }
  }
}

}  // namespace
}  // namespace hwbvh::emu
