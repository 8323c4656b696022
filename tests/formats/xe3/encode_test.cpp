// Whole-tree properties of the Xe3 encoder, checked through the independent decoder (check_encoded_tree):
// containment, bit-identical triangles in source order, every triangle reachable exactly once (at least once with
// spatial splits), reachability, STOC bits that follow the given states, determinism; and the checker's own teeth.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "fixtures/paths.h"
#include "formats/encode_fixture.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/encode.h"
#include "hwbvh/formats/xe3/tree_check.h"

namespace hwbvh::xe3 {
namespace {

using S = SubTriangleState;

struct Encoded {
  bvh_build::WideBuildResult<6> built;
  Xe3Encoded encoded;
  TreeCheckResult check;
};

Encoded encode_scene(const Scene& scene, Xe3EncodeOptions eo = {},
                     bvh_build::BuildQuality quality = bvh_build::BuildQuality::Medium, int threads = 0) {
  bvh_build::BuildOptions bo = test::build_options(quality, threads);
  configure_build(bo, eo.stoc_level);
  eo.threads = threads;
  Encoded e;
  e.built = bvh_build::build_wide_bvh6(scene, bo);
  e.encoded = encode(scene, e.built.bvh, eo);
  TreeCheckOptions co;
  co.allow_duplicate_references = quality == bvh_build::BuildQuality::High;
  e.check = check_encoded_tree(e.encoded.dwords, &scene, co);
  return e;
}

void expect_well_formed(const Encoded& e) {
  for (const auto& p : e.check.problems) ADD_FAILURE() << p;
  const Xe3EncodeStats& st = e.encoded.stats;
  EXPECT_EQ(e.check.internal_nodes, st.internal_nodes);
  EXPECT_EQ(e.check.quad_leaves, st.quad_leaves);
  EXPECT_EQ(e.check.stoc3_leaves, st.stoc3_leaves);
  EXPECT_EQ(e.check.quads, st.quads);
  EXPECT_EQ(e.check.triangles, st.triangles);
  EXPECT_EQ(e.check.max_depth, st.max_depth);
  EXPECT_EQ(st.node_bytes, 4 * e.encoded.dwords.size());
  EXPECT_EQ(st.node_bytes, 64u * (2 + st.internal_nodes + st.quad_leaves + 2 * st.stoc3_leaves) + st.stoc_data_bytes);
  for (const auto& node : e.built.bvh.nodes) EXPECT_LE(node.child_count, 6u);
}

// Calls `fn` for every leaf reached from the root, through the decoder.
void for_each_leaf(const std::vector<uint32_t>& dw,
                   const std::function<void(const DecodedStoc3Leaf&, bool stoc3)>& fn) {
  const std::function<void(uint32_t)> visit = [&](uint32_t block) {
    const DecodedInternalNode node = decode_internal_node(std::span<const uint32_t, 16>(dw.data() + 16 * block, 16));
    for (uint32_t i = 0; i < 6; ++i) {
      if (!node.valid[i]) continue;
      auto b = static_cast<uint32_t>(node.child_block(block, i));
      if (node.child_type(i) == kNodeTypeMixed) {
        visit(b);
        continue;
      }
      const bool stoc3 = node.child_type(i) == kNodeTypeQuad128;
      for (bool last = false; !last; b += stoc3 ? 2 : 1) {
        DecodedStoc3Leaf leaf;
        if (stoc3) {
          leaf = decode_stoc3_leaf(std::span<const uint32_t, 32>(dw.data() + 16 * b, 32));
        } else {
          leaf.quad = decode_quad_leaf(std::span<const uint32_t, 16>(dw.data() + 16 * b, 16));
        }
        fn(leaf, stoc3);
        last = leaf.quad.last;
      }
    }
  };
  visit(kRootBlock);
}

// Synthetic baked states at `level` for every alpha-tested triangle: opaque near vertex 0, transparent near vertex
// 2, unknown in between, with a few random flips so that every level sees all three states.
struct Opacity {
  std::vector<std::vector<S>> states;
  std::vector<std::span<const S>> spans;
};
Opacity synthetic_opacity(const Scene& scene, uint32_t level, uint32_t seed) {
  Opacity o;
  o.states.resize(scene.triangles.size());
  std::mt19937 rng(seed);
  for (uint32_t t = 0; t < scene.triangles.size(); ++t) {
    if (!scene.is_alpha_tested(t)) continue;
    auto& s = o.states[t];
    s.resize(sub_triangle_count(level));
    for (uint32_t i = 0; i < s.size(); ++i) {
      const MicroTriangle m = bird_micro_triangle(i, level);
      const float n = static_cast<float>(1u << level);
      const float u = (static_cast<float>(m.iu) + 0.5f) / n, v = (static_cast<float>(m.iv) + 0.5f) / n;
      s[i] = u + v < 0.4f ? S::Opaque : (v > 0.55f ? S::Transparent : S::Unknown);
      if (rng() % 7 == 0) s[i] = static_cast<S>(rng() % 3);
    }
  }
  for (const auto& s : o.states) o.spans.emplace_back(s);
  return o;
}

// Encode options for STOC level `stoc_level` with the states of `opacity`, which must outlive them.
Xe3EncodeOptions stoc_options(uint32_t stoc_level, const Opacity& opacity) {
  Xe3EncodeOptions eo;
  eo.stoc_level = stoc_level;
  eo.opacity = opacity.spans;
  return eo;
}

TEST(Xe3Encode, RandomSoupIsWellFormedAtEveryStocLevel) {
  const Scene scene = hwbvh::test::random_triangle_soup(2000, 7, 10.0f, 0.6f, 3);
  for (uint32_t level : {0u, 1u, 3u}) {
    SCOPED_TRACE(level);
    Xe3EncodeOptions eo;
    eo.stoc_level = level;
    const Encoded e = encode_scene(scene, eo);
    expect_well_formed(e);
    EXPECT_EQ(e.encoded.stats.triangles, scene.triangles.size());
    EXPECT_EQ(e.encoded.stats.stoc3_leaves, 0u);  // nothing is alpha-tested
  }
}

TEST(Xe3Encode, EdgeSharingPairsBecomeQuads) {
  const Scene grid = hwbvh::test::quad_grid(30);
  const Encoded e = encode_scene(grid);
  expect_well_formed(e);
  EXPECT_EQ(e.encoded.stats.split_pairs, 0u);
  // The builder pairs inside leaves only; most of the 900 squares' diagonals end up inside one leaf.
  EXPECT_GT(e.encoded.stats.quads, 800u);
  for_each_leaf(e.encoded.dwords, [](const DecodedStoc3Leaf& leaf, bool) {
    if (leaf.quad.has_tri1()) {
      EXPECT_GE(leaf.quad.prim_index1_delta, 1u);
    }
  });
}

TEST(Xe3Encode, ProjectScenesAreWellFormed) {
  for (const char* name : {"cornell-box.obj", "rotated-objects.obj", "overflow-fan.obj", "alpha-cards.obj"}) {
    SCOPED_TRACE(name);
    const Scene scene = load_obj(test::project_scene(name));
    for (uint32_t level : {1u, 3u}) {
      Xe3EncodeOptions eo;
      eo.stoc_level = level;
      const Encoded e = encode_scene(scene, eo);
      expect_well_formed(e);
      EXPECT_GT(e.encoded.stats.quads, 0u);
    }
  }
}

TEST(Xe3Encode, SharedScenesAreWellFormed) {
  const auto bunny = test::shared_scene("stanford-bunny.obj");
  if (bunny.empty()) GTEST_SKIP() << "../shared/scenes is absent";
  for (const char* name : {"stanford-bunny.obj", "teapot.obj", "spot.obj", "smallpine/smallpine.obj"}) {
    SCOPED_TRACE(name);
    const Scene scene = load_obj(test::shared_scene(name));
    Xe3EncodeOptions eo;
    eo.stoc_level = scene.materials.empty() ? 1 : 3;
    const Encoded e = encode_scene(scene, eo);
    expect_well_formed(e);
    EXPECT_GT(e.encoded.stats.quads, 0u);
    EXPECT_EQ(e.encoded.stats.split_pairs, 0u);  // the builder pairs only what a QuadLeaf can hold
  }
}

TEST(Xe3Encode, SpatialSplitsReferenceTrianglesAtLeastOnce) {
  const Scene scene = hwbvh::test::random_triangle_soup(1500, 5, 10.0f, 2.0f);
  const Encoded e = encode_scene(scene, {}, bvh_build::BuildQuality::High);
  expect_well_formed(e);
  EXPECT_GE(e.encoded.stats.triangles, scene.triangles.size());
}

TEST(Xe3Encode, IdenticalAtAnyThreadCount) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  const Opacity o = synthetic_opacity(scene, 5, 1);
  const Xe3EncodeOptions eo = stoc_options(3, o);
  const Encoded a = encode_scene(scene, eo, bvh_build::BuildQuality::Medium, 1);
  const Encoded b = encode_scene(scene, eo, bvh_build::BuildQuality::Medium, 3);
  EXPECT_EQ(a.encoded.dwords, b.encoded.dwords);
}

TEST(Xe3Encode, StocBitsFollowTheGivenStates) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  for (uint32_t bake_level : {0u, 1u, 2u, 3u, 5u}) {
    for (uint32_t stoc : {1u, 3u}) {
      for (SubTriangleOrder order : {SubTriangleOrder::Bird, SubTriangleOrder::Row}) {
        SCOPED_TRACE(testing::Message() << "bake level " << bake_level << ", STOC" << stoc << ", order "
                                        << static_cast<int>(order));
        const Opacity o = synthetic_opacity(scene, bake_level, 5 + bake_level);
        Xe3EncodeOptions eo = stoc_options(stoc, o);
        eo.order = order;
        const Encoded e = encode_scene(scene, eo);
        expect_well_formed(e);  // includes: STOC1 = reduction of STOC3 = reduction of the full data
        const Xe3EncodeStats& st = e.encoded.stats;
        if (stoc == 3) {
          EXPECT_GT(st.stoc3_leaves, 0u);
          const uint64_t alpha =
              std::count_if(o.states.begin(), o.states.end(), [](const auto& s) { return !s.empty(); });
          EXPECT_EQ(st.stoc_data_bytes, bake_level > 3 ? alpha * sub_triangle_count(bake_level) / 4 : 0u);
        } else {
          EXPECT_EQ(st.stoc3_leaves, 0u);
        }
        EXPECT_EQ(st.swstoc_triangles > 0, bake_level > 1);
        uint32_t checked = 0;
        for_each_leaf(e.encoded.dwords, [&](const DecodedStoc3Leaf& leaf, bool stoc3) {
          for (int k = 0; k < (leaf.quad.has_tri1() ? 2 : 1); ++k) {
            const auto ku = static_cast<std::size_t>(k);
            const uint32_t tri = scene.geometries[leaf.quad.geometry_index].first_triangle + leaf.quad.primitive(k);
            const auto& states = o.states[tri];
            if (states.empty()) {
              EXPECT_EQ(leaf.quad.stoc1_opaque[ku] | leaf.quad.stoc1_transparent[ku], 0u);
              continue;
            }
            const StocMasks m1 = summarize(states, 1, order);
            EXPECT_EQ(leaf.quad.swstoc[ku], m1.swstoc);
            EXPECT_EQ(leaf.quad.stoc1_opaque[ku], m1.opaque);
            EXPECT_EQ(leaf.quad.stoc1_transparent[ku], m1.transparent);
            if (stoc3) {
              const StocMasks m3 = summarize(states, 3, order);
              EXPECT_EQ(leaf.opaque[ku], m3.opaque);
              EXPECT_EQ(leaf.transparent[ku], m3.transparent);
              EXPECT_EQ(leaf.swstoc[ku], m3.swstoc);
              EXPECT_EQ(leaf.full_level[ku], bake_level > 3 ? bake_level : 0u);
            }
            ++checked;
          }
        });
        EXPECT_EQ(checked, 2u * 144u);  // 144 alpha-tested cards of two triangles
      }
    }
  }
}

