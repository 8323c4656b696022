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

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/formats/rdna3/instance_node.h"
#include "hwbvh/formats/rdna3/node_pointer.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::rdna3 {

struct EncodeOptions {
  int threads = 0;  ///< 0 = all; output is byte-identical at any count
  ProgressCallback progress;  ///< optional: hears "encoding", in box nodes
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
EncodedBvh encode(const Scene& scene, const bvh_build::WideBvh<4>& bvh, const EncodeOptions& options);

/// Leaf fit test for bvh_build::BuildOptions::leaf_fits: one pair whose triangles can share a triangle node
/// (can_pair: same geometry and opacity, consistent winding across a bit-identical shared edge).
bool pair_leaf_fits(const Scene& scene, std::span<const bvh_build::PrimPair> pairs);

/// Sets what this format needs of the builder: max_leaf_pairs = 1, leaf_fits = pair_leaf_fits, and
/// pair_leftovers = false (only edge-sharing triangles can form a pair node).
void configure_build(bvh_build::BuildOptions& options);

/// A top-level structure: the section header (instance_nodes set), box nodes laid out as encode() lays them out,
/// then one 128-byte instance node per leaf child in breadth-first leaf order, then the parent table (each
/// instance node's parent is its box node). Box children of instances carry no box flags (they promise nothing
/// about the BLAS below); a box node's primitive count (bytes 116..119) counts the instances below it.
struct EncodedTlas {
  std::vector<uint32_t> dwords;
  std::vector<uint32_t> instance_order;  ///< index into the input instances of each instance node, in node order
  uint32_t box_nodes = 0;
};
/// Encodes a top-level structure over `instances` from `tree` (bvh_build::build_box_tree<4> over their world bounds:
/// leaf pairs' tri0 index `instances`). Throws hwbvh::Error (Runtime) if a leaf child is not one pair whose tri0 is
/// < instances.size().
EncodedTlas encode_tlas(const bvh_build::WideBvh<4>& tree, std::span<const InstanceNodeInput> instances);
/// Bytes of the section encode_tlas writes for `tree` (header, box and instance nodes, parent table), so that BLAS
/// addresses can be chosen before the instance nodes are written.
uint64_t tlas_bytes(const bvh_build::WideBvh<4>& tree);

}  // namespace hwbvh::rdna3
