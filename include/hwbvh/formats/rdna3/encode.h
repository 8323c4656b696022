#pragma once
// Whole-tree RT IP 2.0 encoder: WideBvh<4> + Scene -> the node section an RDNA 2/3 GPU would read
// (layout in node_section.h and docs/rdna3-format.md).
//
// One triangle node per leaf: an RT IP 2.0 box child points at exactly one node and there are no primitive
// ranges, so a leaf can hold one triangle or one pair. Build the tree with configure_build() (max_leaf_pairs = 1
// and pair_leaf_fits), which lets the SAH collapse choose between a pair node and two lone-triangle children.
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/build/builder.h"
#include "hwbvh/build/wide_bvh.h"
#include "hwbvh/formats/rdna3/node_pointer.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::rdna3 {

struct EncodeOptions {
  int threads = 0;  ///< 0 = all; output is byte-identical at any count
};

struct EncodeStats {
  uint32_t box_nodes = 0;
  uint32_t triangle_nodes = 0;
  uint32_t pair_nodes = 0;       ///< triangle nodes holding two triangles
  uint32_t triangles = 0;        ///< triangle references stored in triangle nodes
  uint64_t node_bytes = 0;       ///< the whole section: header, nodes and parent table
  uint64_t parent_table_bytes = 0;
  double seconds_encode = 0.0;
};

struct EncodedBvh {
  std::vector<uint32_t> dwords;  ///< the node section, little-endian dwords
  uint32_t root_pointer = kRootPointer;
  EncodeStats stats;
};

/// Encodes `bvh` (built from `scene`). Box nodes are laid out breadth-first from byte 128 (the root first), then
/// the triangle nodes in breadth-first leaf order, then the parent table. Throws hwbvh::Error (Runtime) if a
/// leaf holds more than one pair or a pair that encode_triangle_node rejects: build with configure_build().
EncodedBvh encode(const Scene& scene, const build::WideBvh<4>& bvh, const EncodeOptions& options);

/// Leaf fit test for build::BuildOptions::leaf_fits: one pair whose triangles can share a triangle node
/// (can_pair: same geometry and opacity, consistent winding across a bit-identical shared edge).
bool pair_leaf_fits(const Scene& scene, std::span<const build::PrimPair> pairs);

/// Sets what this format needs of the builder: max_leaf_pairs = 1, leaf_fits = pair_leaf_fits, and
/// pair_leftovers = false (only edge-sharing triangles can form a pair node).
void configure_build(build::BuildOptions& options);

}  // namespace hwbvh::rdna3
