// Wave32 lockstep statistics, determinism across thread counts, and agreement with a brute-force reference on
// trees built by the real builder and encoder.
#include <gtest/gtest.h>

#include <random>

#include <glm/geometric.hpp>

#include "emu/rtip31/trees.h"
#include "emu/rtip31/intersect_node.h"
#include "emu/traversal_fixture.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/formats/rdna4/tree_check.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test;

TEST(Wavefront, LockstepStatistics) {
  // Two leaves (walls at x = 2 and 4): a ray along +x through the origin takes 3 steps (box, primitive,
  // primitive); one at y = 10 misses in 1 step (box).
  const NodeImage img = two_leaves();
  std::vector<Ray> rays;
  for (int i = 0; i < 40; ++i) rays.push_back(Ray{{0, i % 2 == 0 ? 0.0f : 10.0f, 0}, {1, 0, 0}, 0, 100});
  const TraceOutput out = trace_rays(img.memory(), 0x15, rays, {}, Executor(1));
  ASSERT_EQ(out.rays.size(), 40u);
  ASSERT_EQ(out.waves.size(), 2u);
  EXPECT_TRUE(out.node_sequences.empty());

  WaveStats w0;
  w0.lanes = 32;
  w0.iterations = 3;               // the slowest lane
  w0.active_lane_steps = 32 + 16 + 16;
  w0.box_lane_steps = 32;
  w0.primitive_lane_steps = 32;
  EXPECT_EQ(out.waves[0], w0);
  EXPECT_DOUBLE_EQ(out.waves[0].simd_efficiency(), 64.0 / 96.0);
  WaveStats w1;
  w1.lanes = 8;
  w1.iterations = 3;
  w1.active_lane_steps = 8 + 4 + 4;
  w1.box_lane_steps = 8;
  w1.primitive_lane_steps = 8;
  EXPECT_EQ(out.waves[1], w1);
  EXPECT_DOUBLE_EQ(out.waves[1].simd_efficiency(), 16.0 / 96.0);  // a partial wave still occupies 32 lanes

  const WaveStats total = out.total_waves();
  EXPECT_EQ(total.lanes, 40u);
  EXPECT_EQ(total.active_lane_steps, out.total_counters().steps);
  EXPECT_EQ(out.total_counters().steps, 20u * 3 + 20u * 1);
  EXPECT_EQ(WaveStats{}.simd_efficiency(), 1.0);

  const TraceOutput none = trace_rays(img.memory(), 0x15, std::span<const Ray>{}, {}, Executor(2));
  EXPECT_TRUE(none.rays.empty());
  EXPECT_TRUE(none.waves.empty());
}

TEST(Wavefront, MixedNodeTypeIterations) {
  // Three boxes A, B, C under the root, each with one leaf (walls at 9, 8, 3.5). Lane 0 looks along +x from the
  // origin: box, box, prim, box, prim, box, prim. Lane 1 starts inside C looking along -x: every box is entered
  // at t = 0, only C's wall is in front: box, box, box, box, prim.
  const NodeImage img = three_boxes();
  const std::vector<Ray> rays{Ray{{0, 0, 0}, {1, 0, 0}, 0, 100}, Ray{{3.75f, 0, 0}, {-1, 0, 0}, 0, 100}};
  TraceOptions o;
  o.record_node_sequence = true;
  const TraceOutput out = trace_rays(img.memory(), 0x15, rays, o, Executor(1));
  EXPECT_EQ(fetched_nodes(out.node_sequences[0]), (std::vector<uint32_t>{0x15, 0x25, 0x50, 0x35, 0x60, 0x45, 0x70}));
  EXPECT_EQ(fetched_nodes(out.node_sequences[1]), (std::vector<uint32_t>{0x15, 0x25, 0x35, 0x45, 0x70}));
  EXPECT_EQ(out.rays[1].primitive_id, 2u);
  EXPECT_EQ(out.rays[1].t, 0.25f);
  const WaveStats& w = out.waves.at(0);
  EXPECT_EQ(w.iterations, 7u);
  EXPECT_EQ(w.active_lane_steps, 12u);
  EXPECT_EQ(w.box_lane_steps, 8u);
  EXPECT_EQ(w.primitive_lane_steps, 4u);
  EXPECT_EQ(w.mixed_iterations, 1u);  // iteration 3: lane 0 on a primitive, lane 1 on a box
}

