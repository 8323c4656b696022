#pragma once
// Whole-tree check of an RT IP 2.0 node section, using only the decoder (decode.h) and the section header: what a
// GPU would reach from the root. Used by the property tests and by tools that must refuse hostile blobs.
#include <cstdint>
#include <span>

#include "hwbvh/formats/tree_check.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::rdna3 {

/// The problems, triangle references and depth (TreeCheckSummary), and the nodes reached.
struct TreeCheckResult : formats::TreeCheckSummary {
  uint32_t box_nodes = 0;       ///< box nodes reached from the root
  uint32_t triangle_nodes = 0;  ///< triangle nodes reached
  uint32_t pair_nodes = 0;      ///< triangle nodes reached through a type-1 pointer
  uint32_t instance_nodes = 0;  ///< instance nodes reached (a top level's leaves)
};

/// Walks the node section from the root. Checks: the header; every child pointer inside the node slots and of
/// type 5 (box), 0/1 (triangle) or 6 (instance, 128 bytes; a top level's leaves, which the header counts); no node
/// reached twice; the parent table names each node's parent (and
/// 0xFFFFFFFF elsewhere); every node slot reached; each triangle's I/J sources form a permutation; the
/// software primitive count of each box node (triangles, or instances in a top level); box flags conservative (ONLY_OPAQUE / ONLY_NON_OPAQUE only over
/// triangles of that opacity, never ONLY_PROCEDURAL). With a scene: every triangle, put back in source order,
/// is bit-identical to the scene triangle its ids name, with the right opacity, and every child box contains
/// every triangle below it (a triangle referenced several times after spatial splits need only overlap it).
/// At most `max_problems` problems are recorded.
TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene,
                                   std::size_t max_problems = 20);

}  // namespace hwbvh::rdna3
