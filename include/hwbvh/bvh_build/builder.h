#pragma once
// Build pipeline, format-neutral: scene triangles -> binary BVH (binned SAH at medium quality, binned_builder.h;
// Embree's rtcBuildBVH at low, Morton, and high, SAH with spatial splits) -> SAH-optimal collapse to WideBvh<8>
// (Ylitie, Karras, Laine 2017, "Efficient Incoherent Ray Traversal on GPUs Through Compressed Wide BVHs") with
// leaves of triangle pairs. The same collapse also gives
// WideBvh<4> for 4-wide targets (RT IP 2.0) and WideBvh<6> for Intel Xe's 6-wide nodes.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

enum class BuildQuality { Low, Medium, High };

struct TreeTopology;  // given_tree.h

/// Format-supplied leaf test: true if these pairs can be stored as one leaf (e.g. fit one RT IP 3.1 primitive
/// node). Keeps `build` ignorant of hardware layouts while letting it size leaves to what the format can hold.
/// Called concurrently from several threads; a lone triangle is assumed to always fit and is not asked about.
using LeafFitFn = std::function<bool(const Scene&, std::span<const PrimPair>)>;

/// Format-supplied pair test: true if scene triangles tri0 < tri1 can be stored as one pair (e.g. an Xe QuadLeaf
/// needs one geometry and opacity and primitive indices at most 31 apart). Pairing then matches only such
/// triangles. Called concurrently from several threads.
using PairFitFn = std::function<bool(const Scene&, uint32_t tri0, uint32_t tri1)>;

struct BuildOptions {
  BuildQuality quality = BuildQuality::Medium;
  int threads = 0;                 ///< 0 = all hardware threads; results are identical at any count
  float box_step_cost = 1.0f;      ///< SAH cost of one traversal step on a box node (tests up to 8 children)
  float pair_step_cost = 1.0f;     ///< SAH cost of one traversal step on a triangle pair
  uint32_t max_leaf_pairs = 8;     ///< upper bound of pairs per leaf child, 1..32
  LeafFitFn leaf_fits;             ///< optional; empty = only max_leaf_pairs applies
  /// Pair leaf triangles that share no edge too (formats whose pairs are independent triangles, RT IP 3.1).
  bool pair_leftovers = false;
  PairFitFn pair_fits;             ///< optional; empty = any two triangles may pair
  /// Another builder's tree (given_tree.h) in place of ours: a binary one is collapsed as ours is, a wide one
  /// taken as given; quality then plays no part. Unset: the binary tree is built (embree_builder.h).
  std::shared_ptr<const TreeTopology> tree;
  /// Optional: hears "binary BVH" (references placed in leaves; Embree's build in per mille at low and high
  /// quality; not for a given tree) and "collapse" (binary nodes evaluated, then the chosen leaves' references
  /// placed).
  ProgressCallback progress;
};

struct BuildStats {
  uint32_t input_triangles = 0;       ///< triangles in the scene
  uint32_t degenerate_triangles = 0;  ///< zero-area triangles kept out of the BVH
  uint32_t bvh_triangles = 0;         ///< triangles given to the builder
  uint32_t references = 0;            ///< triangle references in leaves (> bvh_triangles with spatial splits)
  uint32_t binary_nodes = 0;          ///< 0 for a given wide tree
  /// Given trees: leaves of several triangles split, a binary tree's into one-triangle leaves for the collapse,
  /// a wide tree's into runs of pairs that fit the target's leaves (given_tree.h).
  uint32_t split_leaves = 0;
  uint32_t wide_nodes = 0;
  uint32_t leaves = 0;
  uint32_t pairs = 0;
  double sah_cost = 0.0;              ///< SAH cost of the wide tree with the options' step costs
  double seconds_binary = 0.0;        ///< the binary build, or reading a given tree
  double seconds_collapse = 0.0;      ///< collapse + pairing
};

template <int Width>
struct WideBuildResult {
  WideBvh<Width> bvh;
  BuildStats stats;
};
using BuildResult = WideBuildResult<8>;

/// Builds the wide BVH of all non-degenerate triangles of `scene`: Embree's binary tree, or options.tree's,
/// collapsed (a given wide tree is taken as it is). Deterministic: the same scene and options give the same tree at
/// any thread count. Throws hwbvh::Error (BadInput) if the scene has no non-degenerate triangle, max_leaf_pairs is
/// outside 1..32, or options.tree fails check_topology (naming the tree's source and node).
BuildResult build_wide_bvh(const Scene& scene, const BuildOptions& options);

/// Same, collapsed to a 4-wide tree (box_step_cost is then the cost of a step that tests up to 4 children).
WideBuildResult<4> build_wide_bvh4(const Scene& scene, const BuildOptions& options);

/// Same, collapsed to a 6-wide tree (Intel Xe QBVH6; box_step_cost is the cost of a step that tests up to 6
/// children).
WideBuildResult<6> build_wide_bvh6(const Scene& scene, const BuildOptions& options);

/// The topology of the binary tree build_wide_bvh collapses for these options (Embree's; options.tree and the
/// target's leaf options play no part), named `source`: the tree file of hwbvh's own build, which build_wide_bvh
/// with it as options.tree turns into the same wide tree. Throws hwbvh::Error (BadInput) as build_wide_bvh, and at
/// quality high (spatial splits reference a triangle more than once).
TreeTopology export_topology(const Scene& scene, const BuildOptions& options, const std::string& source);

/// A wide tree over boxes instead of triangles: a top-level structure over instances' world bounds. Every leaf
/// child holds one box: pair_count 1, and its PrimPair has tri0 = the box's index in `boxes` (tri1 = kNoIndex).
/// Uses the options' quality, threads and box_step_cost (pair_step_cost is a box leaf's cost; no spatial splits,
/// no pairing, leaf fit tests ignored). Deterministic as build_wide_bvh. The stats count boxes as references and
/// pairs (the triangle counts stay 0); sah_cost is exact. Throws hwbvh::Error (BadInput) naming `source` when
/// `boxes` is empty or holds a box that is empty or not finite.
template <int Width>
WideBuildResult<Width> build_box_tree(std::span<const Aabb> boxes, const BuildOptions& options,
                                      const std::string& source);

}  // namespace hwbvh::bvh_build
