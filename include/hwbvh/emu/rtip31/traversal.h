#pragma once
// The per-lane traversal loop of GPURT's TraceRay3_1 (docs/rtip31-format.md §7.1 .. §7.4), over one BLAS or a
// top-level structure whose instance nodes lead into BLASes (NodeMemory::blases).
// One step = one loop iteration = one IMAGE_BVH8_INTERSECT_RAY + one DS_BVH_STACK_PUSH8_POP1:
//
//   node = root, last = INVALID_NODE
//   while node < 0xFFFFFFF8:
//     res = intersect(node, extent = (last == INVALID_NODE) ? closest_t : t_max)
//     primitive node: take its triangle hits closer-first; res.DW7 = node; last = 0xFFFFFFF8 | nav
//     box node:       parent = node
//     node = push8_pop1(last, res.DW0..7); last = INVALID_NODE
//     if node == INVALID_NODE (ring ran dry after an overflow):   walk back
//       last = the node just processed; node = its parent (box: DW2; primitive: the last box node visited)
//
// Two levels (§7.3): an instance step transforms the ray and pushes only the BLAS root; the pop that crosses back
// below the BLAS's entries (blas_to_tlas_pop) restores the world ray. Walk-back climbs out of a BLAS root to the
// instance node and on to the instance's parent.
//
// tmin is handled by moving the origin to origin + tmin * direction (and t_max = tmax - tmin); reported hit
// distances add tmin back. There are no intersection shaders: procedural candidates are ignored. Candidates on
// non-opaque triangles go to TraceOptions::any_hit_shader (any_hit.h: the alpha test, skipped where the STOC
// sideband knows the answer); without one they are accepted like opaque ones (docs/emulator.md).
#include <cstdint>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/any_hit_record.h"
#include "hwbvh/emu/counters.h"
#include "hwbvh/emu/node_fetch.h"
#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/emu/rtip31/lds_stack.h"

namespace hwbvh::emu {

inline constexpr uint32_t kDefaultStepLimit = 1'000'000;

class AnyHitShader;  // any_hit.h

struct TraceOptions {
  StackOptions stack;
  IntersectOptions intersect;
  PointerFlags flags;              ///< pointer flags of the BVH base (ray flags: culling, forced opacity)
  uint32_t instance_mask = 0xFF;   ///< the ray's 8-bit instance mask
  bool any_hit = false;            ///< terminate on the first accepted hit (shadow rays)
  /// The application's any-hit shader for candidate hits on non-opaque triangles (any_hit.h); must outlive the
  /// traversal. Null: such candidates are accepted without one.
  const AnyHitShader* any_hit_shader = nullptr;
  /// Consult STOC states (Xe3 leaf masks, the RT IP 3.1 sideband) before running the any-hit shader.
  bool stoc = true;
  /// Every geometry carries DXR's NO_DUPLICATE_ANYHIT_INVOCATION (Vulkan: NO_DUPLICATE_ANY_HIT_INVOCATION_BIT): the
  /// any-hit shader runs at most once per primitive and ray, also where spatial splits put the triangle in several
  /// leaves (any_hit.h AnyHitRecord).
  bool no_duplicate_any_hit = false;
  uint32_t step_limit = kDefaultStepLimit;  ///< a ray still running after this many steps is stopped and flagged
  bool record_node_sequence = false;        ///< wavefront: keep each ray's node pointers, one per step

  /// Validates the stack and intersect options; throws hwbvh::Error(BadInput).
  void validate() const;
};

/// The outcome of one ray: its hit (if any), counters, and the fault that stopped it (if any).
struct RayResult {
  bool hit = false;
  float t = 0.0f;             ///< hit distance along the caller's ray (tmin added back)
  uint32_t primitive_id = 0;
  uint32_t geometry_id = 0;
  Vec2 barycentrics{0.0f};    ///< (u, v): weights of the triangle's vertices i1 and i2
  bool front_face = false;    ///< the ray travels against the geometric normal (b - a) x (c - a)
  RayCounters counters;
  NodeFault fault = NodeFault::None;
  uint32_t fault_node = rdna4::kInvalidNode;  ///< the node pointer the fault occurred on
  uint32_t instance_index = 0;  ///< two-level BVHs: the hit's instance (BlasTable::instance_index); 0 otherwise
  friend bool operator==(const RayResult&, const RayResult&) = default;
};

/// What one step did, for wave statistics and machine models.
struct StepInfo {
  uint32_t node = rdna4::kInvalidNode;  ///< the node pointer intersected
  rdna4::NodeKind kind = rdna4::NodeKind::Unsupported;
  bool walk_back = false;                ///< a re-intersection during walk-back
  bool faulted = false;                  ///< the node faulted: the ray stopped and the step is not counted
  uint16_t node_bytes = 0;  ///< Xe3: the node's size (a STOC3 leaf has 128 bytes); other targets: 0, the pointer says
  uint32_t second_node = rdna4::kInvalidNode;  ///< BVH4x2: the dual intersect's second node, if any
};
static_assert(sizeof(StepInfo) <= 16, "returned by every lane step: keep it in two registers");

/// One lane's traversal state, advanced one step at a time so that a wave can run 32 of them in lockstep.
class RayTraversal {
 public:
  /// Prepares `ray` for traversal from `root`. `memory` and `options` must outlive the object; `options` must pass
  /// validate(). A ray with a NaN origin or direction component is finished at once as a miss with no steps
  /// (GPURT rejects such rays before traversal). With a `cache` (for the same memory, outliving the object), nodes
  /// are read through it: the same results, faster when nodes are visited again.
  RayTraversal(const NodeMemory& memory, uint32_t root, const Ray& ray, const TraceOptions& options,
               NodeDecodeCache* cache = nullptr);

