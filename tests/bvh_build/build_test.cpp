#include "hwbvh/bvh_build/builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "bvh_build/build_scenes.h"
#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/collapse.h"
#include "hwbvh/bvh_build/embree_builder.h"
#include "hwbvh/bvh_build/pairing.h"
#include "hwbvh/bvh_build/sah.h"
#include "hwbvh/bvh_build/tree_checks.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {
namespace {

const BuildQuality kQualities[] = {BuildQuality::Low, BuildQuality::Medium, BuildQuality::High};

std::string name(BuildQuality q) {
  return q == BuildQuality::Low ? "low" : q == BuildQuality::Medium ? "medium" : "high";
}

BuildOptions options_for(BuildQuality quality, int threads = 0) {
  BuildOptions options;
  options.quality = quality;
  options.threads = threads;
  return options;
}

void expect_clean(const Scene& scene, const BuildResult& result, const BuildOptions& options) {
  const auto problems = check_wide_bvh(scene, result.bvh, options.quality == BuildQuality::High,
                                       options.max_leaf_pairs);
  EXPECT_TRUE(problems.empty()) << scene.source << " " << name(options.quality) << ": " << problems.size()
                                << " problems, first: " << (problems.empty() ? "" : problems[0]);
}

std::vector<Scene> small_scenes() {
  return {test::random_soup(2000), test::grid(24, 20), test::single_triangle(), test::nine_clusters(),
          test::long_diagonals(300)};
}

TEST(Build, TreesAreCleanAtAllQualities) {
  for (const Scene& scene : small_scenes()) {
    for (const BuildQuality quality : kQualities) {
      const BuildOptions options = options_for(quality);
      const BuildResult result = build_wide_bvh(scene, options);
      expect_clean(scene, result, options);
      const BuildStats& s = result.stats;
      EXPECT_EQ(s.input_triangles, scene.triangles.size());
      EXPECT_EQ(s.bvh_triangles, scene.triangles.size());
      EXPECT_EQ(s.degenerate_triangles, 0u);
      EXPECT_EQ(s.wide_nodes, result.bvh.nodes.size());
      EXPECT_EQ(s.pairs, result.bvh.pairs.size());
      EXPECT_GE(s.references, s.bvh_triangles);
      if (quality != BuildQuality::High) {
        EXPECT_EQ(s.references, s.bvh_triangles);
      }
      EXPECT_GT(s.sah_cost, 0.0);
      EXPECT_DOUBLE_EQ(s.sah_cost, sah_cost(result.bvh, options.box_step_cost, options.pair_step_cost));
    }
  }
}

TEST(Build, SingleTriangleRootHasOneLeafChild) {
  const Scene scene = test::single_triangle();
  const BuildResult result = build_wide_bvh(scene, {});
  ASSERT_EQ(result.bvh.nodes.size(), 1u);
  const WideBvh8::Node& root = result.bvh.nodes[0];
  ASSERT_EQ(root.child_count, 1u);
  EXPECT_TRUE(root.children[0].is_leaf());
  EXPECT_EQ(result.bvh.pairs, (std::vector<PrimPair>{{0, kNoIndex}}));
  EXPECT_EQ(result.bvh.bounds, (Aabb{{0, 0, 0}, {1, 1, 0}}));
}

TEST(Build, ATinyMeshIsOneLeafBehindTheRoot) {
  // Two triangles sharing an edge: as one leaf (one pair) behind the root box the SAH cost is box + pair; spread over
  // the root as two one-triangle leaves it is box + 2 pairs (both leaves' boxes are the whole quad).
  const Scene quad = test::quad_grid(1, 2.0f);
  const BuildResult result = build_wide_bvh(quad, {});
  ASSERT_EQ(result.bvh.nodes.size(), 1u);
  const WideBvh8::Node& root = result.bvh.nodes[0];
  ASSERT_EQ(root.child_count, 1u);
  EXPECT_EQ(root.children[0].pair_count, 1u);
  ASSERT_EQ(result.bvh.pairs.size(), 1u);
  EXPECT_TRUE(result.bvh.pairs[0].has_tri1());
  EXPECT_DOUBLE_EQ(result.stats.sah_cost, 2.0);  // the root's step and the pair's, each over the root's area
  // Two small triangles far apart, which fit one leaf too: there the two children cost less than the leaf, whose box
  // would be the root's, so the root keeps them apart.
  Scene apart;
  apart.source = "apart";
  apart.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {10, 10, 10}, {11, 10, 10}, {10, 11, 10}};
  apart.triangles = {Triangle{.v = {0, 1, 2}, .geometry = 0, .primitive = 0},
                     Triangle{.v = {3, 4, 5}, .geometry = 0, .primitive = 1}};
  apart.geometries = {Geometry{"apart", 0, 2}};
  EXPECT_EQ(build_wide_bvh(apart, {}).bvh.nodes[0].child_count, 2u);
}

