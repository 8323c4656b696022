#pragma once
// The per-lane traversal loops of the BVH4 comparison targets, both on the RT IP 2.0 node section of
// formats/rdna3 (one BLAS, no instances), with the same TraceOptions, RayResult, RayCounters, StepInfo and wave
// statistics as the RT IP 3.1 emulator (rtip31/traversal.h, wavefront.h), so that oracle and statistics code treat every
// target alike.
//
// Rtip20Traversal: GPURT's TraceRay2_0 (RDNA 2/3). One step = one IMAGE_BVH_INTERSECT_RAY + one DS_BVH_STACK_RTN
// (docs/rtip31-format.md §5.7, §6.6, §7.2):
//
//   node = root, last = INVALID_NODE
//   while node < TERMINAL_NODE:
//     res = intersect(node, extent = closest_t, inverse direction = 1 / d)
//     triangle:  t = t_num / t_denom, accepted if t < closest_t (a first-hit ray stops here)
//                type 1 (triangle 1 of a pair): res = (node & ~7, INVALID x 3): the stack op hands back
//                triangle 0 of the same node without touching the stack, so a pair takes two steps
//                type 0: last = TERMINAL_NODE: push nothing, pop
//     node = ds_bvh_stack_rtn(last, res); last = INVALID_NODE
//     if node == INVALID_NODE (popped into entries an overflow overwrote):   stackless walk-back
//       stack index += 1; last = prev (+1 when prev was triangle 0 of a pair: the pointer its parent holds);
//       node = parent(prev) from the section's parent table
//
// Bvh4x2Traversal: RDNA 4's BVH4x2 mode on the same 4-wide nodes, after GPURT's TraceRay3_0. One step = one
// IMAGE_BVH_DUAL_INTERSECT_RAY on two nodes + one DS_BVH_STACK_PUSH8_POP2 (rtip31/lds_stack.h, docs/rtip31-format.md §6.5):
//
//   node0 = root, node1 = INVALID_NODE, last = INVALID_NODE
//   while node0 < 0xFFFFFFF8:
//     res = dual_intersect(node0, node1, extent = closest_t)    (pointer bit 31 is a software tag, masked off)
//     triangles, node0 first: take the hit; node0's slots -> DW3 = SKIP_0_3; node1's -> DW7 = SKIP_4_7, or for a
//       triangle 1 (whose triangle 0 is not in this step) DW6, DW7 = SKIP_4_7, (node1 & ~7) | 0x80000000: push
//       its triangle 0, tagged as generated
//     (node0, node1) = push8_pop2(last, res.DW0..7): the top of the stack and the entry below it
//     if node0 == INVALID_NODE: walk back from the later node (node1 unless it is node0's own triangle 0; a tagged
//       triangle 0 as its triangle-1 pointer): last = it, node0 = parent(it)
//
// How BVH4x2 pairs nodes: dynamically, through the stack. push8_pop2 returns the two entries on top — the next
// two nodes in traversal order, whatever their types — and a triangle-1 pointer always brings triangle 0 of its
// node along, so a pair node costs one step, as on RT IP 3.1. Node 0 is the earlier of the two, so its results
// land on top of the later node's and the stack stays in depth-first order. GPURT's TraceRay3_0 passes the
// nodes the other way round (the later node first) and walks back from the earlier one; after a stack overflow
// that order can skip the earlier node's children, which then lie below the later node's, and lose hits
// (docs/rdna3-format.md). The instructions themselves are modelled exactly as GPURT emulates them.
//
// Counters (docs/rdna3-format.md): steps, walk_back_steps and stack traffic as for RT IP 3.1. box_node_steps and
// primitive_node_steps count node operands (GPURT's numRayBoxTest / numRayTriangleTest): one per step for RT IP 2.0,
// where a primitive-node step tests one triangle; up to two per step for BVH4x2. box_tests: 4 per box node;
// triangle_tests: 1 per triangle node operand; obb_steps: 0. StepInfo: the step's first node; for BVH4x2 its
// kind is Box when either operand is a box node.
#include <cstdint>
#include <span>
#include <string>

#include "hwbvh/emu/any_hit_record.h"
#include "hwbvh/emu/rtip20/intersect.h"
#include "hwbvh/emu/rtip20/stack.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/formats/rdna3/node_section.h"

