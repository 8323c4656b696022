// build_box_tree: the wide tree over boxes of a top-level structure (instances' world bounds).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/sah.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {
namespace {

const BuildQuality kQualities[] = {BuildQuality::Low, BuildQuality::Medium, BuildQuality::High};

/// `n` boxes of sizes over three orders of magnitude, some flat on one axis, some overlapping (fixed seed).
std::vector<Aabb> random_boxes(int n, uint32_t seed, float reach = 100.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-reach, reach), size_exp(-2.0f, 1.0f);
  std::vector<Aabb> boxes;
  for (int i = 0; i < n; ++i) {
    const Vec3 lo{pos(rng), pos(rng), pos(rng)};
    Vec3 extent{std::pow(10.0f, size_exp(rng)), std::pow(10.0f, size_exp(rng)), std::pow(10.0f, size_exp(rng))};
    if (i % 7 == 0) extent[i % 3] = 0.0f;
    boxes.push_back({lo, lo + extent * (reach / 100.0f)});
  }
  return boxes;
}

BuildOptions options_for(BuildQuality quality, int threads) {
  BuildOptions options;
  options.quality = quality;
  options.threads = threads;
  return options;
}

/// Every box in exactly one leaf child, alone, whose bounds contain it; every node reached once from the root, with
/// 1..Width children, its bounds the union of theirs, and each internal child's bounds containing its node's.
template <int Width>
void expect_box_tree(const WideBvh<Width>& bvh, std::span<const Aabb> boxes) {
  std::vector<int> in_leaf(boxes.size(), 0), reached(bvh.nodes.size(), 0);
  ASSERT_FALSE(bvh.nodes.empty());
  reached[0] = 1;
  for (const auto& node : bvh.nodes) {
    ASSERT_GE(node.child_count, 1u);
    ASSERT_LE(node.child_count, uint32_t{Width});
    Aabb all;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const auto& child = node.children[c];
      all.grow(child.bounds);
      if (!child.is_leaf()) {
        ASSERT_LT(child.index, bvh.nodes.size());
        ++reached[child.index];
        EXPECT_TRUE(child.bounds.contains(bvh.nodes[child.index].bounds));
        continue;
      }
      ASSERT_EQ(child.pair_count, 1u);
      ASSERT_LT(child.index, bvh.pairs.size());
      const PrimPair& pair = bvh.pairs[child.index];
      EXPECT_FALSE(pair.has_tri1());
      ASSERT_LT(pair.tri0, boxes.size());
      ++in_leaf[pair.tri0];
      EXPECT_TRUE(child.bounds.contains(boxes[pair.tri0])) << "box " << pair.tri0;
    }
    EXPECT_EQ(node.bounds, all);
  }
  for (size_t n = 0; n < reached.size(); ++n) EXPECT_EQ(reached[n], 1) << "node " << n;
  for (size_t b = 0; b < in_leaf.size(); ++b) EXPECT_EQ(in_leaf[b], 1) << "box " << b;
  EXPECT_EQ(bvh.pairs.size(), boxes.size());
  EXPECT_EQ(bvh.bounds, bvh.nodes[0].bounds);
}

template <int Width>
void check_all_qualities(std::span<const Aabb> boxes) {
  for (const BuildQuality quality : kQualities) {
    SCOPED_TRACE(testing::Message() << "width " << Width << " quality " << int(quality));
    const BuildOptions options = options_for(quality, 0);
    const WideBuildResult<Width> result = build_box_tree<Width>(boxes, options, "boxes");
    expect_box_tree(result.bvh, boxes);
    const BuildStats& s = result.stats;
    EXPECT_EQ(s.references, boxes.size());
    EXPECT_EQ(s.pairs, boxes.size());
    EXPECT_EQ(s.leaves, boxes.size());
    EXPECT_EQ(s.wide_nodes, result.bvh.nodes.size());
    EXPECT_EQ(s.binary_nodes, 2 * boxes.size() - 1);
    EXPECT_EQ(s.input_triangles, 0u);
    EXPECT_DOUBLE_EQ(s.sah_cost, sah_cost(result.bvh, options.box_step_cost, options.pair_step_cost));
    EXPECT_GT(s.sah_cost, 0.0);
  }
}

TEST(BoxTree, RandomBoxesAtEveryWidthAndQuality) {
  const std::vector<Aabb> boxes = random_boxes(700, 3);
  check_all_qualities<4>(boxes);
  check_all_qualities<6>(boxes);
  check_all_qualities<8>(boxes);
}

TEST(BoxTree, HugeCoordinatesKeepContainment) {
  // Near the float limit Embree works on boxes scaled down by a power of two; the tree must still hold them.
  check_all_qualities<8>(random_boxes(200, 5, 1.0e37f));
}

TEST(BoxTree, SingleBoxAndIdenticalBoxes) {
  const std::vector<Aabb> one{{{1, 2, 3}, {4, 5, 6}}};
  const WideBuildResult<8> single = build_box_tree<8>(one, {}, "one");
  ASSERT_EQ(single.bvh.nodes.size(), 1u);
  ASSERT_EQ(single.bvh.nodes[0].child_count, 1u);
  EXPECT_TRUE(single.bvh.nodes[0].children[0].is_leaf());
  EXPECT_EQ(single.bvh.pairs, (std::vector<PrimPair>{{0, kNoIndex}}));
  EXPECT_EQ(single.bvh.bounds, one[0]);

  const std::vector<Aabb> same(50, Aabb{{0, 0, 0}, {1, 1, 1}});  // instances of one object at one place
  expect_box_tree(build_box_tree<8>(same, {}, "same").bvh, std::span<const Aabb>(same));
}

TEST(BoxTree, SameTreeAtOneAndTwoThreads) {
  const std::vector<Aabb> boxes = random_boxes(3000, 11);
  for (const BuildQuality quality : kQualities) {
    const WideBuildResult<8> a = build_box_tree<8>(boxes, options_for(quality, 1), "boxes");
    const WideBuildResult<8> b = build_box_tree<8>(boxes, options_for(quality, 2), "boxes");
    EXPECT_TRUE(a.bvh == b.bvh) << "quality " << int(quality);
    EXPECT_EQ(a.stats.sah_cost, b.stats.sah_cost);
  }
}

TEST(BoxTree, RejectsBadBoxesNamingTheSource) {
  const auto expect_refused = [](std::vector<Aabb> boxes, const std::string& what) {
    try {
      build_box_tree<8>(boxes, {}, "garden.gltf");
      ADD_FAILURE() << "expected an error: " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("garden.gltf"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_refused({}, "no boxes");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Aabb good{{0, 0, 0}, {1, 1, 1}};
  expect_refused({good, Aabb{{0, 0, 0}, {1, nan, 1}}}, "box 1 is not finite");
  expect_refused({good, good, Aabb{{-inf, 0, 0}, {1, 1, 1}}}, "box 2 is not finite");
  expect_refused({Aabb{}}, "box 0 is not finite");  // the default box is inverted infinities
  expect_refused({good, Aabb{{0, 2, 0}, {1, 1, 1}}}, "box 1 is empty");
}

}  // namespace
}  // namespace hwbvh::bvh_build
