// The Xe3 traversal (short stack + restart trail): tiny hand-built sections whose steps, tests and stack traffic are
// known exactly, then encoded scenes checked against the Embree oracle and across thread counts.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "emu/traversal_fixture.h"
#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/xe3/intersect.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/formats/xe3/encode.h"
#include "hwbvh/formats/xe3/instance_leaf.h"
#include "hwbvh/formats/xe3/internal_node.h"
#include "hwbvh/formats/xe3/quad_leaf.h"
#include "hwbvh/formats/xe3/tree_check.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test;
using xe3::BlockDwords;

// A hand-built section: blocks 0 and 1 are the header, nodes are placed at the blocks the test names.
class Xe3Image {
 public:
  void internal(uint32_t block, int32_t child_offset, std::vector<xe3::InternalChildInput> children) {
    xe3::InternalNodeInput in;
    in.child_offset = child_offset;
    in.child_count = static_cast<uint32_t>(children.size());
    std::copy(children.begin(), children.end(), in.children.begin());
    put(block, xe3::encode_internal_node(in));
    ++internal_;
  }
  void leaf(uint32_t block, const xe3::QuadInput& q) {
    put(block, xe3::encode_quad_leaf(q).value());
    ++leaves_;
  }
  void instance(uint32_t block, const xe3::InstanceLeafInput& in) {
    const xe3::InstanceLeafDwords dw = xe3::encode_instance_leaf(in);
    BlockDwords half{};
    std::copy_n(dw.begin(), 16, half.begin());
    put(block, half);
    std::copy_n(dw.begin() + 16, 16, half.begin());
    put(block + 1, half);
    ++instances_;
  }
  BlockDwords& at(uint32_t block) { return blocks_.at(block); }
  std::vector<uint32_t> section() const {
    xe3::NodeSectionHeader h;
    h.node_blocks = static_cast<uint32_t>(blocks_.size());
    h.internal_nodes = internal_;
    h.quad_leaves = leaves_;
    h.instance_leaves = instances_;
    std::vector<uint32_t> dw(blocks_.size() * 16);
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      std::copy(blocks_[b].begin(), blocks_[b].end(), dw.begin() + 16 * b);
    }
    const auto header = xe3::write_node_section_header(h);
    std::copy(header.begin(), header.end(), dw.begin());
    return dw;
  }

 private:
  void put(uint32_t block, const BlockDwords& node) {
    if (blocks_.size() <= block) blocks_.resize(block + 1);
    blocks_[block] = node;
  }
  std::vector<BlockDwords> blocks_{2};
  uint32_t internal_ = 0, leaves_ = 0, instances_ = 0;
};

// A wall in the plane x = X covering y + z <= 2 around the x axis, and its partner covering the rest of the square
// [-1, 3]^2, sharing the edge v1-v2.
std::array<Vec3, 3> wall(float x) { return {Vec3{x, -1, -1}, Vec3{x, 3, -1}, Vec3{x, -1, 3}}; }
std::array<Vec3, 3> partner(float x) { return {Vec3{x, 3, -1}, Vec3{x, 3, 3}, Vec3{x, -1, 3}}; }
Aabb wall_box(float x) { return Aabb{{x, -1, -1}, {x, 3, 3}}; }

xe3::QuadInput lone(const std::array<Vec3, 3>& v, uint32_t primitive, uint32_t geometry = 0) {
  xe3::QuadInput q;
  q.tri0 = {v, primitive};
  q.geometry = q.shader_index = geometry;
  q.last = true;
  return q;
}

RayResult trace_one(const std::vector<uint32_t>& section, const Ray& ray, const TraceOptions& o = {},
                    uint32_t entries = kXe3ShortStackEntries) {
  return trace_ray_xe3(Xe3Section::from(section), ray, o, Xe3StackOptions{entries});
}

std::vector<uint32_t> node_sequence(const std::vector<uint32_t>& section, const Ray& ray, uint32_t entries) {
  TraceOptions o;
  o.record_node_sequence = true;
  return fetched_nodes(trace_rays_xe3(Xe3Section::from(section), std::span<const Ray>(&ray, 1), o, Executor(1),
                                      Xe3StackOptions{entries})
                           .node_sequences.at(0));
}

