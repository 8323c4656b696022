#pragma once
// RT IP 2.0 triangle node encoder with GPURT's pair compression (docs/rtip31-format.md §8.3).
//
//   bytes  0..47   v0, v1, v2, v3 (3 x f32 each)
//   bytes 48..51   geometry index [23:0], geometry flags [25:24] (D3D12 flags: bit 24 = OPAQUE)
//   bytes 52..55   primitive index of triangle 0        bytes 56..59   primitive index of triangle 1
//   bytes 60..63   triangle_id, byte t for triangle t: [1:0] I source, [3:2] J source, [4] double sided,
//                  [5] flip winding, [6] procedural, [7] opaque
//
// The intersector tests triangle 0 as (v0, v1, v2) and triangle 1 as (v1, v3, v2). A pair is two triangles that
// share an edge, stored as the quad v0..v3 with the shared edge on v1-v2: each triangle is rotated so that its
// shared edge lands there, and its I / J source names the slot (0..2, in the order the intersector tests the
// triangle) holding the triangle's source vertex 1 / vertex 2, so the barycentrics the hardware returns refer
// to the source vertex order. Rotations only, never reflections: both triangles keep their winding (and so
// their facing), which is why the shared edge must run in opposite directions in the two triangles, as it does
// in a consistently wound mesh and as GPURT's pairing requires. A pair node is referenced through a type-1
// pointer (the traversal tests triangle 1, then triangle 0), a lone triangle through a type-0 pointer.
#include <array>
#include <cstdint>
#include <optional>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna3/node_pointer.h"

namespace hwbvh::rdna3 {

inline constexpr uint32_t kTriangleIdDoubleSided = 1u << 4;
inline constexpr uint32_t kTriangleIdFlipWinding = 1u << 5;
inline constexpr uint32_t kTriangleIdProcedural = 1u << 6;
inline constexpr uint32_t kTriangleIdOpaque = 1u << 7;
inline constexpr uint32_t kGeometryFlagOpaque = 1;  ///< geometry flags bit 0 (node byte 48 bit 24)
inline constexpr uint32_t kMaxGeometryId = 0xFFFFFF;  ///< 24-bit geometry index

struct TriangleInput {
  std::array<Vec3, 3> v{};  ///< in source order
  uint32_t primitive_id = 0;
  uint32_t geometry_id = 0;
  bool opaque = true;
};

struct TriangleNodeInput {
  TriangleInput tri0;
  std::optional<TriangleInput> tri1;  ///< absent: a lone triangle
};

/// True if `tri1` can share a node with `tri0`: the same geometry id and opacity (one geometry-flags field per
/// node), and some edge of tri0 appears in tri1 in the opposite direction with bit-identical positions.
bool can_pair(const TriangleInput& tri0, const TriangleInput& tri1);

/// Encodes a 64-byte triangle node. A pair uses the first edge of tri0 (the one opposite v0, then v1, then v2)
/// that can_pair accepts; a lone triangle is stored unrotated with v3 and the triangle-1 fields zero. Geometry
/// flags are OPAQUE when every triangle is opaque; double-sided, flip-winding and procedural bits are 0.
/// nullopt if a geometry id exceeds 24 bits or tri1 fails can_pair.
std::optional<TriangleNodeDwords> encode_triangle_node(const TriangleNodeInput& input);

}  // namespace hwbvh::rdna3
