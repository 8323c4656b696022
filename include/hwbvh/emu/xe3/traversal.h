#pragma once
// The traversal of an Intel Xe3 ray-tracing unit over the node section of formats/xe3 (one BLAS, no instances), with
// the same TraceOptions, RayResult, RayCounters, StepInfo and wave statistics as the RT IP 3.1 emulator (rtip31/traversal.h,
// wavefront.h), so that oracle and statistics code treat every target alike.
//
// Stack model. What is public (docs/xe3-format.md §6.2): the unit keeps a short stack (the spilled state holds
// 4 entries with per-entry "last child" bits) and a restart trail of a 3-bit counter for each of 29 levels, after
// Vaidyanathan, Woop and Benthin, "Wide BVH Traversal with a Short Stack" (HPG 2019), which generalises Laine's
// restart trail. The exact protocol is not public; ours (docs/xe3-format.md):
//
//   trail[L] for the internal node at depth L on the current path: k = 0..5, its k-th hit child (nearest first) is
//   being traversed and the k before it are done; 7 = the one being traversed is its last hit child.
//   At an internal node at depth L: test the six children, sort the hits by entry distance; take hit child
//     k = trail[L] (the last one if trail[L] = 7; none left: the node is finished); set trail[L] to k, or 7 if it is
//     the last; push the hits after k onto the short stack, farthest first, the farthest marked "last"; descend.
//   A leaf child is a list of leaves, tested one per step, until the leaf with the `last` bit.
//   A finished subtree at depth d: pop the short stack if it has entries (an entry of depth l sets trail[l-1] to
//     7 if marked last, else trail[l-1] + 1, and clears the trail below); if it is empty, find the deepest level
//     L < d with trail[L] != 7, increment it, clear the trail below and restart from the root, re-descending along
//     the trail; if every level is 7, traversal is done.
//   A push onto a full short stack drops its oldest (bottom) entry; the restart recovers what was dropped.
// Sorting by entry distance keeps a node's hit children in a stable order as the closest hit shrinks the interval
// (only the farthest drop out), so the trail stays valid across restarts.
//
// Two levels (a top level with Xe3Blases): an InstanceLeaf is a child like any other. Its step reads the leaf's first
// 64 bytes: geomMask & ray mask = 0 culls it (the leaf is done, no transition); otherwise the ray is mapped into the
// instance (o' = L (o - p), d' = L d from bytes 16..63), the instance flags join the ray flags, and traversal
// continues at the BLAS root with a fresh short stack and trail: the unit keeps one traversal state per BVH level
// (IGC's RTStack holds a MemTravStack per level), so the top level's stack and trail wait untouched. A restart inside
// the BLAS restarts from the BLAS root. When the BLAS is finished, the world ray and the top level's state come back
// and the InstanceLeaf counts as a finished subtree there.
//
// One step = one node fetched and tested: an internal node (6 box tests), one leaf (1 or 2 triangle tests) or one
// InstanceLeaf (no test; instance_node_steps).
// Counters (docs/xe3-format.md): steps, box_node_steps, primitive_node_steps, box_tests = 6 per internal-node step,
// triangle_tests, stack_pushes / stack_pops / stack_lost of the short stack, max_stack_depth (its largest size),
// walk_back_steps = steps that re-visit an internal node while restarting (root to the restart level), obb_steps 0.
// tlas_steps / blas_steps split the steps by level (a one-level section's are all BLAS steps); instance_transitions
// counts entered instances. StepInfo::node, RayResult::fault_node and node sequences name 64-byte blocks of the whole
// Nodes section (a BLAS's blocks shifted by its address / 64), so fetches carry absolute addresses.
//
// The ray keeps its origin; hits count in [tmin, tmax] (then closer than the closest hit so far). There are no
// intersection shaders; candidates on non-opaque leaves go to the any-hit model of any_hit.h with the STOC state of
// the leaf (STOC3 leaf: its level-3 masks; QuadLeaf: its level-1 masks; in the header's sub-triangle order).
// TraceOptions' pointer flags act as ray flags (culling, forced opacity, skip triangles). Used from TraceOptions:
// intersect.box_grow, intersect.triangle_test, flags, instance_mask (against nodeMask and geomMask), any_hit,
// any_hit_shader, stoc, step_limit, record_node_sequence; stack and the rest of intersect are RT IP 3.1 settings and
// are not used (the short stack's size is Xe3StackOptions::entries).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/any_hit_record.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/formats/xe3/node_section.h"

namespace hwbvh::emu {

inline constexpr uint32_t kXe3ShortStackEntries = 4;  ///< the spilled MemTravStack's entries (§6.2)

struct Xe3StackOptions {
  uint32_t entries = kXe3ShortStackEntries;  ///< short-stack entries, 1..64

  /// Throws hwbvh::Error(BadInput) if entries is outside 1..64.
  void validate() const;
};

struct Xe3Blases;

/// An Xe3 node section ready for traversal: its dwords and its checked header.
struct Xe3Section {
  std::span<const uint32_t> dwords;
  xe3::NodeSectionHeader header;
  /// A top level's: the BLASes its InstanceLeafs enter (null for a BLAS or a one-level BVH, where an InstanceLeaf
  /// is unsupported).
  const Xe3Blases* blases = nullptr;