TEST(Build, NineClustersNeedMoreThanTheRoot) {
  const Scene scene = test::nine_clusters();
  BuildOptions options;
  options.max_leaf_pairs = 1;  // no leaf can hold a whole cluster of three unpaired triangles
  const BuildResult result = build_wide_bvh(scene, options);
  expect_clean(scene, result, options);
  EXPECT_GT(result.bvh.nodes.size(), 1u);
}

TEST(Build, HighQualitySplitsLongDiagonalTriangles) {
  const Scene scene = test::long_diagonals(300);
  const BuildResult medium = build_wide_bvh(scene, options_for(BuildQuality::Medium));
  const BuildResult high = build_wide_bvh(scene, options_for(BuildQuality::High));
  EXPECT_GT(high.stats.references, high.stats.bvh_triangles);
  EXPECT_LT(high.stats.sah_cost, medium.stats.sah_cost);
  std::printf("diagonals: medium SAH %.3f, high SAH %.3f with %u references for %u triangles\n",
              medium.stats.sah_cost, high.stats.sah_cost, high.stats.references, high.stats.bvh_triangles);
}

TEST(Build, GridLeavesArePairedQuads) {
  const Scene scene = test::grid(16, 16);
  const BuildResult result = build_wide_bvh(scene, {});
  uint32_t lone = 0;
  for (const PrimPair& p : result.bvh.pairs) lone += p.has_tri1() ? 0 : 1;
  EXPECT_LE(lone, result.stats.pairs / 10) << "most grid triangles should find their quad partner";
}

TEST(Build, LeafFitsIsHonoured) {
  const Scene scene = test::grid(20, 20);
  BuildOptions options;
  std::atomic<int> calls{0};
  options.leaf_fits = [&](const Scene&, std::span<const PrimPair> pairs) {
    ++calls;
    return pairs.size() <= 2;
  };
  options.box_step_cost = 4.0f;  // makes big leaves attractive, so the fit test has something to refuse
  const BuildResult result = build_wide_bvh(scene, options);
  expect_clean(scene, result, options);
  EXPECT_GT(calls.load(), 0);
  for (const WideBvh8::Node& node : result.bvh.nodes) {
    for (uint32_t i = 0; i < node.child_count; ++i) EXPECT_LE(node.children[i].pair_count, 2u);
  }
}

TEST(Build, LeafSizeFollowsMaxLeafPairs) {
  const Scene scene = test::random_soup(1000);
  for (const uint32_t max_pairs : {1u, 3u, 8u}) {
    BuildOptions options;
    options.max_leaf_pairs = max_pairs;
    options.box_step_cost = 8.0f;
    const BuildResult result = build_wide_bvh(scene, options);
    expect_clean(scene, result, options);
  }
}

TEST(Build, DeterministicAcrossThreadCounts) {
  // Above Embree's thresholds for parallel binning (3072 references) and parallel recursion (1024).
  const Scene scenes[] = {test::random_soup(4000, 11), test::long_diagonals(800, 5), test::grid(36, 36)};
  for (const Scene& scene : scenes) {
    for (const BuildQuality quality : kQualities) {
      const BuildResult one = build_wide_bvh(scene, options_for(quality, 1));
      const BuildResult two = build_wide_bvh(scene, options_for(quality, 2));
      const BuildResult again = build_wide_bvh(scene, options_for(quality, 2));
      EXPECT_TRUE(one.bvh == two.bvh) << scene.source << " " << name(quality);
      EXPECT_TRUE(two.bvh == again.bvh) << scene.source << " " << name(quality);
    }
  }
}

