#pragma once
// IMAGE_BVH8_INTERSECT_RAY as emulated (docs/rtip31-format.md §5, GPURT's
// `image_bvh8_intersect_ray_3_1`): one 128-byte RT IP 3.1 node tested against one ray, returning the 10 result
// dwords the shader sees.
//
//   box node (ptr & 7 == 5)      DW0..7 = child pointers, primitives first then boxes, each group ascending by the
//                                sort key, INVALID_NODE (0xFFFFFFFF) for misses; DW8, DW9 = 0xFFFFFFFF
//   primitive node (ptr & 7 <= 3) DW0..3 = tri0 (t, |I| | procedural<<31, |J| | non_opaque<<31, prim << 1 | back),
//                                DW4..7 = tri1 (or (+inf, 1.0, 1.0, 0) when tri1 is invalid),
//                                DW8, DW9 = geometry id << 2 | navigation, for tri0 / tri1
//   instance node (ptr & 7 == 6) DW2, DW3 BLAS base with merged flags, DW6 hit-group contribution, DW7 the filter
//                                node's child bytes (§5.5; intersect_instance also gives the transformed ray)
//   ptr & 7 == 4 or 7            all 0xFFFFFFFF (§5.2)
//
// The ray/triangle test is an option (IntersectOptions::triangle_test): watertight (Woop, Benthin and Wald 2013,
// RT IP 3.1's default, because DXR and Vulkan require watertight hardware) or GPURT's Möller–Trumbore exactly as
// §5.4 writes it. Both fill the same result slots; docs/emulator.md explains the choice.
//
// The emulation reads node bytes only through the RT IP 3.1 decoder (formats/rdna4/decode.h). Floating-point
// steps are single IEEE operations, with std::fma exactly where the spec uses fma and NaN-aware selects for its
// minNum / maxNum, so the result does not depend on how the compiler would otherwise contract them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::emu {

/// Why a node could not be intersected. Any fault stops the ray that hit it (never undefined behaviour).
enum class NodeFault : uint8_t {
  None,
  OutOfRange,          ///< the 128-byte node lies (partly) outside the node memory
  Misaligned,          ///< box or instance pointer with bit 3 set: not on a 128-byte node boundary (§1.1)
  MalformedPrimitive,  ///< primitive header or pair descriptor rejected by the decoder, or pair >= pair count
  UnsupportedNode,     ///< traversal only: pointer type 4/7, or an instance node in a BLAS or one-level BVH
  UnknownBlas,         ///< traversal only: an instance node's base pointer names no BLAS of the node section
  StrayInstance,       ///< traversal only: an instance pointer to a top-level slot that holds no instance node
};

/// Short lowercase name for messages ("out of range", ...).
const char* fault_name(NodeFault fault);

struct BlasTable;

/// A bounds-checked view of a node section: byte 0 is the section start that node pointers are relative to.
struct NodeMemory {
  std::span<const uint32_t> dwords;
  /// A top-level structure's: the BLASes its instance nodes may enter (null for a BLAS or a one-level BVH, where
  /// an instance node is unsupported).
  const BlasTable* blases = nullptr;

  /// The 32 dwords of the node that `pointer` addresses (byte offset (pointer & ~0xF) << 3, §1.1), in place; null
  /// with `fault` = OutOfRange / Misaligned (and nothing outside `dwords` touched), else `fault` = None.
  const uint32_t* find(uint32_t pointer, NodeFault& fault) const;
  /// Copies the node that `pointer` addresses into `out`; the fault of find().
  NodeFault fetch(uint32_t pointer, rdna4::NodeDwords& out) const;
};

/// The bottom-level structures of a two-level node section (docs/blob-format.md §6.6): instance nodes name a BLAS by
/// the address of its header, and hits report the instance index the sideband gives each instance node.
struct BlasTable {
  struct Blas {
    uint64_t address = 0;  ///< byte address of the BLAS header, as instance nodes' base pointers hold it
    NodeMemory memory;     ///< the BLAS's nodes: byte 0 is its header
    uint32_t first_geometry = 0;  ///< its geometry ids as the any-hit shader numbers them start here
  };
  std::vector<Blas> blases;  ///< ascending by address
  uint32_t first_instance_slot = 0;     ///< 128-byte slot of the top level's first instance node
  std::vector<uint32_t> instance_index;  ///< per instance node, in node order: the instance's index
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  /// Index into blases of the BLAS whose header is at `address`, or kNone.
  [[nodiscard]] uint32_t find(uint64_t address) const;
  /// The instance index of the instance node `pointer` of the top level, or kNone when it is not one.
  [[nodiscard]] uint32_t instance_of(uint32_t pointer) const;
};

