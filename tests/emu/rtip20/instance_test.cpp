// Two levels on RT IP 2.0 nodes: the traversal shader's instance step (mask culling, the software transform, the
// BLAS switch and the return to the top level) in both BVH4 loops, on a hand-built scene with exact counts, on the
// project's instanced scene against its --flatten build, and on hostile instance nodes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "emu/rtip20/nodes.h"
#include "emu/traversal_fixture.h"
#include "fixtures/paths.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna3/instance_node.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test;
using namespace hwbvh::emu::test4;
using ::testing::HasSubstr;
constexpr uint32_t I = rdna3::kInvalidNode;
constexpr uint32_t kRoot = 0x15;

// Two instances of a BLAS of two walls (x = 2: primitive 0, x = 4: primitive 1) under one top-level box node:
// instance 0 in place with mask 0x02, instance 1 mirrored in z and moved by +10 in x with mask 0x01.
class TwoInstances {
 public:
  explicit TwoInstances(const std::function<void(std::array<rdna3::InstanceNodeInput, 2>&)>& corrupt = {}) {
    Bvh4Image img;
    img.box(2, I, {child(tri_ptr(4), wall_box(2)), child(tri_ptr(5), wall_box(4))}, 2);
    img.triangles(4, kRoot, wall(2, 0));
    img.triangles(5, kRoot, wall(4, 1, 7));
    std::vector<uint32_t> blas = img.section();
    blas.resize((blas.size() + 31) / 32 * 32, 0u);

    bvh_build::WideBvh<4> tree;
    tree.nodes.resize(1);
    bvh_build::WideBvh<4>::Node& root = tree.nodes[0];
    root.child_count = 2;
    root.children[0] = {Aabb{{2, -1, -1}, {4, 3, 3}}, 0, 1};
    root.children[1] = {Aabb{{12, -1, -3}, {14, 3, 1}}, 1, 1};
    tree.pairs = {{0}, {1}};
    tree.bounds = Aabb{{2, -1, -3}, {14, 3, 3}};
    const uint64_t top_bytes = (rdna3::tlas_bytes(tree) + 127) / 128 * 128;

    std::array<rdna3::InstanceNodeInput, 2> nodes{};
    nodes[0].world_to_object = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    nodes[0].object_to_world = nodes[0].world_to_object;
    nodes[0].instance_mask = 0x02;
    nodes[1].world_to_object = {{{1, 0, 0, -10}, {0, 1, 0, 0}, {0, 0, -1, 0}}};
    nodes[1].object_to_world = {{{1, 0, 0, 10}, {0, 1, 0, 0}, {0, 0, -1, 0}}};
    nodes[1].instance_mask = 0x01;
    for (uint32_t i = 0; i < 2; ++i) {
      nodes[i].instance_index = i;
      nodes[i].blas_base_pointer = rdna4::make_base_pointer(top_bytes, rdna4::kPointerFlagSkipProcedural);
    }
    if (corrupt) corrupt(nodes);
    dwords_ = rdna3::encode_tlas(tree, nodes).dwords;
    const std::size_t top_dwords = dwords_.size();
    dwords_.resize(top_bytes / 4, 0u);
    dwords_.insert(dwords_.end(), blas.begin(), blas.end());

    const std::span<const uint32_t> all(dwords_);
    blases_.blases.push_back({top_bytes, Bvh4Section::from(all.subspan(top_bytes / 4, img.section().size())), 0});
    top_ = Bvh4Section::from(all.first(top_dwords));
    top_.blases = &blases_;
  }
  [[nodiscard]] const Bvh4Section& top() const { return top_; }

 private:
  std::vector<uint32_t> dwords_;
  Bvh4Blases blases_;
  Bvh4Section top_;
};

RayResult trace_one(Loop loop, const Bvh4Section& top, const Ray& ray, const TraceOptions& o) {
  return trace(loop, top, std::span<const Ray>(&ray, 1), o).rays.at(0);
}

