#include "hwbvh/emu/rtip31/intersect.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "emu/rtip31/intersect_node.h"

namespace hwbvh::emu {

using detail::kInf, detail::intersected, detail::empty_result, detail::near_plane_sides, detail::reciprocal;
using rdna4::kInvalidNode;


const char* fault_name(NodeFault fault) {
  switch (fault) {
    case NodeFault::None: return "none";
    case NodeFault::OutOfRange: return "node outside the node memory";
    case NodeFault::Misaligned: return "box or instance pointer not on a 128-byte boundary";
    case NodeFault::MalformedPrimitive: return "malformed primitive node";
    case NodeFault::UnsupportedNode: return "unsupported node type";
    case NodeFault::UnknownBlas: return "instance node names no BLAS of the node section";
    case NodeFault::StrayInstance: return "instance pointer to a slot that holds no instance node";
  }
  return "unknown fault";
}

const uint32_t* NodeMemory::find(uint32_t pointer, NodeFault& fault) const {
  const rdna4::NodeKind kind = rdna4::node_kind(pointer);
  if ((kind == rdna4::NodeKind::Box || kind == rdna4::NodeKind::Instance) && (pointer & 8u) != 0) {
    fault = NodeFault::Misaligned;
    return nullptr;
  }
  const uint64_t first = rdna4::node_byte_offset(pointer) / 4;
  if (first > dwords.size() || dwords.size() - first < rdna4::kNodeDwords) {
    fault = NodeFault::OutOfRange;
    return nullptr;
  }
  fault = NodeFault::None;
  return dwords.data() + first;
}

NodeFault NodeMemory::fetch(uint32_t pointer, rdna4::NodeDwords& out) const {
  NodeFault fault;
  const uint32_t* node = find(pointer, fault);
  if (node != nullptr) std::copy_n(node, rdna4::kNodeDwords, out.begin());
  return fault;
}

uint32_t BlasTable::find(uint64_t address) const {
  const auto it = std::lower_bound(blases.begin(), blases.end(), address,
                                   [](const Blas& b, uint64_t a) { return b.address < a; });
  return it != blases.end() && it->address == address ? static_cast<uint32_t>(it - blases.begin()) : kNone;
}

uint32_t BlasTable::instance_of(uint32_t pointer) const {
  const uint64_t slot = rdna4::node_byte_offset(pointer) / rdna4::kNodeBytes;
  if (rdna4::node_kind(pointer) != rdna4::NodeKind::Instance || slot < first_instance_slot) return kNone;
  return slot - first_instance_slot < instance_index.size() ? instance_index[slot - first_instance_slot] : kNone;
}

PointerFlags PointerFlags::from_bits(uint32_t bits) {
  auto bit = [bits](int i) { return ((bits >> i) & 1u) != 0; };
  return {bit(0), bit(1), bit(2), bit(3), bit(4), bit(5), bit(6), bit(7), bit(8), bit(9)};
}

uint32_t PointerFlags::bits() const {
  return uint32_t{force_opaque} | uint32_t{force_non_opaque} << 1 | uint32_t{disable_triangle_cull} << 2 |
         uint32_t{flip_facedness} << 3 | uint32_t{cull_back_facing} << 4 | uint32_t{cull_front_facing} << 5 |
         uint32_t{cull_opaque} << 6 | uint32_t{cull_non_opaque} << 7 | uint32_t{skip_triangles} << 8 |
         uint32_t{skip_procedural} << 9;
}

const char* triangle_test_name(TriangleTest test) {
  return test == TriangleTest::Gpurt ? "gpurt" : "watertight";
}

TriangleTest parse_triangle_test(std::string_view name) {
  if (name == "watertight") return TriangleTest::Watertight;
  if (name == "gpurt") return TriangleTest::Gpurt;
  throw Error(ErrorKind::BadInput, "", "unknown triangle test '" + std::string(name) + "' (valid: watertight, gpurt)");
}

void IntersectOptions::validate() const {
  if (box_grow > 255) {
    throw Error(ErrorKind::BadInput, "", "box grow value " + std::to_string(box_grow) + " is outside 0..255");
  }
  if (static_cast<uint32_t>(heuristic) > 3) {
    throw Error(ErrorKind::BadInput, "",
                "box sort heuristic " + std::to_string(static_cast<uint32_t>(heuristic)) + " is outside 0..3");
  }
  if (triangle_test && *triangle_test != TriangleTest::Watertight && *triangle_test != TriangleTest::Gpurt) {
    throw Error(ErrorKind::BadInput, "",
                "triangle test " + std::to_string(static_cast<uint32_t>(*triangle_test)) + " is not 0 or 1");
  }
}

PreparedRay::PreparedRay(const RayOperands& ray) : PreparedRay(ray.origin, ray.direction, ray.instance_mask) {
  operands.extent = ray.extent;
}

PreparedRay::PreparedRay(Vec3 origin, Vec3 direction, uint32_t instance_mask)
    : operands{origin, direction, std::numeric_limits<float>::infinity(), instance_mask},
      inverse(reciprocal(direction)),
      near_is_max(near_plane_sides(inverse)) {
  const float d[3] = {direction.x, direction.y, direction.z};  // not glm's [], a switch per access
  const float x = std::abs(d[0]), y = std::abs(d[1]), z = std::abs(d[2]);
  kz = (z > x && z > y) ? 2 : (y > x ? 1 : 0);  // ties go to the lower axis
  kx = kz == 2 ? 0 : kz + 1;
  ky = kx == 2 ? 0 : kx + 1;
  if (d[kz] < 0.0f) std::swap(kx, ky);  // an odd permutation for a reversed ray keeps the winding
  const simd4::F4 shear = simd4::F4{d[kx], d[ky], 1.0f, 1.0f} / simd4::F4{d[kz], d[kz], d[kz], 1.0f};
  shear_x = shear[0];  // d[kx] / d[kz]
  shear_y = shear[1];  // d[ky] / d[kz]
  shear_z = shear[2];  // 1 / d[kz]
  nan_free_slabs = detail::nan_free_slabs(operands.origin, inverse);
}

BoxTraits BoxTraits::of(const rdna4::BoxChildren& box) {
  BoxTraits traits{true, true, true};
  for (unsigned k = 0; k < 8; ++k) {
    if (box.pointer[k] == kInvalidNode) continue;
    traits.sentinel_free = traits.sentinel_free && !rdna4::is_sentinel(box.pointer[k]);
    for (int a = 0; a < 3; ++a) {
      traits.finite_planes = traits.finite_planes && std::isfinite(box.min[a][k]) && std::isfinite(box.max[a][k]);
    }
    traits.distinct_pointers = traits.distinct_pointers && (k == 0 || box.pointer[k] != box.pointer[k - 1]);
  }
  return traits;
}

IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const PreparedRay& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  IntersectResult res = empty_result(node_pointer);
  if (res.kind == rdna4::NodeKind::Instance) {
    const InstanceIntersect inst = intersect_instance(memory, flags, ray.operands, node_pointer, options);
    res.dw = inst.dw;
    res.fault = inst.fault;
    res.box_tests = inst.fault == NodeFault::None ? kInstanceBoxTests : 0;
    return res;
  }
  if (!intersected(res.kind)) return res;
  const uint32_t* node = memory.find(node_pointer, res.fault);
  if (node == nullptr) return res;
  const rdna4::NodeView view(node, rdna4::kNodeDwords);
  if (res.kind == rdna4::NodeKind::Box) {
    const rdna4::BoxChildren box = rdna4::decode_box_children(view);
    const bool rotated = box.obb_index < rdna4::kObbMatrixCount;
    detail::intersect_box(box, rotated ? rdna4::obb_matrix(box.obb_index) : rdna4::Mat3Rows{}, BoxTraits::of(box),
                          flags, ray, options, res);
  } else if (const auto pair = rdna4::decode_primitive_pair(view, rdna4::pair_index(node_pointer))) {
    detail::intersect_primitive(*pair, flags, ray, options.triangle_test.value_or(kRtip31TriangleTest), res);
  } else {
    res.fault = NodeFault::MalformedPrimitive;
  }
  return res;
}

