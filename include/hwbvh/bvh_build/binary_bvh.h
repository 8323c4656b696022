#pragma once
// BinaryBvh: the flat, index-based binary tree the builder collapses into WideBvh<8>. Produced by the binned
// builder (binned_builder.h) or the Embree adapter (embree_builder.h) with one reference per leaf, so the collapse
// alone decides what a real leaf holds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

struct BinaryBvh {
  /// A triangle reference: the whole triangle, or a clipped part of it after spatial splits (its leaf's bounds
  /// hold the part). In a tree over boxes (embree_builder.h), one box.
  struct Ref {
    uint32_t triangle = kNoIndex;  ///< index into Scene::triangles (or into the boxes)
  };

  /// An inner node n's left child is node n + 1 (depth-first preorder), so only the right one is stored.
  struct Node {
    Aabb bounds;                ///< exact union of the boxes of the references below
    uint32_t right = kNoIndex;  ///< kNoIndex for a leaf
    uint32_t first_ref = 0;     ///< the subtree's references are refs[first_ref .. first_ref + ref_count)
    uint32_t ref_count = 0;     ///< >= 1
    [[nodiscard]] bool is_leaf() const { return right == kNoIndex; }
  };
  [[nodiscard]] static uint32_t left(uint32_t n) { return n + 1; }  ///< the left child of inner node n

  std::vector<Node> nodes;  ///< depth-first preorder, nodes[0] is the root
  std::vector<Ref> refs;    ///< in leaf order, so every subtree's references are contiguous

  /// Sets every inner node's bounds and ref_count from its children's, given the leaves' and each inner node's
  /// first_ref and right: children follow their parent in preorder, so one backward pass completes them.
  void complete_inner_nodes() {
    for (std::size_t i = nodes.size(); i-- > 0;) {
      Node& node = nodes[i];
      if (node.is_leaf()) continue;
      const Node& l = nodes[left(static_cast<uint32_t>(i))];
      const Node& r = nodes[node.right];
      node.bounds = l.bounds;
      node.bounds.grow(r.bounds);
      node.ref_count = l.ref_count + r.ref_count;
    }
  }
};

}  // namespace hwbvh::bvh_build
