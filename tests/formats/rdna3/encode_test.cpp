// Whole-tree properties of the RT IP 2.0 encoder, checked through the independent decoder (check_encoded_tree):
// containment, bit-identical triangles in source order, every triangle reachable exactly once (at least once with
// spatial splits), parent table, reachability, box flags, determinism; and the checker's own teeth.
#include <gtest/gtest.h>

#include <algorithm>

#include "fixtures/paths.h"
#include "formats/encode_fixture.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna3/node_section.h"
#include "hwbvh/formats/rdna3/tree_check.h"

namespace hwbvh::rdna3 {
namespace {

struct Encoded {
  bvh_build::WideBuildResult<4> built;
  EncodedBvh encoded;
  TreeCheckResult check;
};

Encoded encode_scene(const Scene& scene, bvh_build::BuildQuality quality = bvh_build::BuildQuality::Medium,
                     int threads = 0) {
  bvh_build::BuildOptions bo = test::build_options(quality, threads);
  configure_build(bo);
  EncodeOptions eo;
  eo.threads = threads;
  Encoded e;
  e.built = bvh_build::build_wide_bvh4(scene, bo);
  e.encoded = encode(scene, e.built.bvh, eo);
  e.check = check_encoded_tree(e.encoded.dwords, &scene);
  return e;
}

void expect_well_formed(const Scene& scene, const Encoded& e, bool allow_duplicates) {
  test::expect_clean_check(scene, e.check, allow_duplicates);
  const EncodeStats& st = e.encoded.stats;
  EXPECT_EQ(e.check.box_nodes, st.box_nodes);
  EXPECT_EQ(e.check.triangle_nodes, st.triangle_nodes);
  EXPECT_EQ(e.check.pair_nodes, st.pair_nodes);
  EXPECT_EQ(e.check.triangles, st.triangles);
  EXPECT_EQ(st.node_bytes, 4 * e.encoded.dwords.size());
  EXPECT_EQ(st.node_bytes, 128u * (1 + st.box_nodes) + 64u * st.triangle_nodes + st.parent_table_bytes);
  for (const auto& node : e.built.bvh.nodes) EXPECT_LE(node.child_count, 4u);
}

// Two unit squares far apart, each two consistently wound triangles sharing a diagonal: the root gets two
// children, each a pair node (the root itself is always a box node).
Scene two_squares() {
  Scene s;
  s.source = "two-squares";
  s.geometries.push_back({"squares", 0, 4});
  for (float x : {0.0f, 10.0f}) {
    const auto base = static_cast<uint32_t>(s.positions.size());
    s.positions.insert(s.positions.end(), {{x, 0, 0}, {x + 1, 0, 0}, {x + 1, 1, 0}, {x, 1, 0}});
    for (const auto& v : {std::array<uint32_t, 3>{0, 1, 2}, std::array<uint32_t, 3>{0, 2, 3}}) {
      Triangle t;
      for (int k = 0; k < 3; ++k) t.v[k] = base + v[k];
      t.primitive = static_cast<uint32_t>(s.triangles.size());
      s.triangles.push_back(t);
    }
  }
  return s;
}

TEST(Rdna3Encode, TwoSquaresLayoutByteByByte) {
  const Scene scene = two_squares();
  const Encoded e = encode_scene(scene);
  expect_well_formed(scene, e, false);
  const std::vector<uint32_t>& dw = e.encoded.dwords;
  // Header, root box node at byte 128, pair nodes at bytes 256 and 320, parent table at byte 384.
  ASSERT_EQ(dw.size(), 6u * 16 + 16);
  EXPECT_EQ(dw[0], kNodeSectionMagic);
  EXPECT_EQ(dw[1], 0x15u);
  EXPECT_EQ(dw[2], 6u);  // slots: header 2, box node 2, triangle nodes 2
  EXPECT_EQ(dw[3], 1u);
  EXPECT_EQ(dw[4], 2u);
  EXPECT_EQ(bits_float(dw[8]), 11.0f);  // bounds max.x
  const uint32_t* root = dw.data() + 32;
  // Pairs are referenced through triangle 1: (256 >> 3) | 1 and (320 >> 3) | 1, in the collapse's child order.
  EXPECT_EQ(std::min(root[0], root[1]), 0x21u);
  EXPECT_EQ(std::max(root[0], root[1]), 0x29u);
  EXPECT_EQ(root[2], kInvalidNode);
  EXPECT_EQ(root[28], 0xFFFF0505u);  // ONLY_TRIANGLES | ONLY_OPAQUE; empty slots 0xFF
  EXPECT_EQ(root[29], 4u);
  std::vector<uint32_t> expected(16, kInvalidNode);
  expected[4] = expected[5] = 0x15;  // both triangle nodes hang under the root
  EXPECT_EQ(std::vector<uint32_t>(dw.begin() + 96, dw.end()), expected);
  std::string error;
  const auto header = read_node_section_header(dw, &error);
  ASSERT_TRUE(header) << error;
  EXPECT_EQ(parent_pointer(dw, *header, root[0]), 0x15u);
  EXPECT_EQ(parent_pointer(dw, *header, 0x15), kInvalidNode);
  EXPECT_EQ(parent_pointer(dw, *header, 0x1000), kInvalidNode);  // outside the slots
}

TEST(Rdna3Encode, RandomSoupAllQualities) {
  const Scene scene = test::random_triangle_soup(3000, 7, 10.0f, 0.6f, 3);
  for (auto q : {bvh_build::BuildQuality::Low, bvh_build::BuildQuality::Medium, bvh_build::BuildQuality::High}) {
    SCOPED_TRACE(testing::Message() << "quality " << int(q));
    expect_well_formed(scene, encode_scene(scene, q), q == bvh_build::BuildQuality::High);
  }
}

TEST(Rdna3Encode, QuadGridIsMostlyPairs) {
  const Scene scene = test::quad_grid(24);
  const Encoded e = encode_scene(scene);
  expect_well_formed(scene, e, false);
  EXPECT_GT(e.encoded.stats.pair_nodes, e.encoded.stats.triangles * 4 / 10);
}

TEST(Rdna3Encode, SingleTriangleScene) {
  const Scene scene = test::random_triangle_soup(1, 3);
  const Encoded e = encode_scene(scene);
  expect_well_formed(scene, e, false);
  EXPECT_EQ(e.encoded.stats.box_nodes, 1u);
  EXPECT_EQ(e.encoded.stats.triangle_nodes, 1u);
  EXPECT_EQ(e.encoded.stats.pair_nodes, 0u);
}

TEST(Rdna3Encode, ByteIdenticalAtOneAndTwoThreads) {
  const Scene scene = test::random_triangle_soup(5000, 21, 10.0f, 0.5f, 2);
  for (auto q : {bvh_build::BuildQuality::Medium, bvh_build::BuildQuality::High}) {
    EXPECT_EQ(encode_scene(scene, q, 1).encoded.dwords, encode_scene(scene, q, 2).encoded.dwords) << int(q);
  }
}

TEST(Rdna3Encode, LeavesOfSeveralPairsAreRefused) {
  const Scene scene = test::quad_grid(8);
  bvh_build::BuildOptions bo;  // max_leaf_pairs = 8: not built for RT IP 2.0
  bo.box_step_cost = 8.0f;  // expensive box steps make multi-pair leaves
  const auto built = bvh_build::build_wide_bvh4(scene, bo);
  EXPECT_THROW(encode(scene, built.bvh, {}), Error);
}

TEST(Rdna3Encode, ProjectScenes) {
  for (const char* name : {"cornell-box.obj", "alpha-cards.obj", "overflow-fan.obj", "rotated-objects.obj"}) {
    SCOPED_TRACE(name);
    const Scene scene = load_obj(test::project_scene(name));
    const Encoded e = encode_scene(scene);
    expect_well_formed(scene, e, false);
  }
}

TEST(Rdna3Encode, AlphaTestedTrianglesAreNotOpaque) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  const Encoded e = encode_scene(scene);
  ASSERT_TRUE(e.check.ok());
  // The root's children: some subtree holds only leaf cards (non-opaque), the ground is opaque.
  uint32_t opaque = 0, non_opaque = 0;
  // The triangle nodes follow the 128-byte header and the 128-byte box nodes.
  const uint32_t first = kHeaderSlots * kTriangleNodeDwords + kBoxNodeDwords * e.encoded.stats.box_nodes;
  for (uint32_t t = 0; t < e.encoded.stats.triangle_nodes; ++t) {
    TriangleNodeDwords node;
    std::copy_n(e.encoded.dwords.begin() + first + 16 * t, 16, node.begin());
    (decode_triangle(node, 0).id.opaque ? opaque : non_opaque) += 1;
  }
  EXPECT_GT(opaque, 0u);
  EXPECT_GT(non_opaque, 0u);
}

// The checker must notice what a broken encoder would produce.
TEST(Rdna3TreeCheck, FindsCorruption) {
  const Scene scene = test::quad_grid(6);
  const Encoded e = encode_scene(scene);
  ASSERT_TRUE(e.check.ok());
  const std::vector<uint32_t> good = e.encoded.dwords;
  const uint32_t root = 32, first_triangle = 32 + 32 * e.encoded.stats.box_nodes;
  auto problems_after = [&](auto&& corrupt) {
    std::vector<uint32_t> bad = good;
    corrupt(bad);
    return check_encoded_tree(bad, &scene).problems;
  };
  EXPECT_FALSE(problems_after([](std::vector<uint32_t>& d) { d[0] ^= 1; }).empty());   // magic
  EXPECT_FALSE(problems_after([](std::vector<uint32_t>& d) { d.resize(d.size() - 16); }).empty());  // truncated
  // A child pointer into the middle of a box node, out of range, to an unsupported type, or removed.
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root] = 0x15 + 8; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root] = 0x7FFFFFF5; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root] = (d[root] & ~7u) | 4; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root] = kInvalidNode; }).empty());
  // A box that no longer contains its triangles, a wrong triangle count, a parent-table entry.
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root + 7] = float_bits(-1.0f); }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root + 29] += 1; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[d.size() - 1] = 0x15; }).empty());
  // A vertex bit, a triangle id, an opaque bit, I/J sources, an ONLY_NON_OPAQUE flag over opaque triangles.
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[first_triangle] ^= 1; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[first_triangle + 13] += 1000; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[first_triangle + 15] ^= 0x80; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[first_triangle + 15] &= ~0xFu; }).empty());
  EXPECT_FALSE(problems_after([&](std::vector<uint32_t>& d) { d[root + 28] |= kBoxFlagOnlyNonOpaque; }).empty());
  // And without a scene the structure is still checked.
  std::vector<uint32_t> bad = good;
  bad[root] = kInvalidNode;
  EXPECT_FALSE(check_encoded_tree(bad, nullptr).ok());
  EXPECT_TRUE(check_encoded_tree(good, nullptr).ok());
}

class SharedScenes : public testing::TestWithParam<const char*> {};

TEST_P(SharedScenes, EncodedTreeIsWellFormed) {
  const auto path = test::shared_scene(GetParam());
  if (path.empty()) GTEST_SKIP() << "../shared/scenes not present";
  const Scene scene = load_obj(path);
  expect_well_formed(scene, encode_scene(scene), false);
}

INSTANTIATE_TEST_SUITE_P(Rdna3Encode, SharedScenes,
                         testing::Values("stanford-bunny.obj", "teapot.obj", "fandisk.obj", "spot.obj",
                                         "smallpine/smallpine.obj"));

}  // namespace
}  // namespace hwbvh::rdna3
