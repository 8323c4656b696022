// The TraceRay3_1 loop across levels (docs/rtip31-format.md §5.5, §6.4, §7.2, §7.3) on a hand-built two-level scene
// whose steps and tests are known exactly: two instances of one two-triangle BLAS.
#include <string>

#include <gtest/gtest.h>

#include <glm/gtc/matrix_transform.hpp>

#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::emu {
namespace {

// A unit quad in the z = 0 plane, x and y in [-1, 1], as two triangles of one geometry.
Scene quad() {
  Scene s;
  s.source = "quad";
  s.positions = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
  s.triangles = {Triangle{.v = {0, 1, 2}, .geometry = 0, .primitive = 0},
                 Triangle{.v = {0, 2, 3}, .geometry = 0, .primitive = 1}};
  s.geometries = {Geometry{"quad", 0, 2}};
  return s;
}

// Instance 0 at the origin with mask 0x01; instance 1 mirrored in x (det < 0) and moved to x = 4, mask 0x02.
InstancedScene two_quads() {
  InstancedScene s;
  s.source = "two-quads";
  s.meshes = {quad()};
  s.instances.push_back({.name = "a", .mesh = 0, .world = glm::dmat4(1.0), .instance_id = 0, .mask = 0x01});
  glm::dmat4 mirrored = glm::translate(glm::dmat4(1.0), glm::dvec3(4, 0, 0));
  mirrored = glm::scale(mirrored, glm::dvec3(-1, 1, 1));
  s.instances.push_back({.name = "b", .mesh = 0, .world = mirrored, .instance_id = 1, .mask = 0x02});
  return s;
}

const LoadedBvh& two_quads_bvh() {
  static const LoadedBvh bvh = [] {
    pipeline::BuildBlobOptions options;
    options.encode.obb = false;
    options.build.threads = 1;
    return load_bvh(pipeline::build_instanced_blob(two_quads(), options).blob, "two-quads.hwbvh");
  }();
  return bvh;
}

Ray down_at(float x, float y) { return Ray{{x, y, 5.0f}, {0.0f, 0.0f, -1.0f}, 0.0f, 100.0f}; }

TEST(TwoLevel, TheSceneIsOneTopBoxTwoInstancesAndOneBlas) {
  const LoadedBvh& bvh = two_quads_bvh();
  ASSERT_TRUE(bvh.two_level());
  ASSERT_EQ(bvh.levels->blases.size(), 1u);
  EXPECT_EQ(bvh.levels->top_bytes, 4u * 128);  // header, one box node, two instance nodes
  EXPECT_EQ(bvh.instance_count(), 2u);
  EXPECT_EQ(bvh.levels->blases[0].bytes, 3u * 128);  // header, root box node, one primitive node (one pair)
}

TEST(TwoLevel, ExactStepsIntoOneInstance) {
  const LoadedBvh& bvh = two_quads_bvh();
  const RayResult r = trace_ray(bvh.memory(), bvh.root, down_at(0.5f, -0.5f), {});
  ASSERT_TRUE(r.hit);
  EXPECT_EQ(r.t, 5.0f);
  EXPECT_EQ(r.instance_index, 0u);
  EXPECT_EQ(r.geometry_id, 0u);
  EXPECT_EQ(r.primitive_id, 0u);
  EXPECT_TRUE(r.front_face);  // the ray travels against (b - a) x (c - a) = +z
  // Steps: the top box (8 slab tests; only instance 0's box is hit), instance 0 (4 filter tests, the transition),
  // then the BLAS's one pair (2 triangle tests): the BLAS is that pair behind its root box, so the instance node
  // names the primitive node itself and no step is spent on the root box. 3 steps, 12 box and 2 triangle tests.
  // Pushes: instance 0, the pair; both popped. The pair's range ends, the ring is empty and the traversal ends.
  EXPECT_EQ(r.counters, (RayCounters{.steps = 3, .box_node_steps = 1, .primitive_node_steps = 1, .box_tests = 12,
                                     .triangle_tests = 2, .stack_pushes = 2, .stack_pops = 2, .max_stack_depth = 1,
                                     .tlas_steps = 2, .blas_steps = 1, .instance_node_steps = 1,
                                     .instance_transitions = 1}));
}

TEST(TwoLevel, AnInstanceCulledByTheRaysMaskIsNeverEntered) {
  const LoadedBvh& bvh = two_quads_bvh();
  TraceOptions options;
  options.instance_mask = 0x02;  // instance 0 has mask 0x01: the top box node drops its slot (§5.3 step 3)
  const RayResult r = trace_ray(bvh.memory(), bvh.root, down_at(0.5f, -0.5f), options);
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.counters, (RayCounters{.steps = 1, .box_node_steps = 1, .box_tests = 8, .tlas_steps = 1}));
  options.instance_mask = 0x03;
  EXPECT_TRUE(trace_ray(bvh.memory(), bvh.root, down_at(0.5f, -0.5f), options).hit);
}