TraceOptions mask(uint32_t instance_mask) {
  TraceOptions o;
  o.instance_mask = instance_mask;
  return o;
}

// The mirrored instance's hit: the nearer wall at world x = 12, reported as in object space (DXR's hit kind is
// the object-space facing, which the mirror does not change: the ray still travels along the wall's normal).
void expect_mirrored_instance_hit(const RayResult& r) {
  ASSERT_EQ(r.fault, NodeFault::None);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.t, 12.0f);
  EXPECT_EQ(r.primitive_id, 0u);
  EXPECT_EQ(r.geometry_id, 0u);
  EXPECT_EQ(r.instance_index, 1u);
  EXPECT_EQ(r.barycentrics, Vec2(0.25f, 0.25f));
  EXPECT_FALSE(r.front_face);
}

TEST(Rtip20Instances, MaskCulledAndMirroredExactCounts) {
  const TwoInstances scene;
  // RT IP 2.0: top root (pushes instance 1, returns instance 0), instance 0 (culled by the mask: pop), instance 1
  // (the BLAS root returned directly), BLAS root (pushes wall 4, returns wall 2), wall 2 (hit, pop), wall 4 (pop:
  // done).
  const RayCounters rtip20{.steps = 6, .box_node_steps = 2, .primitive_node_steps = 2, .box_tests = 8,
                           .triangle_tests = 2, .stack_pushes = 2, .stack_pops = 2, .max_stack_depth = 1,
                           .tlas_steps = 3, .blas_steps = 3, .instance_node_steps = 2, .instance_transitions = 1};
  // BVH4x2: top root (pushes both instances, pops instance 0 alone), instance 0 (culled: pops instance 1),
  // instance 1 (pushes the BLAS root and pops it), BLAS root (pushes both walls, pops them together), walls 2 and 4
  // in one dual step (pop: done).
  const RayCounters bvh4x2{.steps = 5, .box_node_steps = 2, .primitive_node_steps = 2, .box_tests = 8,
                           .triangle_tests = 2, .stack_pushes = 5, .stack_pops = 5, .max_stack_depth = 2,
                           .tlas_steps = 3, .blas_steps = 2, .instance_node_steps = 2, .instance_transitions = 1};
  for (const auto& [loop, counters] : {std::pair{Loop::Rtip20, rtip20}, std::pair{Loop::Bvh4x2, bvh4x2}}) {
    const RayResult r = trace_one(loop, scene.top(), ray_x({0, 0, 0}), mask(0x01));
    ASSERT_NO_FATAL_FAILURE(expect_mirrored_instance_hit(r));
    EXPECT_EQ(r.counters, counters) << (loop == Loop::Rtip20 ? "RT IP 2.0" : "BVH4x2");
  }
}

TEST(Rtip20Instances, BothInstancesVisibleAndTheWayBackToTheTopLevel) {
  const TwoInstances scene;
  for (const Loop loop : {Loop::Rtip20, Loop::Bvh4x2}) {
    const RayResult r = trace_one(loop, scene.top(), ray_x({0, 0, 0}), mask(0xFF));
    ASSERT_NO_FATAL_FAILURE(expect_nearer_wall_hit(r));
    EXPECT_EQ(r.instance_index, 0u);
    // Both instances entered: the second one after the return to the top level, with the world ray again.
    EXPECT_EQ(r.counters.instance_transitions, 2u);
    // A ray behind the first instance reaches only the mirrored one, through the same top level.
    const RayResult behind = trace_one(loop, scene.top(), ray_x({5, 0, 0}), mask(0xFF));
    EXPECT_EQ(behind.t, 7.0f);
    EXPECT_EQ(behind.instance_index, 1u);
    // No instance passes mask 0x04: a miss after three top-level steps.
    const RayResult none = trace_one(loop, scene.top(), ray_x({0, 0, 0}), mask(0x04));
    EXPECT_FALSE(none.hit);
    EXPECT_EQ(none.counters.tlas_steps, 3u);
    EXPECT_EQ(none.counters.blas_steps, 0u);
  }
}

