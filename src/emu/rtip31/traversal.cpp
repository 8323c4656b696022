#include "hwbvh/emu/rtip31/traversal.h"

#include <algorithm>
#include <cmath>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "emu/rtip31/intersect_node.h"
#include "emu/rtip31/stack_ops.h"
#include "emu/wave_loop.h"

namespace hwbvh::emu {
namespace {

using rdna4::kInvalidNode;
using rdna4::NodeKind;

// Inside a BLAS of triangles the flags carry SKIP_PROCEDURAL: with default options, a constant copy for that case.
constexpr PointerFlags kTriangleBlasFlags{.skip_procedural = true};

bool has_nan(Vec3 v) { return std::isnan(v.x) || std::isnan(v.y) || std::isnan(v.z); }

// tmin by moving the origin (§7.1): the intersector itself only knows [0, extent].
Vec3 origin_at_tmin(const Ray& ray) {
  Vec3 origin;
  for (int c = 0; c < 3; ++c) {
    const float offset = ray.tmin * ray.direction[c];
    origin[c] = ray.origin[c] + offset;
  }
  return origin;
}

// The STOC state of a non-opaque candidate from the sideband (looked up only when STOC is on).
std::optional<xe3::SubTriangleState> sideband_state(const TraceOptions& options, const TriangleSlot& s,
                                                    uint32_t geometry_base) {
  if (!options.stoc || !options.any_hit_shader) return std::nullopt;
  return options.any_hit_shader->sideband_state(s.geometry_id + geometry_base, s.primitive_id, {s.u, s.v});
}

}  // namespace

void TraceOptions::validate() const {
  stack.validate();
  intersect.validate();
  if (step_limit == 0) throw Error(ErrorKind::BadInput, "", "the step limit must be at least 1");
}

RayTraversal::RayTraversal(const NodeMemory& memory, uint32_t root, const Ray& ray, const TraceOptions& options,
                           NodeDecodeCache* cache)
    : memory_(&memory),
      cache_(cache),
      options_(&options),
      flags_(options.flags),
      flags_kind_(kind_of(options.flags)),
      top_memory_(&memory),
      top_cache_(cache),
      stack_(options.stack),
      node_(root) {
  // Inline here: through the constructor's call, GCC reloaded the direction's parts across two stores (a stall).
  detail::prepare_ray(ray_, origin_at_tmin(ray), ray.direction, options.instance_mask);
  if (has_nan(ray.origin) || has_nan(ray.direction)) {
    done_ = true;
    return;
  }
  tmin_ = ray.tmin;
  t_max_ = ray.tmax - ray.tmin;
  closest_t_ = t_max_;
}

void RayTraversal::finish(NodeFault fault, uint32_t node) {
  result_.fault = fault;
  result_.fault_node = node;
  stop();
}

void RayTraversal::stop() {
  set_stack_counters(stack_.traffic(), result_.counters);  // the ring's own counts, copied once when the ray ends
  done_ = true;
}

void RayTraversal::process_primitive_hits(const IntersectDwords& dw) {
  // The closer of the two triangles first (tri0 on ties), so a first-hit ray stops on the nearer one (§7.4).
  const TriangleSlot s0 = read_triangle_slot(dw, 0), s1 = read_triangle_slot(dw, 1);
  const bool tri0_first = s0.t <= s1.t;
  for (const TriangleSlot& s : {tri0_first ? s0 : s1, tri0_first ? s1 : s0}) {
    // No intersection shaders: a procedural candidate never becomes a hit. Non-opaque candidates go through the
    // STOC sideband and the any-hit shader (any_hit.h).
    if (s.procedural || !(s.t < closest_t_)) continue;
    // The shader numbers geometries across BLASes (geometry_base_: the current BLAS's first).
    if (s.non_opaque && !resolve_non_opaque(*options_, s.geometry_id + geometry_base_, s.primitive_id, {s.u, s.v},
                                            sideband_state(*options_, s, geometry_base_), result_.counters,
                                            any_hit_record_)) {
      continue;
    }
    closest_t_ = s.t;
    result_.hit = true;
    result_.t = s.t + tmin_;
    result_.primitive_id = s.primitive_id;
    result_.geometry_id = s.geometry_id;
    result_.barycentrics = {s.u, s.v};
    result_.front_face = !s.back_face;
    result_.instance_index = instance_index_;
    if (options_->any_hit) {
      stop();
      return;
    }
  }
}

template <bool kDefaultIntersect>
IntersectResult RayTraversal::enter_instance() {
  IntersectResult res;
  res.kind = NodeKind::Instance;
  if (cache_ == nullptr) {
    // Away from the cached path: GCC cleared a local optional's 512 bytes on every instance step.
    const std::optional<DecodedInstance> decoded = DecodedInstance::at(*memory_, node_, res.fault);
    if (decoded) enter_instance<kDefaultIntersect>(*decoded, res);
    return res;
  }
  if (const DecodedInstance* decoded = cache_->instance(node_, res.fault)) {
    enter_instance<kDefaultIntersect>(*decoded, res);
  }
  return res;
}

template <bool kDefaultIntersect>
void RayTraversal::enter_instance(const DecodedInstance& instance, IntersectResult& res) {
  res.box_tests = kInstanceBoxTests;
  // The object-space ray is prepared in place; the world ray waits in top_ray_ (restored unless the BLAS is entered).
  top_ray_ = ray_;
  // Default options: the top level's flags are the defaults too (an instance node has no other level above it).
  static constexpr PointerFlags kFlags{};
  static constexpr IntersectOptions kIntersect{};
  const InstanceIntersect inst =
      kDefaultIntersect ? detail::intersect_instance(instance, kFlags, top_ray_.operands, kIntersect, ray_)
                        : detail::intersect_instance(instance, flags_, top_ray_.operands, options_->intersect, ray_);
  // Only the BLAS root goes onto the stack (slot 7, then SKIP_0_7 in slot 6 stops the pushes).
  const uint32_t root = rdna4::blas_root_from_filter_result(inst.dw[7]);
  res.dw.fill(kInvalidNode);
  res.dw[7] = root;
  res.dw[6] = rdna4::kSkip0To7;
  if (root == kInvalidNode) {  // culled or the filter missed: the next pop stays in the top level
    ray_ = top_ray_;
    return;
  }
  if (instance.blas == BlasTable::kNone) {
    res.fault = NodeFault::UnknownBlas;
    return;
  }
  ++result_.counters.instance_transitions;
  // The pop that follows returns the root: from there the lane reads the BLAS with the object-space ray (its extent
  // kept: a filter hit, not culled) and the merged flags.
  const uint64_t base = uint64_t{inst.dw[2]} | uint64_t{inst.dw[3]} << 32;
  flags_ = PointerFlags::from_bits(rdna4::base_pointer_flags(base));
  flags_kind_ = kind_of(flags_);
  const BlasTable::Blas& blas = memory_->blases->blases[instance.blas];
  memory_ = &blas.memory;
  level_address_ = static_cast<uint64_t>(memory_->dwords.data() - top_memory_->dwords.data()) * 4;
  cache_ = top_cache_ != nullptr ? &top_cache_->blas_cache(instance.blas) : nullptr;
  in_blas_ = true;
  instance_node_ = node_;
  blas_root_ = root;
  instance_index_ = instance.index;
  instance_parent_ = inst.parent_pointer;
  geometry_base_ = blas.first_geometry;
  any_hit_record_.clear();  // a BLAS is traversed once per instance: its primitives are new candidates
}

void RayTraversal::leave_instance() {
  ray_ = top_ray_;
  flags_ = options_->flags;
  flags_kind_ = kind_of(flags_);
  memory_ = top_memory_;
  level_address_ = 0;
  cache_ = top_cache_;
  in_blas_ = false;
  geometry_base_ = 0;
}

void RayTraversal::walk_back(uint32_t prev) {
  // The stack ran dry after losing entries: re-visit the parent of the node just processed, pushing only the
  // children sorted after it. A primitive's parent is the last box node intersected; a box's is its DW2. Out of the
  // node the instance named as the BLAS root (a box, or a lone pair's primitive node) the walk climbs to the instance
  // node, whose parent is in its bytes 56..59 (§7.2; GPURT's lastInstanceNode).
  if (in_blas_ && prev == blas_root_) {
    leave_instance();
    last_ = instance_node_;
    node_ = instance_parent_;
    return;
  }
  last_ = prev;
  if (rdna4::node_kind(prev) == NodeKind::Instance) {
    // An instance whose filter node missed: its parent pointer, read as the instruction reads the node.
    node_ = intersect_instance(*memory_, flags_, ray_.operands, prev, options_->intersect).parent_pointer;
    return;
  }
  if (rdna4::node_kind(prev) == NodeKind::Primitive) {
    node_ = parent_;
    return;
  }
  rdna4::NodeDwords node;
  const NodeFault fault = memory_->fetch(prev, node);
  node_ = fault == NodeFault::None ? rdna4::decode_box_node(node).parent_pointer : kInvalidNode;
}

bool RayTraversal::default_intersect(const TraceOptions& options) {
  return options.flags == PointerFlags{} && options.intersect == IntersectOptions{};
}

RayTraversal::FlagsKind RayTraversal::kind_of(const PointerFlags& flags) {
  return flags == PointerFlags{} ? FlagsKind::Default : flags == kTriangleBlasFlags ? FlagsKind::TriangleBlas
                                                                                   : FlagsKind::Other;
}

template <bool kDefaultIntersect>
IntersectResult RayTraversal::intersect() const {
  if (cache_ == nullptr) return image_bvh8_intersect_ray(*memory_, flags_, ray_, node_, options_->intersect);
  if constexpr (kDefaultIntersect) {
    // Constants: the compiler drops the culling, the other sort modes and triangle test, and the box growth
    // arithmetic from these copies of the intersector.
    static constexpr PointerFlags kFlags{};
    static constexpr IntersectOptions kIntersect{};
    switch (flags_kind_) {
      case FlagsKind::Default: return detail::intersect_cached(*cache_, kFlags, ray_, node_, kIntersect);
      case FlagsKind::TriangleBlas:
        return detail::intersect_cached(*cache_, kTriangleBlasFlags, ray_, node_, kIntersect);
      case FlagsKind::Other: break;
    }
  }
  return detail::intersect_cached(*cache_, flags_, ray_, node_, options_->intersect);
}

template <bool kDefaultIntersect>
StepInfo RayTraversal::step_as() {
  StepInfo info{node_, rdna4::node_kind(node_), last_ != kInvalidNode, false};
  ray_.operands.extent = info.walk_back ? t_max_ : closest_t_;  // walk-back re-visits with the original t_max
  step_address_ = level_address_;
  const bool in_blas = in_blas_ || memory_->blases == nullptr;
  IntersectResult res =
      info.kind == NodeKind::Instance ? enter_instance<kDefaultIntersect>() : intersect<kDefaultIntersect>();
  NodeFault fault = res.fault;
  if (fault == NodeFault::None && res.kind == NodeKind::Unsupported) fault = NodeFault::UnsupportedNode;
  if (fault != NodeFault::None) {
    finish(fault, node_);
    info.faulted = true;
    return info;
  }

  RayCounters& c = result_.counters;
  ++c.steps;
  c.walk_back_steps += info.walk_back ? 1 : 0;
  c.blas_steps += in_blas ? 1 : 0;
  c.tlas_steps += in_blas ? 0 : 1;
  // Each count added on its own path: read together, the two fields (written separately by the intersector just
  // before) would be one wide load that the CPU cannot forward from the two stores, a stall on every step.
  if (res.kind == NodeKind::Primitive) {
    c.triangle_tests += res.triangle_tests;
    ++c.primitive_node_steps;
    process_primitive_hits(res.dw);
    if (done_) return info;  // first hit accepted: the loop ends before the stack operation
    // Continue the primitive range: the stack advances this pointer unless nav says END_OF_RANGE.
    res.dw[7] = node_;
    last_ = rdna4::kEndSearch | (res.dw[8] & 3u);
  } else if (res.kind == NodeKind::Instance) {
    c.box_tests += res.box_tests;
    ++c.instance_node_steps;
  } else {
    c.box_tests += res.box_tests;
    ++c.box_node_steps;
    c.obb_steps += res.obb_rotated ? 1 : 0;
    parent_ = node_;
  }

  const uint32_t prev = node_;
  const std::span<const uint32_t, 8> slots(res.dw.data(), 8);
  // A box result outside walk-back whose pointer slots the intersector knows: the stack need not classify them.
  node_ = last_ == kInvalidNode && res.pointer_slots != IntersectResult::kSlotsUnknown
              ? detail::StackOps::push8_pop1_plain(stack_, slots, res.pointer_slots)
              : detail::StackOps::push8_pop1(stack_, last_, slots, true);
  last_ = kInvalidNode;
  if (in_blas_ && stack_.address().blas_to_tlas_pop) leave_instance();
  if (node_ == kInvalidNode) walk_back(prev);

  if (node_ >= rdna4::kEndSearch) {
    stop();
  } else if (c.steps >= options_->step_limit) {
    c.step_limit_hits = 1;
    stop();
  } else if (cache_ != nullptr) {
    cache_->prefetch(node_);  // needed after the wave's other lanes' steps: out of the way of the lookup's misses
  }
  return info;
}

StepInfo RayTraversal::step() { return step_as<false>(); }

void RayTraversal::record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence, uint64_t level_address) {
  constexpr uint8_t kBoxNodeWidth = 8, kPrimitiveNodeTriangles = 2;
  const bool primitive = step.kind == rdna4::NodeKind::Primitive;
  const uint8_t boxes = step.kind == rdna4::NodeKind::Box ? kBoxNodeWidth : primitive ? 0 : kInstanceBoxTests;
  sequence.push_back({.node = step.node,
                      .offset_64 = static_cast<uint32_t>((level_address + rdna4::node_byte_offset(step.node)) / 64),
                      .blocks_64 = 2,
                      .box_tests = boxes,
                      .triangle_tests = primitive ? kPrimitiveNodeTriangles : uint8_t{0},
                      .instance = step.kind == rdna4::NodeKind::Instance});
}
StepInfo RayTraversal::step_with_default_intersect() { return step_as<true>(); }