  /// Reads the header; throws hwbvh::Error(BadInput) naming `file` if it is malformed.
  static Xe3Section from(std::span<const uint32_t> dwords, const std::string& file = {});
};

/// The bottom levels of a two-level Nodes section (docs/xe3-format.md, "Top level"): [top level][BLAS 0][BLAS 1]...,
/// each a node section of its own starting on a 64-byte block. An InstanceLeaf's startNodePtr is the byte address
/// of its BLAS's root in the whole Nodes section.
struct Xe3Blases {
  struct Blas {
    uint64_t address = 0;         ///< byte address of the BLAS's header in the Nodes section (a multiple of 64)
    Xe3Section section;           ///< its nodes: block 0 is its header
    uint32_t first_geometry = 0;  ///< its geometry ids as the any-hit shader numbers them start here
  };
  std::vector<Blas> blases;  ///< ascending by address
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  /// Index into blases of the BLAS whose root lies at byte `address`, or kNone.
  [[nodiscard]] uint32_t find_root(uint64_t address) const;
};

/// One lane of the Xe3 traversal, advanced one step at a time like RayTraversal. `section`, `options` and `stack`
/// must outlive the object and pass validate(). A ray with a NaN origin or direction is finished at once as a miss.
class Xe3Traversal {
 public:
  Xe3Traversal(const Xe3Section& section, const Ray& ray, const TraceOptions& options, const Xe3StackOptions& stack);

  [[nodiscard]] bool done() const { return done_; }
  /// One step. Precondition: !done(). A fault (a node outside the section's nodes, a node type other than 0, 1, 4
  /// or 5, an internal node deeper than the 29-level trail, an InstanceLeaf outside a top level with BLASes, one
  /// whose start node lies outside the Nodes section (OutOfRange) or is no BLAS's root (UnknownBlas), or whose
  /// instanceIndex is not below the header's instance count (UnknownBlas)) finishes the ray without counting the step.
  StepInfo step();
  /// Appends what `step` fetched (node_fetch.h): a 64-byte internal node and its 6 boxes, a leaf (64 bytes, a
  /// STOC3 leaf 128) and its quad's 2 triangles (an upper bound: the step does not say whether the quad holds one),
  /// or an InstanceLeaf's first 64 bytes.
  static void record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence);
  [[nodiscard]] const RayResult& result() const { return result_; }

 private:
  struct Entry {
    int64_t block;
    uint32_t type;
    uint32_t level;
    bool last;
  };
  static constexpr uint8_t kTrailLast = 7;
  static constexpr uint32_t kNoRestart = 0xFFFFFFFFu;

  /// What a level keeps while the ray is in an instance: its short stack, trail and the InstanceLeaf's depth.
  struct LevelState {
    std::array<uint8_t, xe3::kTrailLevels> trail{};
    std::vector<Entry> stack;
    uint32_t level = 0;
  };

  void step_internal(StepInfo& info);
  void step_leaf(StepInfo& info);
  void step_instance(StepInfo& info);
  void leave_instance();
  void count_step(RayCounters& c) const;
  void finish_subtree(uint32_t depth);
  void push(const Entry& e);
  void fault(NodeFault f, StepInfo& info);

  const Xe3Section* top_;      ///< the section the ray started in
  const Xe3Section* section_;  ///< the level being traversed: top_ or a BLAS
  const TraceOptions* options_;
  const Xe3StackOptions* stack_options_;
  PreparedRay ray_;
  float tmin_ = 0.0f;
  float tmax_ = 0.0f;
  float grow_ = 1.0f;
  int64_t block_ = 0;      ///< the node the next step tests
  uint32_t type_ = 0;      ///< its node type
  uint32_t level_ = 0;     ///< its depth (a leaf list: its parent's depth + 1)
  uint32_t restart_level_ = kNoRestart;  ///< while restarting: the level whose trail entry was incremented
  std::array<uint8_t, xe3::kTrailLevels> trail_{};
  std::vector<Entry> stack_;  ///< bottom first
  bool done_ = false;
  RayResult result_;
  AnyHitRecord any_hit_record_;
  PointerFlags flags_;          ///< the ray flags of the current level (a BLAS: with the instance's flags)
  bool stoc_ = false;           ///< STOC states consulted on the current level (off under DISABLE_STOC)
  uint32_t base_block_ = 0;     ///< the current level's first block in the Nodes section
  bool in_blas_ = false;        ///< inside an instance
  LevelState top_state_;        ///< the top level's state while in_blas_
  uint32_t instance_index_ = 0;
  uint32_t geometry_base_ = 0;  ///< Xe3Blases::Blas::first_geometry of the BLAS the lane is in
  Ray world_ray_;               ///< the ray as traced, restored on leaving an instance
};

/// Traces one ray to completion (closest hit, or first hit when options.any_hit).
RayResult trace_ray_xe3(const Xe3Section& section, const Ray& ray, const TraceOptions& options,
                        const Xe3StackOptions& stack = {});

/// Traces `rays`, 32 lanes per wave in lockstep, exactly like trace_rays (wavefront.h): identical results at any
/// thread count. Throws hwbvh::Error(BadInput) for invalid options.
TraceOutput trace_rays_xe3(const Xe3Section& section, std::span<const Ray> rays, const TraceOptions& options,
                           const Executor& executor, const Xe3StackOptions& stack = {});
/// Same, with explicit waves as in trace_rays (wavefront.h).
TraceOutput trace_rays_xe3(const Xe3Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                           const TraceOptions& options, const Executor& executor, const Xe3StackOptions& stack = {});

}  // namespace hwbvh::emu
