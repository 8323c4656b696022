// The TraceRay3_1 loop (docs/rtip31-format.md §7) on tiny hand-built trees whose steps and tests are known exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "emu/rtip31/trees.h"
#include "emu/traversal_fixture.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test;
using rdna4::kInvalidNode;

std::vector<uint32_t> node_sequence(const NodeImage& img, const Ray& r, const TraceOptions& o) {
  TraceOptions rec = o;
  rec.record_node_sequence = true;
  const TraceOutput out = trace_rays(img.memory(), rdna4::kRootPointer, std::span<const Ray>(&r, 1), rec,
                                     Executor(1));
  return fetched_nodes(out.node_sequences.at(0));
}

TEST(Traversal, RootWithTwoLeavesExactCounts) {
  const NodeImage img = two_leaves();
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), {});
  ASSERT_NO_FATAL_FAILURE(expect_nearer_wall_hit(r));
  // Steps: root, leaf at 2, leaf at 4 (already pushed: popped entries are not re-tested against t). One valid
  // triangle per pair.
  EXPECT_EQ(r.counters, (RayCounters{.steps = 3, .box_node_steps = 1, .primitive_node_steps = 2, .box_tests = 8,
                                     .triangle_tests = 2, .stack_pushes = 2, .stack_pops = 2, .max_stack_depth = 2,
                                     .blas_steps = 3}));
  EXPECT_EQ(node_sequence(img, ray_x({0, 0, 0}), {}), (std::vector<uint32_t>{0x15, 0x140, 0x150}));
}

TEST(Traversal, MissTakesOneStep) {
  const NodeImage img = two_leaves();
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 10, 0}), {});
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.counters.steps, 1u);
  EXPECT_EQ(r.counters.stack_pushes, 0u);
  EXPECT_EQ(r.counters.box_tests, 8u);
}

TEST(Traversal, AnyHitStopsAtFirstAcceptedHit) {
  const NodeImage img = two_leaves();
  TraceOptions o;
  o.any_hit = true;
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.primitive_id, 0u);
  EXPECT_EQ(r.counters.steps, 2u);
  EXPECT_EQ(r.counters.stack_pops, 1u);  // the loop ends before the second stack operation
}

TEST(Traversal, TminMovesTheOrigin) {
  const NodeImage img = two_leaves();
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}, 3.0f), {});
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.primitive_id, 1u);
  EXPECT_EQ(r.geometry_id, 7u);
  EXPECT_EQ(r.t, 4.0f);  // reported along the caller's ray
  EXPECT_EQ(r.counters.steps, 2u);
  // tmax below the first wall: nothing.
  EXPECT_FALSE(trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}, 0.0f, 1.5f), {}).hit);
}

TEST(Traversal, BackFaceCullingFlag) {
  const NodeImage img = two_leaves();
  TraceOptions o;
  o.flags.cull_back_facing = true;  // both walls face +x: the ray sees their backs
  EXPECT_FALSE(trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o).hit);
  const RayResult from_behind = trace_ray(img.memory(), 0x15, Ray{{10, 0, 0}, {-1, 0, 0}, 0, 100}, o);
  EXPECT_TRUE(from_behind.hit);
  EXPECT_TRUE(from_behind.front_face);
  EXPECT_EQ(from_behind.primitive_id, 1u);
  EXPECT_EQ(from_behind.t, 6.0f);
}

TEST(Traversal, PrimitiveRangeAcrossPairsAndNodes) {
  // One leaf child whose range is node 20 pair 0 (wall 6, END_OF_NODE), node 21 pair 0 (wall 5, END_OF_PAIR),
  // node 21 pair 1 (walls 7 and 3 as tri0/tri1, stop).
  NodeImage img;
  img.put(1, box_node(2, 20, kInvalidNode, {box_child(box({3, -1, -1}, {7, 3, 3}), 0, 2)}));
  img.put(20, primitive_node({pair(wall(6, 10), false)}));
  img.put(21, primitive_node({pair(wall(5, 11), false), pair(wall(7, 12), wall(3, 13), true)}));
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), {});
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.primitive_id, 13u);
  EXPECT_EQ(r.t, 3.0f);
  EXPECT_EQ(r.counters.steps, 4u);
  EXPECT_EQ(r.counters.primitive_node_steps, 3u);
  EXPECT_EQ(r.counters.triangle_tests, 4u);
  EXPECT_EQ(r.counters.stack_pushes, 3u);  // the leaf, then one continuation per non-final pair
  EXPECT_EQ(r.counters.max_stack_depth, 1u);
  EXPECT_EQ(node_sequence(img, ray_x({0, 0, 0}), {}), (std::vector<uint32_t>{0x15, 0x140, 0x150, 0x151}));
}