TEST(Build, LeavesHoldThePairingOfTheirTrianglesAtAnyThreadCount) {
  // Large enough for many evaluation tasks and for breadth-first levels of more wide nodes than one worker takes
  // at a time; a leaf test that refuses some candidates makes the collapse drop pairs it has kept for them.
  const Scene scenes[] = {test::grid(160, 160), test::random_soup(30000, 7)};
  for (const Scene& scene : scenes) {
    BuildOptions options = options_for(BuildQuality::Medium, 1);
    options.pair_leftovers = true;
    options.box_step_cost = 4.0f;  // leaves of several pairs
    options.leaf_fits = [](const Scene&, std::span<const PrimPair> pairs) { return pairs[0].tri0 % 3 != 0; };
    const BuildResult one = build_wide_bvh(scene, options);
    options.threads = 2;
    const BuildResult two = build_wide_bvh(scene, options);
    EXPECT_TRUE(one.bvh == two.bvh) << scene.source;
    const TrianglePairing pairing(scene, true);
    for (const WideBvh8::Node& node : one.bvh.nodes) {
      for (uint32_t c = 0; c < node.child_count; ++c) {
        const WideBvh8::Child& child = node.children[c];
        if (!child.is_leaf()) continue;
        const std::span<const PrimPair> leaf(one.bvh.pairs.data() + child.index, child.pair_count);
        std::vector<uint32_t> triangles;
        for (const PrimPair& pair : leaf) {
          triangles.push_back(pair.tri0);
          if (pair.has_tri1()) triangles.push_back(pair.tri1);
        }
        std::sort(triangles.begin(), triangles.end());
        Aabb box;  // the leaf's bounds are its binary node's: exactly its triangles' box (no spatial splits)
        for (const uint32_t t : triangles) {
          for (const uint32_t v : scene.triangles[t].v) box.grow(scene.positions[v]);
        }
        ASSERT_TRUE(box == child.bounds) << scene.source;
        std::vector<PrimPair> expected;
        pairing.pair(triangles, expected);
        ASSERT_TRUE(std::equal(leaf.begin(), leaf.end(), expected.begin(), expected.end())) << scene.source;
        if (leaf.size() > 1 || leaf[0].has_tri1()) {  // a lone triangle is not asked
          ASSERT_NE(leaf[0].tri0 % 3, 0u) << scene.source;
        }
      }
    }
  }
}

// Reference collapse: each wide node opens its largest binary children until it has 8; one triangle per leaf.
WideBvh8 greedy_collapse(const BinaryBvh& binary) {
  WideBvh8 out;
  std::vector<uint32_t> source{0};
  out.nodes.emplace_back();
  for (size_t w = 0; w < out.nodes.size(); ++w) {
    const BinaryBvh::Node& root = binary.nodes[source[w]];
    std::vector<uint32_t> open = root.is_leaf() ? std::vector<uint32_t>{source[w]}
                                                : std::vector<uint32_t>{BinaryBvh::left(source[w]), root.right};
    while (open.size() < 8) {
      auto largest = open.end();
      for (auto it = open.begin(); it != open.end(); ++it) {
        if (binary.nodes[*it].is_leaf()) continue;
        if (largest == open.end() ||
            binary.nodes[*it].bounds.surface_area() > binary.nodes[*largest].bounds.surface_area()) {
          largest = it;
        }
      }
      if (largest == open.end()) break;
      const BinaryBvh::Node& opened = binary.nodes[*largest];
      *largest = BinaryBvh::left(*largest);
      open.push_back(opened.right);
    }
    WideBvh8::Node node;
    for (const uint32_t b : open) {
      WideBvh8::Child& child = node.children[node.child_count++];
      child.bounds = binary.nodes[b].bounds;
      node.bounds.grow(child.bounds);
      if (binary.nodes[b].is_leaf()) {
        child.index = static_cast<uint32_t>(out.pairs.size());
        child.pair_count = 1;
        out.pairs.push_back({binary.refs[binary.nodes[b].first_ref].triangle, kNoIndex});
      } else {
        child.index = static_cast<uint32_t>(out.nodes.size());
        out.nodes.emplace_back();
        source.push_back(b);
      }
    }
    out.nodes[w] = node;
  }
  out.bounds = out.nodes[0].bounds;
  return out;
}

TEST(Build, OptimalCollapseBeatsGreedyCollapse) {
  for (const Scene& scene : small_scenes()) {
    for (const BuildQuality quality : kQualities) {
      const BuildOptions options = options_for(quality);
      std::vector<uint32_t> all(scene.triangles.size());
      for (uint32_t t = 0; t < all.size(); ++t) all[t] = t;
      const BinaryBvh binary = build_binary_bvh(scene, all, options);
      const WideBvh8 greedy = greedy_collapse(binary);
      ASSERT_TRUE(check_wide_bvh(scene, greedy, quality == BuildQuality::High).empty());
      const double greedy_cost = sah_cost(greedy, options.box_step_cost, options.pair_step_cost);
      const double optimal_cost =
          sah_cost(collapse_to_wide(scene, binary, options), options.box_step_cost, options.pair_step_cost);
      EXPECT_LE(optimal_cost, greedy_cost * (1.0 + 1e-5)) << scene.source << " " << name(quality);
    }
  }
}