TEST(Xe3Encode, StocLevelZeroWritesNoStocBits) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  const Opacity o = synthetic_opacity(scene, 2, 3);
  const Encoded e = encode_scene(scene, stoc_options(0, o));
  expect_well_formed(e);
  for_each_leaf(e.encoded.dwords, [](const DecodedStoc3Leaf& leaf, bool) {
    EXPECT_EQ(leaf.quad.stoc1_opaque[0] | leaf.quad.stoc1_opaque[1] | leaf.quad.stoc1_transparent[0] |
                  leaf.quad.stoc1_transparent[1],
              0u);
    EXPECT_FALSE(leaf.quad.swstoc[0] || leaf.quad.swstoc[1]);
  });
}

// Two triangles sharing the edge (1,0,0)-(0,1,0), with the second one's primitive index, geometry and opacity
// chosen by the caller, and a dozen triangles far away so that the two end up in one leaf below the root.
Scene edge_pair(uint32_t second_primitive, bool second_geometry, bool second_alpha) {
  Scene s;
  s.source = "edge-pair";
  s.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
  s.materials = {Material{"plain"}, Material{"leaf"}};
  s.materials[1].alpha_texture = 0;
  s.alpha_textures.push_back(AlphaTexture{"mask", 1, 1, {255}});
  s.geometries.push_back({"a", 0, 0});
  if (second_geometry) s.geometries.push_back({"b", 0, 0});
  Triangle first;
  first.v[0] = 0, first.v[1] = 1, first.v[2] = 2;
  first.material = 0;
  s.triangles.push_back(first);
  // Degenerate fillers give the second triangle its primitive index; the builder leaves them out.
  for (uint32_t p = 1; p < second_primitive; ++p) {
    Triangle filler;
    filler.primitive = p;
    s.triangles.push_back(filler);
  }
  Triangle second;
  second.v[0] = 1, second.v[1] = 3, second.v[2] = 2;
  second.geometry = second_geometry ? 1 : 0;
  second.primitive = second_geometry ? 0 : second_primitive;
  second.material = second_alpha ? 1 : 0;
  s.triangles.push_back(second);
  s.geometries.push_back({"far", 0, 0});
  for (uint32_t k = 0; k < 12; ++k) {
    const auto base = static_cast<uint32_t>(s.positions.size());
    const float x = 100.0f + 3.0f * static_cast<float>(k);
    s.positions.insert(s.positions.end(), {{x, 0, 0}, {x + 1, 0, 0}, {x, 1, 0}});
    Triangle far;
    far.v[0] = base, far.v[1] = base + 1, far.v[2] = base + 2;
    far.geometry = static_cast<uint32_t>(s.geometries.size() - 1);
    far.primitive = k;
    s.triangles.push_back(far);
  }
  for (auto& g : s.geometries) g.triangle_count = 0;
  for (uint32_t t = 0; t < s.triangles.size(); ++t) {
    Geometry& g = s.geometries[s.triangles[t].geometry];
    if (g.triangle_count == 0) g.first_triangle = t;
    ++g.triangle_count;
  }
  return s;
}

