#pragma once
// SAH-optimal collapse of a binary BVH into WideBvh<Width> (Ylitie, Karras, Laine 2017, "Efficient Incoherent Ray
// Traversal on GPUs Through Compressed Wide BVHs", section 3.1). For every binary node n and i = 1..Width,
// cost(n, i) is the lowest SAH cost of turning n's subtree into at most i wide-tree subtrees; a wide node is
// charged box_step_cost (one step tests all its children) and a leaf pair_step_cost per triangle pair, both
// weighted by surface area. A top-down pass then extracts the optimal wide tree.
#include "hwbvh/bvh_build/binary_bvh.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

/// Collapses `binary` (built over `scene`) into a WideBvh<Width>: Width 8 (the default), 6 (Intel Xe QBVH6) or 4
/// (RT IP 2.0 BVH4); collapse.cpp instantiates exactly these three. A binary subtree may become a leaf only if it has
/// at most 2 * options.max_leaf_pairs references, its paired triangles (pairing.h; duplicate references of a triangle
/// merged) number at most options.max_leaf_pairs pairs and, when set, options.leaf_fits accepts them. The root
/// is always a wide node. Wide nodes are numbered breadth-first; each leaf's pairs are contiguous, in
/// breadth-first leaf order. Deterministic at any options.threads.
template <int Width = 8>
WideBvh<Width> collapse_to_wide(const Scene& scene, const BinaryBvh& binary, const BuildOptions& options);

/// The same collapse of a binary tree over boxes (embree_builder.h), whose every leaf child holds one box: pair_count
/// 1, PrimPair{tri0 = box index}. A leaf is charged pair_step_cost; pairing and leaf_fits play no part.
template <int Width = 8>
WideBvh<Width> collapse_boxes_to_wide(const BinaryBvh& binary, const BuildOptions& options);

}  // namespace hwbvh::bvh_build
