#pragma once
// Intel QBVH6 InternalNode6 encoder (docs/xe3-format.md §6.1). 64 bytes, six children:
//
//   bytes  0..11  lower (3 x f32): origin of the quantization grid       bytes 12..15  childOffset (i32, blocks)
//   byte   16     nodeType: 0 mixed (child types in childData), else a "fat leaf" whose children are all this type
//   byte   17     reserved (0)        bytes 18..20  exp_x, exp_y, exp_z (i8)        byte 21  nodeMask
//   bytes 22..27  childData[i]: [1:0] blockIncr (child size in blocks), [5:2] child node type (mixed node) or
//                 startPrim (fat leaf; 0 for quads), [7:6] reserved (0)
//   bytes 28..63  lower_x[6], upper_x[6], lower_y[6], upper_y[6], lower_z[6], upper_z[6] (u8)
//
// Dequantization: bound = lower + q * 2^(exp - 8) per axis, in f32. An empty slot has lower_* = 0x80 and
// upper_* = 0x00 (invalid because lower_x has its top bit set and upper_x does not).
//
// Quantization (ours, conservative by construction): each child box is first grown by one ulp of its largest
// coordinate magnitude, as Intel's builder does; lower is the minimum of the grown boxes; exp is the smallest
// exponent from the frexp rule of §6.1 for which lower + 255 * 2^(exp - 8) reaches the grown maximum in f32; then
// q_lower is the largest and q_upper the smallest 8-bit value whose dequantized f32 bound (round to nearest even)
// still encloses the grown box. So every dequantized child box contains its input box with about one ulp to spare.
#include <array>
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/xe3/layout.h"

namespace hwbvh::xe3 {

struct InternalChildInput {
  Aabb box;                            ///< non-empty, finite
  uint32_t node_type = kNodeTypeMixed;  ///< kNodeTypeMixed (an InternalNode6), kNodeTypeInstance, kNodeTypeQuad or
                                       ///< kNodeTypeQuad128
  uint32_t blocks = 1;                 ///< the child's size in 64-byte blocks, 1..3 (blockIncr)
};

struct InternalNodeInput {
  int32_t child_offset = 1;   ///< blocks from this node to its first child
  uint32_t node_mask = 0xFF;  ///< OR of the geometry masks below
  uint32_t child_count = 0;   ///< 1..6; children [0, child_count) are used, the rest are empty slots
  std::array<InternalChildInput, kNodeWidth> children{};
};

/// Per-axis quantization grid of a node: bound = lower + q * 2^(exponent - 8).
struct QuantGrid {
  Vec3 lower{0.0f};
  std::array<int32_t, 3> exponent{};
};

/// The grid for `grown_union`, the union of the grown child boxes, per the rule above. Throws hwbvh::Error(BadInput) if
/// an extent needs an exponent above 127 (coordinates near the f32 limit).
QuantGrid make_quant_grid(const Aabb& grown_union);

/// One ulp of the box's largest coordinate magnitude, subtracted from min and added to max (§6.1).
Aabb grow_by_ulp(const Aabb& box);

/// Encodes an InternalNode6. nodeType is the children's common leaf type when every child is a leaf of the same
/// type (a fat leaf, startPrim 0), else 0 (mixed) with each child's type in childData. Throws hwbvh::Error
/// (Runtime: a caller bug) for a child count outside 1..6, a block count outside 1..3, an unknown child type or an
/// empty box; (BadInput) from make_quant_grid.
BlockDwords encode_internal_node(const InternalNodeInput& input);

}  // namespace hwbvh::xe3