  [[nodiscard]] bool done() const { return done_; }
  /// Performs one loop iteration. Precondition: !done(). A node fault finishes the ray without counting the step;
  /// reaching options.step_limit finishes it after the step, with counters.step_limit_hits = 1.
  StepInfo step();
  /// step() when options.flags and options.intersect are the defaults (default_intersect(options)), with those as
  /// compile-time constants: the same step, compiled without the work only other options need.
  StepInfo step_with_default_intersect();
  /// Appends what `step`, this lane's latest, fetched (node_fetch.h) for the machine model: the 128-byte node at its
  /// address in the node section (a BLAS's nodes lie past its header's address); a box node's 8 boxes, an instance
  /// node's 4, or a primitive node's 2 triangles (a pair; an upper bound, the step does not say whether the pair
  /// holds one).
  void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence) const {
    record_fetches(step, sequence, step_address_);
  }
  /// The same for a step on a level whose header is at byte `level_address` of the node section.
  static void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence, uint64_t level_address);
  [[nodiscard]] const RayResult& result() const { return result_; }
  /// The next step reads a BLAS of a two-level BVH (false in its top level and in a one-level BVH).
  [[nodiscard]] bool in_blas() const { return in_blas_; }

  /// The options' pointer flags and intersect options are the defaults.
  static bool default_intersect(const TraceOptions& options);

 private:
  template <bool kDefaultIntersect>
  StepInfo step_as();
  template <bool kDefaultIntersect>
  IntersectResult intersect() const;  ///< image_bvh8_intersect_ray on node_
  void process_primitive_hits(const IntersectDwords& dw);
  /// The instance step (§7.2, §7.3): transforms the ray and gives the result whose push8 pushes only the BLAS root
  /// (or nothing when the filter node missed), with the BLAS's memory and merged flags in place for the pop.
  template <bool kDefaultIntersect>
  IntersectResult enter_instance();
  /// The same on the node decoded: completes `res`.
  template <bool kDefaultIntersect>
  void enter_instance(const DecodedInstance& instance, IntersectResult& res);
  void leave_instance();  ///< back in the top level: the world ray, the top level's memory and flags
  void walk_back(uint32_t prev);
  void finish(NodeFault fault, uint32_t node);
  void stop();  ///< ends the ray: done, with the stack counters filled in

  const NodeMemory* memory_;  ///< the current level's nodes
  NodeDecodeCache* cache_;     ///< the current level's decode cache, or null
  const TraceOptions* options_;
  PreparedRay ray_;  ///< the ray after the tmin offset, in the current level's space; extent is set per step
  PreparedRay top_ray_;  ///< the world-space ray while the lane is inside a BLAS (§7.3 restores it)
  PointerFlags flags_;         ///< the current level's pointer flags: the ray's, merged with an instance's in a BLAS
  /// Which compiled copy of the intersector flags_ take (intersect()), kept with flags_ rather than compared per step.
  enum class FlagsKind : uint8_t { Default, TriangleBlas, Other };
  FlagsKind flags_kind_ = FlagsKind::Default;
  static FlagsKind kind_of(const PointerFlags& flags);
  // Two-level state (§7.3): the top level's memory, cache and ray while the lane is inside a BLAS.
  const NodeMemory* top_memory_;
  NodeDecodeCache* top_cache_;
  bool in_blas_ = false;
  uint32_t instance_node_ = rdna4::kInvalidNode;  ///< the instance node the lane entered its BLAS through
  uint32_t blas_root_ = rdna4::kInvalidNode;      ///< the BLAS root that instance node named (walk-back)
  uint32_t instance_index_ = 0;
  uint32_t geometry_base_ = 0;  ///< BlasTable::Blas::first_geometry of the BLAS the lane is in
  uint32_t instance_parent_ = rdna4::kInvalidNode;  ///< that instance node's parent pointer (walk-back)
  uint64_t level_address_ = 0;  ///< byte address of the current level (its header) in the node section
  uint64_t step_address_ = 0;   ///< level_address_ of the latest step (record_fetches)
  float tmin_ = 0.0f;
  float t_max_ = 0.0f;
  float closest_t_ = 0.0f;
  LdsStack stack_;
  AnyHitRecord any_hit_record_;
  uint32_t node_;
  uint32_t last_ = rdna4::kInvalidNode;
  uint32_t parent_ = rdna4::kInvalidNode;
  bool done_ = false;
  RayResult result_;
};

/// Traces one ray to completion (closest hit, or first hit when options.any_hit).
RayResult trace_ray(const NodeMemory& memory, uint32_t root, const Ray& ray, const TraceOptions& options);

}  // namespace hwbvh::emu
