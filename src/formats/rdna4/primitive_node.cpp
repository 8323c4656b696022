// RT IP 3.1 compressed primitive node encoder (docs/rtip31-format.md §4.1-4.6, Appendix D item 6).
#include "hwbvh/formats/rdna4/primitive_node.h"

#include <algorithm>
#include <bit>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna4/encode.h"

namespace hwbvh::rdna4 {
namespace {

constexpr uint32_t kMaxPairs = 8;
constexpr uint32_t kMaxVertices = 16;
constexpr uint32_t kHeaderBits = 52;
constexpr uint32_t kDescriptorBits = 29;
constexpr uint32_t kBudgetBits = 1024 - kHeaderBits;  // 972
constexpr uint32_t kPrimIdLimit = 1u << 31;
constexpr uint32_t kGeoIdLimit = 1u << 30;

using VertexBits = std::array<uint32_t, 3>;

/// Everything needed to write a node, computed without allocating (the builder calls the fit test per leaf). Pairs
/// are added one at a time (add_pair), and the fields that depend on all of them are derived after each (finish),
/// so that the longest prefix of a run that fits costs one pass over the run, not one plan per prefix.
struct Layout {
  /// What the pairs so far have added up to: a small copy, so that a pair that does not fit can be taken back.
  struct Running {
    uint32_t vertex_count = 0;
    uint32_t pair_count = 0;
    // Unions: every coordinate's bits, each axis's bits differing from vertex 0's, the id bits differing from
    // the anchors.
    uint32_t all_bits = 0;
    VertexBits diff{};
    uint32_t prim_diff = 0, geo_diff = 0;
  };
  std::array<VertexBits, kMaxVertices> vertex{};  ///< the first running.vertex_count are the node's
  std::array<std::array<uint32_t, 6>, kMaxPairs> index{};  ///< per pair: tri0 i0,i1,i2 then tri1 i0,i1,i2
  Running running;
  uint32_t trailing_zeros = 0;
  std::array<uint32_t, 3> prefix{}, payload{};  ///< P and L per axis
  uint32_t prim_anchor = 0, prim_anchor_bits = 0, prim_payload_bits = 0;
  uint32_t geo_anchor = 0, geo_anchor_bits = 0, geo_payload_bits = 0;
};

constexpr uint32_t round_up_even(uint32_t x) { return (x + 1) & ~1u; }

VertexBits bits_of(Vec3 v) { return {float_bits(v.x), float_bits(v.y), float_bits(v.z)}; }

/// Index of `v` in the layout's vertex list, appending it when new (bit-pattern identity, so +0/-0 and NaN
/// payloads survive). Returns kMaxVertices when the list is full.
uint32_t find_or_add(Layout& layout, const VertexBits& v) {
  Layout::Running& running = layout.running;
  for (uint32_t i = 0; i < running.vertex_count; ++i) {
    const VertexBits& w = layout.vertex[i];
    if (w[0] == v[0] && w[1] == v[1] && w[2] == v[2]) return i;  // cheaper than std::array's memcmp
  }
  if (running.vertex_count == kMaxVertices) return kMaxVertices;
  const VertexBits& first = running.vertex_count == 0 ? v : layout.vertex[0];
  for (int a = 0; a < 3; ++a) {
    running.all_bits |= v[a];
    running.diff[a] |= v[a] ^ first[a];
  }
  layout.vertex[running.vertex_count] = v;
  return running.vertex_count++;
}

// A triangle as add_pair reads it: an encoder input, or a scene triangle read in place (the builder's fit test,
// which runs at every candidate leaf, then copies nothing).
struct SceneTriangle {
  const Scene* scene;
  uint32_t index;
};
Vec3 corner(const PrimTriangleInput& t, uint32_t c) { return t.v[c]; }
uint32_t primitive_id(const PrimTriangleInput& t) { return t.primitive_id; }
uint32_t geometry_id(const PrimTriangleInput& t) { return t.geometry_id; }
Vec3 corner(const SceneTriangle& t, uint32_t c) { return t.scene->vertex(t.index, static_cast<int>(c)); }
uint32_t primitive_id(const SceneTriangle& t) { return t.scene->triangles[t.index].primitive; }
uint32_t geometry_id(const SceneTriangle& t) { return t.scene->triangles[t.index].geometry; }

/// Appends a pair (tri1 null for a lone triangle); false if it cannot be stored at all (ids out of range, a 17th
/// vertex, a 9th pair), which leaves the layout unusable until its `running` is restored.
template <class Triangle>
bool add_pair(Layout& layout, const Triangle& tri0, const Triangle* tri1) {
  if (layout.running.pair_count == kMaxPairs) return false;
  const uint32_t p = layout.running.pair_count++;
  if (p == 0) {
    layout.prim_anchor = primitive_id(tri0);
    layout.geo_anchor = geometry_id(tri0);
  }
  for (uint32_t k = 0; k < 2; ++k) {
    const Triangle* tri = k == 0 ? &tri0 : tri1;
    if (tri == nullptr) continue;
    const uint32_t prim = primitive_id(*tri), geo = geometry_id(*tri);
    if (prim >= kPrimIdLimit || geo >= kGeoIdLimit) return false;
    layout.running.prim_diff |= prim ^ layout.prim_anchor;
    layout.running.geo_diff |= geo ^ layout.geo_anchor;
    for (uint32_t c = 0; c < 3; ++c) {
      const uint32_t i = find_or_add(layout, bits_of(corner(*tri, c)));
      if (i == kMaxVertices) return false;
      layout.index[p][3 * k + c] = i;
    }
  }
  return true;
}

bool add_pair(Layout& layout, const PrimPairInput& pair) {
  return add_pair(layout, pair.tri0, pair.tri1 ? &*pair.tri1 : nullptr);
}

/// Derives the compression fields from the pairs added so far and returns the bits they use (§4.6 budget).
uint32_t finish(Layout& layout) {
  // §4.3: drop the trailing zeros common to all coordinates and, per axis, the leading bits shared with vertex 0.
  const Layout::Running& running = layout.running;
  const uint32_t all = running.all_bits;
  layout.trailing_zeros = all == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(all));  // all +0.0: T = 0
  uint32_t prefix_total = 0, vertex_bits = 0;
  for (int a = 0; a < 3; ++a) {
    const uint32_t shared = running.diff[a] == 0 ? 31 : static_cast<uint32_t>(std::countl_zero(running.diff[a]));
    layout.prefix[a] = std::min(shared, 31 - layout.trailing_zeros);  // keeps L >= 1
    layout.payload[a] = 32 - layout.prefix[a] - layout.trailing_zeros;
    prefix_total += layout.prefix[a];
    vertex_bits += layout.payload[a];
  }