TEST(Traversal, CloserTriangleOfAPairIsTakenFirst) {
  // tri0 at x = 5, tri1 at x = 3: a first-hit ray accepts tri1 (the closer one), not tri0.
  NodeImage img;
  img.put(1, box_node(2, 20, kInvalidNode, {box_child(box({3, -1, -1}, {5, 3, 3}), 0, 1)}));
  img.put(20, primitive_node({pair(wall(5, 0), wall(3, 1))}));
  TraceOptions o;
  o.any_hit = true;
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o);
  EXPECT_EQ(r.primitive_id, 1u);
  EXPECT_EQ(r.t, 3.0f);
}

TEST(Traversal, FullRingNoWalkBack) {
  const NodeImage img = three_boxes();
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), {});
  EXPECT_EQ(r.primitive_id, 2u);
  EXPECT_EQ(r.t, 3.5f);
  EXPECT_EQ(r.counters.steps, 7u);
  EXPECT_EQ(r.counters.walk_back_steps, 0u);
  EXPECT_EQ(r.counters.stack_lost, 0u);
  EXPECT_EQ(node_sequence(img, ray_x({0, 0, 0}), {}),
            (std::vector<uint32_t>{0x15, 0x25, 0x50, 0x35, 0x60, 0x45, 0x70}));
}

TEST(Traversal, OverflowThenWalkBackStillFindsTheClosestHit) {
  const NodeImage img = three_boxes();
  TraceOptions o;
  o.stack.size = 2;  // the root's three children overflow it: C (pushed first) is lost
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.primitive_id, 2u);
  EXPECT_EQ(r.t, 3.5f);
  // Walk-back steps: B after its leaf, the root after B, C after its leaf, the root after C.
  EXPECT_EQ(r.counters, (RayCounters{.steps = 11, .box_node_steps = 8, .primitive_node_steps = 3, .box_tests = 64,
                                     .triangle_tests = 3, .stack_pushes = 7, .stack_pops = 6, .stack_lost = 1,
                                     .walk_back_steps = 4, .max_stack_depth = 2, .blas_steps = 11}));
  EXPECT_EQ(node_sequence(img, ray_x({0, 0, 0}), o),
            (std::vector<uint32_t>{0x15, 0x25, 0x50, 0x35, 0x60, 0x35, 0x15, 0x45, 0x70, 0x45, 0x15}));
}

// Root with four leaf children entered at t = 1, 2, 3, 4 whose walls lie at 9, 8, 7 and 4.5.
NodeImage four_leaves() {
  NodeImage img;
  auto big = [](float x0, float x1) { return box({x0, -1, -1}, {x1, 3, 3}); };
  img.put(1, box_node(2, 20, kInvalidNode,
                      {box_child(big(1, 10), 0, 1), box_child(big(2, 10), 0, 1), box_child(big(3, 10), 0, 1),
                       box_child(big(4, 5), 0, 1)}));
  img.put(20, primitive_node({pair(wall(9, 0))}));
  img.put(21, primitive_node({pair(wall(8, 1))}));
  img.put(22, primitive_node({pair(wall(7, 2))}));
  img.put(23, primitive_node({pair(wall(4.5f, 3))}));
  return img;
}

TEST(Traversal, RingSmallerThanPrimitiveChildrenLosesAHit) {
  const NodeImage img = four_leaves();
  // Full ring: every leaf is tested and the wall at 4.5 wins.
  const RayResult full = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), {});
  EXPECT_EQ(full.primitive_id, 3u);
  EXPECT_EQ(full.counters.steps, 5u);
  // Ring of 2: the leaves entered at 3 and 4 are overwritten. Walk-back re-intersects the root with last = a
  // primitive, which marks every primitive child as visited (§6.3), so they are never tested: the model returns
  // the farther hit at 8, exactly as the hardware protocol does (§7.4).
  TraceOptions o;
  o.stack.size = 2;
  const RayResult lossy = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o);
  EXPECT_TRUE(lossy.hit);
  EXPECT_EQ(lossy.primitive_id, 1u);
  EXPECT_EQ(lossy.t, 8.0f);
  EXPECT_EQ(lossy.counters.steps, 4u);
  EXPECT_EQ(lossy.counters.stack_lost, 2u);
  EXPECT_EQ(lossy.counters.walk_back_steps, 1u);
  EXPECT_EQ(node_sequence(img, ray_x({0, 0, 0}), o), (std::vector<uint32_t>{0x15, 0x140, 0x150, 0x15}));
  // A ring of 8 (at least one node's children) is safe.
  o.stack.size = 8;
  EXPECT_EQ(trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o).primitive_id, 3u);
}

