#pragma once
// RT IP 3.1 compressed primitive node encoder (docs/rtip31-format.md §4).
//
// A primitive node is 128 bytes holding up to 8 triangle pairs: a 52-bit header, a vertex section of unique
// float32 vertices with a shared per-axis prefix and trailing-zero count removed, geometry- and primitive-ID
// sections (anchor + per-pair payloads) growing up from the vertex section, and 29-bit pair descriptors
// growing down from the top of the node.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::rdna4 {

struct PrimTriangleInput {
  std::array<Vec3, 3> v{};
  uint32_t primitive_id = 0;
  uint32_t geometry_id = 0;
  bool opaque = true;
};

struct PrimPairInput {
  PrimTriangleInput tri0;
  std::optional<PrimTriangleInput> tri1;
  bool range_stop = false;
};

/// §4.6 fit test (<= 8 pairs, <= 16 unique vertices, <= 972 bits incl. id sections). Fast and allocation-free:
/// the builder calls it at every candidate leaf.
bool primitive_node_fits(std::span<const PrimPairInput> pairs);


/// Encodes pairs into one 128-byte node per §4 (unique vertices in first-appearance order, de-duplicated by BIT
/// PATTERN so decoding is bit-identical; T/prefix/payload compression; ID anchors+payloads; midpoint =
/// 1024 - 29P - (2P-1)PP - PA; descriptors from the top; invalid tri1 = indices 0,0,0 opaque 0). nullopt if it
/// does not fit. Every-coordinate-zero edge case: T = 0.
std::optional<NodeDwords> encode_primitive_node(std::span<const PrimPairInput> pairs);

struct PrimitiveNodePrefix {
  std::size_t count = 0;  ///< pairs in the node, 1..8
  NodeDwords node{};      ///< = encode_primitive_node(the first `count` pairs)
};

/// The longest prefix of `pairs` that fits one node, encoded: `count` is the n for which primitive_node_fits holds on
/// the first 1..n pairs and not on the first n + 1 (§4.8 "longest prefix that fits"). One pass over the pairs, not
/// one plan per prefix. nullopt if not even the first pair fits.
std::optional<PrimitiveNodePrefix> encode_primitive_node_prefix(std::span<const PrimPairInput> pairs);

}  // namespace hwbvh::rdna4