/// The ten pointer flags of the 64-bit BVH base pointer, bits 54..63 (§1.4).
struct PointerFlags {
  bool force_opaque = false;           ///< bit 54
  bool force_non_opaque = false;       ///< bit 55
  bool disable_triangle_cull = false;  ///< bit 56 (carried, not consulted by the emulation, §5.4)
  bool flip_facedness = false;         ///< bit 57
  bool cull_back_facing = false;       ///< bit 58
  bool cull_front_facing = false;      ///< bit 59
  bool cull_opaque = false;            ///< bit 60
  bool cull_non_opaque = false;        ///< bit 61
  bool skip_triangles = false;         ///< bit 62
  bool skip_procedural = false;        ///< bit 63

  /// From the 10-bit value `base_ptr >> 54`. (Inline: every instance step merges flags.)
  static PointerFlags from_bits(uint32_t bits) {
    auto bit = [bits](int i) { return ((bits >> i) & 1u) != 0; };
    return {bit(0), bit(1), bit(2), bit(3), bit(4), bit(5), bit(6), bit(7), bit(8), bit(9)};
  }
  /// The 10-bit value that goes into base pointer bits 54..63.
  [[nodiscard]] uint32_t bits() const {
    return uint32_t{force_opaque} | uint32_t{force_non_opaque} << 1 | uint32_t{disable_triangle_cull} << 2 |
           uint32_t{flip_facedness} << 3 | uint32_t{cull_back_facing} << 4 | uint32_t{cull_front_facing} << 5 |
           uint32_t{cull_opaque} << 6 | uint32_t{cull_non_opaque} << 7 | uint32_t{skip_triangles} << 8 |
           uint32_t{skip_procedural} << 9;
  }
  /// Field by field, as one comparison of the ten bytes: the defaulted form compares the bools one at a time, and
  /// traversal compares flags on every ray and every instance transition.
  friend bool operator==(const PointerFlags& a, const PointerFlags& b) {
    return std::memcmp(&a, &b, sizeof(PointerFlags)) == 0;
  }
};
// No padding and bools of 0 or 1 only: equal bytes are equal fields.
static_assert(std::has_unique_object_representations_v<PointerFlags>);

/// Box sorting heuristics of the BVH T# (bits 54:53).
enum class SortHeuristic : uint8_t {
  Closest = 0,          ///< key = clamped entry distance
  LargestFirst = 1,     ///< key = clamped entry - clamped exit (largest interval first)
  ClosestMidpoint = 2,  ///< key = entry + exit (unclamped; NaN entry -> 0, NaN exit -> +inf)
  Disabled = 3,         ///< "reserved": GPURT's emulation does not sort
};

/// The ray/triangle test of the primitive path. Both report t, the barycentric weights of vertices i1 and i2, and
/// the facing with §5.4's convention (front = the ray travels against (b - a) x (c - a)).
enum class TriangleTest : uint8_t {
  /// Woop, Benthin, Wald 2013, "Watertight Ray/Triangle Intersection" (JCGT 2(1)), FP32 with the paper's
  /// double-precision fallback for zero edge functions: a ray through a shared edge or vertex hits at least one of
  /// the triangles, as DXR and Vulkan require of hardware.
  Watertight = 0,
  /// GPURT's software emulation: Möller–Trumbore exactly as §5.4 writes it. Not watertight.
  Gpurt = 1,
};

/// "watertight" or "gpurt".
const char* triangle_test_name(TriangleTest test);
/// Parses triangle_test_name's output; throws hwbvh::Error(BadInput) for anything else.
TriangleTest parse_triangle_test(std::string_view name);

/// RT IP 3.1's triangle test when IntersectOptions::triangle_test names none.
inline constexpr TriangleTest kRtip31TriangleTest = TriangleTest::Watertight;