TEST(TwoLevel, TheInstanceNodeCullsOnTheMaskToo) {
  // The instruction on the instance node alone (§5.5): a ray mask without the instance's bit returns a miss and
  // leaves the ray untransformed; with it, the ray comes back in object space.
  const LoadedBvh& bvh = two_quads_bvh();
  const uint32_t instance1 = rdna4::make_node_pointer(3 * 128, rdna4::kTypeInstance);
  RayOperands ray{{4.5f, 0.0f, 5.0f}, {0.0f, 0.0f, -1.0f}, 100.0f, 0x01};
  PreparedRay object_ray;  // the default operands: origin 0, direction +z
  InstanceIntersect culled = intersect_instance(bvh.memory(), {}, ray, instance1, {}, &object_ray);
  EXPECT_TRUE(culled.culled);
  EXPECT_EQ(culled.dw[7], 0xFFFFFFFFu);
  EXPECT_EQ(object_ray.operands.origin, Vec3{0.0f});  // the operands stay as they were: nothing written back
  EXPECT_EQ(object_ray.operands.direction, (Vec3{0.0f, 0.0f, 1.0f}));
  ray.instance_mask = 0x02;
  const InstanceIntersect entered = intersect_instance(bvh.memory(), {}, ray, instance1, {}, &object_ray);
  EXPECT_FALSE(entered.culled);
  // The BLAS root box leads only to one pair's primitive node (slot 2): the instance names that node (pair 0).
  EXPECT_EQ(rdna4::blas_root_from_filter_result(entered.dw[7]), rdna4::make_node_pointer(2 * 128, 0));
  EXPECT_EQ(object_ray.operands.origin, (Vec3{-0.5f, 0.0f, 5.0f}));  // x' = -(x - 4)
  EXPECT_EQ(object_ray.operands.direction, (Vec3{-0.0f, 0.0f, -1.0f}));
  // The BLAS pointer carries SKIP_PROCEDURAL (a triangle BLAS) merged with the ray's flags (none).
  EXPECT_EQ(rdna4::base_pointer_flags(uint64_t{entered.dw[2]} | uint64_t{entered.dw[3]} << 32),
            rdna4::kPointerFlagSkipProcedural);
}

