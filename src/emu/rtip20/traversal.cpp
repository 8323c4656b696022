#include "hwbvh/emu/rtip20/traversal.h"

#include <algorithm>
#include <cmath>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/instance_node.h"
#include "emu/wave_loop.h"

namespace hwbvh::emu {
namespace {

using rdna3::kInvalidNode;
using rdna4::NodeKind;

using rdna4::kEndSearch;  // the push8/pop2 sentinels are RT IP 3.x's
using rdna4::kSkip0To3;
using rdna4::kSkip4To7;
constexpr uint32_t kTri0Tag = 0x80000000u;  ///< GPURT's GENERATED_TRI0_NODE_FLAG (pointer bit 31)

bool has_nan(Vec3 v) { return std::isnan(v.x) || std::isnan(v.y) || std::isnan(v.z); }

// The node kinds the encoder writes: FP32 boxes, triangles 0 / 1 and instances; anything else is a fault in
// traversal.
NodeKind kind_of(uint32_t pointer) {
  switch (rdna3::node_type(pointer)) {
    case rdna3::kTypeBoxFp32: return NodeKind::Box;
    case rdna3::kTypeTriangle0:
    case rdna3::kTypeTriangle1: return NodeKind::Primitive;
    case rdna3::kTypeInstance: return NodeKind::Instance;
    default: return NodeKind::Unsupported;
  }
}

// §7.1 setup shared by both loops: tmin by moving the origin (the instructions only know [0, extent]); the BVH4
// instructions take the shader's reciprocal of the direction. False for a NaN ray, which is never traversed.
bool prepare_ray(const Ray& ray, Bvh4RayOperands& op, float& tmin, float& closest_t) {
  if (has_nan(ray.origin) || has_nan(ray.direction)) return false;
  tmin = ray.tmin;
  for (int c = 0; c < 3; ++c) {
    const float offset = ray.tmin * ray.direction[c];
    op.origin[c] = ray.origin[c] + offset;
    op.inverse_direction[c] = 1.0f / ray.direction[c];
  }
  op.direction = ray.direction;
  closest_t = ray.tmax - ray.tmin;
  return true;
}

// Takes a triangle result as the traversal shader does: accepted if t < closest_t (procedural candidates have no
// intersection shader and never hit) and, on a non-opaque triangle, if the any-hit shader accepts it (any_hit.h;
// no STOC data on this target). The ids and the opaque bit come from the triangle node, as GPURT fetches them.
// Returns true if the hit was accepted.
bool take_hit(const detail::Bvh4Levels& levels, uint32_t pointer, const Bvh4TriangleHit& h,
              const TraceOptions& options, float tmin, float& closest_t, RayResult& result,
              AnyHitRecord& any_hit_record) {
  if (h.procedural || !(h.t < closest_t)) return false;
  rdna3::TriangleNodeDwords node;
  const uint64_t first = rdna3::node_byte_offset(pointer) / 4;
  std::copy_n(levels.section().memory.dwords.begin() + static_cast<std::ptrdiff_t>(first), node.size(), node.begin());
  const rdna3::DecodedTriangle tri = rdna3::decode_triangle(node, pointer);
  const PointerFlags& flags = levels.flags();
  const bool opaque = flags.force_opaque || (!flags.force_non_opaque && tri.id.opaque);
  // The shader numbers geometries across BLASes (geometry_base: the current BLAS's first).
  if (!opaque && !resolve_non_opaque(options, tri.geometry_id + levels.geometry_base(), tri.primitive_id,
                                     h.barycentrics, std::nullopt, result.counters, any_hit_record)) {
    return false;
  }
  closest_t = h.t;
  result.hit = true;
  result.t = h.t + tmin;
  result.primitive_id = tri.primitive_id;
  result.geometry_id = tri.geometry_id;
  result.barycentrics = h.barycentrics;
  result.front_face = !h.back_face;
  result.instance_index = levels.instance_index();
  return true;
}

// A step that faulted stops the ray there and is not counted.
void stop_on_fault(NodeFault fault, uint32_t node, StepInfo& info, RayResult& result, bool& done) {
  result.fault = fault;
  result.fault_node = node;
  info.faulted = done = true;
}

void count_intersect(const StepInfo& info, bool in_blas, uint32_t box_tests, uint32_t triangle_tests,
                     RayCounters& c) {
  ++c.steps;
  c.blas_steps += in_blas ? 1 : 0;
  c.tlas_steps += in_blas ? 0 : 1;
  c.instance_node_steps += info.kind == NodeKind::Instance ? 1 : 0;
  c.walk_back_steps += info.walk_back ? 1 : 0;
  c.box_tests += box_tests;
  c.triangle_tests += triangle_tests;
}

// After the stack operation: the stack traffic so far; true if the ray is done (no next node, or the step limit).
bool end_step(const StackTraffic& traffic, bool no_next_node, uint32_t step_limit, RayCounters& c) {
  set_stack_counters(traffic, c);
  if (no_next_node) return true;
  if (c.steps < step_limit) return false;
  c.step_limit_hits = 1;
  return true;
}

// What one step reads of one BVH4 node at byte `level_address` + its offset (node_fetch.h): the RT IP 2.0
// instruction's node, or the instance node the shader loads (128 bytes, nothing tested).
NodeFetch bvh4_fetch(uint32_t pointer, uint64_t level_address) {
  constexpr uint8_t kBoxNodeWidth = 4;
  const uint32_t type = rdna3::node_type(pointer);
  const bool box = type == rdna3::kTypeBoxFp16 || type == rdna3::kTypeBoxFp32;
  const bool instance = type == rdna3::kTypeInstance;
  return {.node = pointer,
          .offset_64 = static_cast<uint32_t>((level_address + rdna3::node_byte_offset(pointer)) / 64),
          .blocks_64 = static_cast<uint8_t>(type == rdna3::kTypeBoxFp32 || instance ? 2 : 1),
          .box_tests = box ? kBoxNodeWidth : uint8_t{0},
          .triangle_tests = static_cast<uint8_t>(box || instance ? 0 : 1)};
}

// The instance's matrix applied to a point (w = 1) or a direction (w = 0), in f32 as the shader's mul() does.
Vec3 transform(const Mat3x4& m, Vec3 v, float w) {
  Vec3 out;
  for (std::size_t r = 0; r < 3; ++r) out[static_cast<int>(r)] = m[r][0] * v.x + m[r][1] * v.y + m[r][2] * v.z + m[r][3] * w;
  return out;
}

// The wave layer (wave_loop.h) with RT IP 2.0 or BVH4x2 lanes.
template <class Lane>
TraceOutput run_waves(const Bvh4Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                      const TraceOptions& options, const Executor& executor) {
  options.validate();
  return detail::trace_waves<Lane>(rays, wave_begin, options.record_node_sequence, executor,
                                   [&](const Ray& ray) { return Lane(section, ray, options); });
}

template <class Lane>
RayResult trace_one(const Bvh4Section& section, const Ray& ray, const TraceOptions& options) {
  options.validate();
  Lane lane(section, ray, options);
  while (!lane.done()) lane.step();
  return lane.result();
}

}  // namespace

Bvh4Section Bvh4Section::from(std::span<const uint32_t> dwords, const std::string& file) {
  std::string error;
  const std::optional<rdna3::NodeSectionHeader> header = rdna3::read_node_section_header(dwords, &error);
  if (!header) throw_bad_input(file, "RT IP 2.0 " + error);
  return Bvh4Section{NodeMemory{dwords}, *header};
}

uint32_t Bvh4Section::parent(uint32_t pointer) const { return rdna3::parent_pointer(memory.dwords, header, pointer); }

const Bvh4Blases::Blas* Bvh4Blases::find(uint64_t address) const {
  const auto it = std::lower_bound(blases.begin(), blases.end(), address,
                                   [](const Blas& b, uint64_t a) { return b.address < a; });
  return it != blases.end() && it->address == address ? &*it : nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Two levels: the traversal shader's instance step (GPURT's RayQuery2_0.hlsl / TraceRay2_0, instance node branch)
// ---------------------------------------------------------------------------------------------------------------

namespace detail {

uint32_t Bvh4Levels::enter(uint32_t pointer, Bvh4RayOperands& ray, NodeFault& fault) {
  fault = NodeFault::None;
  if (top_->blases == nullptr || in_blas_) {  // an instance node in a BLAS or a one-level BVH
    fault = NodeFault::UnsupportedNode;
    return kInvalidNode;
  }
  const std::span<const uint32_t> top = top_->memory.dwords;
  const uint64_t offset = rdna3::node_byte_offset(pointer);
  if (offset + rdna3::kInstanceNodeBytes > uint64_t{top.size()} * 4) {
    fault = NodeFault::OutOfRange;
    return kInvalidNode;
  }
  rdna3::InstanceNodeDwords node;
  std::copy_n(top.begin() + static_cast<std::ptrdiff_t>(offset / 4), node.size(), node.begin());
  const rdna3::DecodedInstanceNode inst = rdna3::decode_instance_node(node);
  // CheckInstanceCulling: the mask, and SKIP_TRIANGLES for a triangle BLAS. A culled instance leaves the lane in
  // the top level.
  if ((inst.instance_mask & options_->instance_mask) == 0 || options_->flags.skip_triangles) return kInvalidNode;
  const Bvh4Blases::Blas* blas = top_->blases->find(rdna4::base_pointer_address(inst.blas_base_pointer));
  if (blas == nullptr) {
    fault = NodeFault::UnknownBlas;
    return kInvalidNode;
  }
  world_origin_ = ray.origin;
  world_direction_ = ray.direction;
  world_inverse_ = ray.inverse_direction;
  ray.origin = transform(inst.world_to_object, ray.origin, 1.0f);
  ray.direction = transform(inst.world_to_object, ray.direction, 0.0f);
  for (int c = 0; c < 3; ++c) ray.inverse_direction[c] = 1.0f / ray.direction[c];
  flags_ = PointerFlags::from_bits(
      rdna4::merge_instance_flags(options_->flags.bits(), rdna4::base_pointer_flags(inst.blas_base_pointer)));
  section_ = &blas->section;
  address_ = blas->address;
  in_blas_ = true;
  instance_node_ = pointer;
  entry_node_ = inst.blas_node_pointer;
  instance_index_ = inst.instance_index;
  geometry_base_ = blas->first_geometry;
  return inst.blas_node_pointer;
}

void Bvh4Levels::leave(Bvh4RayOperands& ray) {
  ray.origin = world_origin_;
  ray.direction = world_direction_;
  ray.inverse_direction = world_inverse_;
  flags_ = options_->flags;
  section_ = top_;
  address_ = 0;
  in_blas_ = false;
  geometry_base_ = 0;
}

uint32_t Bvh4Levels::walk_back_parent(uint32_t& prev, Bvh4RayOperands& ray) {
  if (in_blas_ && prev == entry_node_) {
    leave(ray);
    prev = instance_node_;
  }
  return section_->parent(prev);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------------------------
// RT IP 2.0 (TraceRay2_0)
// ---------------------------------------------------------------------------------------------------------------

void Rtip20Traversal::record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence,
                                     uint64_t level_address) {
  sequence.push_back(bvh4_fetch(step.node, level_address));
}

void Bvh4x2Traversal::record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence,
                                     uint64_t level_address) {
  sequence.push_back(bvh4_fetch(step.node, level_address));
  if (step.second_node == kInvalidNode) return;
  NodeFetch second = bvh4_fetch(step.second_node, level_address);
  second.same_step = true;
  sequence.push_back(second);
}

Rtip20Traversal::Rtip20Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options)
    : options_(&options), levels_(section, options), stack_(options.stack), node_(section.header.root_pointer) {
  done_ = !prepare_ray(ray, ray_, tmin_, closest_t_);
}