// Closest hit by brute force (Möller–Trumbore in double) for the reference.
struct RefHit {
  bool hit = false;
  double t = 0;
  uint32_t tri = 0;
};
RefHit brute_force(const Scene& s, const Ray& r) {
  RefHit best;
  best.t = r.tmax;
  for (uint32_t i = 0; i < s.triangles.size(); ++i) {
    if (s.is_degenerate(i)) continue;
    const Triangle& tri = s.triangles[i];
    const glm::dvec3 a(s.positions[tri.v[0]]), b(s.positions[tri.v[1]]), c(s.positions[tri.v[2]]);
    const glm::dvec3 o(r.origin), d(r.direction);
    const glm::dvec3 e1 = b - a, e2 = c - a, p = glm::cross(d, e2);
    const double det = glm::dot(e1, p);
    if (det == 0) continue;
    const glm::dvec3 tv = o - a;
    const double u = glm::dot(tv, p) / det;
    const glm::dvec3 q = glm::cross(tv, e1);
    const double v = glm::dot(d, q) / det, t = glm::dot(e2, q) / det;
    if (u < 0 || v < 0 || u + v > 1 || t < r.tmin || t >= best.t) continue;
    best = {true, t, i};
  }
  return best;
}

struct EncodedScene {
  Scene scene;
  rdna4::EncodedBvh bvh;
};
EncodedScene encode_soup(bool obb) {
  EncodedScene e;
  e.scene = hwbvh::test::random_triangle_soup(1500, 11, 10.0f, 0.8f, 2);
  bvh_build::BuildOptions bo;
  bo.leaf_fits = rdna4::primitive_leaf_fits;
  rdna4::EncodeOptions eo;
  eo.obb = obb;
  e.bvh = rdna4::encode(e.scene, bvh_build::build_wide_bvh(e.scene, bo).bvh, eo);
  return e;
}

std::vector<Ray> random_rays(uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> in(-2.0f, 12.0f);
  std::vector<Ray> rays;
  for (uint32_t i = 0; i < count; ++i) {
    const Vec3 o{in(rng), in(rng), in(rng)}, target{in(rng), in(rng), in(rng)};
    rays.push_back(Ray{o, target - o, i % 3 == 0 ? 0.05f : 0.0f, i % 5 == 0 ? 0.5f : 10.0f});
  }
  return rays;
}