TEST(Traversal, StepLimitStopsACyclicTree) {
  // The root's only child is the root itself.
  NodeImage img;
  img.put(1, box_node(1, 0, kInvalidNode, {box_child(box({0, -1, -1}, {1, 1, 1}))}));
  TraceOptions o;
  o.step_limit = 50;
  const RayResult r = trace_ray(img.memory(), 0x15, ray_x({-1, 0, 0}), o);
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.counters.steps, 50u);
  EXPECT_EQ(r.counters.step_limit_hits, 1u);
  EXPECT_EQ(r.fault, NodeFault::None);
}

TEST(Traversal, MalformedNodesAreReportedWithTheirPointer) {
  // Leaf child in node 20, which is outside the memory.
  NodeImage img;
  img.put(1, box_node(2, 20, kInvalidNode, {box_child(wall_box(2), 0, 1)}));
  RayResult r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), {});
  EXPECT_EQ(r.fault, NodeFault::OutOfRange);
  EXPECT_EQ(r.fault_node, 0x140u);
  EXPECT_EQ(r.counters.steps, 1u);  // the faulting step is not counted
  // Now node 20 exists but is garbage.
  rdna4::NodeDwords junk;
  junk.fill(0xFFFFFFFFu);
  img.put(20, junk);
  r = trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), {});
  EXPECT_EQ(r.fault, NodeFault::MalformedPrimitive);
  EXPECT_EQ(r.fault_node, 0x140u);
  // An instance child in a BLAS (no TLAS support yet).
  NodeImage inst;
  inst.put(1, box_node(2, 20, kInvalidNode, {box_child(wall_box(2), rdna4::kTypeInstance, 1)}));
  inst.put(20, junk);
  r = trace_ray(inst.memory(), 0x15, ray_x({0, 0, 0}), {});
  EXPECT_EQ(r.fault, NodeFault::UnsupportedNode);
  EXPECT_EQ(r.fault_node, 0x146u);
  // A root pointer outside the memory faults on the first step.
  r = trace_ray(img.memory(), 0x1005, ray_x({0, 0, 0}), {});
  EXPECT_EQ(r.fault, NodeFault::OutOfRange);
  EXPECT_EQ(r.counters.steps, 0u);
}

TEST(Traversal, NaNRayIsRejectedBeforeTraversal) {
  const NodeImage img = two_leaves();
  const float nan = std::nanf("");
  const RayResult r = trace_ray(img.memory(), 0x15, Ray{{0, nan, 0}, {1, 0, 0}, 0, 100}, {});
  EXPECT_FALSE(r.hit);
  EXPECT_EQ(r.counters.steps, 0u);
}

TEST(Traversal, OptionValidation) {
  const NodeImage img = two_leaves();
  TraceOptions o;
  o.step_limit = 0;
  EXPECT_THROW(trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o), Error);
  o = {};
  o.stack.size = 1;
  EXPECT_THROW(trace_ray(img.memory(), 0x15, ray_x({0, 0, 0}), o), Error);
}

TEST(Counters, PlusEqualsSumsAndTakesMaxDepth) {
  RayCounters a, b;
  a.steps = 3, a.max_stack_depth = 5, a.step_limit_hits = 1, a.stack_lost = 2;
  b.steps = 4, b.max_stack_depth = 2, b.walk_back_steps = 7;
  a += b;
  EXPECT_EQ(a.steps, 7u);
  EXPECT_EQ(a.max_stack_depth, 5u);
  EXPECT_EQ(a.step_limit_hits, 1u);
  EXPECT_EQ(a.stack_lost, 2u);
  EXPECT_EQ(a.walk_back_steps, 7u);
}

}  // namespace
}  // namespace hwbvh::emu