// Root (block 2) with two lone walls: x = 2 (primitive 0, block 3) and x = 4 (geometry 7, primitive 1, block 4).
std::vector<uint32_t> two_walls() {
  Xe3Image img;
  img.internal(2, 1, {{wall_box(2), xe3::kNodeTypeQuad, 1}, {wall_box(4), xe3::kNodeTypeQuad, 1}});
  img.leaf(3, lone(wall(2), 0));
  img.leaf(4, lone(wall(4), 1, 7));
  return img.section();
}

TEST(Xe3Traversal, TwoWallsExactCounts) {
  const RayResult r = trace_one(two_walls(), ray_x({0, 0, 0}));
  ASSERT_NO_FATAL_FAILURE(expect_nearer_wall_hit(r));
  // Steps: root (takes wall 2, pushes wall 4), wall 2, wall 4 (popped).
  EXPECT_EQ(r.counters, (RayCounters{.steps = 3, .box_node_steps = 1, .primitive_node_steps = 2, .box_tests = 6,
                                     .triangle_tests = 2, .stack_pushes = 1, .stack_pops = 1, .max_stack_depth = 1, .blas_steps = 3}));
  EXPECT_EQ(node_sequence(two_walls(), ray_x({0, 0, 0}), 4), (std::vector<uint32_t>{2, 3, 4}));
}

TEST(Xe3Traversal, QuadLeafTestsBothTrianglesInOneStep) {
  Xe3Image img;
  img.internal(2, 1, {{Aabb{{2, -1, -1}, {2, 3, 3}}, xe3::kNodeTypeQuad, 1}});
  xe3::QuadInput q = lone(wall(2), 5);
  q.tri1 = xe3::QuadTriangle{partner(2), 6};
  img.leaf(3, q);
  const RayResult r = trace_one(img.section(), ray_x({0, 2, 2}));
  EXPECT_EQ(r.t, 2.0f);
  EXPECT_EQ(r.primitive_id, 6u);
  EXPECT_EQ(r.barycentrics, Vec2(0.5f, 0.25f));  // in the partner's own vertex order
  EXPECT_EQ(r.counters.steps, 2u);
  EXPECT_EQ(r.counters.primitive_node_steps, 1u);
  EXPECT_EQ(r.counters.triangle_tests, 2u);
  EXPECT_EQ(trace_one(img.section(), ray_x({0, 0, 0})).primitive_id, 5u);
}

TEST(Xe3Traversal, MissAnyHitTminCullingAndMask) {
  EXPECT_FALSE(trace_one(two_walls(), ray_x({0, 10, 10})).hit);
  EXPECT_EQ(trace_one(two_walls(), ray_x({0, 10, 10})).counters.steps, 1u);
  TraceOptions shadow;
  shadow.any_hit = true;
  const RayResult any = trace_one(two_walls(), ray_x({0, 0, 0}), shadow);
  EXPECT_TRUE(any.hit);
  EXPECT_EQ(any.counters.steps, 2u);  // stops on the first accepted hit
  const RayResult late = trace_one(two_walls(), ray_x({0, 0, 0}, 3.0f));
  EXPECT_EQ(late.t, 4.0f);
  EXPECT_EQ(late.geometry_id, 7u);
  EXPECT_FALSE(trace_one(two_walls(), ray_x({0, 0, 0}, 0.0f, 1.9f)).hit);
  TraceOptions cull;
  cull.flags.cull_back_facing = true;
  EXPECT_FALSE(trace_one(two_walls(), ray_x({0, 0, 0}), cull).hit);
  cull.flags.flip_facedness = true;
  EXPECT_TRUE(trace_one(two_walls(), ray_x({0, 0, 0}), cull).hit);
  TraceOptions masked;
  masked.instance_mask = 0;
  const RayResult none = trace_one(two_walls(), ray_x({0, 0, 0}), masked);
  EXPECT_FALSE(none.hit);
  EXPECT_EQ(none.counters.steps, 1u);
}