TEST(TwoLevel, TheFilterResultNamesTheBlasRootInItsFirstByteUnderEveryHeuristic) {
  // Instance 1 names the BLAS's one pair in GPURT's primitive-root form: filter child 0 always misses. The hit
  // children's bytes come first whatever the sort (§5.5), so the traversal, which reads byte 0, enters the pair with
  // sorting off too (it used to read the missed child 0's 0xFF as a primitive root at node 0xF0).
  const LoadedBvh& bvh = two_quads_bvh();
  const uint32_t instance1 = rdna4::make_node_pointer(3 * 128, rdna4::kTypeInstance);
  const RayOperands ray{{4.5f, 0.0f, 5.0f}, {0.0f, 0.0f, -1.0f}, 100.0f, 0x02};
  for (const bool box_sort : {true, false}) {
    for (const SortHeuristic heuristic : {SortHeuristic::Closest, SortHeuristic::LargestFirst,
                                          SortHeuristic::ClosestMidpoint, SortHeuristic::Disabled}) {
      IntersectOptions options;
      options.box_sort = box_sort;
      options.heuristic = heuristic;
      const InstanceIntersect r = intersect_instance(bvh.memory(), {}, ray, instance1, options, nullptr);
      const std::string what = "heuristic " + std::to_string(static_cast<int>(heuristic)) +
                               (box_sort ? "" : ", box sort off");
      EXPECT_EQ(rdna4::blas_root_from_filter_result(r.dw[7]), rdna4::make_node_pointer(2 * 128, 0)) << what;
      EXPECT_EQ(r.dw[7] >> 8, 0xFFFFFFu) << what;  // children 2 and 3 repeat child 1's pointer: dropped (§5.3 step 6)
      TraceOptions trace;
      trace.intersect = options;
      const RayResult hit = trace_ray(bvh.memory(), bvh.root, down_at(4.5f, -0.5f), trace);
      EXPECT_TRUE(hit.hit) << what;
      EXPECT_EQ(hit.instance_index, 1u) << what;
      EXPECT_EQ(hit.fault, NodeFault::None) << what;
    }
  }
}

TEST(TwoLevel, AMirroredInstanceKeepsObjectSpaceFacing) {
  // Instance 1 mirrors x: in world space its triangles wind the other way, but facing is decided in object space
  // (DXR), where the ray still travels against +z. The flattened build reverses the winding to say the same.
  const LoadedBvh& bvh = two_quads_bvh();
  const RayResult r = trace_ray(bvh.memory(), bvh.root, down_at(4.5f, -0.5f), {});
  ASSERT_TRUE(r.hit);
  EXPECT_EQ(r.instance_index, 1u);
  EXPECT_TRUE(r.front_face);
  const RayResult r1 = trace_ray(bvh.memory(), bvh.root, down_at(4.75f, 0.5f), {});  // object (-0.75, 0.5)
  ASSERT_TRUE(r1.hit);
  EXPECT_EQ(r1.primitive_id, 1u);
  EXPECT_TRUE(r1.front_face);
  // From below, the back face.
  const RayResult back = trace_ray(bvh.memory(), bvh.root, Ray{{4.75f, 0.5f, -5.0f}, {0, 0, 1}, 0.0f, 100.0f}, {});
  ASSERT_TRUE(back.hit);
  EXPECT_FALSE(back.front_face);
}

}  // namespace
}  // namespace hwbvh::emu