  // §4.5: IDs are stored as the anchor (triangle 0) plus per-triangle payloads of the differing low bits.
  layout.prim_anchor_bits = bit_length(layout.prim_anchor);
  layout.prim_payload_bits = bit_length(running.prim_diff);
  layout.geo_anchor_bits = round_up_even(bit_length(layout.geo_anchor));
  layout.geo_payload_bits = round_up_even(bit_length(running.geo_diff));

  const uint32_t pair_count = running.pair_count;
  return kDescriptorBits * pair_count + (2 * pair_count - 1) * (layout.prim_payload_bits + layout.geo_payload_bits) +
         running.vertex_count * vertex_bits + prefix_total + layout.prim_anchor_bits + layout.geo_anchor_bits;
}

/// Plans the node; nullopt if the pairs do not fit (§4.6).
std::optional<Layout> plan(std::span<const PrimPairInput> pairs) {
  if (pairs.empty() || pairs.size() > kMaxPairs) return std::nullopt;
  Layout layout;
  for (const PrimPairInput& pair : pairs) {
    if (!add_pair(layout, pair)) return std::nullopt;
  }
  if (finish(layout) > kBudgetBits) return std::nullopt;
  return layout;
}

/// Writes the node that `layout` plans for `pairs` (§4.2-4.5).
NodeDwords write_node(const Layout& layout, std::span<const PrimPairInput> pairs) {
  const auto pair_count = static_cast<uint32_t>(pairs.size());
  const uint32_t midpoint = 1024 - kDescriptorBits * pair_count -
                            (2 * pair_count - 1) * layout.prim_payload_bits - layout.prim_anchor_bits;

  NodeDwords node{};
  std::span<uint32_t> dw(node);
  // §4.2 header.
  dw[0] = (layout.payload[0] - 1) | (layout.payload[1] - 1) << 5 | (layout.payload[2] - 1) << 10 |
          layout.trailing_zeros << 15 | (layout.geo_anchor_bits / 2) << 20 | (layout.geo_payload_bits / 2) << 24 |
          (pair_count - 1) << 28;  // bit 31 vertex type 0 = float32
  dw[1] = layout.prim_anchor_bits | layout.prim_payload_bits << 5 | midpoint << 10;

  // §4.3 prefixes (the top P bits of vertex 0), then the vertex payloads.
  uint32_t at = kHeaderBits;
  for (int a = 0; a < 3; ++a) {
    const uint32_t p = layout.prefix[a];
    if (p > 0) set_bits(dw, at, p, layout.vertex[0][a] >> (32 - p));
    at += p;
  }
  for (uint32_t i = 0; i < layout.running.vertex_count; ++i) {
    for (int a = 0; a < 3; ++a) {
      set_bits(dw, at, layout.payload[a], layout.vertex[i][a] >> layout.trailing_zeros);
      at += layout.payload[a];
    }
  }

  // §4.5 ID sections around the midpoint, then §4.4 descriptors from the top.
  set_bits(dw, midpoint, layout.prim_anchor_bits, layout.prim_anchor);
  set_bits(dw, midpoint - layout.geo_anchor_bits, layout.geo_anchor_bits, layout.geo_anchor);
  for (uint32_t p = 0; p < pair_count; ++p) {
    const PrimPairInput& pair = pairs[p];
    uint32_t desc = layout.index[p][2] << 25 | layout.index[p][1] << 21 | layout.index[p][0] << 17 |
                    uint32_t{pair.tri0.opaque} << 16 | uint32_t{pair.range_stop};
    if (pair.tri1) {
      desc |= layout.index[p][5] << 11 | layout.index[p][4] << 7 | layout.index[p][3] << 3 |
              uint32_t{pair.tri1->opaque} << 2;
    }
    set_bits(dw, 1024 - kDescriptorBits * (p + 1), kDescriptorBits, desc);

    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t t = 2 * p + k;
      const PrimTriangleInput* tri = k == 0 ? &pair.tri0 : (pair.tri1 ? &*pair.tri1 : nullptr);
      if (t == 0 || tri == nullptr) continue;
      set_bits(dw, midpoint + layout.prim_anchor_bits + (t - 1) * layout.prim_payload_bits,
               layout.prim_payload_bits, tri->primitive_id);
      set_bits(dw, midpoint - layout.geo_anchor_bits - t * layout.geo_payload_bits, layout.geo_payload_bits,
               tri->geometry_id);
    }
  }
  return node;
}

}  // namespace