StepInfo Rtip20Traversal::step() {
  StepInfo info{node_, kind_of(node_), last_ != kInvalidNode, false};
  step_address_ = levels_.address();
  const bool in_blas = levels_.in_blas();
  Bvh4IntersectResult res;
  if (info.kind == NodeKind::Instance) {
    // The instance step: the instruction returns nothing for type 6 and the shader reads the node; x is the BLAS
    // root (returned directly, nothing pushed) or INVALID_NODE for a culled instance (pop).
    const uint32_t root = levels_.enter(node_, ray_, res.fault);
    res.dw = {root, kInvalidNode, kInvalidNode, kInvalidNode};
    if (root != kInvalidNode) {
      top_index_ = stack_.index();
      any_hit_record_.clear();  // a BLAS is traversed once per instance: its primitives are new candidates
      ++result_.counters.instance_transitions;
    }
  } else {
    Bvh4RayOperands op = ray_;
    op.extent = closest_t_;  // RT IP 2.0 re-visits during walk-back with the current closest hit too
    res = image_bvh_intersect_ray(levels_.section().memory, levels_.flags(), op, node_, options_->intersect,
                                  Bvh4Version::Rtip20);
  }
  if (res.fault != NodeFault::None || info.kind == NodeKind::Unsupported) {
    stop_on_fault(res.fault != NodeFault::None ? res.fault : NodeFault::UnsupportedNode, node_, info, result_, done_);
    return info;
  }
  RayCounters& c = result_.counters;
  count_intersect(info, in_blas, res.box_tests, res.triangle_tests, c);

  std::array<uint32_t, 4> data = res.dw;
  const bool pair_second_half = after_triangle1_;  // this step tests triangle 0 of a pair
  after_triangle1_ = false;
  if (info.kind == NodeKind::Primitive) {
    ++c.primitive_node_steps;
    const Bvh4TriangleHit hit = read_triangle_result(res.dw, Bvh4Version::Rtip20);
    if (take_hit(levels_, node_, hit, *options_, tmin_, closest_t_, result_, any_hit_record_) && options_->any_hit) {
      done_ = true;  // the loop ends before the stack operation
      return info;
    }
    if (rdna3::node_type(node_) == rdna3::kTypeTriangle1) {
      // Triangle 0 of the same node is next; x is returned directly and nothing is pushed.
      data = {node_ & ~7u, kInvalidNode, kInvalidNode, kInvalidNode};
      after_triangle1_ = true;
    } else {
      last_ = rdna3::kTerminalNode;  // push nothing, pop
    }
  } else if (info.kind == NodeKind::Box) {
    ++c.box_node_steps;
  }

  uint32_t prev = node_;
  node_ = ds_bvh_stack_rtn(stack_, last_, data);
  last_ = kInvalidNode;
  if (node_ == kInvalidNode) {
    // Popped into entries an overflow overwrote: re-visit the parent, pushing only the children sorted after the
    // node we come from (a pair is referenced by its triangle-1 pointer); out of a BLAS root, the instance node's
    // parent in the top level.
    stack_.undo_invalid_pop();
    node_ = levels_.walk_back_parent(prev, ray_);
    last_ = pair_second_half ? prev + 1 : prev;
  } else if (levels_.inside_instance() && stack_.index() < top_index_) {
    levels_.leave(ray_);  // popped below the BLAS's entries: a top-level node (GPURT's stackPtr < stackPtrTop)
  }
  done_ = end_step(stack_.traffic(), node_ >= rdna3::kTerminalNode, options_->step_limit, c);
  return info;
}

