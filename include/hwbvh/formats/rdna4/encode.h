#pragma once
// Whole-tree RT IP 3.1 encoder: WideBvh<8> + Scene -> the node section a GPU would read.
//
// Node section layout (documented in docs/blob-format.md): a 128-byte section header at byte 0 (our own
// fields; the hardware does not read it), the root box node at byte 128 (pointer 0x15), then box and
// primitive nodes, 128-byte aligned. Box children of a node are contiguous from internal_base; leaf ranges of
// a node are packed into primitive nodes contiguous from leaf_base (§2.4, §4.8).
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/build/builder.h"
#include "hwbvh/build/wide_bvh.h"
#include "hwbvh/formats/rdna4/node_pointer.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::rdna4 {

struct EncodeOptions {
  bool obb = true;                 ///< choose an OBB rotation per box node (§3.4); false: all nodes axis-aligned
  float obb_accept_ratio = 0.90f;  ///< accept an OBB only if sum of child OBB areas < ratio * sum of AABB areas
  int threads = 0;                 ///< 0 = all; output is byte-identical at any count
};

struct EncodeStats {
  uint32_t box_nodes = 0;
  uint32_t primitive_nodes = 0;
  uint32_t obb_box_nodes = 0;    ///< box nodes with an OBB index != 0x7F
  uint32_t leaf_ranges = 0;      ///< leaf children (primitive ranges)
  uint32_t pairs = 0;
  uint32_t triangles = 0;        ///< triangles stored in primitive nodes (references)
  uint64_t node_bytes = 0;       ///< size of the node section including its 128-byte header
  double seconds_obb = 0.0;
  double seconds_encode = 0.0;
};

struct EncodedBvh {
  std::vector<uint32_t> dwords;  ///< the node section, little-endian dwords; size is a multiple of 32
  uint32_t root_pointer = kRootPointer;
  EncodeStats stats;
};

/// Encodes `bvh` (built from `scene`). Throws hwbvh::Error if a leaf cannot be stored (e.g. more than 31-bit
/// primitive ids) — the builder's leaf_fits(primitive_leaf_fits) prevents the common cases.
EncodedBvh encode(const Scene& scene, const build::WideBvh8& bvh, const EncodeOptions& options);

/// Leaf fit test handed to the builder (build::BuildOptions::leaf_fits): true if these pairs fit one primitive
/// node (§4.6: <= 8 pairs, <= 16 unique vertices, <= 972 bits).
bool primitive_leaf_fits(const Scene& scene, std::span<const build::PrimPair> pairs);

/// What the RT IP 3.1 format asks of the builder: leaves that fit one primitive node (primitive_leaf_fits), and
/// pairs of any two triangles (each triangle of a pair descriptor has its own vertex indices, §4.4).
void adapt_build_options(build::BuildOptions& options);

}  // namespace hwbvh::rdna4
