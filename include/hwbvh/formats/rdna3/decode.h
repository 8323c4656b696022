#pragma once
// RT IP 2.0 decoder: reads FP32 box nodes and triangle nodes exactly as docs/rtip31-format.md §8.1 and §8.3
// lay them out, and instance nodes as GPURT's InstanceNode1_0.hlsli does (docs/rdna3-format.md). Written independently of the encoders (its own byte reading, no shared packing code), so tests
// and the emulator check the encoders against the spec rather than against themselves. Every function is total:
// any bytes decode without undefined behaviour.
#include <array>
#include <cstdint>
#include <optional>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna3/node_pointer.h"
#include "hwbvh/formats/rdna4/instance_node.h"

namespace hwbvh::rdna3 {

struct DecodedBoxNode {
  std::array<uint32_t, 4> child_pointer{};  ///< bytes 0..15, as stored (0xFFFFFFFF = empty)
  std::array<Aabb, 4> child_box{};          ///< bytes 16..111
  std::array<uint32_t, 4> child_flags{};    ///< bytes 112..115, one byte per child
  uint32_t primitive_count = 0;             ///< bytes 116..119 (software only)
};

DecodedBoxNode decode_box_node(const BoxNodeDwords& node);

/// One byte of triangle_id (§8.3) for one triangle type.
struct TriangleIdFields {
  uint32_t i_source = 0;  ///< [1:0] slot whose barycentric weight the intersector returns as I
  uint32_t j_source = 0;  ///< [3:2] slot whose weight it returns as J
  bool double_sided = false;
  bool flip_winding = false;
  bool procedural = false;
  bool opaque = false;
};

/// A triangle of a triangle node as the intersector sees it for pointer type 0..3.
struct DecodedTriangle {
  std::array<Vec3, 3> vertex{};  ///< in test order: type 0 (v0,v1,v2), 1 (v1,v3,v2), 2 (v2,v3,v4), 3 (v2,v4,v0)
  TriangleIdFields id;
  uint32_t geometry_id = 0;     ///< byte 48 [23:0]
  uint32_t geometry_flags = 0;  ///< byte 48 [25:24]
  /// Byte 52 for type 0, byte 56 for type 1. Types 2 and 3 have no primitive index in GPURT's layout (their
  /// v4 occupies bytes 48..59): 0xFFFFFFFF.
  uint32_t primitive_id = 0;
};

/// Decodes triangle `type & 3` of a triangle node.
DecodedTriangle decode_triangle(const TriangleNodeDwords& node, uint32_t type);

/// The triangle's vertices in source order: source vertex k is vertex[slot_k] with slot_1 = I source,
/// slot_2 = J source and slot_0 the remaining slot. nullopt unless the I and J sources are two different
/// slots 0..2 (a node written for fewer triangles has zero bytes there).
std::optional<std::array<Vec3, 3>> source_vertices(const DecodedTriangle& triangle);

/// An instance node (pointer type 6) as the traversal shader reads it.
struct DecodedInstanceNode {
  Mat3x4 world_to_object{};  ///< bytes 0..47
  uint32_t instance_id = 0;         ///< bytes 48..51 [23:0]
  uint32_t instance_mask = 0;       ///< bytes 48..51 [31:24]
  uint32_t contribution = 0;        ///< bytes 52..55 [23:0]
  uint32_t instance_flags = 0;      ///< bytes 52..55 [31:24]
  uint64_t blas_base_pointer = 0;   ///< bytes 56..63
  uint32_t instance_index = 0;      ///< bytes 64..67
  uint32_t blas_node_pointer = 0;   ///< bytes 68..71
  uint32_t blas_metadata_size = 0;  ///< bytes 72..75
  Mat3x4 object_to_world{};  ///< bytes 80..127
};

DecodedInstanceNode decode_instance_node(const BoxNodeDwords& node);

}  // namespace hwbvh::rdna3
