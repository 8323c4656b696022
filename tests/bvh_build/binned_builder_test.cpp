// build_binned_bvh: the binned-SAH binary builder of medium quality (binned_builder.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fixtures/paths.h"
#include "hwbvh/bvh_build/binned_builder.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {
namespace {

std::vector<BinnedRef> refs_of(const std::vector<Aabb>& boxes) {
  std::vector<BinnedRef> refs;
  for (size_t i = 0; i < boxes.size(); ++i) refs.push_back({boxes[i].min, static_cast<uint32_t>(i), boxes[i].max});
  return refs;
}

std::vector<Aabb> unit_cubes_along_x(const std::vector<float>& xs) {
  std::vector<Aabb> boxes;
  for (const float x : xs) boxes.push_back({{x, 0.0f, 0.0f}, {x + 1.0f, 1.0f, 1.0f}});
  return boxes;
}

std::vector<Aabb> random_boxes(size_t n, uint32_t seed, float reach = 100.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-reach, reach), size(0.0f, reach / 50.0f);
  std::vector<Aabb> boxes;
  for (size_t i = 0; i < n; ++i) {
    const Vec3 lo{pos(rng), pos(rng), pos(rng)};
    boxes.push_back({lo, lo + Vec3{size(rng), size(rng), i % 5 == 0 ? 0.0f : size(rng)}});
  }
  return boxes;
}

BinaryBvh build(const std::vector<Aabb>& boxes, int threads = 1) {
  return build_binned_bvh(refs_of(boxes), threads, {});
}

// Every box in exactly one leaf, alone, with its own box as bounds; every inner node's bounds exactly the union of
// its children's; nodes in preorder with the left child next and the right one after the left subtree's 2n - 1 nodes.
void expect_exact_tree(const BinaryBvh& bvh, const std::vector<Aabb>& boxes) {
  ASSERT_EQ(bvh.nodes.size(), 2 * boxes.size() - 1);
  ASSERT_EQ(bvh.refs.size(), boxes.size());
  std::vector<int> seen(boxes.size(), 0);
  for (const BinaryBvh::Ref& ref : bvh.refs) {
    ASSERT_LT(ref.triangle, boxes.size());
    ++seen[ref.triangle];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(boxes.size()));
  EXPECT_EQ(bvh.nodes[0].first_ref, 0u);
  EXPECT_EQ(bvh.nodes[0].ref_count, boxes.size());
  for (uint32_t n = 0; n < bvh.nodes.size(); ++n) {
    const BinaryBvh::Node& node = bvh.nodes[n];
    if (node.is_leaf()) {
      ASSERT_EQ(node.ref_count, 1u) << n;
      EXPECT_EQ(node.bounds, boxes[bvh.refs[node.first_ref].triangle]) << n;
      continue;
    }
    const BinaryBvh::Node& l = bvh.nodes[BinaryBvh::left(n)];
    ASSERT_EQ(node.right, n + 2 * l.ref_count) << n;
    ASSERT_LT(node.right, bvh.nodes.size()) << n;
    const BinaryBvh::Node& r = bvh.nodes[node.right];
    Aabb both = l.bounds;
    both.grow(r.bounds);
    EXPECT_EQ(node.bounds, both) << n;
    EXPECT_EQ(l.first_ref, node.first_ref) << n;
    EXPECT_EQ(r.first_ref, node.first_ref + l.ref_count) << n;
    EXPECT_EQ(node.ref_count, l.ref_count + r.ref_count) << n;
  }
}

bool same_bytes(const BinaryBvh& a, const BinaryBvh& b) {
  return a.nodes.size() == b.nodes.size() && a.refs.size() == b.refs.size() &&
         std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(BinaryBvh::Node)) == 0 &&
         std::memcmp(a.refs.data(), b.refs.data(), a.refs.size() * sizeof(BinaryBvh::Ref)) == 0;
}

