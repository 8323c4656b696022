#pragma once
// Whole-tree Xe3 encoder: WideBvh<6> + Scene (+ per-triangle sub-triangle states) -> the node section an Intel Xe3
// ray-tracing unit would read (layout in node_section.h and docs/xe3-format.md). The result is the Nodes section of
// a blob::Target::Xe3 blob.
//
// Leaves: every builder pair whose triangles share the geometry and the opacity, differ by 1..31 in primitive index
// and share an edge with bit-identical positions becomes one QuadLeaf; other pairs become two lone-triangle leaves.
// A leaf child is a list of such leaves; its size in blocks (blockIncr, 2 bits) must be 1..3, so a leaf holds at most
// three QuadLeafs, or one 128-byte STOC3 leaf. Build with configure_build(), which tells the SAH collapse exactly that.
//
// STOC levels (Xe3EncodeOptions::stoc_level):
//   0  no STOC: every STOC bit zero, the leaves Intel's and Mesa's builders write today;
//   1  STOC1: the QuadLeaf's level-1 masks and swstoc bits from the given states;
//   3  STOC3: leaves holding an alpha-tested triangle are 128-byte STOC3 leaves (node type 5) with level-3 masks (and
//      the level-1 fields too), plus the full-resolution states when they are finer than level 3; other leaves are
//      QuadLeafs with STOC1 fields.
// Triangles without states (no bake, or an empty span) get all-zero STOC fields: "unknown everywhere", so the
// OpaqueGeometry bit and the any-hit shader decide, as on Xe2.
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/formats/xe3/node_section.h"
#include "hwbvh/formats/xe3/stoc.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::xe3 {

struct Xe3EncodeOptions {
  int threads = 0;          ///< 0 = all; the output is byte-identical at any count
  uint32_t stoc_level = 1;  ///< 0, 1 or 3 (see above)
  SubTriangleOrder order = SubTriangleOrder::Bird;  ///< numbering of the sub-triangle bits in the leaf masks
  /// Per scene triangle (indexed like Scene::triangles): its sub-triangle states, 4^L of them in bird order at level
  /// L = 0..12, or an empty span for "no information". An empty `opacity` means no bake at all.
  std::span<const std::span<const SubTriangleState>> opacity;
  ProgressCallback progress;  ///< optional: hears "encoding", in internal nodes and then STOC3 triangles written
};

struct Xe3EncodeStats {
  uint32_t internal_nodes = 0;
  uint32_t quad_leaves = 0;       ///< 64-byte QuadLeafs
  uint32_t stoc3_leaves = 0;      ///< 128-byte STOC3 leaves
  uint32_t quads = 0;             ///< leaves (of either size) holding two triangles
  uint32_t split_pairs = 0;       ///< builder pairs stored as two lone-triangle leaves
  uint64_t triangles = 0;         ///< triangle references stored in leaves
  uint32_t swstoc_triangles = 0;  ///< triangle references with a swstoc bit set
  uint32_t max_depth = 0;         ///< internal-node levels below the root
  uint64_t node_bytes = 0;        ///< the whole section: header, nodes, STOC data
  uint64_t stoc_data_bytes = 0;   ///< full-resolution STOC data
  double seconds_encode = 0.0;
};

struct Xe3Encoded {
  std::vector<uint32_t> dwords;  ///< the node section, little-endian dwords
  uint32_t root_block = kRootBlock;
  Xe3EncodeStats stats;
};

/// Encodes `bvh` (built from `scene`). Throws hwbvh::Error: BadInput for invalid options (STOC level, an opacity
/// span whose size is not the triangle count or an entry whose size is not 4^L), more than 2^24 geometries, or
/// coordinates too large to quantize; Runtime if a leaf needs more than 3 blocks (build with configure_build) or
/// the tree is deeper than the restart trail's 29 levels.
Xe3Encoded encode(const Scene& scene, const bvh_build::WideBvh<6>& bvh, const Xe3EncodeOptions& options);

/// True if the quad `tri0`, `tri1` (scene triangles) can be one leaf: same geometry and opacity, and quad_shape
/// accepts them (primitive delta 1..31, a bit-identical shared edge).
bool forms_quad(const Scene& scene, uint32_t tri0, uint32_t tri1);

/// Leaf fit test: the leaves these pairs become need at most 3 blocks at this STOC level.
bool leaf_fits(const Scene& scene, std::span<const bvh_build::PrimPair> pairs, uint32_t stoc_level);

/// Sets what this format needs of the builder: max_leaf_pairs = 3, pair_leftovers = false (a QuadLeaf needs a shared
/// edge), pair_fits = forms_quad (so that pairing picks partners a QuadLeaf can hold) and leaf_fits for
/// `stoc_level`.
void configure_build(bvh_build::BuildOptions& options, uint32_t stoc_level);

}  // namespace hwbvh::xe3