namespace hwbvh::emu {

/// An RT IP 2.0 node section ready for traversal: its bytes and its checked header (root, parent table).
struct Bvh4Section {
  NodeMemory memory;
  rdna3::NodeSectionHeader header;

  /// Reads the header; throws hwbvh::Error(BadInput) naming `file` if it is malformed.
  static Bvh4Section from(std::span<const uint32_t> dwords, const std::string& file = {});
  /// Parent pointer of the node `pointer` addresses (0xFFFFFFFF for the root or outside the node slots).
  [[nodiscard]] uint32_t parent(uint32_t pointer) const;
};

/// One lane of the RT IP 2.0 loop, advanced one step at a time like RayTraversal. `section` and `options` must
/// outlive the object; `options` must pass validate(). Fields used: stack.size (ring entries), intersect.box_sort,
/// heuristic, box_grow, triangle_test, flags, any_hit, step_limit. A ray with a NaN origin or direction is finished
/// at once.
class Rtip20Traversal {
 public:
  Rtip20Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options);
  [[nodiscard]] bool done() const { return done_; }
  /// One loop iteration. Precondition: !done(). A fault (node outside memory, malformed triangle id, or a node
  /// type the encoder never writes: 2, 3, 4, 6, 7) finishes the ray without counting the step.
  StepInfo step();
  /// Appends what `step` fetched (node_fetch.h): a BVH4 box node (128 bytes in fp32, 64 in fp16) and its 4 boxes,
  /// or a 64-byte triangle node and its one triangle.
  static void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence);
  [[nodiscard]] const RayResult& result() const { return result_; }

 private:
  const Bvh4Section* section_;
  const TraceOptions* options_;
  Bvh4RayOperands ray_;
  float tmin_ = 0.0f;
  float closest_t_ = 0.0f;
  Rdna3Stack stack_;
  uint32_t node_;
  uint32_t last_ = rdna3::kInvalidNode;
  bool after_triangle1_ = false;  ///< the previous step tested triangle 1 of a pair (GPURT's trianglePairIntersected)
  bool done_ = false;
  RayResult result_;
  AnyHitRecord any_hit_record_;
};

/// One lane of the BVH4x2 loop; same contract as Rtip20Traversal (stack.size is the push8/pop2 ring).
class Bvh4x2Traversal {
 public:
  Bvh4x2Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options);
  [[nodiscard]] bool done() const { return done_; }
  StepInfo step();
  /// Appends both nodes of a dual step (the second with same_step), each as Rtip20Traversal records a node.
  static void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence);
  [[nodiscard]] const RayResult& result() const { return result_; }

 private:
  const Bvh4Section* section_;
  const TraceOptions* options_;
  Bvh4RayOperands ray_;
  float tmin_ = 0.0f;
  float closest_t_ = 0.0f;
  LdsStack stack_;
  uint32_t node0_;                      ///< the next node in traversal order
  uint32_t node1_ = rdna3::kInvalidNode;  ///< the one after it, or INVALID_NODE
  uint32_t last_ = rdna3::kInvalidNode;
  bool done_ = false;
  RayResult result_;
  AnyHitRecord any_hit_record_;
};

/// Traces one ray to completion with the RT IP 2.0 loop.
RayResult trace_ray_rtip20(const Bvh4Section& section, const Ray& ray, const TraceOptions& options);
/// Traces one ray to completion with the BVH4x2 loop.
RayResult trace_ray_bvh4x2(const Bvh4Section& section, const Ray& ray, const TraceOptions& options);

/// Traces `rays` with the RT IP 2.0 loop, 32 lanes per wave in lockstep, exactly like trace_rays (wavefront.h):
/// identical results at any thread count. Throws hwbvh::Error(BadInput) for invalid options.
TraceOutput trace_rays_rtip20(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                              const Executor& executor);
/// Same, with explicit waves as in trace_rays (wavefront.h), e.g. the camera's 8x4 pixel tiles.
TraceOutput trace_rays_rtip20(const Bvh4Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                              const TraceOptions& options, const Executor& executor);
/// The same two with the BVH4x2 loop.
TraceOutput trace_rays_bvh4x2(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                              const Executor& executor);
TraceOutput trace_rays_bvh4x2(const Bvh4Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                              const TraceOptions& options, const Executor& executor);

}  // namespace hwbvh::emu