// Half the surface area: the SAH's area term, as the binned builder's exact sweep costs it.
float half_area(const Aabb& box) {
  const Vec3 e = box.max - box.min;
  return e.x * e.y + e.y * e.z + e.z * e.x;
}

// The lowest cost area(left) * count(left) + area(right) * count(right) of any cut of `boxes` sorted by box centre
// along an axis.
float best_sweep_cost(std::vector<Aabb> boxes) {
  float best = std::numeric_limits<float>::infinity();
  for (int axis = 0; axis < 3; ++axis) {
    std::sort(boxes.begin(), boxes.end(), [axis](const Aabb& a, const Aabb& b) {
      return a.min[axis] + a.max[axis] < b.min[axis] + b.max[axis];
    });
    for (size_t cut = 1; cut < boxes.size(); ++cut) {
      Aabb left, right;
      for (size_t i = 0; i < boxes.size(); ++i) (i < cut ? left : right).grow(boxes[i]);
      best = std::min(best, half_area(left) * static_cast<float>(cut) +
                                half_area(right) * static_cast<float>(boxes.size() - cut));
    }
  }
  return best;
}

// At medium quality the binned builder splits nodes of a few references by the best cut of an exact sweep, where
// a binned SAH (4 bins for so few references) would miss some of these cuts.
TEST(Build, SmallSubtreesAreSplitByTheExactSweep) {
  uint32_t checked = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const Scene scene = test::random_triangle_soup(200, seed, 10.0f, 1.5f);
    std::vector<uint32_t> all(scene.triangles.size());
    for (uint32_t t = 0; t < all.size(); ++t) all[t] = t;
    const BinaryBvh binary = build_binary_bvh(scene, all, options_for(BuildQuality::Medium));
    for (uint32_t n = 0; n < binary.nodes.size(); ++n) {
      const BinaryBvh::Node& node = binary.nodes[n];
      if (node.is_leaf() || node.ref_count > 8) continue;
      std::vector<Aabb> boxes;
      for (uint32_t i = 0; i < node.ref_count; ++i) {
        const uint32_t tri = binary.refs[node.first_ref + i].triangle;
        boxes.push_back(triangle_bounds(scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2)));
      }
      const BinaryBvh::Node& l = binary.nodes[BinaryBvh::left(n)];
      const BinaryBvh::Node& r = binary.nodes[node.right];
      const float cost = half_area(l.bounds) * static_cast<float>(l.ref_count) +
                         half_area(r.bounds) * static_cast<float>(r.ref_count);
      EXPECT_LE(cost, best_sweep_cost(boxes) * (1.0f + 1e-6f)) << scene.source << " node " << n;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

// Embree's nodes (low, high) are converted in parallel subtrees, and the binned builder (medium) bins and builds
// subtrees in parallel: the binary tree must be whole and the same at any thread count.
TEST(Build, BinaryTreeIsWholeAndTheSameAtAnyThreadCount) {
  const Scene scene = test::random_triangle_soup(30000, 7);
  std::vector<uint32_t> all(scene.triangles.size());
  for (uint32_t t = 0; t < all.size(); ++t) all[t] = t;
  for (const BuildQuality quality : kQualities) {
    const BinaryBvh one = build_binary_bvh(scene, all, options_for(quality, 1));
    const BinaryBvh two = build_binary_bvh(scene, all, options_for(quality, 2));
    ASSERT_EQ(one.nodes.size(), two.nodes.size()) << name(quality);
    ASSERT_EQ(one.refs.size(), two.refs.size()) << name(quality);
    for (size_t i = 0; i < one.refs.size(); ++i) ASSERT_EQ(one.refs[i].triangle, two.refs[i].triangle) << i;
    std::vector<uint32_t> seen(scene.triangles.size(), 0);
    for (const BinaryBvh::Ref& ref : one.refs) ++seen[ref.triangle];
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 0u), 0) << name(quality);  // every triangle in some leaf
    for (uint32_t n = 0; n < one.nodes.size(); ++n) {
      const BinaryBvh::Node& a = one.nodes[n];
      const BinaryBvh::Node& b = two.nodes[n];
      ASSERT_TRUE(a.bounds.min == b.bounds.min && a.bounds.max == b.bounds.max && a.right == b.right &&
                  a.first_ref == b.first_ref && a.ref_count == b.ref_count)
          << name(quality) << " node " << n;
      if (a.is_leaf()) {
        ASSERT_EQ(a.ref_count, 1u) << name(quality) << " node " << n;
        continue;
      }
      const BinaryBvh::Node& l = one.nodes[BinaryBvh::left(n)];
      const BinaryBvh::Node& r = one.nodes[a.right];
      Aabb both = l.bounds;
      both.grow(r.bounds);
      ASSERT_TRUE(both.min == a.bounds.min && both.max == a.bounds.max) << name(quality) << " node " << n;
      ASSERT_EQ(l.first_ref, a.first_ref) << name(quality) << " node " << n;
      ASSERT_EQ(r.first_ref, a.first_ref + l.ref_count) << name(quality) << " node " << n;
      ASSERT_EQ(a.ref_count, l.ref_count + r.ref_count) << name(quality) << " node " << n;
      ASSERT_EQ(a.right, n + 2 * l.ref_count) << name(quality) << " node " << n;  // the left subtree's nodes
    }
  }
}

