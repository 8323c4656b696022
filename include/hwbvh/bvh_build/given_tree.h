#pragma once
// A tree from another builder (docs/tree-format.md): its topology only, as arrays. Bounds are refitted from the
// scene's triangles. A binary tree (rows of 2) takes the place of Embree's binary BVH and goes through the same
// collapse (collapse.h); a wide tree (rows of 3..8) is taken as given, node for node. Either way the result is a
// WideBvh the formats encode as any other.
#include <cstdint>
#include <string>
#include <vector>

#include "hwbvh/bvh_build/binary_bvh.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

struct TreeTopology {
  static constexpr uint32_t kMaxWidth = 8;
  std::string source = "tree";        ///< names the tree in messages (its file)
  uint32_t width = 2;                 ///< entries per row of `children`: 2 = binary, 3..8 = wide
  std::vector<int64_t> children;      ///< node_count() rows of `width`: child node indices, -1 = none
  std::vector<int64_t> prim_begin;    ///< per node: a leaf's first entry in `primitives` (ignored for inner nodes)
  std::vector<int64_t> prim_count;    ///< per node: 0 for an inner node, >= 1 for a leaf
  std::vector<int64_t> primitives;    ///< scene triangle indices; leaf n holds primitives[prim_begin[n] ..][.. prim_count[n]]
  [[nodiscard]] std::size_t node_count() const { return prim_count.size(); }
  [[nodiscard]] bool binary() const { return width == 2; }
};

/// The given tree as a BinaryBvh (depth-first preorder, left first), after the checks of check_topology. A leaf of k > 1
/// triangles becomes a balanced binary subtree of k one-triangle leaves in the given order, so that the collapse
/// sizes every leaf to the target as it does Embree's; `split_leaves` counts such leaves. Throws as check_topology.
BinaryBvh binary_from_topology(const Scene& scene, const TreeTopology& tree, uint32_t& split_leaves);

/// The given wide tree as a WideBvh<Width> (wide nodes breadth-first, each leaf's pairs contiguous in breadth-first
/// leaf order, as the collapse numbers them), after the checks of check_topology. A leaf's triangles are paired as
/// the collapse pairs them (options.pair_leftovers, pair_fits); a leaf whose pairs do not fit one of the target's
/// leaves (options.max_leaf_pairs, leaf_fits) is split into consecutive runs of pairs that do, each a child of its
/// parent (`split_leaves` counts them); a root that is a leaf becomes the one child of a root box node. Throws
/// hwbvh::Error(BadInput) naming the node with more than Width children, counting split leaves' parts.
template <int Width>
WideBvh<Width> wide_from_topology(const Scene& scene, const TreeTopology& tree, const BuildOptions& options,
                                  uint32_t& split_leaves);

/// Throws hwbvh::Error(BadInput) naming tree.source and the first offending node (in node order, then from the root
/// down) unless: the arrays' sizes agree; width is 2..8; every child index is -1 or a node; an inner node has no
/// primitives and, in a binary tree, exactly two children; a leaf has at least one primitive, all inside
/// `primitives`; no node is its own ancestor (a cycle) or has two parents; every node is reached from node 0, the
/// root; every primitive is a scene triangle that is not degenerate; and every non-degenerate triangle is in exactly
/// one leaf, once. Wide trees: no node has more than `max_children` children.
void check_topology(const Scene& scene, const TreeTopology& tree, uint32_t max_children);

/// The topology of `binary`, named `source` (a build without spatial splits: one reference per triangle).
TreeTopology topology_of(const BinaryBvh& binary, const std::string& source);

}  // namespace hwbvh::bvh_build