TEST(BinnedBuilder, RandomBoxesGiveAnExactTree) {
  for (const size_t n : {3u, 9u, 100u, 5000u}) {
    const std::vector<Aabb> boxes = random_boxes(n, static_cast<uint32_t>(n));
    expect_exact_tree(build(boxes), boxes);
  }
}

TEST(BinnedBuilder, RealMeshesGiveAnExactTree) {
  for (const char* name : {"rotated-objects.obj", "cornell-box.obj", "overflow-fan.obj"}) {
    const Scene scene = load_obj(test::project_scene(name));
    std::vector<Aabb> boxes;
    for (uint32_t t = 0; t < scene.triangles.size(); ++t) {
      if (!scene.is_degenerate(t)) {
        boxes.push_back(triangle_bounds(scene.vertex(t, 0), scene.vertex(t, 1), scene.vertex(t, 2)));
      }
    }
    SCOPED_TRACE(name);
    expect_exact_tree(build(boxes, 2), boxes);
  }
}

// Large enough that the top nodes are binned and bounded in parallel blocks and subtrees become tasks.
TEST(BinnedBuilder, SameBytesAtOneAndTwoThreads) {
  const std::vector<Aabb> boxes = random_boxes(300000, 11);
  const BinaryBvh one = build(boxes, 1);
  expect_exact_tree(one, boxes);
  EXPECT_TRUE(same_bytes(one, build(boxes, 2)));
  EXPECT_TRUE(same_bytes(one, build(boxes, 0)));
}

// Above the exact sweep's size, a binned split puts the side with more references first (as Embree orders
// children, which the collapse's pairing and the steps per ray were measured with).
TEST(BinnedBuilder, LargerChildComesFirstAtBinnedNodes) {
  const std::vector<Aabb> boxes = random_boxes(5000, 9);
  const BinaryBvh bvh = build(boxes);
  uint32_t binned = 0;
  for (uint32_t n = 0; n < bvh.nodes.size(); ++n) {
    const BinaryBvh::Node& node = bvh.nodes[n];
    if (node.ref_count <= 8) continue;
    EXPECT_GE(bvh.nodes[BinaryBvh::left(n)].ref_count, bvh.nodes[node.right].ref_count) << n;
    ++binned;
  }
  EXPECT_GT(binned, 500u);
}

// Unit cubes at x = 0, 1, 2 and 100: the SAH puts the far one alone (3 * 7 + 1 * 3 = 24, where the even cut
// costs 2 * 5 + 2 * 199), and the three near ones tie between their two cuts (1 * 3 + 2 * 5 either way): the
// first cut wins, along the first axis.
TEST(BinnedBuilder, ExactSweepTakesTheCheapestCutAndTheFirstOfATie) {
  const std::vector<Aabb> boxes = unit_cubes_along_x({100.0f, 2.0f, 0.0f, 1.0f});
  const BinaryBvh bvh = build(boxes);
  expect_exact_tree(bvh, boxes);
  EXPECT_EQ(bvh.nodes[0].right, 6u);
  EXPECT_EQ(bvh.nodes[1].ref_count, 3u);
  EXPECT_EQ(bvh.nodes[1].right, 3u);  // the three's left child is one cube: x = 0
  std::vector<uint32_t> leaf_order;
  for (const BinaryBvh::Ref& ref : bvh.refs) leaf_order.push_back(ref.triangle);
  EXPECT_EQ(leaf_order, (std::vector<uint32_t>{2, 3, 1, 0}));  // x = 0, 1, 2, 100
}

