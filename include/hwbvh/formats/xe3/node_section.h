#pragma once
// The Xe3 node section: the bytes the ray-tracing unit reads, after a 128-byte header of ours. Intel's builder also
// puts the root InternalNode6 at byte 128 of the BVH (docs/xe3-format.md §6.1); its header is not the
// hardware's business and neither is this one, which lets tools check a section on its own.
//
//   byte 0      header, little-endian dwords:
//                 DW0 magic 'HWX3' (0x33585748)   DW1 root block (2)   DW2 node blocks N (64-byte blocks from byte 0
//                 to the end of the nodes, the header's two included)   DW3 internal nodes   DW4 QuadLeafs (64 B)
//                 DW5 STOC3 leaves (128 B)   DW6 STOC level (0, 1 or 3)   DW7 sub-triangle order of the leaf masks
//                 (0 bird, 1 row)   DW8..DW13 scene bounds min xyz, max xyz (f32)   DW14 STOC data blocks D
//                 DW15 InstanceLeafs (128 B; a top level's only leaves)   DW16..DW31 zero
//   byte 128    the root InternalNode6, then every node's children contiguously (internal nodes, QuadLeaf lists,
//               STOC3 leaf lists, InstanceLeafs), parents before children
//   byte 64 N   the full-resolution STOC data of STOC3 triangles with states finer than level 3 (D blocks): per such
//               triangle, 2 bits per level-L micro-triangle in bird order, packed from the least significant bit of
//               each byte, values 0 transparent, 1 opaque, 3 unknown (the OMM 4-state encoding); a STOC3 leaf's
//               full-STOC address is the byte offset of its triangle's block from byte 0 of the section
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/xe3/layout.h"
#include "hwbvh/formats/xe3/stoc.h"

namespace hwbvh::xe3 {

inline constexpr uint32_t kNodeSectionMagic = 0x33585748u;  // "HWX3"
inline constexpr uint32_t kHeaderBlocks = 2;                // the 128-byte header
inline constexpr uint32_t kRootBlock = 2;                   // the root node at byte 128
inline constexpr uint32_t kHeaderDwords = 32;

/// OMM 4-state values used in the full-resolution STOC data.
inline constexpr uint32_t kFullStateTransparent = 0, kFullStateOpaque = 1, kFullStateUnknown = 3;

struct NodeSectionHeader {
  uint32_t root_block = kRootBlock;
  uint32_t node_blocks = 0;  ///< N: blocks before the STOC data, header included
  uint32_t internal_nodes = 0;
  uint32_t quad_leaves = 0;
  uint32_t stoc3_leaves = 0;
  uint32_t stoc_level = 0;
  SubTriangleOrder order = SubTriangleOrder::Bird;
  Aabb bounds;
  uint32_t stoc_data_blocks = 0;  ///< D
  uint32_t instance_leaves = 0;   ///< a top level's InstanceLeafs (then it holds no triangles)
};

/// Dwords of a section with `node_blocks` node blocks and `stoc_data_blocks` STOC data blocks.
std::size_t node_section_dwords(uint32_t node_blocks, uint32_t stoc_data_blocks);

std::array<uint32_t, kHeaderDwords> write_node_section_header(const NodeSectionHeader& header);

/// Reads and checks the header against the section: magic, internal nodes + QuadLeafs + 2 x (STOC3 leaves +
/// InstanceLeafs) + 2 = N, no triangle leaves beside InstanceLeafs,
/// size = node_section_dwords(N, D), root block inside the nodes, STOC level 0/1/3, order 0/1, zero padding.
/// nullopt with `error` set otherwise.
std::optional<NodeSectionHeader> read_node_section_header(std::span<const uint32_t> dwords, std::string* error);

}  // namespace hwbvh::xe3
