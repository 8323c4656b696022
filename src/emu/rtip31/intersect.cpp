#include "hwbvh/emu/rtip31/intersect.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "emu/rtip31/intersect_node.h"

namespace hwbvh::emu {

using detail::intersected, detail::empty_result;
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

PreparedRay::PreparedRay(Vec3 origin, Vec3 direction, uint32_t instance_mask) {
  detail::prepare_ray(*this, origin, direction, instance_mask);
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
    first_instance_slot_ = memory.blases->first_instance_slot;
  }
}

const DecodedInstance* NodeDecodeCache::fill_instance(uint32_t pointer, NodeFault& fault) {
  std::optional<DecodedInstance> decoded = DecodedInstance::at(memory_, pointer, fault);
  if (!decoded) return nullptr;
  std::unique_ptr<DecodedInstance>& entry = instances_[instance_slot(pointer)];
  entry = std::make_unique<DecodedInstance>(*decoded);
  return entry.get();
}

NodeDecodeCache& NodeDecodeCache::make_blas_cache(uint32_t blas) {
  blas_caches_[blas] = std::make_unique<NodeDecodeCache>(memory_.blases->blases[blas].memory, wanted_boxes_,
                                                         wanted_pairs_);
  return *blas_caches_[blas];
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

std::optional<DecodedInstance> DecodedInstance::at(const NodeMemory& memory, uint32_t pointer, NodeFault& fault) {
  if (memory.blases == nullptr) {
    fault = NodeFault::UnsupportedNode;
    return std::nullopt;
  }
  const uint32_t index = memory.blases->instance_of(pointer);
  if (index == BlasTable::kNone) {
    fault = NodeFault::StrayInstance;
    return std::nullopt;
  }
  const uint32_t* node = memory.find(pointer, fault);
  if (node == nullptr) return std::nullopt;
  DecodedInstance d = of(node);
  d.index = index;
  d.blas = memory.blases->find(rdna4::base_pointer_address(d.node.blas_base_pointer));
  return d;
}

InstanceIntersect intersect_instance(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                     uint32_t node_pointer, const IntersectOptions& options, PreparedRay* object_ray) {
  NodeFault fault;
  const uint32_t* node = memory.find(node_pointer, fault);
  if (node == nullptr) {
    InstanceIntersect out;
    out.dw.fill(kInvalidNode);
    out.fault = fault;
    return out;
  }
  PreparedRay scratch;
  return detail::intersect_instance(DecodedInstance::of(node), flags, ray, options,
                                    object_ray != nullptr ? *object_ray : scratch);
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
