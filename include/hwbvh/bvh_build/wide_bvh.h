#pragma once
// WideBvh<N>: the format-neutral, full-precision wide tree. It is the only contract between `build` (which
// knows nothing about hardware formats) and `formats/*` (which know nothing about how the tree was built).
//
// Leaves hold triangle pairs: every hardware target tests triangles in pairs (RT IP 3.1 pair descriptors,
// RT IP 2.0 pair-compressed triangle nodes, Xe QuadLeaf), so pairing is done once, here, by the builder.
#include <array>
#include <cstdint>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

/// One or two triangles tested together. Indices are into Scene::triangles; tri1 == kNoIndex for a lone
/// triangle. Pairing prefers triangles that share an edge (fewer unique vertices to store).
struct PrimPair {
  uint32_t tri0 = kNoIndex;
  uint32_t tri1 = kNoIndex;
  [[nodiscard]] bool has_tri1() const { return tri1 != kNoIndex; }
  friend bool operator==(const PrimPair&, const PrimPair&) = default;
};

template <int Width>
struct WideBvh {
  static constexpr int kWidth = Width;

  struct Child {
    Aabb bounds;              ///< full-precision bounds of everything below (clipped bounds with spatial splits)
    uint32_t index = 0;       ///< internal child: index into nodes; leaf child: index of its first pair in pairs
    uint32_t pair_count = 0;  ///< 0 for an internal child; the number of pairs of a leaf child (>= 1)
    [[nodiscard]] bool is_leaf() const { return pair_count > 0; }
    friend bool operator==(const Child&, const Child&) = default;
  };

  struct Node {
    std::array<Child, Width> children{};
    uint32_t child_count = 0;  ///< valid children are children[0 .. child_count-1], 1..Width
    Aabb bounds;               ///< union of the children's bounds
    friend bool operator==(const Node&, const Node&) = default;
  };

  std::vector<Node> nodes;      ///< nodes[0] is the root; the root is always an internal node
  std::vector<PrimPair> pairs;  ///< leaf ranges index into this array; each leaf's pairs are contiguous
  Aabb bounds;                  ///< scene bounds (= nodes[0].bounds)
  friend bool operator==(const WideBvh&, const WideBvh&) = default;
};

using WideBvh8 = WideBvh<8>;

}  // namespace hwbvh::bvh_build