namespace hwbvh::emu {
namespace {

// Deterministic pseudo-random numbers in [0, 1).
struct Lcg {
  uint64_t state;
  float next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(state >> 40) * 0x1p-24f;
  }
};

// 300 small random triangles: a BLAS with a box root over several leaves.
Scene small_triangles() {
  Lcg rng{7};
  Scene blas;
  blas.source = "crowded";
  for (uint32_t t = 0; t < 300; ++t) {
    const Vec3 c{rng.next(), rng.next(), rng.next()};
    for (int k = 0; k < 3; ++k) {
      blas.positions.push_back(c + Vec3{0.1f * rng.next(), 0.1f * rng.next(), 0.1f * rng.next()});
    }
    blas.triangles.push_back(Triangle{.v = {3 * t, 3 * t + 1, 3 * t + 2}, .geometry = 0, .primitive = t});
  }
  blas.geometries = {Geometry{"crowded", 0, 300}};
  return blas;
}

// 64 rotated instances of `blas` in a 4 x 4 x 4 grid: rays through the grid pass many instances, so the top level
// keeps several entries on the ring when a BLAS is entered.
InstancedScene crowded_grid(Scene blas, double spacing) {
  Lcg rng{7};
  InstancedScene s;
  s.source = "crowded-grid";
  s.meshes = {std::move(blas)};
  for (uint32_t i = 0; i < 64; ++i) {
    glm::dmat4 m = glm::translate(glm::dmat4(1.0), glm::dvec3(i % 4, (i / 4) % 4, i / 16) * spacing);
    m = glm::rotate(m, 6.2831853 * rng.next(), glm::normalize(glm::dvec3(rng.next(), rng.next(), 1.0)));
    s.instances.push_back({.name = "i", .mesh = 0, .world = m, .instance_id = i});
  }
  return s;
}

// Rays across the grid with a ring of 8 find the hits of a ring of 16 after losing entries, some of them walking
// back out of a BLAS (from the node its instance entered at) into the top level.
void expect_ring_of_8_walks_back_out_of_blases(const InstancedScene& scene, float extent) {
  pipeline::BuildBlobOptions build;
  build.build.threads = 1;
  const LoadedBvh bvh = load_bvh(pipeline::build_instanced_blob(scene, build).blob, "crowded.hwbvh");
  const NodeMemory memory = bvh.memory();  // a lane keeps a pointer to it
  Lcg rng{11};
  TraceOptions ring8, ring16;
  ring8.stack.size = 8;
  uint64_t climbs_out = 0, lost = 0;
  for (int i = 0; i < 400; ++i) {
    const Vec3 from{-2.0f, extent * rng.next() - 0.5f, extent * rng.next() - 0.5f};
    const Vec3 to{extent + 1.0f, extent * rng.next() - 0.5f, extent * rng.next() - 0.5f};
    const Ray ray{from, to - from, 0.0f, 1.0f};
    const RayResult full = trace_ray(bvh.memory(), bvh.root, ray, ring16);
    RayTraversal lane(memory, bvh.root, ray, ring8);
    bool previous_in_blas = false;
    while (!lane.done()) {
      const bool in_blas = lane.in_blas();
      // A walk-back step in the top level right after a step in a BLAS: the walk climbed out of the BLAS root
      // (the top level's entries were lost, or the pop would have returned one).
      climbs_out += lane.step().walk_back && !in_blas && previous_in_blas ? 1 : 0;
      previous_in_blas = in_blas;
    }
    const RayResult& small = lane.result();
    lost += small.counters.stack_lost;
    ASSERT_EQ(small.hit, full.hit) << "ray " << i;
    if (full.hit) {
      EXPECT_EQ(small.t, full.t) << "ray " << i;
      EXPECT_EQ(small.instance_index, full.instance_index) << "ray " << i;
      EXPECT_EQ(small.primitive_id, full.primitive_id) << "ray " << i;
    }
    EXPECT_EQ(full.counters.stack_lost, 0u);
  }
  EXPECT_GT(lost, 0u);
  EXPECT_GT(climbs_out, 0u);
}

TEST(TwoLevel, ARingOf8ThatOverflowsInsideABlasWalksBackOutOfItAndFindsTheHitsOf16) {
  expect_ring_of_8_walks_back_out_of_blases(crowded_grid(small_triangles(), 1.2), 5.0f);
}

TEST(TwoLevel, TheWalkBackClimbsOutOfAPrimitiveNodeTheInstanceEnteredAt) {
  // Quads: each BLAS one pair behind its root box, entered at the primitive node (GPURT's lastInstanceNode is then
  // that node); every step inside a BLAS is that one node's.
  const InstancedScene quads = crowded_grid(quad(), 0.5);
  expect_ring_of_8_walks_back_out_of_blases(quads, 2.0f);
  const LoadedBvh bvh = load_bvh(pipeline::build_instanced_blob(quads, {}).blob, "quads.hwbvh");
  const RayResult r = trace_ray(bvh.memory(), bvh.root, Ray{{-2.0f, 0.6f, 0.4f}, {1.0f, 0.05f, 0.02f}, 0, 10}, {});
  EXPECT_EQ(r.counters.blas_steps, r.counters.primitive_node_steps);
  EXPECT_EQ(r.counters.blas_steps, r.counters.instance_transitions);
  EXPECT_GT(r.counters.instance_transitions, 1u);
}

}  // namespace
}  // namespace hwbvh::emu
