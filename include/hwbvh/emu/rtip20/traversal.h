#pragma once
// The per-lane traversal loops of the BVH4 comparison targets, both on the RT IP 2.0 node section of
// formats/rdna3 (one BLAS, or a top level whose instance nodes lead into BLASes), with the same TraceOptions, RayResult, RayCounters, StepInfo and wave
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
// Two levels (docs/emulator.md, "RT IP 2.0 instances"): neither instruction reads instance nodes, so the traversal
// shader handles them, as GPURT's RayQuery2_0.hlsl / TraceRay2_0 do. An instance step (a step of its own, counted in
// instance_node_steps) reads the node, culls on the instance mask (and SKIP_TRIANGLES), transforms origin and
// direction by the world-to-object matrix, and continues at the BLAS node the instance node names, at the BLAS's
// address, with the instance's pointer flags merged in. RT IP 2.0 returns that node directly and keeps the stack
// index (GPURT's stackPtrTop): the pop that takes the index below it is a top-level node, and the world ray comes
// back. BVH4x2 pushes only the BLAS node and lets the RT IP 3.x stack's TLAS bookkeeping say when a pop crosses back
// (lds_stack.h; the stack never pops an instance node together with another node). Walk-back out of a BLAS root
// climbs to the instance node and on to its parent. The any-hit record is cleared on entering an instance; hits
// carry the instance node's instance index and BLAS-local geometry ids (the any-hit shader sees them numbered
// across BLASes).
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

struct Bvh4Blases;

/// An RT IP 2.0 node section ready for traversal: its bytes and its checked header (root, parent table).
struct Bvh4Section {
  NodeMemory memory;
  rdna3::NodeSectionHeader header;
  /// A top level's BLASes, which its instance nodes name by address; null for a BLAS or a one-level BVH, where an
  /// instance node faults (UnsupportedNode).
  const Bvh4Blases* blases = nullptr;

  /// Reads the header; throws hwbvh::Error(BadInput) naming `file` if it is malformed.
  static Bvh4Section from(std::span<const uint32_t> dwords, const std::string& file = {});
  /// Parent pointer of the node `pointer` addresses (0xFFFFFFFF for the root or outside the node slots).
  [[nodiscard]] uint32_t parent(uint32_t pointer) const;
};

/// The bottom levels of a two-level RT IP 2.0 node section: each BLAS a node section of its own.
struct Bvh4Blases {
  struct Blas {
    uint64_t address = 0;  ///< byte address of its header in the Nodes section, as instance nodes hold it
    Bvh4Section section;
    uint32_t first_geometry = 0;  ///< its geometry ids as the any-hit shader numbers them start here
  };
  std::vector<Blas> blases;  ///< ascending by address
  /// The BLAS whose header is at `address`, or null.
  [[nodiscard]] const Blas* find(uint64_t address) const;
};

namespace detail {
/// The level a BVH4 lane is in, switched by the traversal shader (RT IP 2.0 has no instance hardware): the instance
/// step reads the instance node, culls on the instance mask and SKIP_TRIANGLES, moves the ray into object space and
/// enters the BLAS at the node pointer the instance node names; leaving restores the world ray. Shared by both loops.
class Bvh4Levels {
 public:
  Bvh4Levels(const Bvh4Section& top, const TraceOptions& options)
      : top_(&top), section_(&top), options_(&options), flags_(options.flags) {}
  [[nodiscard]] const Bvh4Section& section() const { return *section_; }
  [[nodiscard]] const PointerFlags& flags() const { return flags_; }
  /// The lane is in a BLAS (every step of a one-level BVH counts as one too).
  [[nodiscard]] bool in_blas() const { return in_blas_ || top_->blases == nullptr; }
  [[nodiscard]] bool inside_instance() const { return in_blas_; }
  [[nodiscard]] uint32_t instance_index() const { return instance_index_; }
  [[nodiscard]] uint32_t geometry_base() const { return geometry_base_; }
  /// Byte address of the current level's header in the node section (fetch records).
  [[nodiscard]] uint64_t address() const { return address_; }
  /// The instance step on `pointer`: the node the lane continues with in the BLAS (the ray in `ray` moved into
  /// object space), or INVALID_NODE when the instance is culled. A fault (the node outside the section, no top
  /// level, a base pointer naming no BLAS) is returned in `fault`.
  uint32_t enter(uint32_t pointer, Bvh4RayOperands& ray, NodeFault& fault);
  /// Back in the top level with the world ray.
  void leave(Bvh4RayOperands& ray);
  /// Walk-back from `prev`: out of the BLAS through its root to the instance node (then `prev` is the instance
  /// node and the lane is in the top level). Returns the parent to re-visit.
  uint32_t walk_back_parent(uint32_t& prev, Bvh4RayOperands& ray);

 private:
  const Bvh4Section* top_;
  const Bvh4Section* section_;
  const TraceOptions* options_;
  PointerFlags flags_;
  bool in_blas_ = false;
  uint32_t instance_node_ = rdna3::kInvalidNode;
  uint32_t entry_node_ = rdna3::kInvalidNode;  ///< the BLAS node the instance node names (its root)
  uint32_t instance_index_ = 0;
  uint32_t geometry_base_ = 0;
  uint64_t address_ = 0;
  Vec3 world_origin_{0.0f}, world_direction_{0.0f}, world_inverse_{0.0f};
};
}  // namespace detail

/// One lane of the RT IP 2.0 loop, advanced one step at a time like RayTraversal. `section` and `options` must
/// outlive the object; `options` must pass validate(). Fields used: stack.size (ring entries), intersect.box_sort,
/// heuristic, box_grow, triangle_test, flags, any_hit, step_limit. A ray with a NaN origin or direction is finished
/// at once.
class Rtip20Traversal {
 public:
  Rtip20Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options);
  [[nodiscard]] bool done() const { return done_; }
  /// One loop iteration. Precondition: !done(). A fault (node outside memory, malformed triangle id, a node
  /// type the encoder never writes: 2, 3, 4, 7, or a bad instance node) finishes the ray without counting the step.
  StepInfo step();
  /// Appends what `step`, this lane's latest, fetched (node_fetch.h) at its address in the node section.
  void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence) const {
    record_fetches(step, sequence, step_address_);
  }
  /// The same for a step on a level whose header is at byte `level_address`: a BVH4 box node (128 bytes in fp32,
  /// 64 in fp16) and its 4 boxes, a 64-byte triangle node and its one triangle, or a 128-byte instance node.
  static void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence, uint64_t level_address);
  [[nodiscard]] const RayResult& result() const { return result_; }

 private:
  const TraceOptions* options_;
  detail::Bvh4Levels levels_;
  Bvh4RayOperands ray_;
  float tmin_ = 0.0f;
  float closest_t_ = 0.0f;
  Rdna3Stack stack_;
  uint32_t top_index_ = 0;  ///< stack index when the lane entered its BLAS (GPURT's stackPtrTop)
  uint64_t step_address_ = 0;
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
  void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence) const {
    record_fetches(step, sequence, step_address_);
  }
  static void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence, uint64_t level_address);
  [[nodiscard]] const RayResult& result() const { return result_; }

 private:
  /// The step's stack operation on `data`, walking back from `later` when the ring ran dry after an overflow.
  void advance(const std::array<uint32_t, 8>& data, uint32_t later);

  const TraceOptions* options_;
  detail::Bvh4Levels levels_;
  uint64_t step_address_ = 0;
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