TEST(Xe3Encode, PairsThatCannotBeQuadsAreSplit) {
  struct Case {
    uint32_t primitive;
    bool geometry, alpha;
    bool quad;
  };
  for (const Case& c : {Case{1, false, false, true}, Case{31, false, false, true}, Case{32, false, false, false},
                        Case{1, true, false, false}, Case{1, false, true, false}}) {
    SCOPED_TRACE(testing::Message() << c.primitive << " " << c.geometry << " " << c.alpha);
    const Scene scene = edge_pair(c.primitive, c.geometry, c.alpha);
    // configure_build's pair test keeps the builder from pairing what a QuadLeaf cannot hold.
    const Encoded e = encode_scene(scene);
    expect_well_formed(e);
    EXPECT_EQ(e.encoded.stats.quads, c.quad ? 1u : 0u);
    EXPECT_EQ(e.encoded.stats.split_pairs, 0u);
    EXPECT_EQ(e.encoded.stats.triangles, 14u);
    // Without it the builder pairs the two anyway and the encoder stores such a pair as two lone triangles.
    bvh_build::BuildOptions bo;
    configure_build(bo, 1);
    bo.pair_fits = {};
    const auto built = bvh_build::build_wide_bvh6(scene, bo);
    const Xe3Encoded any = encode(scene, built.bvh, {});
    EXPECT_TRUE(check_encoded_tree(any.dwords, &scene).ok());
    EXPECT_EQ(any.stats.quads, c.quad ? 1u : 0u);
    EXPECT_EQ(any.stats.split_pairs, c.quad ? 0u : 1u);
  }
}