// Root with four internal children along +x, each over one lone triangle. The ray passes (y, z) = (2.5, 2.5): inside
// every box, missing the walls in a, b, c (they cover y + z <= 2) and hitting the partner in d at x = 8.
//   block 2 root; 3..6 a..d; 7..10 their leaves
std::vector<uint32_t> four_boxes() {
  Xe3Image img;
  std::vector<xe3::InternalChildInput> children;
  for (int i = 0; i < 4; ++i) children.push_back({wall_box(2.0f + 2.0f * i), xe3::kNodeTypeMixed, 1});
  img.internal(2, 1, children);
  for (uint32_t i = 0; i < 4; ++i) {
    const float x = 2.0f + 2.0f * static_cast<float>(i);
    img.internal(3 + i, 4, {{wall_box(x), xe3::kNodeTypeQuad, 1}});
    img.leaf(7 + i, lone(i < 3 ? wall(x) : partner(x), i));
  }
  return img.section();
}

TEST(Xe3Traversal, ShortStackOverflowThenRestartExactSequence) {
  const Ray ray = ray_x({0, 2.5f, 2.5f});
  const RayResult r = trace_one(four_boxes(), ray, {}, 2);
  EXPECT_EQ(r.t, 8.0f);
  EXPECT_EQ(r.primitive_id, 3u);
  // The root takes a and pushes d (last), c, b into two entries: d is dropped. a, b, c are searched (b and c
  // popped, each advancing trail[0]); the stack then runs dry and trail[0] = 2 is below "last": trail[0] = 3 and
  // a restart from the root, which takes its fourth hit child, d, directly. After the hit every trail level is
  // "last": done.
  EXPECT_EQ(node_sequence(four_boxes(), ray, 2), (std::vector<uint32_t>{2, 3, 7, 4, 8, 5, 9, 2, 6, 10}));
  EXPECT_EQ(r.counters, (RayCounters{.steps = 10, .box_node_steps = 6, .primitive_node_steps = 4, .box_tests = 36,
                                     .triangle_tests = 4, .stack_pushes = 3, .stack_pops = 2, .stack_lost = 1,
                                     .walk_back_steps = 1, .max_stack_depth = 2, .blas_steps = 10}));
  // Four entries never overflow here.
  const RayResult big = trace_one(four_boxes(), ray);
  EXPECT_EQ(big.t, 8.0f);
  EXPECT_EQ(big.counters.walk_back_steps, 0u);
  EXPECT_EQ(big.counters.steps, 9u);
  EXPECT_EQ(node_sequence(four_boxes(), ray, 4), (std::vector<uint32_t>{2, 3, 7, 4, 8, 5, 9, 6, 10}));
  // A one-entry stack keeps only b: after b the restart takes c and pushes d again.
  const RayResult tiny = trace_one(four_boxes(), ray, {}, 1);
  EXPECT_EQ(tiny.t, 8.0f);
  EXPECT_EQ(tiny.counters.stack_lost, 2u);
  EXPECT_EQ(node_sequence(four_boxes(), ray, 1), (std::vector<uint32_t>{2, 3, 7, 4, 8, 2, 5, 9, 6, 10}));
}

