#include "hwbvh/bvh_build/builder.h"

#include <chrono>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/bvh_build/collapse.h"
#include "hwbvh/bvh_build/embree_builder.h"
#include "hwbvh/bvh_build/given_tree.h"
#include "hwbvh/bvh_build/pairing.h"
#include "hwbvh/bvh_build/sah.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What the wide tree alone tells: node, leaf, pair and reference counts and its SAH cost.
template <int Width>
void add_tree_stats(WideBuildResult<Width>& result, const BuildOptions& options) {
  const WideBvh<Width>& bvh = result.bvh;
  BuildStats& stats = result.stats;
  stats.wide_nodes = static_cast<uint32_t>(bvh.nodes.size());
  stats.pairs = static_cast<uint32_t>(bvh.pairs.size());
  for (const auto& node : bvh.nodes) {
    for (uint32_t i = 0; i < node.child_count; ++i) stats.leaves += node.children[i].is_leaf() ? 1 : 0;
  }
  for (const PrimPair& pair : bvh.pairs) stats.references += pair.has_tri1() ? 2 : 1;
  stats.sah_cost = sah_cost(bvh, options.box_step_cost, options.pair_step_cost);
}

// The scene's non-degenerate triangles, which every BVH holds, counted into `stats`.
std::vector<uint32_t> bvh_triangles(const Scene& scene, const BuildOptions& options, BuildStats& stats) {
  if (options.max_leaf_pairs < 1 || 2 * options.max_leaf_pairs > TrianglePairing::kMaxTriangles) {
    throw_bad_input(scene.source, "max_leaf_pairs must be 1.." + std::to_string(TrianglePairing::kMaxTriangles / 2) +
                                      ", got " + std::to_string(options.max_leaf_pairs));
  }
  stats.input_triangles = static_cast<uint32_t>(scene.triangles.size());
  std::vector<uint32_t> triangles;
  triangles.reserve(scene.triangles.size());
  for (uint32_t t = 0; t < stats.input_triangles; ++t) {
    if (scene.is_degenerate(t)) {
      ++stats.degenerate_triangles;
    } else {
      triangles.push_back(t);
    }
  }
  if (triangles.empty()) throw_bad_input(scene.source, "no non-degenerate triangles");
  stats.bvh_triangles = static_cast<uint32_t>(triangles.size());
  return triangles;
}

// One path for the built tree and a given one: a binary tree (either) is collapsed; a given wide tree is taken as it is.
template <int Width>
WideBuildResult<Width> build(const Scene& scene, const BuildOptions& options) {
  WideBuildResult<Width> result;
  BuildStats& stats = result.stats;
  const std::vector<uint32_t> triangles = bvh_triangles(scene, options, stats);

  auto start = std::chrono::steady_clock::now();
  if (options.tree && !options.tree->binary()) {
    result.bvh = wide_from_topology<Width>(scene, *options.tree, options, stats.split_leaves);
    stats.seconds_binary = seconds_since(start);
  } else {
    const BinaryBvh binary = options.tree ? binary_from_topology(scene, *options.tree, stats.split_leaves)
                                          : build_binary_bvh(scene, triangles, options);
    stats.seconds_binary = seconds_since(start);
    stats.binary_nodes = static_cast<uint32_t>(binary.nodes.size());

    start = std::chrono::steady_clock::now();
    result.bvh = collapse_to_wide<Width>(scene, binary, options);
    stats.seconds_collapse = seconds_since(start);
  }
  add_tree_stats(result, options);
  return result;
}

void check_box(const Aabb& box, size_t index, const std::string& source) {
  bool finite = true;
  for (int a = 0; a < 3; ++a) finite = finite && std::isfinite(box.min[a]) && std::isfinite(box.max[a]);
  if (!finite || box.empty()) {
    throw_bad_input(source, "box " + std::to_string(index) + " is " + (finite ? "empty" : "not finite") +
                                "; a top-level tree needs finite, non-empty instance bounds");
  }
}

}  // namespace

BuildResult build_wide_bvh(const Scene& scene, const BuildOptions& options) { return build<8>(scene, options); }

WideBuildResult<4> build_wide_bvh4(const Scene& scene, const BuildOptions& options) {
  return build<4>(scene, options);
}

WideBuildResult<6> build_wide_bvh6(const Scene& scene, const BuildOptions& options) {
  return build<6>(scene, options);
}

TreeTopology export_topology(const Scene& scene, const BuildOptions& options, const std::string& source) {
  if (options.quality == BuildQuality::High)
    throw_bad_input(source, "quality high cannot be exported: its spatial splits put a triangle in several leaves "
                            "with clipped boxes, which a tree file cannot hold; export at low or medium");
  BuildStats stats;
  const std::vector<uint32_t> triangles = bvh_triangles(scene, options, stats);
  return topology_of(build_binary_bvh(scene, triangles, options), source);
}

template <int Width>
WideBuildResult<Width> build_box_tree(std::span<const Aabb> boxes, const BuildOptions& options,
                                      const std::string& source) {
  if (boxes.empty()) throw_bad_input(source, "no boxes to build a top-level tree over");
  if (options.tree) throw_bad_input(source, "a given tree holds triangles; a top-level tree over boxes is built here");
  for (size_t i = 0; i < boxes.size(); ++i) check_box(boxes[i], i, source);
  WideBuildResult<Width> result;
  auto start = std::chrono::steady_clock::now();
  const BinaryBvh binary = build_binary_bvh(boxes, options, source);
  result.stats.seconds_binary = seconds_since(start);
  result.stats.binary_nodes = static_cast<uint32_t>(binary.nodes.size());

  start = std::chrono::steady_clock::now();
  result.bvh = collapse_boxes_to_wide<Width>(binary, options);
  result.stats.seconds_collapse = seconds_since(start);
  add_tree_stats(result, options);
  return result;
}

template WideBuildResult<4> build_box_tree<4>(std::span<const Aabb>, const BuildOptions&, const std::string&);
template WideBuildResult<6> build_box_tree<6>(std::span<const Aabb>, const BuildOptions&, const std::string&);
template WideBuildResult<8> build_box_tree<8>(std::span<const Aabb>, const BuildOptions&, const std::string&);

}  // namespace hwbvh::bvh_build