// ---------------------------------------------------------------------------------------------------------------
// BVH4x2 (TraceRay3_0)
// ---------------------------------------------------------------------------------------------------------------

Bvh4x2Traversal::Bvh4x2Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options)
    : options_(&options), levels_(section, options), stack_(options.stack), node0_(section.header.root_pointer) {
  done_ = !prepare_ray(ray, ray_, tmin_, closest_t_);
}

StepInfo Bvh4x2Traversal::step() {
  // Bit 31 tags a generated triangle 0; the instruction sees the pointers without it.
  const bool has_1 = node1_ != kInvalidNode;
  const uint32_t n0 = node0_ & ~kTri0Tag, n1 = has_1 ? node1_ & ~kTri0Tag : kInvalidNode;
  const NodeKind kind0 = kind_of(n0), kind1 = has_1 ? kind_of(n1) : NodeKind::Unsupported;
  // Triangles 1 and 0 of one node, as push8_pop2 returns a triangle-1 pointer.
  const bool pair = rdna3::node_type(n0) == rdna3::kTypeTriangle1 && n1 == (n0 & ~7u);
  StepInfo info{.node = n0,
                .kind = kind0 == NodeKind::Box || kind1 == NodeKind::Box ? NodeKind::Box : kind0,
                .walk_back = last_ != kInvalidNode,
                .second_node = n1};
  step_address_ = levels_.address();
  RayCounters& c = result_.counters;
  // The later of the two nodes, as its parent's child pointer names it: the start of a walk-back.
  uint32_t later = has_1 && !pair ? node1_ : node0_;
  if ((later & kTri0Tag) != 0) later = (later & ~kTri0Tag) + 1;
  if (kind0 == NodeKind::Instance && !has_1) {
    // The instance step, alone (the stack never pops an instance node with another): only the BLAS root is pushed
    // (slot 7, then SKIP_0_7), and the pop that follows enters the BLAS (lds_stack.h: tlas_in_stack).
    const bool in_blas = levels_.in_blas();
    NodeFault fault = NodeFault::None;
    const uint32_t root = levels_.enter(n0, ray_, fault);
    if (fault != NodeFault::None) {
      stop_on_fault(fault, n0, info, result_, done_);
      return info;
    }
    count_intersect(info, in_blas, 0, 0, c);
    if (root != kInvalidNode) {
      any_hit_record_.clear();  // a BLAS is traversed once per instance: its primitives are new candidates
      ++c.instance_transitions;
    }
    std::array<uint32_t, 8> data;
    data.fill(kInvalidNode);
    data[7] = root;
    data[6] = rdna4::kSkip0To7;
    advance(data, later);
    return info;
  }
  Bvh4RayOperands op = ray_;
  op.extent = closest_t_;  // like RT IP 2.0, walk-back re-visits use the current closest hit
  const DualIntersectResult res =
      image_bvh_dual_intersect_ray(levels_.section().memory, levels_.flags(), op, n0, n1, options_->intersect);
  if (res.fault != NodeFault::None) {
    stop_on_fault(res.fault, res.fault_node, info, result_, done_);
    return info;
  }
  const auto unsupported = [](NodeKind k) { return k == NodeKind::Unsupported || k == NodeKind::Instance; };
  if (unsupported(kind0) || (has_1 && unsupported(kind1))) {
    stop_on_fault(NodeFault::UnsupportedNode, unsupported(kind0) ? n0 : n1, info, result_, done_);
    return info;
  }
  count_intersect(info, levels_.in_blas(), res.box_tests, res.triangle_tests, c);
  for (const NodeKind k : {kind0, kind1}) {
    c.box_node_steps += k == NodeKind::Box ? 1 : 0;
    c.primitive_node_steps += k == NodeKind::Primitive ? 1 : 0;
  }

  // Triangles are taken in traversal order, node 0 first; true if a first-hit ray ends here (before the stack
  // operation).
  auto ends_on_hit = [&](uint32_t node, std::size_t first_dword) {
    std::array<uint32_t, 4> dw;
    std::copy_n(res.dw.begin() + static_cast<std::ptrdiff_t>(first_dword), 4, dw.begin());
    const Bvh4TriangleHit hit = read_triangle_result(dw, Bvh4Version::Rtip30);
    return take_hit(levels_, node, hit, *options_, tmin_, closest_t_, result_, any_hit_record_) && options_->any_hit;
  };
  // Node 0's children go to slots 0..3 (on top of the stack), node 1's to slots 4..7; a triangle's slots are
  // replaced by push controls.
  std::array<uint32_t, 8> data;
  std::copy_n(res.dw.begin(), 8, data.begin());
  if (kind0 == NodeKind::Primitive) {
    if (ends_on_hit(n0, 0)) {
      done_ = true;
      return info;
    }
    data[3] = kSkip0To3;
  }
  if (kind1 == NodeKind::Primitive) {
    if (ends_on_hit(n1, 4)) {
      done_ = true;
      return info;
    }
    if (rdna3::node_type(n1) == rdna3::kTypeTriangle1) {
      data[6] = kSkip4To7;  // a triangle 1 without its triangle 0 (which only node 1 can be): push that, tagged
      data[7] = (n1 & ~7u) | kTri0Tag;
    } else {
      data[7] = kSkip4To7;
    }
  }

  advance(data, later);
  return info;
}