TEST(Xe3Traversal, FaultsStepLimitAndNaN) {
  // A child past the section, a child of an unsupported type (procedural), a leaf list without a last leaf.
  for (int bad = 0; bad < 3; ++bad) {
    Xe3Image img;
    img.internal(2, bad == 0 ? 100 : 1, {{wall_box(2), xe3::kNodeTypeQuad, 1}});
    xe3::QuadInput q = lone(wall(2), 0);
    q.last = bad != 2;
    img.leaf(3, q);
    if (bad == 1) img.at(2)[4] = (img.at(2)[4] & ~0xFFu) | xe3::kNodeTypeProcedural;  // nodeType, byte 16
    const RayResult r = trace_one(img.section(), ray_x({0, 0, 0}));
    EXPECT_EQ(r.fault, bad == 1 ? NodeFault::UnsupportedNode : NodeFault::OutOfRange) << bad;
    EXPECT_EQ(r.fault_node, bad == 0 ? 102u : bad == 1 ? 3u : 4u);
  }
  // A cycle: the root is its own child. It ends at the step limit, or where the restart trail ends (29 levels).
  Xe3Image cycle;
  cycle.internal(2, 0, {{wall_box(2), xe3::kNodeTypeMixed, 1}});
  TraceOptions o;
  o.step_limit = 10;
  const RayResult r = trace_one(cycle.section(), ray_x({0, 0, 0}), o);
  EXPECT_EQ(r.counters.step_limit_hits, 1u);
  EXPECT_EQ(r.counters.steps, 10u);
  const RayResult deep = trace_one(cycle.section(), ray_x({0, 0, 0}));
  EXPECT_EQ(deep.fault, NodeFault::UnsupportedNode);
  EXPECT_EQ(deep.counters.steps, 29u);
  const RayResult nan = trace_one(two_walls(), Ray{{NAN, 0, 0}, {1, 0, 0}, 0, 10});
  EXPECT_FALSE(nan.hit);
  EXPECT_EQ(nan.counters.steps, 0u);
  EXPECT_THROW(Xe3Section::from(std::vector<uint32_t>(32, 0u)), Error);
  EXPECT_THROW(trace_one(two_walls(), ray_x({0, 0, 0}), {}, 0), Error);
}