/// Descriptor (T#) controls of the intersect instruction (§5.1) and the emulator's triangle test. The descriptor
/// defaults are GPURT's emulation; the triangle test defaults to each target's own (kRtip31TriangleTest, ...).
struct IntersectOptions {
  bool box_sort = true;                           ///< box_sort_en
  SortHeuristic heuristic = SortHeuristic::Closest;
  uint32_t box_grow = 6;                          ///< box_grow_value, 0..255 ulps of 2^-24 on the far plane
  bool sort_triangles_first = true;               ///< primitive pointers sort before boxes
  bool wide_sort = true;                          ///< false: slots 0..3 and 4..7 are sorted separately
  std::optional<TriangleTest> triangle_test;     ///< empty: the target's own test

  /// Throws hwbvh::Error(BadInput) if box_grow > 255, the heuristic is not 0..3 or the triangle test unknown.
  void validate() const;
  friend bool operator==(const IntersectOptions&, const IntersectOptions&) = default;
};

/// The ray operands of the instruction (VADDR groups 1..3).
struct RayOperands {
  Vec3 origin{0.0f};
  Vec3 direction{0.0f, 0.0f, 1.0f};
  float extent = std::numeric_limits<float>::infinity();  ///< ray_extent: the current t_max (entry <= extent * G)
  uint32_t instance_mask = 0xFF;  ///< 8 bits
};

inline constexpr std::size_t kResultDwords = 10;
using IntersectDwords = std::array<uint32_t, kResultDwords>;

/// The instruction's 10 result dwords plus what the counters need.
struct IntersectResult {
  IntersectDwords dw{};
  rdna4::NodeKind kind = rdna4::NodeKind::Unsupported;
  uint32_t box_tests = 0;       ///< slab tests performed: 8 per box node (all slots, §5.6)
  uint32_t triangle_tests = 0;  ///< ray/triangle tests: 1 per non-procedural valid triangle of the pair
  bool obb_rotated = false;     ///< the ray was rotated into an OBB node's frame
  NodeFault fault = NodeFault::None;  ///< non-None: dw is all 0xFFFFFFFF
  /// Box path: bit k set when dw[k] holds a node pointer, every other slot of DW0..7 being INVALID_NODE; or
  /// kSlotsUnknown when a child pointer is a sentinel other than INVALID_NODE (a malformed node), and outside the box
  /// path. Lets the stack skip reading the slots back to classify them.
  uint32_t pointer_slots = kSlotsUnknown;
  static constexpr uint32_t kSlotsUnknown = 0x100;
};

/// Emulates IMAGE_BVH8_INTERSECT_RAY on node `node_pointer` (§5.2 dispatch, §5.3 box path, §5.4 primitive path).
/// `flags` are the base pointer's flags; `options` the descriptor controls (must pass validate()).
IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                         uint32_t node_pointer, const IntersectOptions& options);

/// What the instruction derives from the ray's direction alone: the reciprocal direction of the slab test
/// (§5.3 step 4, axis-aligned nodes) and the axis permutation and shear of the watertight triangle test. A
/// traversal prepares it once per ray; the results are the same as recomputing it on every node.
struct PreparedRay {
  RayOperands operands;  ///< extent may change between calls; origin and direction must not
  /// 1 / direction, per component (IEEE division)
  Vec3 inverse{std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), 1.0f};
  /// Per axis, 1 when the slab's near plane is its max (inverse < 0 or NaN), else 0: axis-aligned nodes only.
  std::array<uint8_t, 3> near_is_max{};
  int kx = 0, ky = 1, kz = 2;  ///< watertight: kz = the largest |direction| component; (kx, ky) keep the winding
  float shear_x = 0.0f, shear_y = 0.0f, shear_z = 1.0f;  ///< d[kx] / d[kz], d[ky] / d[kz], 1 / d[kz]
  /// The origin and `inverse` are finite and no inverse component is zero: slab distances to finite planes cannot
  /// be NaN, so axis-aligned nodes skip the NaN bookkeeping of the slab test (the outcome is the same).
  bool nan_free_slabs = false;

  /// The default operands (origin 0, direction +z, extent +inf, mask 0xFF), prepared: a lane's ray before it is
  /// prepared in place by code that sees the internal inline version of the constructor.
  PreparedRay() = default;
  explicit PreparedRay(const RayOperands& ray);
  /// The same with extent = +inf, from the parts, which a call passes in registers: a caller that has just
  /// computed them does not store them piecewise for the constructor to load them whole (a store-forwarding stall).
  PreparedRay(Vec3 origin, Vec3 direction, uint32_t instance_mask);
};


/// image_bvh8_intersect_ray with the ray prepared in advance.
IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const PreparedRay& ray,
                                         uint32_t node_pointer, const IntersectOptions& options);