// Every ray's hit agrees with brute force: same triangle, or the same distance (shared edges, ties).
void expect_agreement(const EncodedScene& e, const TraceOutput& out, const std::vector<Ray>& rays) {
  int mismatches = 0;
  for (size_t i = 0; i < rays.size(); ++i) {
    const RefHit ref = brute_force(e.scene, rays[i]);
    const RayResult& r = out.rays[i];
    ASSERT_EQ(r.fault, NodeFault::None) << "ray " << i;
    ASSERT_EQ(r.counters.step_limit_hits, 0u);
    bool agree = r.hit == ref.hit;
    if (agree && ref.hit) {
      const Triangle& tri = e.scene.triangles[ref.tri];
      agree = (r.geometry_id == tri.geometry && r.primitive_id == tri.primitive) ||
              std::abs(r.t - ref.t) <= 1e-4 * std::max(1.0, ref.t);
    }
    if (!agree && ++mismatches <= 5) {
      ADD_FAILURE() << "ray " << i << ": emulator hit " << r.hit << " t " << r.t << " vs reference " << ref.hit
                    << " t " << ref.t;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Closest hits with the hardware ring and with a ring of 8 (which overflows here, so walk-back must recover every
// closest hit, §7.4), and shadow-ray occlusion, all against brute force.
void check_against_brute_force(bool obb) {
  const std::vector<Ray> rays = random_rays(400, 5);
  const EncodedScene e = encode_soup(obb);
  // A malformed tree is the encoder's fault, not the emulator's: say so instead of listing bad rays.
  const rdna4::TreeCheckResult check = rdna4::check_encoded_tree(e.bvh.dwords, &e.scene);
  ASSERT_TRUE(check.ok()) << "encoder output fails its tree check: " << check.problems.front();
  const NodeMemory mem{e.bvh.dwords};
  const TraceOutput out = trace_rays(mem, e.bvh.root_pointer, rays, {}, Executor(2));
  expect_agreement(e, out, rays);
  const RayCounters total = out.total_counters();
  EXPECT_GT(total.box_tests, 0u);
  EXPECT_GT(total.triangle_tests, 0u);
  EXPECT_EQ(total.box_tests, 8 * total.box_node_steps);
  EXPECT_EQ(total.steps, total.box_node_steps + total.primitive_node_steps);
  EXPECT_EQ(total.obb_steps > 0, obb);

  TraceOptions small;
  small.stack.size = 8;
  const TraceOutput out8 = trace_rays(mem, e.bvh.root_pointer, rays, small, Executor(2));
  EXPECT_GT(out8.total_counters().walk_back_steps, 0u);
  expect_agreement(e, out8, rays);

  TraceOptions shadow;
  shadow.any_hit = true;
  const TraceOutput occ = trace_rays(mem, e.bvh.root_pointer, rays, shadow, Executor(2));
  for (size_t i = 0; i < rays.size(); ++i) {
    EXPECT_EQ(occ.rays[i].hit, brute_force(e.scene, rays[i]).hit) << "ray " << i;
    EXPECT_LE(occ.rays[i].counters.steps, out.rays[i].counters.steps);  // same path up to the first hit
  }
}

TEST(Wavefront, ClosestHitsMatchBruteForce) { check_against_brute_force(false); }
TEST(Wavefront, ClosestHitsMatchBruteForceObb) { check_against_brute_force(true); }

TEST(Wavefront, SmallRingsOverflowAndWalkBack) {
  const EncodedScene e = encode_soup(false);
  const std::vector<Ray> rays = random_rays(200, 9);
  TraceOptions o;
  o.stack.size = 2;
  const TraceOutput out = trace_rays(NodeMemory{e.bvh.dwords}, e.bvh.root_pointer, rays, o, Executor(2));
  const RayCounters total = out.total_counters();
  EXPECT_GT(total.stack_lost, 0u);
  EXPECT_GT(total.walk_back_steps, 0u);
  EXPECT_EQ(total.max_stack_depth, 2u);
  EXPECT_EQ(total.step_limit_hits, 0u);
}

TEST(Wavefront, IdenticalAtAnyThreadCount) {
  const EncodedScene e = encode_soup(true);
  const std::vector<Ray> rays = random_rays(300, 3);
  TraceOptions o;
  o.stack.size = 4;
  o.record_node_sequence = true;
  const NodeMemory mem{e.bvh.dwords};
  const TraceOutput a = trace_rays(mem, e.bvh.root_pointer, rays, o, Executor(1));
  const TraceOutput b = trace_rays(mem, e.bvh.root_pointer, rays, o, Executor(3));
  expect_identical_runs(a, b);
}

// trace_rays into a TraceOutput that held an earlier, larger trace (with node sequences) gives exactly a fresh
// call's output; so does tracing another tree afterwards (the pooled decode caches are emptied for it).
TEST(Wavefront, ReusedOutputAndCachesGiveFreshResults) {
  const EncodedScene aa = encode_soup(false), obb = encode_soup(true);
  const NodeMemory aa_memory{aa.bvh.dwords}, obb_memory{obb.bvh.dwords};
  const std::vector<Ray> many = random_rays(300, 31), few = random_rays(70, 32);
  const auto waves = [](size_t rays) {
    std::vector<uint32_t> begin;
    for (uint32_t first = 0; first < rays; first += kWaveSize) begin.push_back(first);
    return begin;
  };
  TraceOptions recording;
  recording.record_node_sequence = true;
  TraceOutput out;
  trace_rays(obb_memory, obb.bvh.root_pointer, many, waves(many.size()), recording, Executor(2), out);
  expect_identical_runs(out, trace_rays(obb_memory, obb.bvh.root_pointer, many, recording, Executor(1)));
  trace_rays(aa_memory, aa.bvh.root_pointer, few, waves(few.size()), {}, Executor(2), out);
  const TraceOutput fresh = trace_rays(aa_memory, aa.bvh.root_pointer, few, {}, Executor(1));
  EXPECT_TRUE(out.rays == fresh.rays);
  EXPECT_TRUE(out.waves == fresh.waves);
  EXPECT_TRUE(out.node_sequences.empty());
  // Invalid boundaries leave the output alone.
  const std::vector<uint32_t> bad = {1};
  EXPECT_THROW(trace_rays(aa_memory, aa.bvh.root_pointer, few, bad, {}, Executor(1), out), Error);
  EXPECT_TRUE(out.rays == fresh.rays);
}

// The step compiled for the default intersect options (taken by trace_rays when they are in use) and the general
// step: identical outputs. disable_triangle_cull is carried but never consulted (§5.4), so setting it changes no
// result and makes trace_rays take the general step; trace_ray takes it too, without the decode cache.
TEST(Wavefront, DefaultOptionsStepAgreesWithTheGeneralStep) {
  const std::vector<Ray> rays = random_rays(300, 23);
  for (bool obb : {false, true}) {
    const EncodedScene e = encode_soup(obb);
    const NodeMemory mem{e.bvh.dwords};
    for (uint32_t ring : {16u, 4u}) {
      for (bool any_hit : {false, true}) {
        TraceOptions defaults;
        defaults.stack.size = ring;
        defaults.any_hit = any_hit;
        defaults.record_node_sequence = true;
        TraceOptions general = defaults;
        general.flags.disable_triangle_cull = true;
        ASSERT_TRUE(RayTraversal::default_intersect(defaults));
        ASSERT_FALSE(RayTraversal::default_intersect(general));
        const TraceOutput fast = trace_rays(mem, e.bvh.root_pointer, rays, defaults, Executor(1));
        expect_identical_runs(fast, trace_rays(mem, e.bvh.root_pointer, rays, general, Executor(1)));
        for (size_t i = 0; i < rays.size(); ++i) {
          EXPECT_TRUE(fast.rays[i] == trace_ray(mem, e.bvh.root_pointer, rays[i], general)) << "ray " << i;
        }
      }
    }
  }
}

#if HWBVH_EMU_AVX2
// The wave loop compiled for AVX2 (taken when the CPU has it) and the portable one: identical outputs, node
// sequences included, on OBB and axis-aligned trees, with the hardware ring and an overflowing one.
TEST(Wavefront, Avx2AndPortablePathsAgree) {
  if (!detail::use_avx2) GTEST_SKIP() << "this CPU has no AVX2";
  const std::vector<Ray> rays = random_rays(300, 21);
  for (bool obb : {false, true}) {
    const EncodedScene e = encode_soup(obb);
    const NodeMemory mem{e.bvh.dwords};
    for (uint32_t ring : {16u, 4u}) {
      TraceOptions o;
      o.stack.size = ring;
      o.record_node_sequence = true;
      const TraceOutput avx2 = trace_rays(mem, e.bvh.root_pointer, rays, o, Executor(1));
      detail::use_avx2 = false;
      const TraceOutput portable = trace_rays(mem, e.bvh.root_pointer, rays, o, Executor(1));
      detail::use_avx2 = true;
      expect_identical_runs(avx2, portable);
    }
  }
}
#endif

}  // namespace
}  // namespace hwbvh::emu
