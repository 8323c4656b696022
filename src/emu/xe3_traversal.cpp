// The Xe3 traversal loop: short stack and restart trail (xe3_traversal.h), the wave layer of wavefront.h.
#include "hwbvh/emu/xe3_traversal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/xe3_intersect.h"
#include "hwbvh/formats/xe3/decode.h"

namespace hwbvh::emu {
namespace {

using rdna4::NodeKind;
using xe3::kBlockDwords;

bool has_nan(Vec3 v) { return std::isnan(v.x) || std::isnan(v.y) || std::isnan(v.z); }

RayOperands operands(const Ray& ray, uint32_t instance_mask) {
  RayOperands op;
  op.origin = ray.origin;
  op.direction = ray.direction;
  op.extent = ray.tmax;
  op.instance_mask = instance_mask;
  return op;
}

// The node's dwords if its `blocks` blocks lie inside the section's nodes; null otherwise.
const uint32_t* fetch(const Xe3Section& section, int64_t block, uint32_t blocks) {
  if (block < xe3::kHeaderBlocks || block + blocks > section.header.node_blocks) return nullptr;
  return section.dwords.data() + static_cast<std::size_t>(block) * kBlockDwords;
}

// Ray flags applied to a triangle candidate (the pointer flags of TraceOptions, read as DXR ray flags).
bool culled(const PointerFlags& f, bool front_face, bool leaf_opaque) {
  const bool opaque = f.force_opaque || (!f.force_non_opaque && leaf_opaque);
  const bool front = f.flip_facedness ? !front_face : front_face;
  return f.skip_triangles || (front ? f.cull_front_facing : f.cull_back_facing) ||
         (opaque ? f.cull_opaque : f.cull_non_opaque);
}

}  // namespace

void Xe3StackOptions::validate() const {
  if (entries < 1 || entries > kMaxStackSize) {
    throw Error(ErrorKind::BadInput, "", "the Xe3 short stack needs 1..64 entries, got " + std::to_string(entries));
  }
}

Xe3Section Xe3Section::from(std::span<const uint32_t> dwords, const std::string& file) {
  std::string error;
  const std::optional<xe3::NodeSectionHeader> header = xe3::read_node_section_header(dwords, &error);
  if (!header) throw_bad_input(file, "Xe3 " + error);
  return Xe3Section{dwords, *header};
}

Xe3Traversal::Xe3Traversal(const Xe3Section& section, const Ray& ray, const TraceOptions& options,
                           const Xe3StackOptions& stack)
    : section_(&section),
      options_(&options),
      stack_options_(&stack),
      ray_(operands(ray, options.instance_mask)),
      tmin_(ray.tmin),
      tmax_(ray.tmax),
      grow_(box_grow_factor(options.intersect.box_grow)),
      block_(section.header.root_block),
      type_(xe3::kNodeTypeMixed) {
  stack_.reserve(stack.entries);
  done_ = has_nan(ray.origin) || has_nan(ray.direction);
}

void Xe3Traversal::fault(NodeFault f, StepInfo& info) {
  result_.fault = f;
  result_.fault_node = static_cast<uint32_t>(block_);
  info.faulted = done_ = true;
}

StepInfo Xe3Traversal::step() {
  const bool internal = type_ == xe3::kNodeTypeMixed;
  StepInfo info{static_cast<uint32_t>(block_), internal ? NodeKind::Box : NodeKind::Primitive,
                internal && restart_level_ != kNoRestart && level_ <= restart_level_, false};
  if (internal) {
    step_internal(info);
  } else if (type_ == xe3::kNodeTypeQuad || type_ == xe3::kNodeTypeQuad128) {
    step_leaf(info);
  } else {
    info.kind = NodeKind::Unsupported;
    fault(NodeFault::UnsupportedNode, info);
  }
  if (info.faulted) return info;
  RayCounters& c = result_.counters;
  if (!done_ && c.steps >= options_->step_limit) {
    c.step_limit_hits = 1;
    done_ = true;
  }
  return info;
}

void Xe3Traversal::step_internal(StepInfo& info) {
  const uint32_t* dw = fetch(*section_, block_, 1);
  if (!dw) return fault(NodeFault::OutOfRange, info);
  if (level_ >= xe3::kTrailLevels) return fault(NodeFault::UnsupportedNode, info);
  const xe3::DecodedInternalNode node =
      xe3::decode_internal_node(std::span<const uint32_t, kBlockDwords>(dw, kBlockDwords));
  const float t_far = result_.hit ? result_.t : tmax_;
  const Xe3BoxResult res = intersect_internal_node(node, block_, ray_, tmin_, t_far, options_->instance_mask, grow_);
  RayCounters& c = result_.counters;
  ++c.steps;
  ++c.box_node_steps;
  c.box_tests += res.box_tests;
  c.walk_back_steps += info.walk_back ? 1 : 0;
  if (restart_level_ != kNoRestart && level_ >= restart_level_) restart_level_ = kNoRestart;  // new ground below

  const uint8_t t = trail_[level_];
  const bool finished = res.count == 0 || (t != kTrailLast && t >= res.count);
  if (finished) return finish_subtree(level_);
  const uint32_t k = t == kTrailLast ? res.count - 1 : t;
  trail_[level_] = k + 1 == res.count ? kTrailLast : static_cast<uint8_t>(k);
  for (uint32_t j = res.count; j-- > k + 1;) {
    push({res.hits[j].block, res.hits[j].type, level_ + 1, j + 1 == res.count});
  }
  block_ = res.hits[k].block;
  type_ = res.hits[k].type;
  ++level_;
}

void Xe3Traversal::step_leaf(StepInfo& info) {
  const bool stoc3 = type_ == xe3::kNodeTypeQuad128;
  const uint32_t* dw = fetch(*section_, block_, stoc3 ? 2 : 1);
  if (!dw) return fault(NodeFault::OutOfRange, info);
  // A STOC3 leaf starts with a QuadLeaf: its geometry is read the same way.
  const xe3::DecodedQuadLeaf leaf = xe3::decode_quad_leaf(std::span<const uint32_t, kBlockDwords>(dw, kBlockDwords));
  RayCounters& c = result_.counters;
  ++c.steps;
  ++c.primitive_node_steps;
  if ((leaf.geometry_mask & options_->instance_mask) != 0) {
    // The closer triangle first (triangle 0 on ties), so that a first-hit ray stops on the nearer one.
    std::array<Xe3TriangleHit, 2> hits{};
    const int triangles = leaf.has_tri1() ? 2 : 1;
    for (int k = 0; k < triangles; ++k) {
      hits[static_cast<std::size_t>(k)] = intersect_triangle_watertight(leaf.triangle(k), ray_);
      ++c.triangle_tests;
    }
    const int first = hits[1].hit && (!hits[0].hit || hits[1].t < hits[0].t) ? 1 : 0;
    for (const int k : {first, 1 - first}) {
      const Xe3TriangleHit& h = hits[static_cast<std::size_t>(k)];
      if (!h.hit || h.t < tmin_ || (result_.hit ? !(h.t < result_.t) : !(h.t <= tmax_))) continue;
      if (culled(options_->flags, h.front_face, leaf.opaque)) continue;
      result_.hit = true;
      result_.t = h.t;
      result_.primitive_id = leaf.primitive(k);
      result_.geometry_id = leaf.geometry_index;
      result_.barycentrics = h.barycentrics;
      result_.front_face = h.front_face;
      if (options_->any_hit) {
        done_ = true;
        return;
      }
    }
  }
  if (leaf.last) return finish_subtree(level_);
  block_ += stoc3 ? 2 : 1;  // the next leaf of the list
}

void Xe3Traversal::push(const Entry& e) {
  RayCounters& c = result_.counters;
  if (stack_.size() == stack_options_->entries) {
    stack_.erase(stack_.begin());  // the oldest entry is dropped; a restart will find its subtree again
    ++c.stack_lost;
  }
  stack_.push_back(e);
  ++c.stack_pushes;
  c.max_stack_depth = std::max<uint64_t>(c.max_stack_depth, stack_.size());
}

void Xe3Traversal::finish_subtree(uint32_t depth) {
  if (!stack_.empty()) {
    const Entry e = stack_.back();
    stack_.pop_back();
    ++result_.counters.stack_pops;
    uint8_t& parent = trail_[e.level - 1];
    parent = e.last ? kTrailLast : static_cast<uint8_t>(parent + 1);
    std::fill(trail_.begin() + e.level, trail_.end(), uint8_t{0});
    block_ = e.block;
    type_ = e.type;
    level_ = e.level;
    restart_level_ = kNoRestart;
    return;
  }
  // The short stack ran dry: the deepest level with children left decides where the restart leads.
  for (uint32_t l = depth; l-- > 0;) {
    if (trail_[l] == kTrailLast) continue;
    ++trail_[l];
    std::fill(trail_.begin() + l + 1, trail_.end(), uint8_t{0});
    block_ = section_->header.root_block;
    type_ = xe3::kNodeTypeMixed;
    level_ = 0;
    restart_level_ = l;
    return;
  }
  done_ = true;
}

namespace {

// The wave layer of wavefront.h for the Xe3 lane: waves of 1..32 rays in lockstep, each wave writing only its own
// output slots, so results are identical at any thread count.
TraceOutput run_waves(const Xe3Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                      const TraceOptions& options, const Executor& executor, const Xe3StackOptions& stack) {
  options.validate();
  stack.validate();
  const size_t wave_count = wave_begin.size();
  for (size_t w = 0; w < wave_count; ++w) {
    const size_t end = w + 1 < wave_count ? wave_begin[w + 1] : rays.size();
    if (wave_begin[w] >= end || end - wave_begin[w] > kWaveSize || (w == 0 && wave_begin[0] != 0)) {
      throw Error(ErrorKind::BadInput, "", "wave boundaries must be ascending, start at 0 and hold 1..32 rays each");
    }
  }
  if (wave_count == 0 && !rays.empty()) throw Error(ErrorKind::BadInput, "", "rays given without wave boundaries");
  TraceOutput out;
  out.rays.resize(rays.size());
  out.waves.resize(wave_count);
  if (options.record_node_sequence) out.node_sequences.resize(rays.size());
  executor.for_each(0, wave_count, [&](size_t w) {
    const size_t first = wave_begin[w];
    const size_t count = (w + 1 < wave_count ? wave_begin[w + 1] : rays.size()) - first;
    std::vector<Xe3Traversal> lanes;
    lanes.reserve(count);
    for (size_t i = 0; i < count; ++i) lanes.emplace_back(section, rays[first + i], options, stack);
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

}  // namespace

RayResult trace_ray_xe3(const Xe3Section& section, const Ray& ray, const TraceOptions& options,
                        const Xe3StackOptions& stack) {
  options.validate();
  stack.validate();
  Xe3Traversal lane(section, ray, options, stack);
  while (!lane.done()) lane.step();
  return lane.result();
}

TraceOutput trace_rays_xe3(const Xe3Section& section, std::span<const Ray> rays, const TraceOptions& options,
                           const Executor& executor, const Xe3StackOptions& stack) {
  std::vector<uint32_t> wave_begin;
  for (size_t first = 0; first < rays.size(); first += kWaveSize) wave_begin.push_back(static_cast<uint32_t>(first));
  return run_waves(section, rays, wave_begin, options, executor, stack);
}

TraceOutput trace_rays_xe3(const Xe3Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                           const TraceOptions& options, const Executor& executor, const Xe3StackOptions& stack) {
  return run_waves(section, rays, wave_begin, options, executor, stack);
}

}  // namespace hwbvh::emu