/// What the box path may skip for a node, read off its decoded children; the outcome is the same either way.
struct BoxTraits {
  bool finite_planes = false;      ///< every slot that holds a pointer has six finite planes
  bool distinct_pointers = false;  ///< no two adjacent slots hold the same pointer: no child reuse to remove
  bool sentinel_free = false;      ///< no slot holds a sentinel other than INVALID_NODE (a malformed node's)

  static BoxTraits of(const rdna4::BoxChildren& box);
};

/// What the instance path reads of an instance node, decoded once: the node's fields and its filter node as a box
/// node's children; for an instance node of a top level (at()), also what the traversal looks up for it.
struct DecodedInstance {
  rdna4::DecodedInstanceNode node;
  rdna4::BoxChildren filter;
  BoxTraits traits;
  uint32_t index = BlasTable::kNone;  ///< the instance's index (BlasTable::instance_of)
  uint32_t blas = BlasTable::kNone;   ///< the BLAS its base pointer names (BlasTable::find), or kNone
  static DecodedInstance of(const uint32_t* node);
  /// The instance node `pointer` of a top level with its index and BLAS, or nothing with `fault` = UnsupportedNode
  /// when `memory` is no top level (blases null), StrayInstance when `pointer` addresses no instance node of it,
  /// else find()'s faults.
  static std::optional<DecodedInstance> at(const NodeMemory& memory, uint32_t pointer, NodeFault& fault);
};

/// The instance path of the instruction (§5.5).
struct InstanceIntersect {
  /// DW2, DW3 the BLAS base pointer with merged flags; DW6 the hit-group contribution; DW7 the filter node's four
  /// child bytes (0xFFFFFFFF: culled or missed); the rest 0xFFFFFFFF.
  IntersectDwords dw{};
  bool culled = false;   ///< by the instance mask or the BLAS type: the ray is not transformed
  uint32_t parent_pointer = rdna4::kInvalidNode;  ///< bytes 56..59, for the walk-back (not read by the hardware)
  NodeFault fault = NodeFault::None;
};
/// §5.5 on instance node `node_pointer`: cull on the mask and the BLAS type, transform the ray by the
/// world-to-object matrix (fma order of §5.5), test the filter node like a box node (§5.3 steps 5..8), merge the
/// flags (§1.4). `object_ray`, if given, receives the ray operands the instruction writes back, prepared as the
/// filter test used them (left alone when the instance is culled or the node faults).
InstanceIntersect intersect_instance(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                     uint32_t node_pointer, const IntersectOptions& options,
                                     PreparedRay* object_ray = nullptr);
/// Slab tests of one instance node: its filter node's four boxes (§5.6).
inline constexpr uint32_t kInstanceBoxTests = 4;

/// What the intersector decodes from a node, kept so that a node visited again (by another lane of the wave, or
/// by a later ray) is not decoded again. Decoding is a pure function of the node's 128 bytes, so an entry is
/// exactly what decoding the bytes again would give: the cache changes speed, never a result. It is filled only
/// through the RT IP 3.1 decoder (decode_box_children, obb_matrix, decode_primitive_pair) and is direct-mapped:
/// box nodes keyed by pointer, triangle pairs by pointer (node and pair index). One cache serves one NodeMemory,
/// whose bytes must not change while the cache is in use; it is not thread-safe (one per thread or task).
class NodeDecodeCache {
 public:
  /// Room for `box_nodes` box nodes and `pairs` triangle pairs, each rounded up to a power of two and capped at
  /// what the memory can hold (a small node memory gets a small cache).
  explicit NodeDecodeCache(const NodeMemory& memory, uint32_t box_nodes = 16384, uint32_t pairs = 65536);

  /// Empties the cache and makes it serve `memory` (sized for it as the constructor would), keeping its storage:
  /// exactly a new cache, without the page faults of fresh memory that a new cache's entries take as they fill.
  void rebind(const NodeMemory& memory);

