// The Xe3 traversal loop: short stack and restart trail (traversal.h), the wave layer of wavefront.h.
#include "hwbvh/emu/xe3/traversal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/xe3/intersect.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/instance_leaf.h"
#include "emu/wave_loop.h"

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

// The ray in the instance, from the leaf's first 64 bytes: o' = L (o - p), d' = L d (instance_leaf.h).
Ray object_ray(const Ray& world, const xe3::DecodedInstanceLeaf& leaf) {
  const auto& m = leaf.world_to_object;
  const Vec3 p{leaf.object_to_world[0][3], leaf.object_to_world[1][3], leaf.object_to_world[2][3]};
  const Vec3 o = world.origin - p;
  Ray out = world;
  for (int r = 0; r < 3; ++r) {
    const auto& row = m[static_cast<std::size_t>(r)];
    out.origin[r] = row[0] * o.x + row[1] * o.y + row[2] * o.z;
    out.direction[r] = row[0] * world.direction.x + row[1] * world.direction.y + row[2] * world.direction.z;
  }
  return out;
}

// The ray flags inside an instance: TRIANGLE_CULL_DISABLE lifts face culling, FRONT_COUNTERCLOCKWISE flips the
// facing, FORCE_(NON_)OPAQUE apply unless the ray forces opacity itself (DXR's precedence).
PointerFlags instance_flags(PointerFlags ray, uint32_t inst) {
  PointerFlags f = ray;
  if ((inst & xe3::kInstanceFlagTriangleCullDisable) != 0) f.cull_front_facing = f.cull_back_facing = false;
  if ((inst & xe3::kInstanceFlagFrontCounterClockwise) != 0) f.flip_facedness = true;
  if (!ray.force_opaque && !ray.force_non_opaque) {
    f.force_opaque = (inst & xe3::kInstanceFlagForceOpaque) != 0;
    f.force_non_opaque = (inst & xe3::kInstanceFlagForceNonOpaque) != 0;
  }
  return f;
}

// The node's dwords if its `blocks` blocks lie inside the section's nodes; null otherwise.
const uint32_t* fetch(const Xe3Section& section, int64_t block, uint32_t blocks) {
  if (block < xe3::kHeaderBlocks || block + blocks > section.header.node_blocks) return nullptr;
  return section.dwords.data() + static_cast<std::size_t>(block) * kBlockDwords;
}

// A triangle's opacity after the ray's forced-opacity flags.
bool is_opaque(const PointerFlags& f, bool leaf_opaque) {
  return f.force_opaque || (!f.force_non_opaque && leaf_opaque);
}

// Ray flags applied to a triangle candidate (the pointer flags of TraceOptions, read as DXR ray flags).
bool culled(const PointerFlags& f, bool front_face, bool leaf_opaque) {
  const bool front = f.flip_facedness ? !front_face : front_face;
  return f.skip_triangles || (front ? f.cull_front_facing : f.cull_back_facing) ||
         (is_opaque(f, leaf_opaque) ? f.cull_opaque : f.cull_non_opaque);
}

