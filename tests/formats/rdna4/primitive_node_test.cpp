// Primitive node encoder and decoder (spec §4): the §4.9 worked example, a full 8-pair node checked field by
// field, and random pair sets whose fit tests (on encoder inputs and on a scene's triangles) are compared with an
// independent evaluation of the §4.6 budget.
#include <bit>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/formats/rdna4/primitive_node.h"

namespace hwbvh::rdna4 {
namespace {

/// 32-bit results, so raw draws convert to uint32_t without narrowing.
using Rng = std::independent_bits_engine<std::mt19937, 32, uint32_t>;

PrimTriangleInput tri(Vec3 a, Vec3 b, Vec3 c, uint32_t prim, uint32_t geo = 0, bool opaque = true) {
  return {{a, b, c}, prim, geo, opaque};
}

bool same_bits(Vec3 a, Vec3 b) {
  return float_bits(a.x) == float_bits(b.x) && float_bits(a.y) == float_bits(b.y) && float_bits(a.z) == float_bits(b.z);
}

// The §4.9 worked example node, dword by dword as the spec gives it.
NodeDwords worked_example_dwords() {
  NodeDwords node{};
  node[0] = 0x000B80C6u;
  node[1] = 0x000F7824u;
  node[2] = 0x003F8000u;
  node[3] = 0x07FFEFE0u;
  node[30] = 0x80000000u;
  node[31] = 0x21088C6Eu;
  return node;
}

TEST(PrimitiveNode, WorkedExampleEncodes) {
  const Vec3 v0{0, 0, 0}, v1{1, 0, 0}, v2{0, 1, 0}, v3{1, 1, 0};
  const PrimPairInput pair{tri(v0, v1, v2, 10), tri(v1, v3, v2, 11), true};
  const std::optional<NodeDwords> node = encode_primitive_node({&pair, 1});
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(*node, worked_example_dwords());
}

TEST(PrimitiveNode, WorkedExampleDecodesFromSpecDwords) {
  const NodeDwords node = worked_example_dwords();
  std::string error;
  const auto h = decode_primitive_header(node, &error);
  ASSERT_TRUE(h.has_value()) << error;
  EXPECT_EQ(h->payload_bits, (std::array<uint32_t, 3>{7, 7, 1}));
  EXPECT_EQ(h->prefix_bits, (std::array<uint32_t, 3>{2, 2, 8}));
  EXPECT_EQ(h->trailing_zeros, 23u);
  EXPECT_EQ(h->pair_count, 1u);
  EXPECT_EQ(h->prim_anchor_bits, 4u);
  EXPECT_EQ(h->prim_payload_bits, 1u);
  EXPECT_EQ(h->geo_anchor_bits, 0u);
  EXPECT_EQ(h->geo_payload_bits, 0u);
  EXPECT_EQ(h->midpoint, 990u);
  EXPECT_EQ(get_bits(node, 995, 29), 0x0421118Du);  // pair descriptor 0

  const auto p = decode_primitive_pair(node, 0, &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_EQ(p->tri[0].index, (std::array<uint32_t, 3>{0, 1, 2}));
  EXPECT_EQ(p->tri[1].index, (std::array<uint32_t, 3>{1, 3, 2}));
  EXPECT_TRUE(p->tri[0].valid && p->tri[1].valid);
  EXPECT_TRUE(p->tri[0].opaque && p->tri[1].opaque);
  EXPECT_FALSE(p->tri[0].procedural || p->tri[0].double_sided);
  EXPECT_EQ(p->tri[0].primitive_id, 10u);
  EXPECT_EQ(p->tri[1].primitive_id, 11u);
  EXPECT_EQ(p->tri[1].geometry_id, 0u);
  EXPECT_EQ(p->tri[1].vertex[1], Vec3(1, 1, 0));
  EXPECT_EQ(p->tri[0].vertex[2], Vec3(0, 1, 0));
  EXPECT_TRUE(p->range_stop);
  EXPECT_EQ(p->navigation, kNavEndOfRange);
  EXPECT_EQ(decode_primitive_vertex(node, *h, 3), Vec3(1, 1, 0));
}

// 8 pairs over a 3x3 grid of vertices with shared edges, lone triangles, two ranges and mixed geometry ids.
std::vector<PrimPairInput> eight_pairs() {
  std::vector<Vec3> grid;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) grid.push_back({0.25f * float(x) - 3.0f, 1.5f * float(y), -2.0f});
  }
  std::vector<PrimPairInput> pairs;
  for (uint32_t i = 0; i < 8; ++i) {
    const uint32_t x = i % 3, y = i / 3;
    const Vec3 a = grid[y * 4 + x], b = grid[y * 4 + x + 1], c = grid[(y + 1) * 4 + x], d = grid[(y + 1) * 4 + x + 1];
    PrimPairInput p;
    p.tri0 = tri(a, b, c, 1000 + 2 * i, 7 + i % 3, i % 2 == 0);
    if (i != 3 && i != 6) p.tri1 = tri(b, d, c, 1001 + 2 * i, 7 + (i + 1) % 3, i % 3 != 0);
    p.range_stop = i == 4 || i == 7;
    pairs.push_back(p);
  }
  return pairs;
}

TEST(PrimitiveNode, EightPairsFieldByField) {
  const std::vector<PrimPairInput> pairs = eight_pairs();
  ASSERT_TRUE(primitive_node_fits(pairs));
  const std::optional<NodeDwords> node = encode_primitive_node(pairs);
  ASSERT_TRUE(node.has_value());
  std::string error;
  const auto h = decode_primitive_header(*node, &error);
  ASSERT_TRUE(h.has_value()) << error;
  EXPECT_EQ(h->pair_count, 8u);
  EXPECT_EQ(h->vertex_type, 0u);
  EXPECT_EQ(h->prim_anchor_bits, 10u);  // 1000
  EXPECT_EQ(h->prim_payload_bits, 5u);  // 1000 ^ 1015 = 0b10111 -> 5 bits
  EXPECT_EQ(h->geo_anchor_bits, 4u);    // 7 -> 3 bits -> even 4
  EXPECT_EQ(h->geo_payload_bits, 4u);   // 7 ^ 9 = 0b1110
  EXPECT_EQ(h->midpoint, 1024u - 29 * 8 - 15 * 5 - 10);

  for (uint32_t i = 0; i < 8; ++i) {
    const auto p = decode_primitive_pair(*node, i, &error);
    ASSERT_TRUE(p.has_value()) << error;
    for (int k = 0; k < 2; ++k) {
      const PrimTriangleInput* in = k == 0 ? &pairs[i].tri0 : (pairs[i].tri1 ? &*pairs[i].tri1 : nullptr);
      const DecodedTriangle& out = p->tri[k];
      EXPECT_FALSE(out.procedural);
      EXPECT_FALSE(out.double_sided);
      if (in == nullptr) {
        EXPECT_FALSE(out.valid) << "pair " << i;
        EXPECT_EQ(out.index, (std::array<uint32_t, 3>{0, 0, 0}));
        EXPECT_FALSE(out.opaque);
        continue;
      }
      EXPECT_TRUE(out.valid);
      EXPECT_EQ(out.primitive_id, in->primitive_id) << "pair " << i << " tri " << k;
      EXPECT_EQ(out.geometry_id, in->geometry_id) << "pair " << i << " tri " << k;
      EXPECT_EQ(out.opaque, in->opaque);
      for (int c = 0; c < 3; ++c) EXPECT_TRUE(same_bits(out.vertex[c], in->v[c])) << "pair " << i;
    }
    EXPECT_EQ(p->range_stop, pairs[i].range_stop);
    EXPECT_EQ(p->navigation, pairs[i].range_stop ? kNavEndOfRange : i == 7 ? kNavEndOfNode : kNavEndOfPair);
  }
  // Pairs 4..7 are addressed with node types 8..11 (pointer bit 3).
  for (uint32_t i = 4; i < 8; ++i) {
    const uint32_t pointer = make_node_pointer(0x1000, pair_node_type(i));
    EXPECT_EQ(pointer & 8u, 8u);
    EXPECT_EQ(pair_index(pointer), i);
    EXPECT_EQ(node_kind(pointer), NodeKind::Primitive);
  }
  EXPECT_FALSE(decode_primitive_pair(*node, 8, &error).has_value());
  EXPECT_FALSE(error.empty());
}

TEST(PrimitiveNode, AllZeroVerticesUseNoTrailingZeros) {
  const PrimPairInput pair{tri(Vec3{0.0f}, Vec3{0.0f, 0.0f, -0.0f}, Vec3{-0.0f, 0.0f, 0.0f}, 3), std::nullopt, true};
  const auto node = encode_primitive_node({&pair, 1});
  ASSERT_TRUE(node.has_value());
  const auto p = decode_primitive_pair(*node, 0);
  ASSERT_TRUE(p.has_value());
  for (int c = 0; c < 3; ++c) EXPECT_TRUE(same_bits(p->tri[0].vertex[c], pair.tri0.v[c]));

  const PrimPairInput zeros{tri(Vec3{0.0f}, Vec3{0.0f}, Vec3{0.0f}, 3), std::nullopt, true};
  const auto zero_node = encode_primitive_node({&zeros, 1});
  ASSERT_TRUE(zero_node.has_value());
  const auto h = decode_primitive_header(*zero_node);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->trailing_zeros, 0u);
  EXPECT_EQ(decode_primitive_vertex(*zero_node, *h, 0), Vec3(0.0f));
}

