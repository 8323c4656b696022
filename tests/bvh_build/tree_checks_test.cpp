#include "hwbvh/bvh_build/tree_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bvh_build/build_scenes.h"
#include "hwbvh/bvh_build/builder.h"

namespace hwbvh::bvh_build {
namespace {

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

class TreeChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildOptions options;
    options.max_leaf_pairs = 2;
    bvh_ = build_wide_bvh(scene_, options).bvh;
    ASSERT_TRUE(check_wide_bvh(scene_, bvh_, false, 2).empty());
    ASSERT_GT(bvh_.nodes.size(), 1u);
  }
  // The first leaf child in node order.
  WideBvh8::Child& some_leaf() {
    for (WideBvh8::Node& node : bvh_.nodes) {
      for (uint32_t i = 0; i < node.child_count; ++i) {
        if (node.children[i].is_leaf()) return node.children[i];
      }
    }
    return bvh_.nodes[0].children[0];
  }

  Scene scene_ = test::random_soup(300);
  WideBvh8 bvh_;
};

TEST_F(TreeChecks, FindsAMissingTriangle) {
  bvh_.pairs[some_leaf().index].tri0 = bvh_.pairs[some_leaf().index].tri1 == kNoIndex ? 0 : 1;
  EXPECT_FALSE(check_wide_bvh(scene_, bvh_, false).empty());
}

TEST_F(TreeChecks, FindsABadChildCount) {
  bvh_.nodes[0].child_count = 0;
  EXPECT_TRUE(mentions(check_wide_bvh(scene_, bvh_, false), "has 0 children"));
}

TEST_F(TreeChecks, FindsAChildBoxOutsideItsNode) {
  bvh_.nodes[0].children[0].bounds.max.x += 10.0f;
  EXPECT_TRUE(mentions(check_wide_bvh(scene_, bvh_, false), "not inside the node box"));
}

TEST_F(TreeChecks, FindsATooSmallLeafBox) {
  WideBvh8::Child& leaf = some_leaf();
  leaf.bounds.max = leaf.bounds.min;
  EXPECT_TRUE(mentions(check_wide_bvh(scene_, bvh_, false), "does not contain triangle"));
}

TEST_F(TreeChecks, FindsTooManyPairs) {
  EXPECT_TRUE(mentions(check_wide_bvh(scene_, bvh_, false, 0), "pairs (max 0)"));
}

TEST_F(TreeChecks, FindsAnUnreachableNode) {
  bvh_.nodes.push_back(bvh_.nodes.back());
  EXPECT_TRUE(mentions(check_wide_bvh(scene_, bvh_, false), "not reachable"));
}

TEST_F(TreeChecks, FindsANodeReachedTwice) {
  WideBvh8::Node& root = bvh_.nodes[0];
  for (uint32_t i = 0; i < root.child_count; ++i) {
    if (!root.children[i].is_leaf()) root.children[0] = root.children[i];
  }
  EXPECT_FALSE(check_wide_bvh(scene_, bvh_, false).empty());
}

TEST_F(TreeChecks, DuplicatesAreAllowedOnlyWhenAsked) {
  // Reference triangle t a second time from another leaf (as a spatial split would).
  WideBvh8::Child& leaf = some_leaf();
  const uint32_t t = bvh_.pairs[leaf.index].tri0;
  auto node = std::find_if(bvh_.nodes.begin(), bvh_.nodes.end(), [](const auto& n) { return n.child_count < 8; });
  ASSERT_NE(node, bvh_.nodes.end());
  WideBvh8::Child extra;
  extra.bounds = node->bounds;
  extra.index = static_cast<uint32_t>(bvh_.pairs.size());
  extra.pair_count = 1;
  bvh_.pairs.push_back({t, kNoIndex});
  node->children[node->child_count++] = extra;
  EXPECT_TRUE(mentions(check_wide_bvh(scene_, bvh_, false), "referenced 2 times"));
  EXPECT_TRUE(check_wide_bvh(scene_, bvh_, true).empty());
}

TEST_F(TreeChecks, FindsDegenerateAndEqualPairs) {
  Scene scene = scene_;
  test::add_indexed(scene, 0, 0, 1);
  const auto degenerate = static_cast<uint32_t>(scene.triangles.size() - 1);
  WideBvh8::Child& leaf = some_leaf();
  bvh_.pairs[leaf.index].tri1 = bvh_.pairs[leaf.index].tri0;
  EXPECT_TRUE(mentions(check_wide_bvh(scene, bvh_, false), "equal or no triangles"));
  bvh_.pairs[leaf.index].tri1 = degenerate;
  EXPECT_TRUE(mentions(check_wide_bvh(scene, bvh_, false), "degenerate triangle"));
}

}  // namespace
}  // namespace hwbvh::bvh_build
