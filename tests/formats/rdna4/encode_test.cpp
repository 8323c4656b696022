// Whole-tree properties of the RT IP 3.1 encoder, checked through the independent decoder
// (check_encoded_tree): containment in each node's (OBB) frame, bit-identical triangles, every triangle
// reachable exactly once (at least once with spatial splits), parent pointers, reachability, determinism.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixtures/paths.h"
#include "formats/encode_fixture.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/formats/rdna4/tree_check.h"

namespace hwbvh::rdna4 {
namespace {

struct Encoded {
  bvh_build::BuildResult built;
  EncodedBvh encoded;
  TreeCheckResult check;
};

Encoded encode_scene(const Scene& scene, bvh_build::BuildQuality quality, bool obb, int threads = 0) {
  bvh_build::BuildOptions bo = test::build_options(quality, threads);
  adapt_build_options(bo);
  EncodeOptions eo;
  eo.obb = obb;
  eo.threads = threads;
  Encoded e;
  e.built = bvh_build::build_wide_bvh(scene, bo);
  e.encoded = encode(scene, e.built.bvh, eo);
  e.check = check_encoded_tree(e.encoded.dwords, &scene);
  return e;
}

void expect_well_formed(const Scene& scene, const Encoded& e, bool allow_duplicates) {
  test::expect_clean_check(scene, e.check, allow_duplicates);
  EXPECT_EQ(e.check.box_nodes, e.encoded.stats.box_nodes);
  EXPECT_EQ(e.check.primitive_nodes, e.encoded.stats.primitive_nodes);
  EXPECT_EQ(e.check.triangles, e.encoded.stats.triangles);
}

TEST(Rdna4Encode, RandomSoupAllQualitiesWithAndWithoutObb) {
  const Scene scene = test::random_triangle_soup(3000, 7, 10.0f, 0.6f, 3);
  for (auto q : {bvh_build::BuildQuality::Low, bvh_build::BuildQuality::Medium, bvh_build::BuildQuality::High}) {
    for (bool obb : {false, true}) {
      SCOPED_TRACE(testing::Message() << "quality " << int(q) << " obb " << obb);
      const Encoded e = encode_scene(scene, q, obb);
      expect_well_formed(scene, e, q == bvh_build::BuildQuality::High);
      if (!obb) {
        EXPECT_EQ(e.encoded.stats.obb_box_nodes, 0u);
      }
    }
  }
}

TEST(Rdna4Encode, SpatialSplitsDuplicateLongTriangles) {
  // Long diagonal slivers across the scene make the split builder clip and duplicate references.
  Scene scene = test::random_triangle_soup(400, 11, 10.0f, 0.3f);
  for (uint32_t i = 0; i < 40; ++i) {
    const float f = static_cast<float>(i) * 0.25f;
    const auto base = static_cast<uint32_t>(scene.positions.size());
    scene.positions.push_back({0.0f, f, 0.0f});
    scene.positions.push_back({10.0f, f + 0.1f, 10.0f});
    scene.positions.push_back({10.0f, f, 9.8f});
    Triangle t;
    t.v[0] = base; t.v[1] = base + 1; t.v[2] = base + 2;
    t.primitive = scene.geometries[0].triangle_count++;
    scene.triangles.push_back(t);
  }
  const Encoded e = encode_scene(scene, bvh_build::BuildQuality::High, true);
  expect_well_formed(scene, e, true);
  EXPECT_TRUE(std::any_of(e.check.triangle_references.begin(), e.check.triangle_references.end(),
                          [](uint32_t r) { return r > 1; }));
}

TEST(Rdna4Encode, QuadGridPairsShareNodes) {
  const Scene scene = test::quad_grid(24);
  const Encoded e = encode_scene(scene, bvh_build::BuildQuality::Medium, true);
  expect_well_formed(scene, e, false);
  // Shared-edge pairing and vertex sharing should fill primitive nodes well.
  EXPECT_GT(double(e.encoded.stats.triangles) / e.encoded.stats.primitive_nodes, 6.0);
}

TEST(Rdna4Encode, SingleTriangleScene) {
  const Scene scene = test::random_triangle_soup(1, 3);
  const Encoded e = encode_scene(scene, bvh_build::BuildQuality::Medium, true);
  expect_well_formed(scene, e, false);
  EXPECT_EQ(e.encoded.stats.box_nodes, 1u);
  EXPECT_EQ(e.encoded.stats.primitive_nodes, 1u);
}

TEST(Rdna4Encode, ByteIdenticalAtOneAndTwoThreads) {
  const Scene scene = test::random_triangle_soup(5000, 21, 10.0f, 0.5f, 2);
  for (auto q : {bvh_build::BuildQuality::Medium, bvh_build::BuildQuality::High}) {
    const Encoded a = encode_scene(scene, q, true, 1);
    const Encoded b = encode_scene(scene, q, true, 2);
    EXPECT_EQ(a.encoded.dwords, b.encoded.dwords) << "quality " << int(q);
  }
}

TEST(Rdna4Encode, RotatedObjectsSceneUsesObbs) {
  const auto path = test::project_scene("rotated-objects.obj");
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const Scene scene = load_obj(path);
  const Encoded with = encode_scene(scene, bvh_build::BuildQuality::Medium, true);
  const Encoded without = encode_scene(scene, bvh_build::BuildQuality::Medium, false);
  expect_well_formed(scene, with, false);
  expect_well_formed(scene, without, false);
  EXPECT_GT(with.encoded.stats.obb_box_nodes, with.encoded.stats.box_nodes / 10);
  EXPECT_EQ(without.encoded.stats.obb_box_nodes, 0u);
}

class SharedScenes : public testing::TestWithParam<const char*> {};

TEST_P(SharedScenes, EncodedTreeIsWellFormed) {
  const auto path = test::shared_scene(GetParam());
  if (path.empty()) GTEST_SKIP() << "../shared/scenes not present";
  const Scene scene = load_obj(path);
  const Encoded e = encode_scene(scene, bvh_build::BuildQuality::Medium, true);
  expect_well_formed(scene, e, false);
}

INSTANTIATE_TEST_SUITE_P(Rdna4Encode, SharedScenes,
                         testing::Values("stanford-bunny.obj", "teapot.obj", "fandisk.obj", "spot.obj",
                                         "smallpine/smallpine.obj"));

}  // namespace
}  // namespace hwbvh::rdna4