namespace {
// Entries for `wanted` items of which the memory holds at most `available`: a power of two, no more than needed.
uint32_t cache_mask(uint32_t wanted, size_t available) {
  const auto cap = static_cast<uint32_t>(std::min<size_t>(available, uint32_t{1} << 30));
  return std::bit_ceil(std::clamp(wanted, 1u, std::max(cap, 1u))) - 1;
}
}  // namespace

NodeDecodeCache::NodeDecodeCache(const NodeMemory& memory, uint32_t box_nodes, uint32_t pairs)
    : wanted_boxes_(box_nodes), wanted_pairs_(pairs) {
  rebind(memory);
}

void NodeDecodeCache::rebind(const NodeMemory& memory) {
  memory_ = memory;
  const size_t nodes = memory.dwords.size() / rdna4::kNodeDwords, pair_keys = nodes * 8;
  box_mask_ = cache_mask(wanted_boxes_, nodes);
  pair_mask_ = cache_mask(wanted_pairs_, pair_keys);
  const bool key_per_entry = pair_keys <= size_t{pair_mask_} + 1;
  pair_multiplier_ = key_per_entry ? 1u : 0x9E3779B1u;
  // The product's top log2(entries) bits; & 31 keeps a one-entry cache's shift defined (its slot is always 0).
  pair_shift_ = key_per_entry ? 0u : static_cast<uint32_t>(32 - std::popcount(pair_mask_)) & 31u;
  if (box_mask_ >= box_capacity_) {
    box_capacity_ = box_mask_ + size_t{1};
    boxes_ = std::make_unique_for_overwrite<Slot<Box>[]>(box_capacity_);
  }
  if (pair_mask_ >= pair_capacity_) {
    pair_capacity_ = pair_mask_ + size_t{1};
    pairs_ = std::make_unique_for_overwrite<Slot<Pair>[]>(pair_capacity_);
  }
  box_key_.assign(box_mask_ + size_t{1}, kInvalidNode);  // every entry empty
  pair_key_.assign(pair_mask_ + size_t{1}, kInvalidNode);
  // The BLASes' caches are made again when first asked for (the BLAS count and sizes may differ).
  blas_caches_.clear();
  instances_.clear();
  if (memory.blases != nullptr) {
    blas_caches_.resize(memory.blases->blases.size());
    instances_.resize(memory.blases->instance_index.size());
  }
}