// The STOC state of triangle k of a leaf at the hit: the level-3 masks of a STOC3 leaf, else the QuadLeaf's level-1
// masks (all zero, i.e. unknown, in a leaf written without STOC). Bit order: the section's sub-triangle order.
xe3::SubTriangleState leaf_state(const uint32_t* dw, bool stoc3, const xe3::DecodedQuadLeaf& leaf, int k, Vec2 bary,
                                 xe3::SubTriangleOrder order) {
  const auto t = static_cast<std::size_t>(k);
  if (stoc3) {
    const xe3::DecodedStoc3Leaf s3 =
        xe3::decode_stoc3_leaf(std::span<const uint32_t, xe3::kStoc3LeafDwords>(dw, xe3::kStoc3LeafDwords));
    return xe3::state_of(s3.opaque[t], s3.transparent[t], xe3::sub_triangle_index(bary, xe3::kStoc3Level, order));
  }
  return xe3::state_of(leaf.stoc1_opaque[t], leaf.stoc1_transparent[t],
                       xe3::sub_triangle_index(bary, xe3::kStoc1Level, order));
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

uint32_t Xe3Blases::find_root(uint64_t address) const {
  const auto it = std::upper_bound(blases.begin(), blases.end(), address,
                                   [](uint64_t a, const Blas& b) { return a < b.address; });
  if (it == blases.begin()) return kNone;
  const Blas& b = *std::prev(it);
  const bool root = address == b.address + uint64_t{b.section.header.root_block} * xe3::kBlockBytes;
  return root ? static_cast<uint32_t>(std::prev(it) - blases.begin()) : kNone;
}

Xe3Traversal::Xe3Traversal(const Xe3Section& section, const Ray& ray, const TraceOptions& options,
                           const Xe3StackOptions& stack)
    : top_(&section),
      section_(&section),
      options_(&options),
      stack_options_(&stack),
      ray_(operands(ray, options.instance_mask)),
      tmin_(ray.tmin),
      tmax_(ray.tmax),
      grow_(box_grow_factor(options.intersect.box_grow)),
      block_(section.header.root_block),
      type_(xe3::kNodeTypeMixed),
      flags_(options.flags),
      stoc_(options.stoc),
      world_ray_(ray) {
  stack_.reserve(stack.entries);
  done_ = has_nan(ray.origin) || has_nan(ray.direction);
}

void Xe3Traversal::fault(NodeFault f, StepInfo& info) {
  result_.fault = f;
  result_.fault_node = base_block_ + static_cast<uint32_t>(block_);
  info.faulted = done_ = true;
}

void Xe3Traversal::record_fetches(const StepInfo& step, std::vector<NodeFetch>& sequence) {
  constexpr uint8_t kInternalNodeWidth = 6, kQuadTriangles = 2;
  const bool internal = step.kind == NodeKind::Box, leaf = step.kind == NodeKind::Primitive;
  sequence.push_back({.node = step.node,
                      .offset_64 = step.node,
                      .blocks_64 = static_cast<uint8_t>(step.node_bytes / 64),
                      .box_tests = internal ? kInternalNodeWidth : uint8_t{0},
                      .triangle_tests = leaf ? kQuadTriangles : uint8_t{0}});
}

StepInfo Xe3Traversal::step() {
  const bool internal = type_ == xe3::kNodeTypeMixed;
  StepInfo info{.node = base_block_ + static_cast<uint32_t>(block_),
                .kind = internal ? NodeKind::Box : NodeKind::Primitive,
                .walk_back = internal && restart_level_ != kNoRestart && level_ <= restart_level_,
                .node_bytes = static_cast<uint16_t>(type_ == xe3::kNodeTypeQuad128 ? 128 : 64)};
  if (internal) {
    step_internal(info);
  } else if (type_ == xe3::kNodeTypeQuad || type_ == xe3::kNodeTypeQuad128) {
    step_leaf(info);
  } else if (type_ == xe3::kNodeTypeInstance) {
    info.kind = NodeKind::Instance;
    step_instance(info);
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
  count_step(c);
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
  count_step(c);
  ++c.primitive_node_steps;
  if ((leaf.geometry_mask & options_->instance_mask) != 0) {
    // The closer triangle first (triangle 0 on ties), so that a first-hit ray stops on the nearer one.
    std::array<Xe3TriangleHit, 2> hits{};
    const int triangles = leaf.has_tri1() ? 2 : 1;
    const TriangleTest triangle_test = options_->intersect.triangle_test.value_or(kXe3TriangleTest);
    for (int k = 0; k < triangles; ++k) {
      hits[static_cast<std::size_t>(k)] = intersect_triangle(leaf.triangle(k), ray_, triangle_test);
      ++c.triangle_tests;
    }
    const int first = hits[1].hit && (!hits[0].hit || hits[1].t < hits[0].t) ? 1 : 0;
    for (const int k : {first, 1 - first}) {
      const Xe3TriangleHit& h = hits[static_cast<std::size_t>(k)];
      if (!h.hit || h.t < tmin_ || (result_.hit ? !(h.t < result_.t) : !(h.t <= tmax_))) continue;
      if (culled(flags_, h.front_face, leaf.opaque)) continue;
      if (!is_opaque(flags_, leaf.opaque)) {
        std::optional<xe3::SubTriangleState> state;
        if (stoc_) state = leaf_state(dw, stoc3, leaf, k, h.barycentrics, section_->header.order);
        // The shader numbers geometries across BLASes (geometry_base_: the current BLAS's first).
        if (!resolve_non_opaque(*options_, geometry_base_ + leaf.geometry_index, leaf.primitive(k), h.barycentrics,
                                state, c, any_hit_record_)) {
          continue;
        }
      }
      result_.hit = true;
      result_.t = h.t;
      result_.primitive_id = leaf.primitive(k);
      result_.geometry_id = leaf.geometry_index;
      result_.barycentrics = h.barycentrics;
      result_.front_face = h.front_face;
      result_.instance_index = instance_index_;
      if (options_->any_hit) {
        done_ = true;
        return;
      }
    }
  }
  if (leaf.last) return finish_subtree(level_);
  block_ += stoc3 ? 2 : 1;  // the next leaf of the list
}

void Xe3Traversal::count_step(RayCounters& c) const {
  ++c.steps;
  const bool top = !in_blas_ && top_->blases != nullptr;  // a one-level section's steps are all BLAS steps
  ++(top ? c.tlas_steps : c.blas_steps);
}

void Xe3Traversal::step_instance(StepInfo& info) {
  if (in_blas_ || top_->blases == nullptr) return fault(NodeFault::UnsupportedNode, info);
  const uint32_t* dw = fetch(*section_, block_, xe3::kInstanceLeafBlocks);
  if (!dw) return fault(NodeFault::OutOfRange, info);
  const xe3::DecodedInstanceLeaf leaf =
      xe3::decode_instance_leaf(std::span<const uint32_t, xe3::kInstanceLeafDwords>(dw, xe3::kInstanceLeafDwords));
  const Xe3Blases& table = *top_->blases;
  const uint64_t nodes_end =
      table.blases.empty() ? 0 : table.blases.back().address + uint64_t{table.blases.back().section.dwords.size()} * 4;
  if (leaf.start_node >= nodes_end) return fault(NodeFault::OutOfRange, info);
  const uint32_t blas = table.find_root(leaf.start_node);
  if (blas == Xe3Blases::kNone || leaf.instance_index >= top_->header.instance_leaves) {
    return fault(NodeFault::UnknownBlas, info);
  }
  RayCounters& c = result_.counters;
  count_step(c);
  ++c.instance_node_steps;
  if ((leaf.mask & options_->instance_mask) == 0) return finish_subtree(level_);  // culled: the leaf is done

  ++c.instance_transitions;
  top_state_ = {trail_, std::move(stack_), level_};
  stack_.clear();
  trail_.fill(0);
  const Xe3Blases::Blas& b = table.blases[blas];
  section_ = &b.section;
  base_block_ = static_cast<uint32_t>(b.address / xe3::kBlockBytes);
  block_ = b.section.header.root_block;
  type_ = xe3::kNodeTypeMixed;
  level_ = 0;
  restart_level_ = kNoRestart;
  ray_ = PreparedRay(operands(object_ray(world_ray_, leaf), options_->instance_mask));
  flags_ = instance_flags(options_->flags, leaf.flags);
  stoc_ = options_->stoc && (leaf.flags & xe3::kInstanceFlagDisableStoc) == 0;
  in_blas_ = true;
  instance_index_ = leaf.instance_index;
  geometry_base_ = b.first_geometry;
  any_hit_record_.clear();  // a BLAS is traversed once per instance: its primitives are new candidates
}

void Xe3Traversal::leave_instance() {
  ray_ = PreparedRay(operands(world_ray_, options_->instance_mask));
  flags_ = options_->flags;
  stoc_ = options_->stoc;
  section_ = top_;
  base_block_ = 0;
  in_blas_ = false;
  geometry_base_ = 0;
  trail_ = top_state_.trail;
  stack_ = std::move(top_state_.stack);
  level_ = top_state_.level;
  restart_level_ = kNoRestart;
  finish_subtree(level_);  // the InstanceLeaf is done
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
  if (in_blas_) return leave_instance();
  done_ = true;
}

namespace {

// The wave layer (wave_loop.h) with Xe3 lanes.
TraceOutput run_waves(const Xe3Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                      const TraceOptions& options, const Executor& executor, const Xe3StackOptions& stack) {
  options.validate();
  stack.validate();
  return detail::trace_waves<Xe3Traversal>(rays, wave_begin, options.record_node_sequence, executor,
                                           [&](const Ray& ray) { return Xe3Traversal(section, ray, options, stack); });
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
  return run_waves(section, rays, detail::consecutive_waves(rays.size()), options, executor, stack);
}

TraceOutput trace_rays_xe3(const Xe3Section& section, std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                           const TraceOptions& options, const Executor& executor, const Xe3StackOptions& stack) {
  return run_waves(section, rays, wave_begin, options, executor, stack);
}

}  // namespace hwbvh::emu