TEST(PrimitiveNode, IdLimits) {
  const Vec3 a{0, 0, 0}, b{1, 0, 0}, c{0, 1, 0};
  PrimPairInput pair{tri(a, b, c, 0x7FFFFFFFu, 0x3FFFFFFFu), tri(b, a, c, 0, 0), true};
  ASSERT_TRUE(primitive_node_fits({&pair, 1}));
  const auto p = decode_primitive_pair(*encode_primitive_node({&pair, 1}), 0);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->tri[0].primitive_id, 0x7FFFFFFFu);
  EXPECT_EQ(p->tri[0].geometry_id, 0x3FFFFFFFu);
  EXPECT_EQ(p->tri[1].primitive_id, 0u);
  EXPECT_EQ(p->tri[1].geometry_id, 0u);
  pair.tri1->primitive_id = 0x80000000u;
  EXPECT_FALSE(primitive_node_fits({&pair, 1}));
  pair.tri1->primitive_id = 0;
  pair.tri1->geometry_id = 0x40000000u;
  EXPECT_FALSE(primitive_node_fits({&pair, 1}));
  EXPECT_FALSE(encode_primitive_node({&pair, 1}).has_value());
  EXPECT_FALSE(primitive_node_fits({}));
}

// --- random pair sets against an independent evaluation of the §4.6 budget ---