const DecodedInstance* NodeDecodeCache::instance(uint32_t pointer, NodeFault& fault) {
  fault = NodeFault::None;
  const uint32_t index = memory_.blases != nullptr ? memory_.blases->instance_of(pointer) : BlasTable::kNone;
  if (index == BlasTable::kNone) return nullptr;
  const uint32_t n = static_cast<uint32_t>(rdna4::node_byte_offset(pointer) / rdna4::kNodeBytes) -
                     memory_.blases->first_instance_slot;
  std::unique_ptr<DecodedInstance>& entry = instances_[n];
  if (entry == nullptr) {
    const uint32_t* node = memory_.find(pointer, fault);
    if (node == nullptr) return nullptr;
    entry = std::make_unique<DecodedInstance>(DecodedInstance::of(node));
  }
  return entry.get();
}

NodeDecodeCache& NodeDecodeCache::blas_cache(uint32_t blas) {
  std::unique_ptr<NodeDecodeCache>& cache = blas_caches_[blas];
  if (cache == nullptr) cache = std::make_unique<NodeDecodeCache>(memory_.blases->blases[blas].memory, wanted_boxes_,
                                                                  wanted_pairs_);
  return *cache;
}

const NodeDecodeCache::Box* NodeDecodeCache::fill_box(uint32_t slot, uint32_t pointer, NodeFault& fault) {
  const uint32_t* node = memory_.find(pointer, fault);
  if (node == nullptr) return nullptr;
  const rdna4::BoxChildren children = rdna4::decode_box_children(rdna4::NodeView(node, rdna4::kNodeDwords));
  Box* entry = new (boxes_[slot].bytes) Box{children, rdna4::obb_matrix(children.obb_index), BoxTraits::of(children)};
  box_key_[slot] = pointer;
  return entry;
}