TEST(Xe3Encode, RejectsBadOptionsAndTreesTheFormatCannotHold) {
  const Scene scene = hwbvh::test::quad_grid(8);
  bvh_build::BuildOptions bo;
  configure_build(bo, 1);
  const auto built = bvh_build::build_wide_bvh6(scene, bo);
  Xe3EncodeOptions eo;
  eo.stoc_level = 2;
  EXPECT_THROW(encode(scene, built.bvh, eo), Error);
  eo.stoc_level = 1;
  std::vector<std::span<const S>> too_few(3);
  eo.opacity = too_few;
  EXPECT_THROW(encode(scene, built.bvh, eo), Error);
  const std::vector<S> five(5, S::Opaque);
  std::vector<std::span<const S>> bad_count(scene.triangles.size());
  bad_count[0] = five;
  eo.opacity = bad_count;
  try {
    encode(scene, built.bvh, eo);
    ADD_FAILURE() << "5 states accepted";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::BadInput);
  }
  // The builder's default leaves hold up to 8 pairs: more than an Xe3 child's 3 blocks.
  bvh_build::BuildOptions big;
  big.box_step_cost = 4.0f;
  const auto wide_leaves = bvh_build::build_wide_bvh6(scene, big);
  try {
    encode(scene, wide_leaves.bvh, {});
    ADD_FAILURE() << "a leaf of more than 3 quads accepted";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Runtime);
  }
}