  [[nodiscard]] const NodeMemory& memory() const { return memory_; }
  /// The cache of BLAS `blas` (an index into memory().blases), made when first asked for and kept with this one.
  NodeDecodeCache& blas_cache(uint32_t blas) {
    return blas_caches_[blas] != nullptr ? *blas_caches_[blas] : make_blas_cache(blas);  // every BLAS entry asks
  }
  /// DecodedInstance::at(memory(), pointer, fault), decoded once per instance node, or null with its fault.
  const DecodedInstance* instance(uint32_t pointer, NodeFault& fault) {
    // An entry is made only for a pointer that at() accepted, and only one aligned instance pointer (low four bits
    // 0110) addresses a slot: a hit needs no other check. The hit path is inline.
    const uint64_t n = instance_slot(pointer);
    fault = NodeFault::None;
    if ((pointer & 0xFu) == rdna4::kTypeInstance && n < instances_.size() && instances_[n] != nullptr) {
      return instances_[n].get();
    }
    return fill_instance(pointer, fault);
  }

  struct Box {
    rdna4::BoxChildren children;
    rdna4::Mat3Rows obb;  ///< obb_matrix(children.obb_index) (the identity for an axis-aligned node)
    BoxTraits traits;     ///< BoxTraits::of(children)
  };
  struct Pair {
    NodeFault fault = NodeFault::None;  ///< MalformedPrimitive when the decoder rejected the node or pair
    rdna4::DecodedPair pair;
  };
  /// The decoded box node `pointer` (kind Box), or null with `fault` set (find()'s faults).
  const Box* box(uint32_t pointer, NodeFault& fault) {
    // A pointer is stored only after find() accepted it, so a hit needs no range check. The hit path is inline.
    const uint32_t slot = box_slot(pointer);
    fault = NodeFault::None;
    return box_key_[slot] == pointer ? boxes_[slot].get() : fill_box(slot, pointer, fault);
  }
  /// The decoded pair `pointer` (kind Primitive), or null with `fault` set (find()'s faults; a malformed pair is
  /// returned with Pair::fault set).
  const Pair* pair(uint32_t pointer, NodeFault& fault) {
    const uint32_t slot = pair_slot(pointer);
    fault = NodeFault::None;
    return pair_key_[slot] == pointer ? pairs_[slot].get() : fill_pair(slot, pointer, fault);
  }
  /// Starts loading into the CPU's caches the key and entry that box() or pair() will read for `pointer` (for an
  /// instance node, the entry instance() decoded): a hint that changes no result. A traversal gives it a lane's
  /// next node as soon as it is known, so that the memory is on its way while the wave's other lanes step.
  [[gnu::always_inline]] void prefetch(uint32_t pointer) const {
    if (rdna4::node_kind(pointer) == rdna4::NodeKind::Box) {
      const uint32_t slot = box_slot(pointer);
      __builtin_prefetch(&box_key_[slot]);
      prefetch_lines<sizeof(Box)>(boxes_[slot].bytes);
    } else if (rdna4::node_kind(pointer) == rdna4::NodeKind::Primitive) {
      const uint32_t slot = pair_slot(pointer);
      __builtin_prefetch(&pair_key_[slot]);
      prefetch_lines<sizeof(Pair)>(pairs_[slot].bytes);
    } else if (rdna4::node_kind(pointer) == rdna4::NodeKind::Instance) {
      const uint64_t n = instance_slot(pointer);
      if (n < instances_.size() && instances_[n] != nullptr) {
        prefetch_lines<sizeof(DecodedInstance)>(reinterpret_cast<const std::byte*>(instances_[n].get()));
      }
    }
  }

 private:
  // Node index (pointer bits 31..4) modulo the size: consecutive nodes take consecutive entries.
  uint32_t box_slot(uint32_t pointer) const { return (pointer >> 4) & box_mask_; }
  // Node index times the most pairs a node holds, plus the pair. When every such key of the memory has its own
  // entry, the key is the slot (pair_multiplier_ 1, pair_shift_ 0); otherwise the keys, sparse because most nodes
  // hold fewer than eight pairs, are spread by the top bits of their Fibonacci hash, the well-mixed ones.
  uint32_t pair_slot(uint32_t pointer) const {
    const uint32_t key = (pointer >> 4) << 3 | rdna4::pair_index(pointer);
    return (key * pair_multiplier_ >> pair_shift_) & pair_mask_;
  }
  // An instance node's index among the top level's instance slots (wraps around below the first).
  uint64_t instance_slot(uint32_t pointer) const {
    return rdna4::node_byte_offset(pointer) / rdna4::kNodeBytes - first_instance_slot_;
  }
  // Every 64-byte cache line of [p, p + Bytes). Inlined by force, as prefetch() is: GCC finds a function that does
  // nothing but prefetch free of side effects and deletes its calls.
  template <size_t Bytes>
  [[gnu::always_inline]] static void prefetch_lines(const std::byte* p) {
    __builtin_prefetch(p);
    if constexpr (Bytes > 64) {
      prefetch_lines<Bytes - 64>(p + 64);
    } else {
      __builtin_prefetch(p + Bytes - 1);  // the next line when p is not at a line start
    }
  }