/// Bits the §4.6 formula charges for `pairs`, plus the unique vertex count (bit-pattern identity).
struct Budget {
  uint32_t bits = 0;
  uint32_t vertices = 0;
};

Budget budget_of(const std::vector<PrimPairInput>& pairs) {
  std::vector<std::array<uint32_t, 3>> unique;
  uint32_t pa = 0, pd = 0, ga = 0, gd = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (int k = 0; k < 2; ++k) {
      if (k == 1 && !pairs[i].tri1) continue;
      const PrimTriangleInput& t = k == 0 ? pairs[i].tri0 : *pairs[i].tri1;
      if (i == 0 && k == 0) {
        pa = t.primitive_id;
        ga = t.geometry_id;
      }
      pd |= t.primitive_id ^ pa;
      gd |= t.geometry_id ^ ga;
      for (const Vec3& v : t.v) {
        const std::array<uint32_t, 3> key{float_bits(v.x), float_bits(v.y), float_bits(v.z)};
        if (std::find(unique.begin(), unique.end(), key) == unique.end()) unique.push_back(key);
      }
    }
  }
  uint32_t all = 0;
  for (const auto& v : unique) all |= v[0] | v[1] | v[2];
  const uint32_t t = all == 0 ? 0 : std::countr_zero(all);
  uint32_t vertex_bits = 0, prefix_bits = 0;
  for (int a = 0; a < 3; ++a) {
    uint32_t diff = 0;
    for (const auto& v : unique) diff |= v[a] ^ unique[0][a];
    const uint32_t prefix = std::min<uint32_t>(diff == 0 ? 31 : std::countl_zero(diff), 31 - t);
    prefix_bits += prefix;
    vertex_bits += 32 - prefix - t;
  }
  const auto even = [](uint32_t x) { return x + (x & 1); };
  const auto n = static_cast<uint32_t>(pairs.size());
  Budget b;
  b.vertices = static_cast<uint32_t>(unique.size());
  b.bits = 29 * n + (2 * n - 1) * (bit_length(pd) + even(bit_length(gd))) +
           b.vertices * vertex_bits + prefix_bits + bit_length(pa) + even(bit_length(ga));
  return b;
}

