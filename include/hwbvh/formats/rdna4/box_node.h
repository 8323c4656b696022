#pragma once
// RT IP 3.1 quantized BVH8 box node encoder (docs/rtip31-format.md §2).
//
// A box node is 128 bytes: DW0 internal base, DW1 leaf base, DW2 parent pointer, DW3..5 float origin,
// DW6 exponents / index in parent / child count, DW7 OBB index, then 8 child-info records of 96 bits
// (§2.3). Child planes are 12-bit fixed point in a per-axis power-of-two frame (§2.5) and are rounded
// conservatively so the dequantized box (§2.6) always contains the input box.
#include <array>
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::rdna4 {

/// Per-axis quantization frame of a box node (§2.5): origin and biased exponents.
struct QuantFrame {
  Vec3 origin{0.0f};
  std::array<uint32_t, 3> exponent{};
};

/// origin = node_bounds.min; exponent per §2.5 (directed-rounding extent, clamp to >= 13 unless extent == 0).
QuantFrame make_quant_frame(const Aabb& node_bounds);

/// Conservative 12-bit planes of `box` in `frame` (§2.5): {qmin.x, qmin.y, qmin.z, qmax_stored.x, .y, .z}.
/// An empty/inverted box gives the invalid pattern (4095,4095,4095, 0,0,0).
std::array<uint32_t, 6> quantize_box(const QuantFrame& frame, const Aabb& box);

inline constexpr uint32_t kBoxFlagOnlyOpaque = 1, kBoxFlagOnlyNonOpaque = 2, kBoxFlagOnlyTriangles = 4,
                          kBoxFlagOnlyProcedural = 8;

struct BoxChildInput {
  Aabb box;                     ///< child bounds in the node's frame (already rotated when the node has an OBB)
  uint32_t node_type = kTypeBox;  ///< 5 box, 6 instance, 0..3/8..11 = pair index where a leaf range starts
  uint32_t range_length = 1;    ///< 0..15
  uint32_t box_flags = 0;       ///< 4 bits
  uint32_t instance_mask = 0xFF;
};

struct BoxNodeInput {
  uint32_t internal_base = 0;            ///< pointer units (byte_offset >> 3) of the first box child
  uint32_t leaf_base = 0;                ///< pointer units of the first primitive node of the leaf ranges
  uint32_t parent_pointer = kInvalidNode;
  uint32_t index_in_parent = 0;
  uint32_t obb_index = 0x7F;
  uint32_t child_count = 0;              ///< 1..8; children [0, child_count) are used
  std::array<BoxChildInput, 8> children{};
};

/// Encodes a 128-byte box node: frame from the union of the children's boxes, conservative planes, child infos,
/// invalid pattern {0xFFFFFFFF, 0x00000FFF, 0} in unused slots, DW6/DW7 as §2.2/§3.1.
NodeDwords encode_box_node(const BoxNodeInput& input);

}  // namespace hwbvh::rdna4
