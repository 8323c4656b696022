#pragma once
// Xe3 leaf encoders: the 64-byte QuadLeaf with its STOC1 bits and the 128-byte STOC3 leaf
// (docs/xe3-format.md §1.1 to §1.4).
//
// QuadLeaf (64 bytes):
//   bytes  0..7   PrimLeafDesc (layout.h)          bytes  8..11  primIndex0          bytes 12..15  flags dword
//   bytes 16..63  v0, v1, v2, v3 (3 x f32 each)
//   flags dword: [4:0] primIndex1Delta  [5] tri0 swstoc  [6] tri1 swstoc  [7] MBZ  [11:8] tri0 opaque mask
//                [15:12] tri0 transparent mask  [17:16] j0  [19:18] j1  [21:20] j2  [22] last  [23] lastInMeshlet
//                [27:24] tri1 opaque mask  [31:28] tri1 transparent mask
//   Triangle 0 is (v0, v1, v2), triangle 1 is (v[j0], v[j1], v[j2]); j0 = j1 = j2 = 0 means there is no triangle 1.
//
// STOC3 leaf (128 bytes): the QuadLeaf above, then
//   bytes  64..71  tri0 opaque (u64)   72..79  tri0 transparent   80..87  tri1 opaque   88..95  tri1 transparent
//   bytes  96..103 tri0 full-STOC address (u64)   104 tri0 level (4..12)   105 bit 0: tri0 swstoc   106..111 reserved
//   bytes 112..119 tri1 full-STOC address         120 tri1 level           121 bit 0: tri1 swstoc   122..127 reserved
//
// How a triangle pair becomes a quad (as Intel's builder does it): triangle 0 is stored unchanged as v0, v1, v2;
// triangle 1 keeps its own vertex order through j0..j2, each naming the stored vertex with bit-identical
// coordinates, and its one vertex not in triangle 0 becomes v3. So both triangles decode bit-identically in source
// order and hit barycentrics refer to the source vertex order. Triangle 1's primitive index must exceed triangle
// 0's by 1..31 (the 5-bit delta; a delta of 0 would select the undocumented "quad mode"). A lone triangle has
// j = (0, 0, 0), delta 0 and v3 = v2, as in Intel's builder.
#include <array>
#include <cstdint>
#include <optional>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/xe3/layout.h"

namespace hwbvh::xe3 {

struct QuadTriangle {
  std::array<Vec3, 3> v{};  ///< in source order
  uint32_t primitive = 0;   ///< primitive index inside its geometry
};

/// A triangle's STOC1 fields: one bit per level-1 sub-triangle (stoc.h numbering).
struct Stoc1Bits {
  uint32_t opaque = 0;       ///< 4 bits
  uint32_t transparent = 0;  ///< 4 bits, disjoint from opaque
  bool swstoc = false;       ///< the any-hit shader should run the software STOC test
};

/// A triangle's STOC3 fields.
struct Stoc3Bits {
  uint64_t opaque = 0;       ///< one bit per level-3 sub-triangle
  uint64_t transparent = 0;  ///< disjoint from opaque
  uint64_t full_address = 0;  ///< where the full-resolution states are (hwbvh: byte offset in the node section)
  uint32_t full_level = 0;    ///< their level, 4..12, or 0 when there are none (then full_address is 0)
  bool swstoc = false;
};

struct QuadInput {
  QuadTriangle tri0;
  std::optional<QuadTriangle> tri1;  ///< absent: a lone triangle
  uint32_t geometry = 0;             ///< geomIndex, 24 bits
  uint32_t shader_index = 0;         ///< 24 bits
  uint32_t geometry_mask = 0xFF;
  bool opaque = true;                ///< OpaqueGeometry
  bool disable_opacity_cull = false;
  bool last = false;                 ///< the last quad of its leaf list
  std::array<Stoc1Bits, 2> stoc1{};  ///< per triangle; [1] must be zero for a lone triangle
};

/// Where triangle 1's vertices are among the quad's: j[k] for its source vertex k, and v3.
struct QuadShape {
  std::array<uint32_t, 3> j{};
  Vec3 v3{0.0f};
};

/// The quad `tri0` and `tri1` form, or nullopt: tri1's primitive index must be tri0's + 1..31 and at least two of
/// tri1's vertices must be bit-identical to vertices of tri0 (an unmatched vertex becomes v3; with all three
/// matched v3 = v2).
std::optional<QuadShape> quad_shape(const QuadTriangle& tri0, const QuadTriangle& tri1);

/// Encodes a 64-byte QuadLeaf (sub-type 0, lastInMeshlet 0). nullopt if tri1 does not form a quad with tri0.
/// Throws hwbvh::Error(Runtime: a caller bug) if the geometry or shader index exceeds 24 bits, a STOC1 mask exceeds
/// 4 bits or marks a sub-triangle both opaque and transparent, or a lone triangle has triangle-1 STOC bits.
std::optional<BlockDwords> encode_quad_leaf(const QuadInput& input);

/// Encodes a 128-byte STOC3 leaf: encode_quad_leaf(quad) followed by `stoc3` (per triangle). Same nullopt and throw
/// rules, and throws for overlapping STOC3 masks, a level other than 0 or 4..12, or an address without a level.
std::optional<Stoc3Dwords> encode_stoc3_leaf(const QuadInput& quad, const std::array<Stoc3Bits, 2>& stoc3);

}  // namespace hwbvh::xe3