TEST(Xe3Encode, CheckerCatchesCorruption) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  const Opacity o = synthetic_opacity(scene, 5, 9);
  const Encoded e = encode_scene(scene, stoc_options(3, o));
  ASSERT_TRUE(e.check.ok());
  const std::vector<uint32_t>& good = e.encoded.dwords;
  const auto broken = [&](const std::function<void(std::vector<uint32_t>&)>& corrupt) {
    std::vector<uint32_t> dw = good;
    corrupt(dw);
    return !check_encoded_tree(dw, &scene).ok();
  };
  // The first STOC3 leaf list, found through the decoder.
  uint32_t leaf_block = 0;
  bool leaf_is_stoc3 = false;
  const std::function<bool(uint32_t)> find_leaf = [&](uint32_t block) {
    const DecodedInternalNode n = decode_internal_node(std::span<const uint32_t, 16>(good.data() + 16 * block, 16));
    for (uint32_t i = 0; i < 6; ++i) {
      if (!n.valid[i]) continue;
      const auto child = static_cast<uint32_t>(n.child_block(block, i));
      if (n.child_type(i) != kNodeTypeMixed) {
        leaf_block = child;
        leaf_is_stoc3 = n.child_type(i) == kNodeTypeQuad128;
        return n.child_type(i) == kNodeTypeQuad128;
      }
      if (find_leaf(child)) return true;
    }
    return false;
  };
  ASSERT_TRUE(find_leaf(kRootBlock));
  ASSERT_TRUE(leaf_is_stoc3);
  const std::size_t leaf = std::size_t{leaf_block} * 16;
  EXPECT_TRUE(broken([&](auto& dw) { dw[leaf + 4] ^= 1; }));              // a vertex bit
  EXPECT_TRUE(broken([&](auto& dw) { dw[leaf + 3] ^= 1u << 22; }));       // the last bit
  EXPECT_TRUE(broken([&](auto& dw) { dw[leaf + 3] |= 0x11u << 8; }));     // sub-triangle 0 both opaque and transparent
  EXPECT_TRUE(broken([&](auto& dw) { dw[leaf + 16] ^= 1; }));             // STOC3 mask no longer reduces to STOC1
  EXPECT_TRUE(broken([&](auto& dw) { std::fill(dw.end() - 16, dw.end(), 0x55555555u); }));  // full-STOC data
  EXPECT_TRUE(broken([&](auto& dw) { dw[leaf + 1] |= 1u << 28; }));       // an MBZ bit
  EXPECT_TRUE(broken([&](auto& dw) { dw[32 + 3] += 1; }));                // the root's childOffset
  EXPECT_TRUE(broken([&](auto& dw) { dw[32 + 5] ^= 1u << 16; }));         // the root's first blockIncr
  EXPECT_TRUE(broken([&](auto& dw) { dw[32] = 0x7F000000; }));            // the root's origin (containment)
  EXPECT_TRUE(broken([&](auto& dw) { dw[0] = 0; }));                      // magic
  EXPECT_TRUE(broken([&](auto& dw) { dw.pop_back(); }));                  // truncated
  EXPECT_TRUE(check_encoded_tree(good, nullptr).ok());  // the scene-free checks pass too
}

}  // namespace
}  // namespace hwbvh::xe3