TEST(Rtip20Instances, FetchesCarryTheBlasAddress) {
  const TwoInstances scene;
  TraceOptions o = mask(0x01);
  o.record_node_sequence = true;
  const Ray ray = ray_x({0, 0, 0});
  const TraceOutput out = trace(Loop::Rtip20, scene.top(), std::span<const Ray>(&ray, 1), o);
  const std::vector<NodeFetch>& seq = out.node_sequences.at(0);
  ASSERT_EQ(seq.size(), 6u);
  EXPECT_EQ(seq[1].blocks_64, 2);  // an instance node: 128 bytes, nothing tested
  EXPECT_EQ(seq[1].box_tests, 0);
  EXPECT_EQ(seq[1].triangle_tests, 0);
  // The BLAS root lies at the BLAS's address (after the 640-byte top level) + 128.
  EXPECT_EQ(seq[3].byte_offset(), scene.top().blases->blases[0].address + 128);
  EXPECT_EQ(seq[3].node, kRoot);
}

// Instance nodes that lead nowhere: the ray faults, never a crash.
TEST(Rtip20Instances, HostileInstanceNodesFaultTheRay) {
  const auto faults = [](const std::function<void(std::array<rdna3::InstanceNodeInput, 2>&)>& corrupt) {
    const TwoInstances scene(corrupt);
    std::vector<NodeFault> out;
    for (const Loop loop : {Loop::Rtip20, Loop::Bvh4x2})
      out.push_back(trace_one(loop, scene.top(), ray_x({0, 0, 0}), mask(0x01)).fault);
    return out;
  };
  const std::vector<NodeFault> unknown(2, NodeFault::UnknownBlas);
  // Outside the node section, and the top level itself: no BLAS has its header there.
  EXPECT_EQ(faults([](auto& n) { n[1].blas_base_pointer = rdna4::make_base_pointer(1ull << 40, 0); }), unknown);
  EXPECT_EQ(faults([](auto& n) { n[1].blas_base_pointer = rdna4::make_base_pointer(0, 0); }), unknown);
  // A BLAS entry node outside the BLAS, or of a type the encoder never writes.
  EXPECT_EQ(faults([](auto& n) { n[1].blas_node_pointer = rdna3::make_node_pointer(1u << 20, 5); }),
            std::vector<NodeFault>(2, NodeFault::OutOfRange));
  EXPECT_EQ(faults([](auto& n) { n[1].blas_node_pointer = rdna3::make_node_pointer(128, 4); }),
            std::vector<NodeFault>(2, NodeFault::UnsupportedNode));
  // The BLAS's own header read as a box node: garbage pointers, but a bounded, finished ray.
  for (const NodeFault f : faults([](auto& n) { n[1].blas_node_pointer = rdna3::make_node_pointer(0, 5); }))
    EXPECT_NE(f, NodeFault::None);
  // An instance node in a one-level section (no BLASes to enter).
  TwoInstances scene;
  Bvh4Section alone = scene.top();
  alone.blases = nullptr;
  EXPECT_EQ(trace_one(Loop::Rtip20, alone, ray_x({0, 0, 0}), mask(0x01)).fault, NodeFault::UnsupportedNode);
}

