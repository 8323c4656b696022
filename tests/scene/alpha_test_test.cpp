// The alpha test's ground truth (alpha_test.h, docs/opacity.md §1): golden cases for the cutoff comparison,
// nearest-texel selection, wrapping and the row order; and make_alpha_test on a loaded scene.
#include "hwbvh/scene/alpha_test.h"

#include <gtest/gtest.h>

#include <cmath>

#include "hwbvh/core/error.h"
#include "fixtures/paths.h"

namespace hwbvh {
namespace {

// A 2 x 2 texture; row 0 is the top (v in [0.5, 1)), row 1 the bottom (v in [0, 0.5)).
//   top:    0  255
//   bottom: 127 128
AlphaTest two_by_two(Vec2 uv0, Vec2 uv1, Vec2 uv2, float cutoff = kDefaultAlphaCutoff) {
  AlphaTest a;
  a.cutoff = cutoff;
  a.textures.push_back(AlphaTexture{"", 2, 2, {0, 255, 127, 128}});
  a.triangles.resize(2);
  a.triangles[0] = AlphaTest::Tri{0, {uv0, uv1, uv2}};  // triangle 1 is not alpha-tested
  return a;
}

// UV = 2 * barycentrics: bary (u, v) samples texture coordinate (2u, 2v).
AlphaTest doubled(float cutoff = kDefaultAlphaCutoff) { return two_by_two({0, 0}, {2, 0}, {0, 2}, cutoff); }

TEST(AlphaTest, NearestTexelRowZeroIsTheTop) {
  const AlphaTest a = doubled();
  EXPECT_FALSE(a.passes(0, {0.1f, 0.1f}));   // uv (0.2, 0.2): bottom left, 127 < 127.5
  EXPECT_TRUE(a.passes(0, {0.3f, 0.1f}));    // uv (0.6, 0.2): bottom right, 128
  EXPECT_FALSE(a.passes(0, {0.1f, 0.3f}));   // uv (0.2, 0.6): top left, 0
  EXPECT_TRUE(a.passes(0, {0.3f, 0.3f}));    // uv (0.6, 0.6): top right, 255
}

TEST(AlphaTest, TexelBoundariesBelongToTheUpperTexel) {
  const AlphaTest a = doubled();
  EXPECT_TRUE(a.passes(0, {0.25f, 0.0f}));   // u = 0.5 exactly: column 1 (floor(0.5 * 2) = 1), bottom row
  EXPECT_FALSE(a.passes(0, {0.0f, 0.25f}));  // v = 0.5 exactly: upper half = top row, column 0
  const Texel t = nearest_texel({0.5f, 0.5f}, 2, 2);
  EXPECT_EQ(t.x, 1u);
  EXPECT_EQ(t.y, 0u);
}

TEST(AlphaTest, CoordinatesWrap) {
  const AlphaTest a = doubled();
  EXPECT_TRUE(a.passes(0, {0.8f, 0.1f}));   // uv (1.6, 0.2) -> (0.6, 0.2): bottom right
  EXPECT_FALSE(a.passes(0, {0.5f, 0.1f}));  // uv (1.0, 0.2) -> (0.0, 0.2): bottom left
  EXPECT_TRUE(a.passes(0, {0.0f, 0.5f}) == a.passes(0, {0.0f, 0.0f}));  // v = 1 wraps to v = 0
  // Negative coordinates: -0.2 wraps to 0.8.
  const AlphaTest n = two_by_two({-0.2f, -0.2f}, {-0.2f, -0.2f}, {-0.2f, -0.2f});
  EXPECT_TRUE(n.passes(0, {0.3f, 0.3f}));  // (0.8, 0.8): top right, 255
  const Texel t = nearest_texel({-1e-9f, -1e-9f}, 2, 2);  // frac rounds to 1.0: the last column, the top row
  EXPECT_EQ(t.x, 1u);
  EXPECT_EQ(t.y, 0u);
  const Texel big = nearest_texel({1e9f, INFINITY}, 2, 2);  // non-finite wraps to 0
  EXPECT_EQ(big.x, 0u);
  EXPECT_EQ(big.y, 1u);
}

TEST(AlphaTest, CutoffComparesAlphaOver255) {
  EXPECT_EQ(doubled(0.5f).alpha_threshold(), 128u);
  EXPECT_EQ(doubled(127.0f / 255.0f).alpha_threshold(), 127u);
  EXPECT_TRUE(doubled(127.0f / 255.0f).passes(0, {0.1f, 0.1f}));  // 127 / 255 >= 127 / 255
  EXPECT_FALSE(doubled(0.5f).passes(0, {0.1f, 0.1f}));
  EXPECT_TRUE(doubled(0.0f).passes(0, {0.1f, 0.3f}));   // alpha 0 passes a zero cutoff
  EXPECT_FALSE(doubled(1.0f).passes(0, {0.3f, 0.1f}));  // 128 fails cutoff 1
  EXPECT_TRUE(doubled(1.0f).passes(0, {0.3f, 0.3f}));   // 255 passes it
  // The threshold is exactly where the float comparison switches.
  for (float c : {0.0f, 0.1f, 0.25f, 0.5f, 127.0f / 255.0f, 128.0f / 255.0f, 0.999f, 1.0f}) {
    const AlphaTest a = doubled(c);
    for (uint32_t v = 0; v < 256; ++v) EXPECT_EQ(a.alpha_passes(static_cast<uint8_t>(v)), v >= a.alpha_threshold()) << c;
  }
}

TEST(AlphaTest, UntestedTrianglesAlwaysPass) {
  const AlphaTest a = doubled(1.0f);
  EXPECT_TRUE(a.tested(0));
  EXPECT_FALSE(a.tested(1));
  EXPECT_TRUE(a.passes(1, {0.1f, 0.3f}));
  EXPECT_TRUE(a.any_tested());
  EXPECT_EQ(a.tested_count(), 1u);
  AlphaTest none = a;
  none.triangles[0].texture = kNoIndex;
  EXPECT_FALSE(none.any_tested());
}

TEST(AlphaTest, FromTheAlphaCardScene) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  const AlphaTest a = make_alpha_test(scene);
  ASSERT_EQ(a.triangles.size(), scene.triangles.size());
  EXPECT_EQ(a.cutoff, kDefaultAlphaCutoff);
  uint32_t tested = 0;
  for (uint32_t i = 0; i < scene.triangles.size(); ++i) {
    EXPECT_EQ(a.tested(i), scene.is_alpha_tested(i)) << i;  // every map_d triangle of this scene has UVs
    tested += a.tested(i) ? 1 : 0;
  }
  EXPECT_EQ(tested, 288u);  // 144 cards
  ASSERT_EQ(a.textures.size(), 1u);
  EXPECT_EQ(a.textures[0].alpha, scene.alpha_textures[0].alpha);
}

TEST(AlphaTest, MapDTrianglesWithoutUvsAreNotTested) {
  const std::string obj =
      "mtllib alpha-cards.mtl\nvt 0 0\nvt 1 0\nvt 0 1\nv 0 0 0\nv 1 0 0\nv 0 1 0\n"
      "usemtl leaf\nf 1/1 2/2 3/3\nf 1 2 3\n";
  const Scene scene = load_obj_from_memory(obj, "inline.obj", test::source_dir() / "scenes");
  ASSERT_TRUE(scene.is_alpha_tested(0));
  ASSERT_TRUE(scene.is_alpha_tested(1));
  const AlphaTest a = make_alpha_test(scene, 0.25f);
  EXPECT_TRUE(a.tested(0));
  EXPECT_FALSE(a.tested(1));
  EXPECT_EQ(a.cutoff, 0.25f);
  // A texture only UV-less triangles use is left out.
  const Scene no_uvs = load_obj_from_memory("mtllib alpha-cards.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl leaf\nf 1 2 3\n",
                                            "inline.obj", test::source_dir() / "scenes");
  const AlphaTest b = make_alpha_test(no_uvs);
  EXPECT_FALSE(b.any_tested());
  EXPECT_TRUE(b.textures.empty());
}

// An opaque scene keeps no per-triangle records (28 bytes a triangle at a large build's peak), and still answers
// every question: nothing tested, everything passes.
TEST(AlphaTest, AnOpaqueSceneHasNoTriangleRecords) {
  const Scene scene = load_obj_from_memory("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 3 2\n", "inline.obj", ".");
  const AlphaTest a = make_alpha_test(scene);
  EXPECT_TRUE(a.triangles.empty());
  EXPECT_FALSE(a.any_tested());
  EXPECT_EQ(a.tested_count(), 0u);
  EXPECT_FALSE(a.tested(1));
  EXPECT_TRUE(a.passes(1, {0.2f, 0.2f}));
}

TEST(AlphaTest, RefusesACutoffOutsideZeroToOne) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  for (float c : {-0.01f, 1.01f, NAN}) {
    try {
      (void)make_alpha_test(scene, c);
      ADD_FAILURE() << c;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("alpha-cards.obj"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hwbvh
