#pragma once
// Xe3 decoder: reads InternalNode6, QuadLeaf and STOC3 leaf bytes exactly as docs/xe3-format.md §1 and §6.1 lay
// them out (field tables in internal_node.h and quad_leaf.h). Written independently of the encoders (its own byte
// reading, no shared packing code), so tests, the tree checker and the emulator check the encoders against the spec
// rather than against themselves. Every function is total: any bytes decode without undefined behaviour.
#include <array>
#include <cstdint>
#include <span>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/xe3/layout.h"

namespace hwbvh::xe3 {

struct DecodedInternalNode {
  Vec3 lower{0.0f};                       ///< bytes 0..11
  int32_t child_offset = 0;               ///< bytes 12..15, in blocks from this node
  uint32_t node_type = 0;                 ///< byte 16
  uint32_t reserved = 0;                  ///< byte 17
  std::array<int32_t, 3> exponent{};      ///< bytes 18..20 (i8)
  uint32_t node_mask = 0;                 ///< byte 21
  std::array<uint32_t, kNodeWidth> child_data{};   ///< bytes 22..27, raw
  std::array<uint32_t, kNodeWidth> block_incr{};   ///< childData [1:0]
  /// childData [5:2]: the child's node type in a mixed node, startPrim in a fat leaf.
  std::array<uint32_t, kNodeWidth> type_or_start{};
  std::array<std::array<uint32_t, 6>, kNodeWidth>
      q{};                                ///< per child: lower x, upper x, lower y, upper y, lower z, upper z
  std::array<bool, kNodeWidth> valid{};   ///< lower_x top bit clear, or upper_x top bit set
  std::array<Aabb, kNodeWidth> child_box{};  ///< dequantized in f32 (lower + q * 2^(exp - 8), round to nearest even)

  /// The node type of child i: nodeType for a fat leaf, else childData [5:2].
  [[nodiscard]] uint32_t child_type(uint32_t i) const {
    return node_type != kNodeTypeMixed ? node_type : type_or_start[i];
  }
  /// Block index of child i for a node at block `node_block`: node + childOffset + blockIncr of children 0..i-1.
  [[nodiscard]] int64_t child_block(int64_t node_block, uint32_t i) const;
};

DecodedInternalNode decode_internal_node(std::span<const uint32_t, kBlockDwords> node);

struct DecodedQuadLeaf {
  uint32_t shader_index = 0;        ///< dword 0 [23:0]
  uint32_t geometry_mask = 0;       ///< dword 0 [31:24]
  uint32_t geometry_index = 0;      ///< dword 1 [23:0]
  uint32_t sub_type = 0;            ///< dword 1 [27:24]
  uint32_t desc_reserved = 0;       ///< dword 1 [28] (MBZ)
  bool disable_opacity_cull = false;  ///< dword 1 [29]
  bool opaque = false;              ///< dword 1 [30]
  bool ignore_ray_multiplier = false;  ///< dword 1 [31]
  uint32_t prim_index0 = 0;         ///< bytes 8..11
  uint32_t prim_index1_delta = 0;   ///< flags [4:0]
  std::array<bool, 2> swstoc{};     ///< flags [5], [6]
  uint32_t flags_reserved = 0;      ///< flags [7] (MBZ)
  std::array<uint32_t, 2> stoc1_opaque{};       ///< flags [11:8], [27:24]
  std::array<uint32_t, 2> stoc1_transparent{};  ///< flags [15:12], [31:28]
  std::array<uint32_t, 3> j{};      ///< flags [17:16], [19:18], [21:20]
  bool last = false;                ///< flags [22]
  bool last_in_meshlet = false;     ///< flags [23]
  std::array<Vec3, 4> v{};          ///< bytes 16..63

  /// Triangle 1 exists unless j0 = j1 = j2 = 0.
  [[nodiscard]] bool has_tri1() const { return j[0] != 0 || j[1] != 0 || j[2] != 0; }
  /// Triangle k (0 or 1) in the order the leaf defines: (v0, v1, v2) or (v[j0], v[j1], v[j2]).
  [[nodiscard]] std::array<Vec3, 3> triangle(int k) const;
  /// Primitive index of triangle k: primIndex0 + k * primIndex1Delta (wraps like the 32-bit hardware sum).
  [[nodiscard]] uint32_t primitive(int k) const { return prim_index0 + (k == 0 ? 0u : prim_index1_delta); }
};

DecodedQuadLeaf decode_quad_leaf(std::span<const uint32_t, kBlockDwords> leaf);

struct DecodedStoc3Leaf {
  DecodedQuadLeaf quad;                 ///< bytes 0..63
  std::array<uint64_t, 2> opaque{};     ///< bytes 64..71, 80..87
  std::array<uint64_t, 2> transparent{};  ///< bytes 72..79, 88..95
  std::array<uint64_t, 2> full_address{};  ///< bytes 96..103, 112..119
  std::array<uint32_t, 2> full_level{};    ///< bytes 104, 120
  std::array<bool, 2> swstoc{};            ///< bytes 105, 121 bit 0
  bool reserved_nonzero = false;           ///< any reserved bit of bytes 105..111 or 121..127 set
};

DecodedStoc3Leaf decode_stoc3_leaf(std::span<const uint32_t, kStoc3LeafDwords> leaf);

/// The 128-byte InstanceLeaf (instance_leaf.h). Matrices are row-major 3x4 like Mat3x4, put together from the
/// columns and the translation the leaf stores apart.
struct DecodedInstanceLeaf {
  uint32_t contribution = 0;    ///< DW0 [23:0]
  uint32_t mask = 0;            ///< DW0 [31:24]
  uint32_t flags = 0;           ///< DW1 [7:0]
  uint32_t comparison = 0;      ///< DW1 [15:8]: ComparisonMode and ComparisonValue
  uint32_t sub_type = 0;        ///< DW1 [26:24]
  uint32_t opacity_bits = 0;    ///< DW1 [31:29]: DisableOpacityCull, OpaqueGeometry, IgnoreRayMultiplier
  bool reserved_nonzero = false;  ///< DW1 [23:16] or [28:27], or bytes 70..71
  uint64_t start_node = 0;      ///< bytes 8..15
  uint64_t bvh = 0;             ///< bytes 64..69
  uint32_t instance_id = 0;     ///< bytes 72..75
  uint32_t instance_index = 0;  ///< bytes 76..79
  Mat3x4 world_to_object{};     ///< bytes 16..51 and 116..127
  Mat3x4 object_to_world{};     ///< bytes 80..115 and 52..63
};
DecodedInstanceLeaf decode_instance_leaf(std::span<const uint32_t, 32> leaf);

}  // namespace hwbvh::xe3
