#pragma once
// Intel Xe3 BVH building blocks (docs/xe3-format.md §1 and §6.1): sizes, node types and the PrimLeafDesc bits.
//
// Everything is addressed in 64-byte blocks. An InternalNode6 is one block; its children lie contiguously after it:
// child i starts at block (node + childOffset + sum of blockIncr of children 0..i-1). A leaf child is a list of
// QuadLeafs (node type 4, one block each) or of 128-byte STOC3 leaves (node type 5, two blocks each), read one after
// the other until the one whose `last` bit is set.
//
//   PrimLeafDesc (leaf bytes 0..7), Xe3 (§1.2):
//     dword 0  [23:0] shaderIndex   [31:24] geomMask
//     dword 1  [23:0] geomIndex     [27:24] subType   [28] MBZ   [29] DisableOpacityCull   [30] OpaqueGeometry
//              [31] IgnoreRayMultiplier
#include <array>
#include <cstdint>

namespace hwbvh::xe3 {

inline constexpr uint32_t kBlockBytes = 64;  ///< the allocation and addressing unit
inline constexpr uint32_t kBlockDwords = kBlockBytes / 4;
inline constexpr uint32_t kInternalNodeBytes = 64;
inline constexpr uint32_t kQuadLeafBytes = 64;
inline constexpr uint32_t kStoc3LeafBytes = 128;
inline constexpr uint32_t kStoc3LeafDwords = kStoc3LeafBytes / 4;
inline constexpr uint32_t kNodeWidth = 6;  ///< children per InternalNode6

using BlockDwords = std::array<uint32_t, kBlockDwords>;       ///< one 64-byte node (internal node or QuadLeaf)
using Stoc3Dwords = std::array<uint32_t, kStoc3LeafDwords>;  ///< one 128-byte STOC3 leaf

/// Node types (§6.1): InternalNode6::nodeType, and per child in childData[5:2] of a mixed node.
inline constexpr uint32_t kNodeTypeMixed = 0;  ///< internal node; in childData: the child is an InternalNode6
inline constexpr uint32_t kNodeTypeInstance = 1;
inline constexpr uint32_t kNodeTypeProcedural = 3;
inline constexpr uint32_t kNodeTypeQuad = 4;     ///< 64-byte QuadLeaf
inline constexpr uint32_t kNodeTypeQuad128 = 5;  ///< 128-byte quad leaf; hwbvh writes STOC3 leaves with it
inline constexpr uint32_t kNodeTypeMeshlet = 6;
inline constexpr uint32_t kNodeTypeInvalid = 7;

/// Leaf sub-types (PrimLeafDesc dword 1 [27:24]). The STOC3 value is not public (§1.2, §9); hwbvh
/// writes 0, the value of the ordinary quad (docs/xe3-format.md).
inline constexpr uint32_t kSubTypeQuad = 0;
inline constexpr uint32_t kSubTypeStoc3 = 0;
inline constexpr uint32_t kSubTypeQuadMotionBlur = 4;

inline constexpr uint32_t kMaxGeometryIndex = 0xFFFFFF;  ///< 24-bit geomIndex and shaderIndex on Xe3
inline constexpr uint32_t kMaxPrimIndexDelta = 31;       ///< 5-bit primIndex1Delta of the Xe3 QuadLeaf

/// Levels of the restart trail of the traversal state (§6.2: 3 x 29 bits, read as a 3-bit counter for each of 29
/// levels): internal nodes may lie at depths 0..kTrailLevels-1 below the root.
inline constexpr uint32_t kTrailLevels = 29;

}  // namespace hwbvh::xe3