bool primitive_node_fits(std::span<const PrimPairInput> pairs) { return plan(pairs).has_value(); }

// Defined here, beside the layout it plans, rather than in encode.cpp: it reads the scene's triangles in place.
bool primitive_leaf_fits(const Scene& scene, std::span<const bvh_build::PrimPair> pairs) {
  if (pairs.empty() || pairs.size() > kMaxPairs) return false;
  Layout layout;
  for (const bvh_build::PrimPair& pair : pairs) {
    const SceneTriangle tri0{&scene, pair.tri0}, tri1{&scene, pair.tri1};
    if (!add_pair(layout, tri0, pair.has_tri1() ? &tri1 : nullptr)) return false;
  }
  return finish(layout) <= kBudgetBits;
}

std::optional<NodeDwords> encode_primitive_node(std::span<const PrimPairInput> pairs) {
  const std::optional<Layout> planned = plan(pairs);
  if (!planned) return std::nullopt;
  return write_node(*planned, pairs);
}

std::optional<PrimitiveNodePrefix> encode_primitive_node_prefix(std::span<const PrimPairInput> pairs) {
  Layout layout;
  std::size_t count = 0;
  while (count < pairs.size()) {
    const Layout::Running before = layout.running;
    if (!add_pair(layout, pairs[count]) || finish(layout) > kBudgetBits) {
      layout.running = before;  // the pair is taken back: its vertices and indices lie past the counts
      break;
    }
    ++count;
  }
  if (count == 0) return std::nullopt;
  finish(layout);  // the fields of the `count` pairs, if a failed one overwrote them
  return PrimitiveNodePrefix{count, write_node(layout, pairs.first(count))};
}

}  // namespace hwbvh::rdna4
