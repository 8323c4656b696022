#pragma once
// Whole-tree check of an RT IP 3.1 node section, using only the decoder (decode.h): what a GPU would reach
// from the root. Used by the property tests, by `hwbvh info --check`, and to refuse hostile blobs.
#include <cstdint>
#include <span>

#include "hwbvh/formats/tree_check.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::rdna4 {

/// The problems, triangle references and depth (TreeCheckSummary), and the nodes reached.
struct TreeCheckResult : formats::TreeCheckSummary {
  uint32_t box_nodes = 0;        ///< box nodes reached from the root
  uint32_t primitive_nodes = 0;  ///< primitive nodes reached
  uint32_t instance_nodes = 0;   ///< instance nodes reached (a top-level structure)
  uint32_t obb_box_nodes = 0;    ///< box nodes with an OBB rotation
};

/// Walks the node section from the root. Checks: the section header; every pointer in range, aligned and of a
/// known type; no box node reached twice (no cycles, no sharing); parent pointers and index_in_parent agree
/// with the tree; primitive ranges end with a stop bit; instance nodes (§2.9) lie in the instance region the header
/// names (after the box nodes), each reached once, with the parent pointer of the box node that points to it and a
/// filter node whose children decode to valid boxes; every slot of the section is reached. With a scene:
/// every decoded triangle is bit-identical to the scene triangle its ids name, and every decoded child box (in
/// its node's OBB frame, with the intersector's float rotation) contains every triangle below it.
/// At most `max_problems` problems are recorded.
TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene,
                                   std::size_t max_problems = 20);

}  // namespace hwbvh::rdna4