// Two levels in one Nodes section: the top level (root at block 2 over InstanceLeaf A at blocks 3-4 and B at 5-6)
// padded to 512 bytes, then the BLAS at byte 512 (block 8): its root (block 10) over one QuadLeaf (block 11) holding
// wall(0) (primitive 0) and partner(0) (primitive 1), normal +x. A: mask 0x02, moved to x = 5. B: mask 0x01,
// mirrored (x -> 10 - x), so that its wall lies at x = 10 facing the other way in world space.
class TwoLevel {
 public:
  static constexpr uint64_t kBlasAddress = 512, kBlasRoot = kBlasAddress + 128;
  explicit TwoLevel(const std::function<void(xe3::InstanceLeafInput&)>& change_a = {}) {
    xe3::InstanceLeafInput a{.mask = 0x02, .start_node = kBlasRoot, .bvh = kBlasAddress, .instance_index = 0};
    a.world_to_object = {{{1, 0, 0, -5}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    a.object_to_world = {{{1, 0, 0, 5}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    xe3::InstanceLeafInput b{.mask = 0x01, .start_node = kBlasRoot, .bvh = kBlasAddress, .instance_index = 1};
    b.world_to_object = b.object_to_world = {{{-1, 0, 0, 10}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    if (change_a) change_a(a);
    Xe3Image top;
    top.internal(2, 1, {{wall_box(5), xe3::kNodeTypeInstance, 2}, {wall_box(10), xe3::kNodeTypeInstance, 2}});
    top.instance(3, a);
    top.instance(5, b);
    Xe3Image blas;
    blas.internal(2, 1, {{wall_box(0), xe3::kNodeTypeQuad, 1}});
    xe3::QuadInput q = lone(wall(0), 0);
    q.tri1 = xe3::QuadTriangle{partner(0), 1};
    blas.leaf(3, q);
    nodes_ = top.section();
    top_dwords_ = nodes_.size();
    nodes_.resize(kBlasAddress / 4);
    const std::vector<uint32_t> b_dwords = blas.section();
    nodes_.insert(nodes_.end(), b_dwords.begin(), b_dwords.end());
    const std::span<const uint32_t> all(nodes_);
    blases_.blases.push_back({kBlasAddress, Xe3Section::from(all.subspan(kBlasAddress / 4)), 3});
  }
  TwoLevel(const TwoLevel&) = delete;
  TwoLevel& operator=(const TwoLevel&) = delete;

  [[nodiscard]] Xe3Section top(bool with_blases = true) const {
    Xe3Section s = Xe3Section::from(std::span<const uint32_t>(nodes_).first(top_dwords_));
    if (with_blases) s.blases = &blases_;
    return s;
  }
  [[nodiscard]] RayResult trace(const Ray& ray, uint32_t mask) const {
    TraceOptions o;
    o.instance_mask = mask;
    return trace_ray_xe3(top(), ray, o);
  }

 private:
  std::vector<uint32_t> nodes_;
  std::size_t top_dwords_ = 0;
  Xe3Blases blases_;
};

TEST(Xe3TwoLevel, MaskCullsOneInstanceAndTheMirroredOneIsHitFromItsFront) {
  const TwoLevel scene;
  const Ray ray = ray_x({0, 0.5f, 0.5f});
  const RayResult r = scene.trace(ray, 0x01);
  ASSERT_TRUE(r.hit);
  EXPECT_EQ(r.t, 10.0f);
  EXPECT_EQ(r.instance_index, 1u);
  EXPECT_EQ(r.geometry_id, 0u);  // the BLAS's own id (Xe3Blases::Blas::first_geometry maps it for the shader)
  EXPECT_EQ(r.primitive_id, 0u);
  // In the instance the ray runs along -x against the wall's +x normal: the front, as DXR decides facing in object
  // space. Without the mirror (instance A) the same ray meets the back.
  EXPECT_TRUE(r.front_face);
  // Steps: top root (takes A, pushes B), A (culled by its mask: done, pops B), B (enters the BLAS), BLAS root, quad.
  EXPECT_EQ(r.counters, (RayCounters{.steps = 5, .box_node_steps = 2, .primitive_node_steps = 1, .box_tests = 12,
                                     .triangle_tests = 2, .stack_pushes = 1, .stack_pops = 1, .max_stack_depth = 1,
                                     .tlas_steps = 3, .blas_steps = 2, .instance_node_steps = 2,
                                     .instance_transitions = 1}));
  // Fetches name blocks of the whole Nodes section: the BLAS's root and leaf are blocks 10 and 11.
  TraceOptions o;
  o.instance_mask = 0x01;
  o.record_node_sequence = true;
  const TraceOutput out = trace_rays_xe3(scene.top(), std::span<const Ray>(&ray, 1), o, Executor(1));
  EXPECT_EQ(fetched_nodes(out.node_sequences.at(0)), (std::vector<uint32_t>{2, 3, 5, 10, 11}));
}

TEST(Xe3TwoLevel, BothInstancesEnteredAndTheFartherOneStopsAtItsRoot) {
  const TwoLevel scene;
  const RayResult r = scene.trace(ray_x({0, 0.5f, 0.5f}), 0xFF);
  ASSERT_TRUE(r.hit);
  EXPECT_EQ(r.t, 5.0f);
  EXPECT_EQ(r.instance_index, 0u);
  EXPECT_FALSE(r.front_face);
  // Top root, A, A's BLAS root, A's quad (hit at 5), back in the top level B is popped: B, B's BLAS root (its box
  // lies beyond the hit).
  EXPECT_EQ(r.counters, (RayCounters{.steps = 6, .box_node_steps = 3, .primitive_node_steps = 1, .box_tests = 18,
                                     .triangle_tests = 2, .stack_pushes = 1, .stack_pops = 1, .max_stack_depth = 1,
                                     .tlas_steps = 3, .blas_steps = 3, .instance_node_steps = 2,
                                     .instance_transitions = 2}));
  EXPECT_FALSE(scene.trace(ray_x({0, 0.5f, 0.5f}), 0x04).hit);  // every instance culled
}

TEST(Xe3TwoLevel, HostileInstanceLeavesFaultTheRay) {
  struct Case {
    uint64_t start_node;
    uint32_t instance_index;
    NodeFault fault;
  };
  for (const Case c : {Case{1ull << 40, 0, NodeFault::OutOfRange},       // outside the Nodes section
                       Case{3 * 64, 0, NodeFault::UnknownBlas},           // the leaf itself
                       Case{TwoLevel::kBlasAddress, 0, NodeFault::UnknownBlas},  // the BLAS's header
                       Case{TwoLevel::kBlasRoot + 64, 0, NodeFault::UnknownBlas},  // the BLAS's leaf, not its root
                       Case{TwoLevel::kBlasRoot, 2, NodeFault::UnknownBlas}}) {    // an instance index past the count
    const TwoLevel scene([&](xe3::InstanceLeafInput& a) {
      a.start_node = c.start_node;
      a.instance_index = c.instance_index;
    });
    const RayResult r = scene.trace(ray_x({0, 0.5f, 0.5f}), 0xFF);
    EXPECT_EQ(r.fault, c.fault) << c.start_node;
    EXPECT_EQ(r.fault_node, 3u);
    EXPECT_EQ(r.counters.steps, 1u);  // the top root; the faulting step is not counted
  }
  // An InstanceLeaf in a section without BLASes.
  const TwoLevel scene;
  TraceOptions o;
  EXPECT_EQ(trace_ray_xe3(scene.top(false), ray_x({0, 0.5f, 0.5f}), o).fault, NodeFault::UnsupportedNode);
}

TEST(Xe3Intersect, WatertightTriangleTestFacingAndBarycentrics) {
  const PreparedRay ray(RayOperands{{0.25f, 0.25f, -1.0f}, {0, 0, 1}});
  const std::array<Vec3, 3> ccw{Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};  // normal +z, along the ray
  const Xe3TriangleHit h = intersect_triangle(ccw, ray);
  ASSERT_TRUE(h.hit);
  EXPECT_EQ(h.t, 1.0f);
  EXPECT_EQ(h.barycentrics, Vec2(0.25f, 0.25f));
  EXPECT_FALSE(h.front_face);
  const Xe3TriangleHit back = intersect_triangle({ccw[0], ccw[2], ccw[1]}, ray);
  ASSERT_TRUE(back.hit);
  EXPECT_TRUE(back.front_face);
  // A ray through a shared edge hits at least one of the two triangles.
  const PreparedRay edge(RayOperands{{0.5f, 0.5f, -1.0f}, {0, 0, 1}});
  const std::array<Vec3, 3> other{Vec3{1, 0, 0}, Vec3{1, 1, 0}, Vec3{0, 1, 0}};
  EXPECT_TRUE(intersect_triangle(ccw, edge).hit || intersect_triangle(other, edge).hit);
  EXPECT_FALSE(intersect_triangle(ccw, PreparedRay(RayOperands{{2, 2, -1}, {0, 0, 1}})).hit);
}

// IntersectOptions::triangle_test = gpurt runs GPURT's Möller–Trumbore: the same hit, weights and facing here.
TEST(Xe3Intersect, GpurtTriangleTestOnRequest) {
  const PreparedRay ray(RayOperands{{0.25f, 0.25f, -1.0f}, {0, 0, 1}});
  const std::array<Vec3, 3> ccw{Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};
  for (const std::array<Vec3, 3>& v : {ccw, std::array<Vec3, 3>{ccw[0], ccw[2], ccw[1]}}) {
    const Xe3TriangleHit w = intersect_triangle(v, ray), g = intersect_triangle(v, ray, TriangleTest::Gpurt);
    ASSERT_TRUE(g.hit);
    EXPECT_EQ(g.t, w.t);
    EXPECT_EQ(g.barycentrics, w.barycentrics);
    EXPECT_EQ(g.front_face, w.front_face);
  }
  EXPECT_FALSE(intersect_triangle(ccw, PreparedRay(RayOperands{{2, 2, -1}, {0, 0, 1}}), TriangleTest::Gpurt).hit);
  EXPECT_FALSE(intersect_triangle(ccw, PreparedRay(RayOperands{{0.25f, 0.25f, 1}, {0, 0, 1}}), TriangleTest::Gpurt).hit);
}

// ---------------------------------------------------------------------------------------------------------------
// Encoded scenes against the oracle
// ---------------------------------------------------------------------------------------------------------------

struct Encoded {
  Scene scene;
  xe3::Xe3Encoded bvh;
};

Encoded encode_scene(Scene scene, uint32_t stoc_level = 1) {
  bvh_build::BuildOptions bo;
  xe3::configure_build(bo, stoc_level);
  xe3::Xe3EncodeOptions eo;
  eo.stoc_level = stoc_level;
  Encoded e;
  e.bvh = xe3::encode(scene, bvh_build::build_wide_bvh6(scene, bo).bvh, eo);
  e.scene = std::move(scene);
  return e;
}

// Closest hits and occlusion with a short stack of `entries` agree with the oracle (traversal_fixture.h), and the
// counters add up.
void expect_xe3_agrees_with_oracle(const Encoded& e, const std::vector<Ray>& rays, uint32_t entries) {
  const Xe3Section section = Xe3Section::from(e.bvh.dwords);
  const Xe3StackOptions stack{entries};
  const TraceOutput out = trace_rays_xe3(section, rays, {}, Executor(2), stack);
  TraceOptions shadow;
  shadow.any_hit = true;
  expect_oracle_agreement(e.scene, rays, out, trace_rays_xe3(section, rays, shadow, Executor(2), stack));
  const RayCounters total = out.total_counters();
  EXPECT_EQ(total.box_tests, 6 * total.box_node_steps);
  EXPECT_EQ(total.steps, total.box_node_steps + total.primitive_node_steps);
  EXPECT_LE(total.triangle_tests, 2 * total.primitive_node_steps);
  EXPECT_LE(total.max_stack_depth, entries);
}

TEST(Xe3Oracle, RandomSoupAgreesAtEveryShortStackSize) {
  const Encoded e = encode_scene(hwbvh::test::random_triangle_soup(1500, 11, 10.0f, 0.8f, 2));
  ASSERT_TRUE(xe3::check_encoded_tree(e.bvh.dwords, &e.scene).ok());
  const std::vector<Ray> rays = mixed_rays(e.scene.bounds(), 3000, 5);
  for (uint32_t entries : {4u, 1u, 16u}) {
    SCOPED_TRACE(testing::Message() << "short stack " << entries);
    expect_xe3_agrees_with_oracle(e, rays, entries);
  }
}

TEST(Xe3Oracle, MeshesWithQuadsAgree) {
  for (const char* name : {"rotated-objects.obj", "overflow-fan.obj", "alpha-cards.obj"}) {
    SCOPED_TRACE(name);
    for (uint32_t stoc : {1u, 3u}) {
      const Encoded e = encode_scene(load_obj(hwbvh::test::project_scene(name)), stoc);
      EXPECT_GT(e.bvh.stats.quads, 0u);
      expect_xe3_agrees_with_oracle(e, mixed_rays(e.scene.bounds(), 5000, 17), kXe3ShortStackEntries);
    }
  }
  const Encoded grid = encode_scene(hwbvh::test::quad_grid(30));
  expect_xe3_agrees_with_oracle(grid, mixed_rays(Aabb{{-1, -1, -3}, {31, 31, 3}}, 10000, 23), kXe3ShortStackEntries);
}

TEST(Xe3Oracle, IdenticalAtAnyThreadCountAndRestartsHappen) {
  const Encoded e = encode_scene(hwbvh::test::random_triangle_soup(1500, 3, 10.0f, 0.8f, 2));
  const std::vector<Ray> rays = mixed_rays(e.scene.bounds(), 600, 3);
  TraceOptions o;
  o.record_node_sequence = true;
  const Xe3Section section = Xe3Section::from(e.bvh.dwords);
  const TraceOutput a = trace_rays_xe3(section, rays, o, Executor(1), Xe3StackOptions{2});
  const TraceOutput b = trace_rays_xe3(section, rays, o, Executor(3), Xe3StackOptions{2});
  expect_identical_runs(a, b);
  EXPECT_GT(a.total_counters().walk_back_steps, 0u);
  EXPECT_GT(a.total_counters().stack_lost, 0u);
  // Explicit waves: the same rays in waves of 7 give the same per-ray results.
  std::vector<uint32_t> begins;
  for (uint32_t i = 0; i < rays.size(); i += 7) begins.push_back(i);
  const TraceOutput c = trace_rays_xe3(section, rays, begins, o, Executor(2), Xe3StackOptions{2});
  EXPECT_TRUE(c.rays == a.rays);
}

}  // namespace
}  // namespace hwbvh::emu
