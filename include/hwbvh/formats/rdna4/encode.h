#pragma once
// Whole-tree RT IP 3.1 encoder: WideBvh<8> + Scene -> the node section a GPU would read (a BLAS), and WideBvh<8> +
// instances -> a top-level structure.
//
// Node section layout (documented in docs/blob-format.md): a 128-byte section header at byte 0 (our own
// fields; the hardware does not read it), the root box node at byte 128 (pointer 0x15), then box and
// primitive nodes, 128-byte aligned. Box children of a node are contiguous from internal_base; leaf ranges of
// a node are packed into primitive nodes contiguous from leaf_base (§2.4, §4.8). A top-level structure has
// instance nodes instead, after all box nodes (§1.5, §2.9).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/rdna4/node_pointer.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::rdna4 {

struct EncodeOptions {
  bool obb = true;                 ///< choose an OBB rotation per box node (§3.4); false: all nodes axis-aligned
  float obb_accept_ratio = 0.90f;  ///< accept an OBB only if sum of child OBB areas < ratio * sum of AABB areas
  int threads = 0;                 ///< 0 = all; output is byte-identical at any count
  ProgressCallback progress;       ///< optional: hears "OBB choice" and "encoding", in nodes
};

struct EncodeStats {
  uint32_t box_nodes = 0;
  uint32_t primitive_nodes = 0;
  uint32_t instance_nodes = 0;   ///< top-level structures only
  uint32_t obb_box_nodes = 0;    ///< box nodes with an OBB index != 0x7F
  uint32_t leaf_ranges = 0;      ///< leaf children (primitive ranges, or instances)
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
EncodedBvh encode(const Scene& scene, const bvh_build::WideBvh8& bvh, const EncodeOptions& options);

/// Leaf fit test handed to the builder (bvh_build::BuildOptions::leaf_fits): true if these pairs fit one primitive
/// node (§4.6: <= 8 pairs, <= 16 unique vertices, <= 972 bits).
bool primitive_leaf_fits(const Scene& scene, std::span<const bvh_build::PrimPair> pairs);

/// What the RT IP 3.1 format asks of the builder: leaves that fit one primitive node (primitive_leaf_fits), and
/// pairs of any two triangles (each triangle of a pair descriptor has its own vertex indices, §4.4).
void adapt_build_options(bvh_build::BuildOptions& options);

/// One instance of a top-level structure: its instance node and what its leaf slot in the parent box node holds.
struct TlasInstanceInput {
  /// The BLAS root box's eight corners in world space: in an OBB frame they bound the instance, with the projection
  /// of its leaf box (the tree's, bvh_build::transformed_bounds), as a leaf's triangle vertices do in a BLAS. Corner i is
  /// the object-space corner with max x if i & 1, max y if i & 2, max z if i & 4 (else min), transformed: corners
  /// 0, 1, 2 give the instance's candidate OBB rotation (§3.4, as a triangle's would).
  std::array<Vec3, 8> world_corners{};
  uint32_t box_flags = 0;         ///< the leaf slot's box flags (§2.3), e.g. ONLY_TRIANGLES | ONLY_OPAQUE
  InstanceNodeInput node;         ///< parent_pointer is filled in by encode_tlas; instance_mask is also the slot's
};
struct EncodedTlas {
  /// Layout: the 128-byte section header (instance_nodes set), box nodes as encode() lays them out, then one
  /// 128-byte instance node per leaf child, in the order box nodes list their leaf children (breadth-first, slot
  /// order), so that each box node's instances are contiguous from its leaf_base.
  EncodedBvh bvh;
  std::vector<uint32_t> instance_order;  ///< index into the input instances of each instance node, in node order
  uint32_t first_instance_slot = 0;      ///< 128-byte slot of the first instance node (= 1 + box nodes)
};
/// Encodes a top-level structure over `instances` from `tree` (bvh_build::build_box_tree over their world bounds: leaf
/// pairs' tri0 index `instances`). Box children carry the AND of their subtree's box flags and the OR of its
/// instance masks (§2.7); OBB choice as encode(). Byte-identical at any thread count. The header counts instance
/// nodes (no primitive nodes); stats.pairs and stats.triangles stay 0. Throws hwbvh::Error (Runtime) if a leaf
/// child is not one pair whose tri0 is < instances.size().
EncodedTlas encode_tlas(const bvh_build::WideBvh8& tree, std::span<const TlasInstanceInput> instances,
                        const EncodeOptions& options);
/// 128-byte slots encode_tlas will use for `tree` (header + box nodes + instance nodes), so that BLAS addresses
/// can be chosen before the instance nodes are written.
uint32_t tlas_slots(const bvh_build::WideBvh8& tree);

}  // namespace hwbvh::rdna4