/// The builder's fit test (primitive_leaf_fits), which reads a scene's triangles in place, on `pairs` made a scene.
bool leaf_fits_as_scene(std::span<const PrimPairInput> pairs) {
  Scene scene;
  std::vector<bvh_build::PrimPair> leaf;
  const auto add = [&scene](const PrimTriangleInput& in) {
    Triangle t;
    for (uint32_t c = 0; c < 3; ++c) {
      t.v[c] = static_cast<uint32_t>(scene.positions.size());
      scene.positions.push_back(in.v[c]);
    }
    t.primitive = in.primitive_id;
    t.geometry = in.geometry_id;
    scene.triangles.push_back(t);
    return static_cast<uint32_t>(scene.triangles.size() - 1);
  };
  for (const PrimPairInput& pair : pairs) {
    bvh_build::PrimPair& p = leaf.emplace_back();
    p.tri0 = add(pair.tri0);
    if (pair.tri1) p.tri1 = add(*pair.tri1);
  }
  return primitive_leaf_fits(scene, leaf);
}

/// Random float patterns: a shared pool per node so values repeat, with ±0, denormals and wild exponents.
float random_float(Rng& rng, const std::vector<float>& pool) {
  const int pick = std::uniform_int_distribution<int>(0, 9)(rng);
  if (pick < 5) return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
  if (pick == 5) return (rng() & 1) ? 0.0f : -0.0f;
  if (pick == 6) return bits_float(rng() & 0x807FFFFFu);               // denormal (or ±0)
  if (pick == 7) return bits_float(rng() & 0xFF7FFFFFu);               // any finite-ish pattern
  return std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
}

uint32_t random_id(Rng& rng, uint32_t anchor, uint32_t limit) {
  switch (rng() % 4) {
    case 0: return anchor;
    case 1: return (anchor ^ (rng() & 0xFFu)) & (limit - 1);
    case 2: return (anchor ^ (rng() & 0xFFFFu)) & (limit - 1);
    default: return rng() & (limit - 1);
  }
}