const NodeDecodeCache::Pair* NodeDecodeCache::fill_pair(uint32_t slot, uint32_t pointer, NodeFault& fault) {
  const uint32_t* node = memory_.find(pointer, fault);
  if (node == nullptr) return nullptr;
  const auto pair = rdna4::decode_primitive_pair(rdna4::NodeView(node, rdna4::kNodeDwords), rdna4::pair_index(pointer));
  Pair* entry = new (pairs_[slot].bytes)
      Pair{pair ? NodeFault::None : NodeFault::MalformedPrimitive, pair.value_or(rdna4::DecodedPair{})};
  pair_key_[slot] = pointer;
  return entry;
}

DecodedInstance DecodedInstance::of(const uint32_t* node) {
  DecodedInstance d{rdna4::decode_instance_node(node), {}, {}};
  d.filter = rdna4::decode_box_children(d.node.filter_box);
  d.traits = BoxTraits::of(d.filter);
  return d;
}

InstanceIntersect intersect_instance(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                     uint32_t node_pointer, const IntersectOptions& options) {
  NodeFault fault;
  const uint32_t* node = memory.find(node_pointer, fault);
  if (node == nullptr) {
    InstanceIntersect out;
    out.dw.fill(kInvalidNode);
    out.fault = fault;
    return out;
  }
  return intersect_instance(DecodedInstance::of(node), flags, ray, options);
}

InstanceIntersect intersect_instance(const DecodedInstance& instance, const PointerFlags& flags,
                                     const RayOperands& ray, const IntersectOptions& options) {
  InstanceIntersect out;
  out.dw.fill(kInvalidNode);
  const rdna4::DecodedInstanceNode& inst = instance.node;
  out.parent_pointer = inst.parent_pointer;
  const uint32_t instance_flags = rdna4::base_pointer_flags(inst.blas_base_pointer);
  const bool procedural_blas = (instance_flags & rdna4::kPointerFlagSkipTriangles) != 0;
  out.culled = (inst.instance_mask & ray.instance_mask) == 0 || (!procedural_blas && flags.skip_triangles) ||
               (procedural_blas && flags.skip_procedural);
  if (!out.culled) {
    const rdna4::Mat3x4& w = inst.world_to_object;
    const Vec3 o = ray.origin, d = ray.direction;
    Vec3 origin, direction;
    for (int r = 0; r < 3; ++r) {
      origin[r] = std::fma(o.x, w[r][0], std::fma(o.y, w[r][1], std::fma(o.z, w[r][2], w[r][3])));
      direction[r] = std::fma(d.x, w[r][0], std::fma(d.y, w[r][1], d.z * w[r][2]));
    }
    // The filter node's four boxes, tested like a box node's eight (§5.3 steps 5..8) with the object-space ray.
    IntersectResult filter;
    PreparedRay& object_ray = out.ray.emplace(origin, direction, ray.instance_mask);
    object_ray.operands.extent = ray.extent;
    detail::intersect_box(instance.filter, rdna4::Mat3Rows{}, instance.traits, flags, object_ray, options, filter);
    out.dw[7] = (filter.dw[0] & 0xFFu) | (filter.dw[1] & 0xFFu) << 8 | (filter.dw[2] & 0xFFu) << 16 |
                (filter.dw[3] & 0xFFu) << 24;
  }
  // A culled instance returns a miss (GPURT's emulation would still test the filter, docs/rtip31-format.md §5.5).
  const uint64_t blas = (inst.blas_base_pointer & ~(uint64_t{0x3FF} << 54)) |
                        uint64_t{rdna4::merge_instance_flags(flags.bits(), instance_flags)} << 54;
  out.dw[2] = static_cast<uint32_t>(blas);
  out.dw[3] = static_cast<uint32_t>(blas >> 32);
  out.dw[6] = inst.user_data;
  return out;
}

IntersectResult image_bvh8_intersect_ray(NodeDecodeCache& cache, const PointerFlags& flags, const PreparedRay& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  return detail::intersect_cached(cache, flags, ray, node_pointer, options);
}

IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  return image_bvh8_intersect_ray(memory, flags, PreparedRay(ray), node_pointer, options);
}

}  // namespace hwbvh::emu
