#include "hwbvh/emu/rtip20_traversal.h"

#include <algorithm>
#include <cmath>

#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna3/decode.h"

namespace hwbvh::emu {
namespace {

using rdna3::kInvalidNode;
using rdna4::NodeKind;

constexpr uint32_t kTri0Tag = 0x80000000u;  ///< GPURT's GENERATED_TRI0_NODE_FLAG (pointer bit 31)
constexpr uint32_t kSkip0To3 = 0xFFFFFFFDu;
constexpr uint32_t kSkip4To7 = 0xFFFFFFFBu;
constexpr uint32_t kEndSearch = 0xFFFFFFF8u;

bool has_nan(Vec3 v) { return std::isnan(v.x) || std::isnan(v.y) || std::isnan(v.z); }

NodeKind kind_of(uint32_t pointer) {
  const uint32_t type = rdna3::node_type(pointer);
  return type == rdna3::kTypeBoxFp32 ? NodeKind::Box : type <= rdna3::kTypeTriangle1 ? NodeKind::Primitive
                                                                                     : NodeKind::Unsupported;
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
// intersection shader and never hit). The ids come from the triangle node, as GPURT fetches them. Returns true if
// the hit was accepted.
bool take_hit(const Bvh4Section& section, uint32_t pointer, const Bvh4TriangleHit& h, float tmin, float& closest_t,
              RayResult& result) {
  if (h.procedural || !(h.t < closest_t)) return false;
  rdna3::TriangleNodeDwords node;
  const uint64_t first = rdna3::node_byte_offset(pointer) / 4;
  std::copy_n(section.memory.dwords.begin() + static_cast<std::ptrdiff_t>(first), node.size(), node.begin());
  const rdna3::DecodedTriangle tri = rdna3::decode_triangle(node, pointer);
  closest_t = h.t;
  result.hit = true;
  result.t = h.t + tmin;
  result.primitive_id = tri.primitive_id;
  result.geometry_id = tri.geometry_id;
  result.barycentrics = h.barycentrics;
  result.front_face = !h.back_face;
  return true;
}

void copy_traffic(const StackTraffic& traffic, RayCounters& c) {
  c.stack_pushes = traffic.pushes;
  c.stack_pops = traffic.pops;
  c.stack_lost = traffic.lost;
  c.max_stack_depth = traffic.max_depth;
}

// The wave layer of wavefront.h for any lane type: waves of 32 rays in lockstep, each wave writing only its own
// output slots, so results are identical at any thread count.
template <class Lane>
TraceOutput run_waves(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                      const Executor& executor) {
  options.validate();
  TraceOutput out;
  const size_t wave_count = (rays.size() + kWaveSize - 1) / kWaveSize;
  out.rays.resize(rays.size());
  out.waves.resize(wave_count);
  if (options.record_node_sequence) out.node_sequences.resize(rays.size());
  executor.for_each(0, wave_count, [&](size_t w) {
    const size_t first = w * kWaveSize;
    const size_t count = std::min<size_t>(kWaveSize, rays.size() - first);
    std::vector<Lane> lanes;
    lanes.reserve(count);
    for (size_t i = 0; i < count; ++i) lanes.emplace_back(section, rays[first + i], options);
    WaveStats& stats = out.waves[w];
    stats.lanes = static_cast<uint32_t>(count);
    for (bool running = true; running;) {
      running = false;
      uint32_t active = 0, box = 0, primitive = 0;
      for (size_t i = 0; i < count; ++i) {
        if (lanes[i].done()) continue;
        const StepInfo step = lanes[i].step();
        running = running || !lanes[i].done();
        if (step.faulted) continue;
        ++active;
        box += step.kind == NodeKind::Box ? 1 : 0;
        primitive += step.kind == NodeKind::Primitive ? 1 : 0;
        if (options.record_node_sequence) out.node_sequences[first + i].push_back(step.node);
      }
      if (active == 0) continue;
      ++stats.iterations;
      stats.active_lane_steps += active;
      stats.box_lane_steps += box;
      stats.primitive_lane_steps += primitive;
      stats.mixed_iterations += (box > 0 && primitive > 0) ? 1 : 0;
    }
    for (size_t i = 0; i < count; ++i) out.rays[first + i] = lanes[i].result();
  });
  return out;
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

// ---------------------------------------------------------------------------------------------------------------
// RT IP 2.0 (TraceRay2_0)
// ---------------------------------------------------------------------------------------------------------------

Rtip20Traversal::Rtip20Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options)
    : section_(&section), options_(&options), stack_(options.stack), node_(section.header.root_pointer) {
  done_ = !prepare_ray(ray, ray_, tmin_, closest_t_);
}

StepInfo Rtip20Traversal::step() {
  StepInfo info{node_, kind_of(node_), last_ != kInvalidNode, false};
  Bvh4RayOperands op = ray_;
  op.extent = closest_t_;  // RT IP 2.0 re-visits during walk-back with the current closest hit too
  const Bvh4IntersectResult res = image_bvh_intersect_ray(section_->memory, options_->flags, op, node_,
                                                          options_->intersect, Bvh4Version::Rtip20);
  const NodeFault fault = res.fault != NodeFault::None        ? res.fault
                          : info.kind == NodeKind::Unsupported ? NodeFault::UnsupportedNode
                                                               : NodeFault::None;
  if (fault != NodeFault::None) {
    result_.fault = fault;
    result_.fault_node = node_;
    done_ = info.faulted = true;
    return info;
  }

  RayCounters& c = result_.counters;
  ++c.steps;
  c.walk_back_steps += info.walk_back ? 1 : 0;
  c.box_tests += res.box_tests;
  c.triangle_tests += res.triangle_tests;

  std::array<uint32_t, 4> data = res.dw;
  const bool pair_second_half = after_triangle1_;  // this step tests triangle 0 of a pair
  after_triangle1_ = false;
  if (info.kind == NodeKind::Primitive) {
    ++c.primitive_node_steps;
    const Bvh4TriangleHit hit = read_triangle_result(res.dw, Bvh4Version::Rtip20);
    if (take_hit(*section_, node_, hit, tmin_, closest_t_, result_) && options_->any_hit) {
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
  } else {
    ++c.box_node_steps;
  }

  const uint32_t prev = node_;
  node_ = ds_bvh_stack_rtn(stack_, last_, data);
  last_ = kInvalidNode;
  if (node_ == kInvalidNode) {
    // Popped into entries an overflow overwrote: re-visit the parent, pushing only the children sorted after the
    // node we come from (a pair is referenced by its triangle-1 pointer).
    stack_.undo_invalid_pop();
    last_ = pair_second_half ? prev + 1 : prev;
    node_ = section_->parent(prev);
  }
  copy_traffic(stack_.traffic(), c);
  if (node_ >= rdna3::kTerminalNode) {
    done_ = true;
  } else if (c.steps >= options_->step_limit) {
    c.step_limit_hits = 1;
    done_ = true;
  }
  return info;
}

// ---------------------------------------------------------------------------------------------------------------
// BVH4x2 (TraceRay3_0)
// ---------------------------------------------------------------------------------------------------------------

Bvh4x2Traversal::Bvh4x2Traversal(const Bvh4Section& section, const Ray& ray, const TraceOptions& options)
    : section_(&section), options_(&options), stack_(options.stack), x_(section.header.root_pointer) {
  done_ = !prepare_ray(ray, ray_, tmin_, closest_t_);
}

StepInfo Bvh4x2Traversal::step() {
  // Bit 31 tags a generated triangle 0; the instruction sees the pointers without it.
  const bool has_y = y_ != kInvalidNode;
  const uint32_t x = x_ & ~kTri0Tag, y = has_y ? y_ & ~kTri0Tag : kInvalidNode;
  const NodeKind kind_x = kind_of(x), kind_y = has_y ? kind_of(y) : NodeKind::Unsupported;
  const NodeKind kind = kind_x == NodeKind::Box || kind_y == NodeKind::Box ? NodeKind::Box : kind_x;
  StepInfo info{x_, kind, last_ != kInvalidNode, false};
  Bvh4RayOperands op = ray_;
  op.extent = closest_t_;
  const DualIntersectResult res =
      image_bvh_dual_intersect_ray(section_->memory, options_->flags, op, x, y, options_->intersect);
  NodeFault fault = res.fault;
  uint32_t fault_node = res.fault_node;
  if (fault == NodeFault::None && (kind_x == NodeKind::Unsupported || (has_y && kind_y == NodeKind::Unsupported))) {
    fault = NodeFault::UnsupportedNode;
    fault_node = kind_x == NodeKind::Unsupported ? x : y;
  }
  if (fault != NodeFault::None) {
    result_.fault = fault;
    result_.fault_node = fault_node;
    done_ = info.faulted = true;
    return info;
  }

  RayCounters& c = result_.counters;
  ++c.steps;
  c.walk_back_steps += info.walk_back ? 1 : 0;
  c.box_tests += res.box_tests;
  c.triangle_tests += res.triangle_tests;
  for (const NodeKind k : {kind_x, kind_y}) {
    c.box_node_steps += k == NodeKind::Box ? 1 : 0;
    c.primitive_node_steps += k == NodeKind::Primitive ? 1 : 0;
  }

  std::array<uint32_t, 8> data;
  std::copy_n(res.dw.begin(), 8, data.begin());
  // Triangles are taken y first, then x, as TraceRay3_0 does; true if a first-hit ray ends here (before the
  // stack operation).
  auto ends_on_hit = [&](uint32_t node, std::size_t first_dword) {
    std::array<uint32_t, 4> dw;
    std::copy_n(res.dw.begin() + static_cast<std::ptrdiff_t>(first_dword), 4, dw.begin());
    const Bvh4TriangleHit hit = read_triangle_result(dw, Bvh4Version::Rtip30);
    return take_hit(*section_, node, hit, tmin_, closest_t_, result_) && options_->any_hit;
  };
  // A triangle's result slots are then replaced by push controls.
  if (kind_y == NodeKind::Primitive) {
    if (ends_on_hit(y, 4)) {
      done_ = true;
      return info;
    }
    data[7] = kSkip4To7;
  }
  if (kind_x == NodeKind::Primitive) {
    if (ends_on_hit(x, 0)) {
      done_ = true;
      return info;
    }
    if (rdna3::node_type(x) == rdna3::kTypeTriangle1) {
      data[2] = kSkip0To3;  // push only triangle 0 of this node, tagged as generated
      data[3] = (x & ~7u) | kTri0Tag;
    } else {
      data[3] = kSkip0To3;
    }
  }

  uint32_t prev = y_ != kInvalidNode ? y_ : x_;
  const std::array<uint32_t, 2> next = ds_bvh_stack_push8_pop2(stack_, last_, data);
  x_ = next[0];
  y_ = next[1];
  last_ = kInvalidNode;
  if (x_ == kInvalidNode) {
    // Walk back; the parent holds a generated triangle 0 as its triangle-1 pointer.
    if ((prev & kTri0Tag) != 0) prev = (prev & ~kTri0Tag) + 1;
    last_ = prev;
    x_ = section_->parent(prev);
  }
  copy_traffic(stack_.traffic(), c);
  if (x_ >= kEndSearch) {
    done_ = true;
  } else if (c.steps >= options_->step_limit) {
    c.step_limit_hits = 1;
    done_ = true;
  }
  return info;
}

RayResult trace_ray_rtip20(const Bvh4Section& section, const Ray& ray, const TraceOptions& options) {
  return trace_one<Rtip20Traversal>(section, ray, options);
}

RayResult trace_ray_bvh4x2(const Bvh4Section& section, const Ray& ray, const TraceOptions& options) {
  return trace_one<Bvh4x2Traversal>(section, ray, options);
}

TraceOutput trace_rays_rtip20(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                              const Executor& executor) {
  return run_waves<Rtip20Traversal>(section, rays, options, executor);
}

TraceOutput trace_rays_bvh4x2(const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& options,
                              const Executor& executor) {
  return run_waves<Bvh4x2Traversal>(section, rays, options, executor);
}

}  // namespace hwbvh::emu