namespace detail {
namespace {
// A lane's step for run_lockstep_wave: the copy compiled for the default intersect options when the lanes use them.
template <bool kDefaultIntersect>
struct LaneStep {
  StepInfo operator()(RayTraversal& lane) const {
    return kDefaultIntersect ? lane.step_with_default_intersect() : lane.step();
  }
};

#if HWBVH_EMU_AVX2
// The wave loop with every step inlined into it and compiled for AVX2. One function per options copy: in one
// function, the two copies of the step made the compiler's code for each worse.
template <bool kDefaultIntersect>
[[gnu::target("avx2,fma,bmi,bmi2,lzcnt,popcnt"), gnu::flatten]] void run_rtip31_wave_avx2(
    std::span<RayTraversal> lanes, WaveStats& stats, std::vector<NodeFetch>* sequences) {
  run_lockstep_wave(lanes, stats, sequences, LaneStep<kDefaultIntersect>{});
}
#endif

template <bool kDefaultIntersect>
void run_rtip31_wave_as(std::span<RayTraversal> lanes, WaveStats& stats, std::vector<NodeFetch>* sequences) {
#if HWBVH_EMU_AVX2
  if (use_avx2) {
    run_rtip31_wave_avx2<kDefaultIntersect>(lanes, stats, sequences);
    return;
  }
#endif
  run_lockstep_wave(lanes, stats, sequences, LaneStep<kDefaultIntersect>{});
}
}  // namespace

void run_rtip31_wave(std::span<RayTraversal> lanes, WaveStats& stats, std::vector<NodeFetch>* sequences,
                     bool default_intersect) {
  if (default_intersect) {
    run_rtip31_wave_as<true>(lanes, stats, sequences);
  } else {
    run_rtip31_wave_as<false>(lanes, stats, sequences);
  }
}
}  // namespace detail

RayResult trace_ray(const NodeMemory& memory, uint32_t root, const Ray& ray, const TraceOptions& options) {
  options.validate();
  RayTraversal lane(memory, root, ray, options);
  while (!lane.done()) lane.step();
  return lane.result();
}

}  // namespace hwbvh::emu
