// Given trees (given_tree.h): hostile topologies refused with the offending node named; hwbvh's own binary tree
// exported and given back collapses to the same wide tree; wide trees taken as given and their leaves split to fit.
#include "hwbvh/bvh_build/given_tree.h"

#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "build_scenes.h"
#include "hwbvh/bvh_build/tree_checks.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {
namespace {

using ::testing::HasSubstr;

// Four separate triangles 0..3.
Scene four_triangles() {
  Scene s;
  s.source = "four";
  for (int i = 0; i < 4; ++i) {
    const Vec3 p{static_cast<float>(i), 0.0f, 0.0f};
    test::add_triangle(s, p, p + Vec3{0.5f, 0.0f, 0.0f}, p + Vec3{0.0f, 0.5f, 0.0f});
  }
  return s;
}

// ((0, 1), (2, 3)): node 0 the root, 1 and 2 inner, 3..6 leaves of one triangle each.
TreeTopology balanced() {
  TreeTopology t;
  t.source = "t.npz";
  t.children = {1, 2, 3, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1};
  t.prim_begin = {0, 0, 0, 0, 1, 2, 3};
  t.prim_count = {0, 0, 0, 1, 1, 1, 1};
  t.primitives = {0, 1, 2, 3};
  return t;
}

// The message check_topology throws for `tree` over four_triangles() (empty if none).
std::string refusal(const TreeTopology& tree, uint32_t max_children = 8) {
  try {
    check_topology(four_triangles(), tree, max_children);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "";
}

TEST(GivenTree, AWellFormedTreePasses) { EXPECT_EQ(refusal(balanced()), ""); }

TEST(GivenTree, APrimitiveTwiceNamesBothLeaves) {
  TreeTopology t = balanced();
  t.primitives = {0, 1, 2, 1};
  EXPECT_THAT(refusal(t), HasSubstr("t.npz: triangle 1 is in two leaves, node 4 and node 6"));
  t = balanced();
  t.prim_count[3] = 2;  // leaf 3 holds 0 and 1; leaf 4 holds 1 again
  EXPECT_THAT(refusal(t), HasSubstr("triangle 1 is in two leaves, node 3 and node 4"));
  t.primitives = {0, 0, 2, 3};
  EXPECT_THAT(refusal(t), HasSubstr("leaf node 3 holds triangle 0 twice"));
}

TEST(GivenTree, ATriangleInNoLeafIsNamed) {
  // A binary tree over three of the four triangles.
  TreeTopology t;
  t.source = "t.npz";
  t.children = {1, 2, -1, -1, 3, 4, -1, -1, -1, -1};
  t.prim_begin = {0, 0, 0, 1, 2};
  t.prim_count = {0, 1, 0, 1, 1};
  t.primitives = {0, 1, 3};
  EXPECT_THAT(refusal(t), HasSubstr("t.npz: triangle 2 is in no leaf"));
}

TEST(GivenTree, ACycleNamesTheNodeThatClosesIt) {
  TreeTopology t = balanced();
  t.children[2 * 2 + 1] = 0;  // node 2's right child is the root
  EXPECT_THAT(refusal(t), HasSubstr("a cycle: node 2 names node 0, its own ancestor, as a child"));
  t = balanced();
  t.children[2 * 1] = 1;  // node 1 names itself
  EXPECT_THAT(refusal(t), HasSubstr("a cycle: node 1 names node 1, itself, as a child"));
}

TEST(GivenTree, TwoParentsAndUnreachableNodesAreNamed) {
  TreeTopology t = balanced();
  t.children[2 * 2] = 3;  // node 2's left child is node 3, node 1's left child too; node 5 is then unreached
  EXPECT_THAT(refusal(t), HasSubstr("node 3 has two parents, node 1 and node 2"));
  t = balanced();
  t.children.insert(t.children.end(), {-1, -1});  // node 7: a leaf nobody names
  t.prim_begin.push_back(0);
  t.prim_count.push_back(1);
  EXPECT_THAT(refusal(t), HasSubstr("node 7 is not reached from the root (node 0)"));
}

TEST(GivenTree, TooManyChildrenNamesTheNode) {
  TreeTopology t;
  t.source = "wide.npz";
  t.width = 5;
  t.children = {1, 2, 3, 4, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  t.prim_begin = {0, 0, 1, 2, 3};
  t.prim_count = {0, 1, 1, 1, 1};
  t.primitives = {0, 1, 2, 3};
  EXPECT_EQ(refusal(t, 4), "");
  EXPECT_THAT(refusal(t, 3), HasSubstr("wide.npz: node 0 has 4 children; the target's nodes hold at most 3"));
}

TEST(GivenTree, MalformedRowsAreNamed) {
  TreeTopology t = balanced();
  t.children[3] = 9;
  EXPECT_THAT(refusal(t), HasSubstr("node 1: child 9 is not a node (0..6, or -1 for none)"));
  t = balanced();
  t.prim_count[0] = 2;
  EXPECT_THAT(refusal(t), HasSubstr("node 0 has both children and primitives"));
  t = balanced();
  t.prim_count[5] = 0;
  EXPECT_THAT(refusal(t), HasSubstr("node 5 has neither children nor primitives"));
  t = balanced();
  t.prim_begin[6] = 3;
  t.prim_count[6] = 2;
  EXPECT_THAT(refusal(t), HasSubstr("leaf node 6: its primitives [3, 3 + 2) are not inside the 4 entries"));
  t = balanced();
  t.primitives[2] = 17;
  EXPECT_THAT(refusal(t), HasSubstr("leaf node 5: primitive 17 is not a triangle of the scene (0..3)"));
  t = balanced();
  t.prim_begin.pop_back();
  EXPECT_THAT(refusal(t), HasSubstr("must have one row per node"));
  t = balanced();
  t.width = 9;
  EXPECT_THAT(refusal(t), HasSubstr("rows of 9 entries"));
}

TEST(GivenTree, DegenerateTrianglesAreRefused) {
  Scene s = four_triangles();
  const Vec3 p{9.0f, 9.0f, 9.0f};
  test::add_triangle(s, p, p, p);  // triangle 4, zero area
  TreeTopology t = balanced();
  t.primitives[3] = 4;
  try {
    check_topology(s, t, 8);
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("leaf node 6 holds triangle 4, which is degenerate"));
  }
  t.primitives[3] = 3;  // the degenerate triangle may be left out
  EXPECT_NO_THROW(check_topology(s, t, 8));
}

// hwbvh's own binary tree, exported and given back, is the same binary tree and so collapses to the same wide tree.
TEST(GivenTree, TheExportedTreeOfABuildGivesThatBuildsWideTree) {
  for (const Scene& scene : {test::random_soup(3000, 5), test::grid(30, 20)}) {
    BuildOptions options;
    options.threads = 2;
    const BuildResult own = build_wide_bvh(scene, options);
    options.tree = std::make_shared<const TreeTopology>(export_topology(scene, options, scene.source));
    EXPECT_EQ(options.tree->primitives.size(), scene.triangles.size());
    const BuildResult again = build_wide_bvh(scene, options);
    EXPECT_TRUE(again.bvh == own.bvh) << scene.source;
    EXPECT_EQ(again.stats.binary_nodes, own.stats.binary_nodes);
    EXPECT_EQ(again.stats.split_leaves, 0u);
    EXPECT_EQ(build_wide_bvh4(scene, options).bvh, build_wide_bvh4(scene, BuildOptions{}).bvh);
  }
}

TEST(GivenTree, QualityHighCannotBeExported) {
  BuildOptions options;
  options.quality = BuildQuality::High;
  try {
    (void)export_topology(test::grid(4, 4), options, "grid");
    FAIL() << "exported";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("grid: quality high cannot be exported"));
  }
  options.quality = BuildQuality::Low;  // Morton codes: one reference per triangle, as medium
  EXPECT_EQ(export_topology(test::grid(4, 4), options, "grid").primitives.size(), 32u);
}

// A binary leaf of several triangles becomes one-triangle leaves, which the collapse regroups into valid leaves.
TEST(GivenTree, BinaryLeavesOfSeveralTrianglesAreSplitForTheCollapse) {
  const Scene scene = test::grid(8, 8);  // 128 triangles
  TreeTopology t;
  t.source = "two-leaves";
  t.children = {1, 2, -1, -1, -1, -1};
  t.prim_begin = {0, 0, 64};
  t.prim_count = {0, 64, 64};
  for (int i = 0; i < 128; ++i) t.primitives.push_back(i);
  BuildOptions options;
  options.tree = std::make_shared<const TreeTopology>(t);
  const BuildResult built = build_wide_bvh(scene, options);
  EXPECT_EQ(built.stats.split_leaves, 2u);
  EXPECT_EQ(built.stats.binary_nodes, 255u);  // 128 leaves
  EXPECT_THAT(check_wide_bvh(scene, built.bvh, false), ::testing::IsEmpty());
}

// A wide tree is taken node for node; a leaf too large for one target leaf is split among its parent's free slots.
TEST(GivenTree, AWideTreeIsTakenAsGivenAndItsLeavesSplitToFit) {
  const Scene scene = test::grid(4, 4);  // 32 triangles
  TreeTopology t;
  t.source = "wide";
  t.width = 4;
  t.children = {1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  t.prim_begin = {0, 0, 8};
  t.prim_count = {0, 8, 24};
  for (int i = 0; i < 32; ++i) t.primitives.push_back(i);
  BuildOptions options;
  options.max_leaf_pairs = 4;
  options.tree = std::make_shared<const TreeTopology>(t);
  const BuildResult built = build_wide_bvh(scene, options);
  ASSERT_EQ(built.bvh.nodes.size(), 1u);  // the root only: every child a leaf
  EXPECT_EQ(built.bvh.nodes[0].child_count, 4u);  // 8 triangles in one leaf of 4 pairs, 24 in three
  EXPECT_EQ(built.stats.split_leaves, 1u);
  EXPECT_EQ(built.stats.binary_nodes, 0u);
  EXPECT_THAT(check_wide_bvh(scene, built.bvh, false, 4), ::testing::IsEmpty());
  // With one pair a leaf, the 24 triangles need twelve slots beside the first leaf's four: the root has no room.
  options.max_leaf_pairs = 1;
  try {
    (void)build_wide_bvh(scene, options);
    FAIL() << "built";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("wide: node 0 would have more than 8 children: leaf node 2 is split into 12"));
  }
}

}  // namespace
}  // namespace hwbvh::bvh_build
