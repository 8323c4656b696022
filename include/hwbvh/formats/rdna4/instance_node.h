#pragma once
// RT IP 3.1 instance node (docs/rtip31-format.md §2.9): the top-level leaf, pointer type 6, 128 bytes.
//
//   bytes 0..47    world-to-object 3x4 matrix, row-major f32 (column 3 is the translation)
//   bytes 48..55   BLAS base pointer: (BLAS header address >> 3) | instance flags << 54 (§1.4)
//   bytes 56..59   parent pointer (the TLAS box node; software only: walk-back climbs out of a BLAS through it)
//   bytes 60..63   [23:0] hit-group contribution (user data), [31:24] instance mask
//   bytes 64..127  a 4-wide quantized "filter" box node in BLAS object space: origin (3 x f32), a DW6-style dword
//                  (exponents, child count - 1 in [29:28]) and four child infos (§2.3) whose node_type holds the
//                  BLAS root's node index (root pointer >> 4) and whose range_length is 0
//
// hwbvh writes the filter node in GPURT's filter mode: up to four boxes that together cover the BLAS, so a ray that
// misses them all skips the BLAS without a step in it; one box, the BLAS root's, repeated in all four children is
// GPURT's pass-through mode. The node may name a primitive node instead of the BLAS's root box (GPURT's rebraid form,
// GetInstanceChildInfo in QuantizedBVH8BoxNode.hlsli): child 0 then always misses and has range length 1, so the
// others return the node index with bit 4 set, which blas_root_from_filter_result reads as a primitive root.
#include <array>
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::rdna4 {

/// Bits of the instance flags in a base pointer's bits 54..63 (§1.4), as GPURT maps DXR's instance flags.
inline constexpr uint32_t kPointerFlagForceOpaque = 1u << 0;           ///< bit 54
inline constexpr uint32_t kPointerFlagForceNonOpaque = 1u << 1;        ///< bit 55
inline constexpr uint32_t kPointerFlagDisableTriangleCull = 1u << 2;   ///< bit 56
inline constexpr uint32_t kPointerFlagFlipFacedness = 1u << 3;         ///< bit 57
inline constexpr uint32_t kPointerFlagSkipTriangles = 1u << 8;         ///< bit 62: the BLAS holds procedurals
inline constexpr uint32_t kPointerFlagSkipProcedural = 1u << 9;        ///< bit 63: the BLAS holds triangles

/// The 64-bit base pointer of §1.4: address >> 3 in bits [53:0] (the address is a multiple of 8), flags in [63:54].
constexpr uint64_t make_base_pointer(uint64_t address, uint32_t flags) {
  return (address >> 3) | uint64_t{flags & 0x3FFu} << 54;
}
/// The byte address of a base pointer (GPURT's ExtractInstanceAddr).
constexpr uint64_t base_pointer_address(uint64_t base_pointer) { return (base_pointer & 0x003FFFFFFFFFFFFFull) << 3; }
constexpr uint32_t base_pointer_flags(uint64_t base_pointer) { return static_cast<uint32_t>(base_pointer >> 54); }
/// The flags a ray continues with inside an instance (GPURT's GetBlasBaseNodePtr): the ray's FORCE_(NON_)OPAQUE
/// override the instance's opacity flags; every other instance flag is OR-ed in.
constexpr uint32_t merge_instance_flags(uint32_t ray_flags, uint32_t instance_flags) {
  const uint32_t keep = (ray_flags & 3u) != 0 ? 0x3FCu : 0x3FFu;
  return (instance_flags & keep) | ray_flags;
}

struct InstanceNodeInput {
  Mat3x4 world_to_object{};
  uint64_t blas_base_pointer = 0;       ///< make_base_pointer(BLAS header address, instance flags)
  uint32_t parent_pointer = kInvalidNode;
  uint32_t user_data = 0;               ///< 24 bits: hit-group contribution
  uint32_t instance_mask = 0xFF;        ///< 8 bits
  /// The filter node's boxes in BLAS object space, the first filter_box_count (1..4) of them: child k holds box
  /// min(k, count - 1), so one box is pass-through mode.
  std::array<Aabb, 4> filter_boxes{};
  uint32_t filter_box_count = 1;
  /// The node the instance enters the BLAS at (instance_root_encodable): its root box node, or a lone pair's
  /// primitive node that the root box would only lead to (pass-through mode: the union of the filter boxes).
  uint32_t blas_root = kRootPointer;
};

/// Whether an instance node can name `pointer` as its BLAS root: a box node or pair 0 of a primitive node in node
/// slots 1..15 (the filter's child node type holds the slot), a primitive node not in slot 5 (node type 5 would make
/// the filter's children box children).
constexpr bool instance_root_encodable(uint32_t pointer) {
  const uint32_t slot = pointer >> 4, type = pointer & 0xFu;
  return slot >= 1 && slot <= 15 && (type == kTypeBox || (type == 0 && slot != kTypeBox));
}
/// Encodes the 128-byte node; the filter node's boxes are conservative like a box node's (§2.5).
NodeDwords encode_instance_node(const InstanceNodeInput& input);

struct DecodedInstanceNode {
  Mat3x4 world_to_object{};
  uint64_t blas_base_pointer = 0;
  uint32_t parent_pointer = 0;
  uint32_t user_data = 0;      ///< bytes 60..63 [23:0]
  uint32_t instance_mask = 0;  ///< bytes 60..63 [31:24]
  /// The filter node as the intersector reads it: a box node with internal_base = leaf_base = 0, no OBB, its
  /// child count from [29:28], and slots 4..7 unused (decode_box_children reads it like any box node).
  NodeDwords filter_box{};
};
/// Reads an instance node the way the intersector does (§5.5). Total: any 128 bytes decode.
DecodedInstanceNode decode_instance_node(const uint32_t* node);

/// The BLAS root a filter-node result names (GPURT's DecodeBlasRootFromInstanceResult, without rebraid): packed
/// child bytes 0xFFFFFFFF = miss (kInvalidNode); otherwise N = packed & 0xF, bit 4 set = primitive root N << 4,
/// else box root (N << 4) | 5.
constexpr uint32_t blas_root_from_filter_result(uint32_t packed) {
  if (packed == 0xFFFFFFFFu) return kInvalidNode;
  const uint32_t index = packed & 0xFu;
  return (packed & 0x10u) != 0 ? index << 4 : (index << 4) | kTypeBox;
}

}  // namespace hwbvh::rdna4