// Two clusters of many boxes, far apart along z: the binned SAH separates them at the root.
TEST(BinnedBuilder, BinnedSplitSeparatesClusters) {
  std::vector<Aabb> boxes = random_boxes(2000, 3, 1.0f);
  for (size_t i = 0; i < 1000; ++i) {
    boxes[i].min.z += 1000.0f;
    boxes[i].max.z += 1000.0f;
  }
  const BinaryBvh bvh = build(boxes);
  expect_exact_tree(bvh, boxes);
  EXPECT_EQ(bvh.nodes[1].ref_count, 1000u);
  for (uint32_t i = 0; i < 1000; ++i) EXPECT_GE(bvh.refs[i].triangle, 1000u);  // the lower cluster first
}

// No centroid can be told from another: every node is split at its middle, so the tree is balanced.
TEST(BinnedBuilder, EqualCentroidsAreSplitAtTheMiddle) {
  std::vector<Aabb> boxes;
  for (int i = 0; i < 1000; ++i) {
    const float r = 1.0f + static_cast<float>(i % 10);  // nested boxes around one centre
    boxes.push_back({Vec3{-r}, Vec3{r}});
  }
  for (const int threads : {1, 2}) {
    const BinaryBvh bvh = build(boxes, threads);
    expect_exact_tree(bvh, boxes);
    EXPECT_EQ(bvh.nodes[1].ref_count, 500u);
    EXPECT_EQ(bvh.nodes[2].ref_count, 250u);
  }
  boxes.pop_back();  // 999: the larger half first
  const BinaryBvh odd = build(boxes);
  expect_exact_tree(odd, boxes);
  EXPECT_EQ(odd.nodes[1].ref_count, 500u);
}

TEST(BinnedBuilder, OneAndTwoReferences) {
  const std::vector<Aabb> one = unit_cubes_along_x({5.0f});
  const BinaryBvh single = build(one);
  expect_exact_tree(single, one);
  EXPECT_TRUE(single.nodes[0].is_leaf());

  const std::vector<Aabb> two = unit_cubes_along_x({5.0f, 3.0f});
  const BinaryBvh pair = build(two);
  expect_exact_tree(pair, two);
  EXPECT_EQ(pair.refs[0].triangle, 1u);  // sorted by centroid
}

// Boxes reaching the float limit: extents, areas and centroids must not overflow, and the SAH still separates two
// clusters at opposite ends of the range.
TEST(BinnedBuilder, HugeCoordinatesKeepExactBoundsAndSeparateClusters) {
  constexpr float kMax = std::numeric_limits<float>::max();
  std::vector<Aabb> boxes;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int i = 0; i < 400; ++i) {
    const float side = i < 200 ? -1.0f : 1.0f;
    const Vec3 a{side * kMax * (0.5f + 0.5f * unit(rng)), kMax * (unit(rng) - 0.5f), kMax * (unit(rng) - 0.5f)};
    const Vec3 b{side * kMax * (0.5f + 0.5f * unit(rng)), kMax * (unit(rng) - 0.5f), kMax * (unit(rng) - 0.5f)};
    boxes.push_back({glm::min(a, b), glm::max(a, b)});
  }
  const BinaryBvh bvh = build(boxes, 2);
  expect_exact_tree(bvh, boxes);
  EXPECT_EQ(bvh.nodes[1].ref_count, 200u);
  for (uint32_t i = 0; i < 200; ++i) EXPECT_LT(bvh.refs[i].triangle, 200u);
}

TEST(BinnedBuilder, ProgressCountsEveryReference) {
  const std::vector<Aabb> boxes = random_boxes(100000, 2);
  for (const int threads : {1, 2}) {
    uint64_t last = 0, total = 0;
    bool increasing = true;
    const ProgressCallback progress = [&](std::string_view phase, uint64_t done, uint64_t all) {
      EXPECT_EQ(phase, "binary BVH");
      increasing = increasing && (done >= last);
      last = done;
      total = all;
    };
    build_binned_bvh(refs_of(boxes), threads, progress);
    EXPECT_TRUE(increasing);
    EXPECT_EQ(total, boxes.size());
    EXPECT_EQ(last, boxes.size());
  }
}

}  // namespace
}  // namespace hwbvh::bvh_build
