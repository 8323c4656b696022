#pragma once
// RT IP 2.0 FP32 box node encoder (docs/rtip31-format.md §8.1).
//
// 128 bytes, four children, no quantization:
//   bytes   0..15   child pointers 0..3 (full node pointers; 0xFFFFFFFF for an empty slot)
//   bytes  16..111  child k box: min xyz at 16 + 24k, max xyz at 28 + 24k (f32)
//   bytes 112..115  box flags, one byte per child (child k in bits [8k+7:8k]): bit 0 ONLY_OPAQUE, 1 ONLY_NON_OPAQUE,
//                   2 ONLY_TRIANGLES, 3 ONLY_PROCEDURAL (RT IP 2.0 early culling)
//   bytes 116..119  triangles in the subtree (GPURT's numPrimitives; software only)
//   bytes 120..127  zero
#include <array>
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna3/node_pointer.h"

namespace hwbvh::rdna3 {

inline constexpr uint32_t kBoxFlagOnlyOpaque = 1, kBoxFlagOnlyNonOpaque = 2, kBoxFlagOnlyTriangles = 4,
                          kBoxFlagOnlyProcedural = 8;
/// Flags byte of an empty child slot. GPURT writes 0xFF there (the identity of the AND that combines child
/// flags); the pointer is INVALID, so the hardware never tests the slot.
inline constexpr uint32_t kEmptySlotFlags = 0xFF;

struct BoxChildInput {
  uint32_t pointer = kInvalidNode;
  Aabb box;            ///< stored exactly as given (f32)
  uint32_t flags = 0;  ///< 8 bits, kBoxFlag*
};

struct BoxNodeInput {
  uint32_t child_count = 0;  ///< 1..4; children [0, child_count) are used, the rest are empty slots
  std::array<BoxChildInput, 4> children{};
  uint32_t primitive_count = 0;  ///< triangles below the node (bytes 116..119)
};

/// Encodes a 128-byte FP32 box node. Empty slots: pointer 0xFFFFFFFF, all-zero box, flags kEmptySlotFlags (as
/// GPURT writes them). Throws hwbvh::Error (Runtime: a caller bug) if child_count is not 1..4 or a flags value
/// does not fit 8 bits.
BoxNodeDwords encode_box_node(const BoxNodeInput& input);

}  // namespace hwbvh::rdna3
