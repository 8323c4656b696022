#pragma once
// hwbvh's own binary BVH builder: top-down binned SAH over box centroids, then an exact SAH sweep for small nodes,
// down to one reference per leaf; parallel over large nodes and subtrees, and byte-identical at any thread count.
// It builds the binary tree at medium quality, and over boxes at high quality (embree_builder.h keeps Embree for
// Morton at low quality and for spatial splits at high quality over triangles).
//
// Every leaf holds one reference, so a subtree of n references has exactly 2n - 1 nodes: when a node of preorder
// index i is split, its left child is i + 1 and its right child i + 2 * n_left. Nodes are written in place as they
// are split, and the reference array, partitioned in place, ends in leaf order.
#include <cstdint>
#include <vector>

#include "hwbvh/bvh_build/binary_bvh.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/core/progress.h"

namespace hwbvh::bvh_build {

/// One reference as the builder moves it: its box and its id (BinaryBvh::Ref::triangle). 32 bytes.
struct BinnedRef {
  Vec3 min;
  uint32_t id = kNoIndex;
  Vec3 max;
  uint32_t unused = 0;  ///< pads the reference to 32 bytes, two to a 64-byte cache line
};

/// Builds the tree over `refs` (at least one; finite, non-empty boxes, any magnitude up to the float limit), with
/// `threads` threads (0 = all). Splits are chosen by the SAH (half-area(left) * count(left) + half-area(right) *
/// count(right), in double so that no area overflows): binned over centroids for large nodes, an exact sweep over
/// every cut of the references sorted by centroid for small ones; ties keep the first axis and the first cut, and a
/// node whose centroids cannot be told apart is split at its middle. Reports "binary BVH" progress in references.
/// `refs` is consumed (partitioned in place, then freed).
BinaryBvh build_binned_bvh(std::vector<BinnedRef> refs, int threads, const ProgressCallback& progress);

}  // namespace hwbvh::bvh_build
