#pragma once
// The Xe3 top level: a QBVH6 over instance world bounds whose leaves are InstanceLeafs (docs/xe3-format.md, "Top
// level"). It is a node section like a BLAS's (node_section.h): the same header, with the InstanceLeaf count in DW15
// and no triangle leaves; the root at block 2, then every node's children contiguously, breadth-first (internal
// nodes one block, InstanceLeafs two).
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/formats/xe3/instance_leaf.h"

namespace hwbvh::xe3 {

struct TlasInstance {
  Aabb world_box;          ///< the instance's leaf box: its BLAS's bounds in world space
  InstanceLeafInput leaf;  ///< the leaf's bytes; its mask is also OR-ed into the nodeMask of every node above it
};

struct Xe3EncodedTlas {
  std::vector<uint32_t> dwords;           ///< the top level's node section
  std::vector<uint32_t> instance_order;   ///< index into the input instances of each InstanceLeaf, in block order
  uint32_t internal_nodes = 0;
};

/// The node section inside a level padded to whole 128-byte units (blob::padded_level_bytes): the size its header
/// declares when that fits and only zeros follow; the whole span otherwise (so that the header check reports the
/// problem).
std::span<const uint32_t> unpadded_level(std::span<const uint32_t> level);

/// Bytes encode_tlas will write for `tree`, so that BLAS addresses can be chosen before the leaves are written.
uint64_t tlas_bytes(const bvh_build::WideBvh<6>& tree);

/// Encodes the top level from `tree` (bvh_build::build_box_tree<6> over the instances' world boxes: each leaf child one
/// pair whose tri0 indexes `instances`). Throws hwbvh::Error (Runtime) if a leaf child is not one such pair or the
/// tree is deeper than the restart trail's 29 levels; (BadInput) from the quantization.
Xe3EncodedTlas encode_tlas(const bvh_build::WideBvh<6>& tree, std::span<const TlasInstance> instances);

}  // namespace hwbvh::xe3