  // The miss paths: decode `pointer` into entry `slot`.
  const Box* fill_box(uint32_t slot, uint32_t pointer, NodeFault& fault);
  const Pair* fill_pair(uint32_t slot, uint32_t pointer, NodeFault& fault);
  const DecodedInstance* fill_instance(uint32_t pointer, NodeFault& fault);
  NodeDecodeCache& make_blas_cache(uint32_t blas);

  NodeMemory memory_;
  uint32_t wanted_boxes_, wanted_pairs_;       ///< the constructor's sizes, before capping by the memory
  uint32_t box_mask_ = 0, pair_mask_ = 0;
  uint32_t pair_multiplier_ = 1, pair_shift_ = 0;
  size_t box_capacity_ = 0, pair_capacity_ = 0;  ///< entries allocated (at least the masks + 1)
  /// Room for one entry, left uninitialised: an entry is read only after its key says a fill wrote it, and
  /// initialising megabytes of entries would cost a call that traces a few rays more than its tracing.
  template <class T>
  struct Slot {
    alignas(T) std::byte bytes[sizeof(T)];
    T* get() { return std::launder(reinterpret_cast<T*>(bytes)); }
  };
  static_assert(std::is_trivially_destructible_v<Box> && std::is_trivially_destructible_v<Pair>);

  std::vector<uint32_t> box_key_, pair_key_;  ///< the pointer each entry holds; INVALID_NODE = empty
  std::unique_ptr<Slot<Box>[]> boxes_;
  std::unique_ptr<Slot<Pair>[]> pairs_;
  std::vector<std::unique_ptr<NodeDecodeCache>> blas_caches_;  ///< per BLAS of memory_.blases, made on first use
  std::vector<std::unique_ptr<DecodedInstance>> instances_;     ///< per instance node, decoded on first use
  uint64_t first_instance_slot_ = 0;                            ///< memory_.blases->first_instance_slot
};

/// image_bvh8_intersect_ray on the cache's node memory, reading decoded nodes through the cache; the same result.
IntersectResult image_bvh8_intersect_ray(NodeDecodeCache& cache, const PointerFlags& flags, const PreparedRay& ray,
                                         uint32_t node_pointer, const IntersectOptions& options);

/// The box growth factor G = f32(1 + box_grow * 2^-24) of §5.3 step 5 (box_grow 6 -> 0x3F800003).
inline float box_grow_factor(uint32_t box_grow) {
  // g * 2^-24 is exact in f32 (g < 2^8); the sum rounds once, as the hardware constant.
  return 1.0f + static_cast<float>(box_grow) * 0x1p-24f;
}

/// One triangle slot of a primitive-node result, read the way GPURT's `Bvh8IntersectResult` does (§5.4).
struct TriangleSlot {
  float t = 0.0f;             ///< asfloat(slot.x); +inf for a miss
  float u = 0.0f;             ///< |slot.y|: barycentric weight of vertex i1
  float v = 0.0f;             ///< |slot.z|: barycentric weight of vertex i2
  bool procedural = false;    ///< slot.y sign bit
  bool non_opaque = false;    ///< slot.z sign bit
  uint32_t primitive_id = 0;  ///< slot.w >> 1
  bool back_face = false;     ///< slot.w & 1
  uint32_t geometry_id = 0;   ///< ext >> 2
  uint32_t navigation = 0;    ///< ext & 3
};

/// Reads triangle `k` (0 or 1) from a primitive-node result. (Inline: the traversal reads two per primitive step.)
inline TriangleSlot read_triangle_slot(const IntersectDwords& dw, int k) {
  constexpr uint32_t kSign = 0x80000000u;
  const uint32_t* s = dw.data() + 4 * k;
  const uint32_t ext = dw[8 + static_cast<std::size_t>(k)];
  return {bits_float(s[0]),
          bits_float(s[1] & ~kSign),
          bits_float(s[2] & ~kSign),
          (s[1] & kSign) != 0,
          (s[2] & kSign) != 0,
          s[3] >> 1,
          (s[3] & 1u) != 0,
          ext >> 2,
          ext & 3u};
}

}  // namespace hwbvh::emu
