#pragma once
// Per-ray traversal counters of the functional emulator. Exact definitions, and the GPURT developer counter each
// one matches, are in docs/counters.md; keep the two in sync. Sums over rays use operator+=.
#include <cstdint>
#include <iterator>

namespace hwbvh::emu {

struct RayCounters {
  uint64_t steps = 0;                 ///< loop iterations = intersect + stack op pairs (GPURT numIterations)
  uint64_t box_node_steps = 0;        ///< iterations on box nodes (GPURT numRayBoxTest)
  uint64_t primitive_node_steps = 0;  ///< iterations on primitive nodes, one pair each (GPURT numRayTriangleTest)
  uint64_t box_tests = 0;             ///< ray/box slab tests: 8 per box-node iteration
  uint64_t triangle_tests = 0;        ///< ray/triangle tests: 1 or 2 per primitive-node iteration
  uint64_t obb_steps = 0;             ///< box-node iterations that rotated the ray into an OBB frame
  uint64_t stack_pushes = 0;          ///< entries written to the LDS ring
  uint64_t stack_pops = 0;            ///< entries read back from the LDS ring
  uint64_t stack_lost = 0;            ///< entries lost by ring overflow (overwritten while live)
  uint64_t walk_back_steps = 0;       ///< iterations that re-intersect a parent after an overflowed stack ran dry
  uint64_t max_stack_depth = 0;       ///< largest number of live ring entries (max, not summed)
  uint64_t step_limit_hits = 0;       ///< 1 if the ray was stopped by the step limit (sums to a ray count)
  uint64_t any_hit_invocations = 0;   ///< candidate hits on non-opaque triangles handed to the any-hit shader
  uint64_t stoc_skipped_transparent = 0;  ///< such candidates dropped without any-hit: transparent sub-triangle
  uint64_t stoc_accepted_opaque = 0;  ///< such candidates accepted without any-hit: opaque sub-triangle
  uint64_t tlas_steps = 0;            ///< iterations in a top-level structure (its box and instance nodes)
  uint64_t blas_steps = 0;            ///< iterations in a BLAS (every iteration of a one-level BVH)
  uint64_t instance_node_steps = 0;   ///< iterations on instance nodes (GPURT instanceIntersections)
  uint64_t instance_transitions = 0;  ///< instance iterations that entered their BLAS (the filter node hit)

  /// Adds every counter except max_stack_depth, which takes the maximum.
  RayCounters& operator+=(const RayCounters& o) {
    steps += o.steps;
    box_node_steps += o.box_node_steps;
    primitive_node_steps += o.primitive_node_steps;
    box_tests += o.box_tests;
    triangle_tests += o.triangle_tests;
    obb_steps += o.obb_steps;
    stack_pushes += o.stack_pushes;
    stack_pops += o.stack_pops;
    stack_lost += o.stack_lost;
    walk_back_steps += o.walk_back_steps;
    max_stack_depth = max_stack_depth > o.max_stack_depth ? max_stack_depth : o.max_stack_depth;
    step_limit_hits += o.step_limit_hits;
    any_hit_invocations += o.any_hit_invocations;
    stoc_skipped_transparent += o.stoc_skipped_transparent;
    stoc_accepted_opaque += o.stoc_accepted_opaque;
    tlas_steps += o.tlas_steps;
    blas_steps += o.blas_steps;
    instance_node_steps += o.instance_node_steps;
    instance_transitions += o.instance_transitions;
    return *this;
  }
  friend bool operator==(const RayCounters&, const RayCounters&) = default;
};

/// Every counter with its name in docs/counters.md, in declaration order (per-ray output lists them all).
struct RayCounterField {
  const char* name;
  uint64_t RayCounters::*member;
};
inline constexpr RayCounterField kRayCounterFields[] = {
    {"steps", &RayCounters::steps},
    {"box_node_steps", &RayCounters::box_node_steps},
    {"primitive_node_steps", &RayCounters::primitive_node_steps},
    {"box_tests", &RayCounters::box_tests},
    {"triangle_tests", &RayCounters::triangle_tests},
    {"obb_steps", &RayCounters::obb_steps},
    {"stack_pushes", &RayCounters::stack_pushes},
    {"stack_pops", &RayCounters::stack_pops},
    {"stack_lost", &RayCounters::stack_lost},
    {"walk_back_steps", &RayCounters::walk_back_steps},
    {"max_stack_depth", &RayCounters::max_stack_depth},
    {"step_limit_hits", &RayCounters::step_limit_hits},
    {"any_hit_invocations", &RayCounters::any_hit_invocations},
    {"stoc_skipped_transparent", &RayCounters::stoc_skipped_transparent},
    {"stoc_accepted_opaque", &RayCounters::stoc_accepted_opaque},
    {"tlas_steps", &RayCounters::tlas_steps},
    {"blas_steps", &RayCounters::blas_steps},
    {"instance_node_steps", &RayCounters::instance_node_steps},
    {"instance_transitions", &RayCounters::instance_transitions},
};
static_assert(sizeof(RayCounters) == sizeof(uint64_t) * std::size(kRayCounterFields), "a counter is not listed");

}  // namespace hwbvh::emu