TEST(Build, MoreLeafPairsNeverCostMore) {
  const Scene scene = test::grid(30, 30);
  BuildOptions one;
  one.max_leaf_pairs = 1;
  const BuildOptions eight;
  const double cost_one = build_wide_bvh(scene, one).stats.sah_cost;
  const double cost_eight = build_wide_bvh(scene, eight).stats.sah_cost;
  EXPECT_LE(cost_eight, cost_one * (1.0 + 1e-5));
}

TEST(Build, DeepTreesBuild) {
  const Scene scene = test::deep_chain(100);
  for (const BuildQuality quality : kQualities) {
    const BuildOptions options = options_for(quality);
    expect_clean(scene, build_wide_bvh(scene, options), options);
  }
}

TEST(Build, DegenerateTrianglesAreSkippedAndCounted) {
  Scene scene = test::random_soup(50);
  test::add_triangle(scene, {0, 0, 0}, {1, 1, 1}, {2, 2, 2});  // collinear
  test::add_indexed(scene, 0, 0, 1);                          // repeated vertex
  const BuildOptions options;
  const BuildResult result = build_wide_bvh(scene, options);
  EXPECT_EQ(result.stats.degenerate_triangles, 2u);
  EXPECT_EQ(result.stats.bvh_triangles, 50u);
  expect_clean(scene, result, options);
}

TEST(Build, RejectsBadInput) {
  Scene scene;
  scene.source = "flat.obj";
  test::add_triangle(scene, {0, 0, 0}, {1, 0, 0}, {2, 0, 0});
  try {
    build_wide_bvh(scene, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("flat.obj"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("no non-degenerate triangles"), std::string::npos);
  }
  BuildOptions options;
  options.max_leaf_pairs = 0;
  EXPECT_THROW(build_wide_bvh(test::single_triangle(), options), Error);
  options.max_leaf_pairs = 33;
  EXPECT_THROW(build_wide_bvh(test::single_triangle(), options), Error);
}

TEST(Build, StanfordBunny) {
  const auto path = test::shared_scene("stanford-bunny.obj");
  if (path.empty()) GTEST_SKIP() << "../shared/scenes/stanford-bunny.obj not present";
  const Scene scene = load_obj(path);
  const BuildOptions options;  // medium quality, all threads: the default pipeline
  const BuildResult result = build_wide_bvh(scene, options);
  expect_clean(scene, result, options);
  const BuildStats& s = result.stats;
  EXPECT_EQ(s.bvh_triangles + s.degenerate_triangles, scene.triangles.size());
  std::printf("bunny: %u triangles (%u degenerate), %u binary -> %u wide nodes, %u leaves, %u pairs, SAH %.2f, "
              "binary %.3f s, collapse %.3f s\n",
              s.input_triangles, s.degenerate_triangles, s.binary_nodes, s.wide_nodes, s.leaves, s.pairs,
              s.sah_cost, s.seconds_binary, s.seconds_collapse);
}

}  // namespace
}  // namespace hwbvh::bvh_build