// The project's instanced scene built as two levels and --flatten for rtip20: the same hits, each instanced hit's
// (instance, geometry, primitive) mapped to the flattened scene's (geometry, primitive).
class GardenTwoWays : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scene_ = new InstancedScene(load_gltf_instanced(hwbvh::test::project_scene("instanced-garden.gltf")));
    pipeline::BuildBlobOptions o;
    o.target = blob::Target::Rtip20;
    o.encode.threads = 1;
    instanced_ = new LoadedBvh(load_bvh(pipeline::build_instanced_blob(*scene_, o).blob, "instanced"));
    flat_ = new LoadedBvh(load_bvh(pipeline::build_blob(flatten(*scene_), o).blob, "flat"));
  }
  static void TearDownTestSuite() {
    delete flat_;
    delete instanced_;
    delete scene_;
  }

  // The flattened scene's geometry of an instance's local geometry: flatten() numbers geometries per instance.
  static uint32_t flat_geometry(uint32_t instance, uint32_t geometry) {
    uint32_t first = 0;
    for (uint32_t i = 0; i < instance; ++i) first += static_cast<uint32_t>(scene_->meshes[scene_->instances[i].mesh].geometries.size());
    return first + geometry;
  }

  // Rays whose hits disagree. Agreeing: both miss, or both hit the same instance and geometry at the same t, on the
  // same triangle or, on an edge two triangles share, on its neighbour (both are right). Same t: within a relative
  // 1e-5 of the larger of t and the origin's magnitude (the scale the hit point is rounded at: shadow rays start on
  // a surface and hit at tiny t).
  static std::size_t disagreements(std::span<const Ray> rays, const TraceOutput& a, const TraceOutput& b) {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < a.rays.size(); ++i) {
      const RayResult& x = a.rays[i];
      const RayResult& y = b.rays[i];
      EXPECT_EQ(x.fault, NodeFault::None);
      const Vec3 o = rays[i].origin;
      const float scale = std::max({std::abs(x.t), std::abs(y.t), std::abs(o.x), std::abs(o.y), std::abs(o.z)});
      const bool same = x.hit == y.hit && (!x.hit || (flat_geometry(x.instance_index, x.geometry_id) == y.geometry_id &&
                                                      std::abs(x.t - y.t) <= 1e-5f * scale));
      bad += same ? 0 : 1;
    }
    return bad;
  }

  static InstancedScene* scene_;
  static LoadedBvh* instanced_;
  static LoadedBvh* flat_;
};
InstancedScene* GardenTwoWays::scene_ = nullptr;
LoadedBvh* GardenTwoWays::instanced_ = nullptr;
LoadedBvh* GardenTwoWays::flat_ = nullptr;

TEST_F(GardenTwoWays, PrimaryAndShadowRaysFindTheSameHits) {
  // An explicit camera looking down on the garden from the south-west.
  const Camera camera{.eye = {-9.0f, 7.0f, 11.0f}, .target = {0.0f, 0.0f, 0.0f}, .up = {0.0f, 1.0f, 0.0f},
                      .fov_deg = 50.0f};
  const RayBatch primary = primary_rays(camera, 128, 96);
  const std::optional<AnyHitShader> flat_shader = AnyHitShader::of(*flat_), shader = AnyHitShader::of(*instanced_);
  ASSERT_TRUE(shader && flat_shader);  // the plant's cards are alpha-tested
  TraceOptions o;
  const TraceOutput flat = flat_->trace(primary.rays, primary.wave_begin, with_shader(o, flat_shader), Executor(1));
  std::vector<SurfaceHit> hits(primary.rays.size());
  std::size_t hit_count = 0;
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const RayResult& r = flat.rays[i];
    if (!r.hit) continue;
    const Ray& ray = primary.rays[i];
    hits[i] = {ray.origin + r.t * ray.direction, flat_->hit_normal(r), true};
    ++hit_count;
  }
  EXPECT_GT(hit_count, primary.rays.size() / 2);
  TraceOptions shadow_options = o;
  shadow_options.any_hit = true;
  const RayBatch shadow = shadow_rays(primary, hits, default_light(flat_->bounds));
  ASSERT_GT(shadow.rays.size(), 1000u);
  for (const bool second_loop : {false, true}) {
    const Bvh4Section section = instanced_->bvh4_section();
    const auto run = [&](const RayBatch& batch, const TraceOptions& t) {
      const TraceOptions with = with_shader(t, shader);
      return second_loop ? trace_rays_bvh4x2(section, batch.rays, with, Executor(1))
                         : trace_rays_rtip20(section, batch.rays, with, Executor(1));
    };
    const char* name = second_loop ? "BVH4x2" : "RT IP 2.0";
    // At most 0.01 % of the rays may disagree: GPURT's triangle test is not watertight, so a ray through an edge can
    // miss both triangles in one frame and not in the other (with the watertight test none disagree here).
    // Also with no-duplicate any-hit, whose record must start afresh in every instance of the alpha-tested plant.
    for (const bool no_duplicate : {false, true}) {
      TraceOptions p = o;
      p.no_duplicate_any_hit = no_duplicate;
      EXPECT_LE(disagreements(primary.rays, run(primary, p), flat) * 10000, primary.rays.size()) << name;
    }
    // Shadow rays: occlusion only (any hit may end the search on different triangles), then as closest-hit rays.
    const TraceOutput a = run(shadow, shadow_options);
    const TraceOutput b = flat_->trace(shadow.rays, shadow.wave_begin, with_shader(shadow_options, flat_shader),
                                       Executor(1));
    std::size_t occlusion_differs = 0;
    for (std::size_t i = 0; i < a.rays.size(); ++i) occlusion_differs += a.rays[i].hit != b.rays[i].hit;
    EXPECT_LE(occlusion_differs * 10000, shadow.rays.size()) << name;
    // As closest-hit rays, a few that graze the surface they start on hit the same triangle with t off by more than
    // the tolerance (1 of 8,481 here): at least 99.9 % agree.
    const TraceOutput closest = flat_->trace(shadow.rays, shadow.wave_begin, with_shader(o, flat_shader), Executor(1));
    EXPECT_LE(disagreements(shadow.rays, run(shadow, o), closest) * 1000, shadow.rays.size()) << name;
  }
}

