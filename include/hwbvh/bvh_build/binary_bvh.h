#pragma once
// BinaryBvh: the flat, index-based binary tree the builder collapses into WideBvh<8>. Produced by the Embree
// adapter (embree_builder.h) with one reference per leaf, so the collapse alone decides what a real leaf holds.
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
};

}  // namespace hwbvh::bvh_build