TEST(PrimitiveNodeProperty, FitTestMatchesBudgetAndRoundTripsBitExactly) {
  Rng rng(4242);
  int fitted = 0, rejected_budget = 0, rejected_vertices = 0, rejected_pairs = 0;
  for (int iter = 0; iter < 2500; ++iter) {
    // Even iterations: wild bit patterns and unrelated ids (the budget runs out). Odd ones: coordinates on a
    // small grid and nearby ids, so 8 pairs fit and the pair and vertex limits are reached.
    const bool compact = iter % 2 == 1;
    std::vector<float> pool;
    const int pool_size = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < pool_size; ++i) pool.push_back(std::uniform_real_distribution<float>(-100.0f, 100.0f)(rng));
    const auto coordinate = [&] {
      return compact ? static_cast<float>(rng() % 16) * 0.25f : random_float(rng, pool);
    };
    std::vector<Vec3> vertices;  // a per-node vertex pool: pairs share vertices by picking from it
    const size_t vertex_pool = 3 + rng() % 28;
    while (vertices.size() < vertex_pool) {
      const Vec3 v{coordinate(), coordinate(), coordinate()};
      if (std::none_of(vertices.begin(), vertices.end(), [&](Vec3 w) { return same_bits(v, w); })) vertices.push_back(v);
    }
    const uint32_t prim_anchor = rng() & 0x7FFFFFFFu, geo_anchor = rng() & 0x3FFFFFFFu;
    const auto id = [&](uint32_t anchor, uint32_t limit) {
      return compact ? anchor ^ (rng() & 0x7u) : random_id(rng, anchor, limit);
    };
    const auto random_tri = [&] {
      std::array<size_t, 3> idx{};
      do {
        for (auto& i : idx) i = rng() % vertices.size();
      } while (idx[0] == idx[1] || idx[1] == idx[2] || idx[0] == idx[2]);  // no degenerate index triples
      return tri(vertices[idx[0]], vertices[idx[1]], vertices[idx[2]], id(prim_anchor, 1u << 31),
                 id(geo_anchor, 1u << 30), (rng() & 1) != 0);
    };

    std::vector<PrimPairInput> pairs;
    size_t fitting = 0;  // the longest prefix of `pairs` that fits
    for (int step = 0; step < 10; ++step) {
      PrimPairInput p;
      p.tri0 = random_tri();
      if (rng() % 4 != 0) p.tri1 = random_tri();
      p.range_stop = (rng() & 1) != 0;
      pairs.push_back(p);

      const Budget b = budget_of(pairs);
      const bool expected = pairs.size() <= 8 && b.vertices <= 16 && b.bits <= 972;
      ASSERT_EQ(primitive_node_fits(pairs), expected)
          << "iter " << iter << " pairs " << pairs.size() << " vertices " << b.vertices << " bits " << b.bits;
      ASSERT_EQ(leaf_fits_as_scene(pairs), expected) << "iter " << iter;
      const std::optional<NodeDwords> node = encode_primitive_node(pairs);
      ASSERT_EQ(node.has_value(), expected);
      if (!expected) {
        rejected_pairs += pairs.size() > 8;
        rejected_vertices += pairs.size() <= 8 && b.vertices > 16;
        rejected_budget += pairs.size() <= 8 && b.vertices <= 16;
        break;
      }
      ++fitted;
      fitting = pairs.size();
      for (uint32_t i = 0; i < pairs.size(); ++i) {
        std::string error;
        const auto d = decode_primitive_pair(*node, i, &error);
        ASSERT_TRUE(d.has_value()) << error;
        ASSERT_EQ(d->range_stop, pairs[i].range_stop);
        ASSERT_EQ(d->navigation,
                  pairs[i].range_stop ? kNavEndOfRange : i + 1 == pairs.size() ? kNavEndOfNode : kNavEndOfPair);
        for (int k = 0; k < 2; ++k) {
          const PrimTriangleInput* in = k == 0 ? &pairs[i].tri0 : (pairs[i].tri1 ? &*pairs[i].tri1 : nullptr);
          ASSERT_EQ(d->tri[k].valid, in != nullptr);
          if (in == nullptr) continue;
          ASSERT_FALSE(d->tri[k].procedural);
          ASSERT_EQ(d->tri[k].primitive_id, in->primitive_id);
          ASSERT_EQ(d->tri[k].geometry_id, in->geometry_id);
          ASSERT_EQ(d->tri[k].opaque, in->opaque);
          for (int c = 0; c < 3; ++c) {
            ASSERT_TRUE(same_bits(d->tri[k].vertex[c], in->v[c])) << "iter " << iter << " pair " << i;
          }
        }
      }
    }
    // The encoder's one-pass search for the longest prefix agrees with the fit test of every prefix, and encodes
    // the node that prefix makes on its own.
    const std::optional<PrimitiveNodePrefix> prefix = encode_primitive_node_prefix(pairs);
    ASSERT_EQ(prefix ? prefix->count : 0, fitting) << "iter " << iter;
    if (prefix) {
      ASSERT_EQ(prefix->node, *encode_primitive_node(std::span(pairs).first(fitting))) << "iter " << iter;
    }
  }
  // Every way of not fitting must have been exercised.
  EXPECT_GT(fitted, 5000);
  EXPECT_GT(rejected_budget, 100);
  EXPECT_GT(rejected_vertices, 100);
  EXPECT_GT(rejected_pairs, 20);
}

}  // namespace
}  // namespace hwbvh::rdna4