TEST_F(GardenTwoWays, AnOverflowingStackWalksBackOutOfTheBlases) {
  const RayBatch rays = make_batch(test::mixed_rays(instanced_->bounds, 2000, 5));
  const std::optional<AnyHitShader> shader = AnyHitShader::of(*instanced_);
  const Bvh4Section section = instanced_->bvh4_section();
  for (const Loop loop : {Loop::Rtip20, Loop::Bvh4x2}) {
    TraceOptions small = with_shader({}, shader), full = small;
    small.stack.size = 4;
    const TraceOutput a = trace(loop, section, rays.rays, small), b = trace(loop, section, rays.rays, full);
    uint64_t walk_backs = 0;
    for (std::size_t i = 0; i < a.rays.size(); ++i) {
      EXPECT_EQ(a.rays[i].hit, b.rays[i].hit) << i;
      EXPECT_EQ(a.rays[i].t, b.rays[i].t) << i;
      EXPECT_EQ(a.rays[i].instance_index, b.rays[i].instance_index) << i;
      walk_backs += a.rays[i].counters.walk_back_steps;
    }
    EXPECT_GT(walk_backs, 0u);
  }
}

TEST_F(GardenTwoWays, LoaderChecksInstanceNodesAgainstTheLevels) {
  EXPECT_TRUE(instanced_->two_level());
  EXPECT_EQ(instanced_->instance_count(), 331u);
  pipeline::BuildBlobOptions o;
  o.target = blob::Target::Rtip20;
  blob::Blob blob = pipeline::build_instanced_blob(*scene_, o).blob;
  blob::Section* nodes = nullptr;
  for (blob::Section& s : blob.sections)
    if (s.type == blob::SectionType::Nodes) nodes = &s;
  ASSERT_NE(nodes, nullptr);
  // The first instance node's base pointer (bytes 56..63 of the node after the box nodes) aimed at itself.
  const uint32_t box_nodes = instanced_->bvh4_section().header.box_nodes;
  const std::size_t first = (rdna3::kHeaderSlots + 2 * std::size_t{box_nodes}) * rdna3::kSlotBytes;
  for (std::size_t b = 0; b < 8; ++b) nodes->data[first + 56 + b] = std::byte{0};
  EXPECT_THAT([&] { (void)load_bvh(blob, "bad.hwbvh"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("instance node 0 points to byte 0, not to the header")));
}

}  // namespace
}  // namespace hwbvh::emu
