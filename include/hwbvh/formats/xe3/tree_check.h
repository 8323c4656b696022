#pragma once
// Whole-tree check of an Xe3 node section, using only the decoder (decode.h), the section header and the STOC
// numbering (stoc.h): what a ray-tracing unit would reach from the root. Used by the property tests and by tools
// that must refuse hostile blobs.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/formats/tree_check.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::xe3 {

struct TreeCheckOptions {
  /// Spatial splits reference a triangle from several leaves; otherwise each must be referenced exactly once.
  bool allow_duplicate_references = false;
  std::size_t max_problems = 20;  ///< stop recording after this many
};

/// The problems, triangle references and depth (TreeCheckSummary), and the nodes reached.
struct TreeCheckResult : formats::TreeCheckSummary {
  uint32_t internal_nodes = 0;  ///< reached from the root
  uint32_t quad_leaves = 0;     ///< 64-byte QuadLeafs reached
  uint32_t stoc3_leaves = 0;    ///< 128-byte STOC3 leaves reached
  uint32_t quads = 0;           ///< leaves holding two triangles
  uint32_t instance_leaves = 0;  ///< 128-byte InstanceLeafs reached (a top level's)
  std::vector<uint32_t> instance_leaf_blocks;  ///< their blocks, ascending (the sideband's order)
};

/// Walks the section from the root. Checks: the header; InstanceLeafs (a top level's): blockIncr 2, MBZ and unused
/// bits zero, a 64-byte aligned start node of type 0, as many as the header counts; internal nodes: node type
/// 0/1/4/5, reserved bits zero, empty slots written as 0x80/0x00 with zero childData, every child of type 0
/// (internal), 1 (InstanceLeaf), 4 or 5 after its parent and
/// inside the nodes, blockIncr equal to the child's size, a fat leaf's startPrim 0, nodeMask covering every geometry
/// mask below, depth below the 29-level restart trail; leaf lists ending with a `last` leaf inside the child's
/// blocks; leaves: sub-type 0, MBZ bits zero, primIndex1Delta 1..31 with a triangle 1 and 0 without, no
/// sub-triangle both opaque and transparent, STOC fields only at the header's STOC level (and none for an absent
/// triangle 1), STOC1 masks equal to the level-1 reduction of the STOC3 masks, full-resolution STOC data inside the
/// data area, reducing to the leaf's level-3 masks, covering the area exactly; every node block reached once. With a
/// scene: every triangle bit-identical in source order to the scene triangle its geometry and primitive index name,
/// the OpaqueGeometry bit equal to "not alpha-tested", the shader index equal to the geometry index, every child box
/// containing every triangle below it (overlapping it, for a triangle referenced several times), every
/// non-degenerate triangle referenced (exactly once unless duplicates are allowed) and no degenerate one.
TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene,
                                   const TreeCheckOptions& options = {});

}  // namespace hwbvh::xe3