void Bvh4x2Traversal::advance(const std::array<uint32_t, 8>& data, uint32_t later) {
  // push8_pop2 returns (the entry below the top, the top) or (the only one, INVALID_NODE).
  const std::array<uint32_t, 2> next = ds_bvh_stack_push8_pop2(stack_, last_, data);
  node0_ = next[1] != kInvalidNode ? next[1] : next[0];
  node1_ = next[1] != kInvalidNode ? next[0] : kInvalidNode;
  last_ = kInvalidNode;
  if (node0_ == kInvalidNode) {
    // Walk back: re-visit the parent of the later node, pushing only the children sorted after it; out of a BLAS
    // root, the instance node's parent in the top level.
    node0_ = levels_.walk_back_parent(later, ray_);
    last_ = later;
  } else if (levels_.inside_instance() && stack_.address().blas_to_tlas_pop) {
    levels_.leave(ray_);  // the pop crossed back below the BLAS's entries
  }
  done_ = end_step(stack_.traffic(), node0_ >= kEndSearch, options_->step_limit, result_.counters);
}

RayResult trace_ray_rtip20(const Bvh4Section& section, const Ray& ray, const TraceOptions& options) {
  return trace_one<Rtip20Traversal>(section, ray, options);
}

RayResult trace_ray_bvh4x2(const Bvh4Section& section, const Ray& ray, const TraceOptions& options) {
  return trace_one<Bvh4x2Traversal>(section, ray, options);
}

TraceOutput trace_rays_rtip20(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                              const Executor& executor) {
  return run_waves<Rtip20Traversal>(section, rays, detail::consecutive_waves(rays.size()), options, executor);
}

TraceOutput trace_rays_rtip20(const Bvh4Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                              const TraceOptions& options, const Executor& executor) {
  return run_waves<Rtip20Traversal>(section, rays, wave_begin, options, executor);
}

TraceOutput trace_rays_bvh4x2(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                              const Executor& executor) {
  return run_waves<Bvh4x2Traversal>(section, rays, detail::consecutive_waves(rays.size()), options, executor);
}

TraceOutput trace_rays_bvh4x2(const Bvh4Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                              const TraceOptions& options, const Executor& executor) {
  return run_waves<Bvh4x2Traversal>(section, rays, wave_begin, options, executor);
}

}  // namespace hwbvh::emu
