#include "hwbvh/bvh_build/pairing.h"

#include <gtest/gtest.h>

#include <vector>

#include "bvh_build/build_scenes.h"

namespace hwbvh::bvh_build {
namespace {

using test::add_indexed;
using test::add_triangle;

std::vector<PrimPair> pair_all(const Scene& scene, std::vector<uint32_t> tris) {
  std::vector<PrimPair> out;
  const uint32_t count = TrianglePairing(scene).pair(tris, out);
  EXPECT_EQ(count, out.size());
  return out;
}

int lone_count(const std::vector<PrimPair>& pairs) {
  int lone = 0;
  for (const PrimPair& p : pairs) lone += p.has_tri1() ? 0 : 1;
  return lone;
}

// A strip of n triangles along x over shared vertices: triangle i shares an edge with i-1 and i+1.
Scene strip(int n) {
  Scene scene;
  for (int i = 0; i <= n / 2 + 1; ++i) {
    scene.positions.push_back({static_cast<float>(i), 0, 0});
    scene.positions.push_back({static_cast<float>(i), 1, 0});
  }
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<uint32_t>(i);
    add_indexed(scene, k, k + 1, k + 2);
  }
  return scene;
}

TEST(Pairing, QuadWithSharedIndicesIsOnePair) {
  const Scene scene = test::grid(1, 1);
  const auto pairs = pair_all(scene, {0, 1});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], (PrimPair{0, 1}));
}

TEST(Pairing, QuadWithDuplicatedVerticesIsOnePair) {
  Scene scene;
  add_triangle(scene, {0, 0, 0}, {1, 0, 0}, {1, 1, 0});
  add_triangle(scene, {0, 0, 0}, {1, 1, 0}, {0, 1, 0});
  const auto pairs = pair_all(scene, {1, 0});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], (PrimPair{0, 1}));
}

TEST(Pairing, WeldIsTheSameOnAnyNumberOfThreads) {
  // 120k quads of two triangles with three vertices of their own each (720k positions, welded in many parallel
  // ranges): every quad is one pair however many threads welded, also when its triangles are far apart in the scene.
  Scene scene;
  constexpr int kSide = 300, kQuads = kSide * kSide;
  const auto corner = [](int q, int dx, int dy) {
    return Vec3{static_cast<float>(q % kSide + dx), static_cast<float>(q / kSide + dy), 0.0f};
  };
  for (int q = 0; q < kQuads; ++q) add_triangle(scene, corner(q, 0, 0), corner(q, 1, 0), corner(q, 1, 1));
  for (int q = 0; q < kQuads; ++q) add_triangle(scene, corner(q, 0, 0), corner(q, 1, 1), corner(q, 0, 1));
  const TrianglePairing one(scene, false, {}, Executor(1)), two(scene, false, {}, Executor(2));
  for (uint32_t q = 0; q < kQuads; q += 97) {
    // The quad and its right neighbour's first triangle, which shares an edge with neither of the quad's two.
    const std::vector<uint32_t> tris{q, q + kQuads, q + 1};
    std::vector<PrimPair> by_one, by_two;
    one.pair(tris, by_one);
    two.pair(tris, by_two);
    ASSERT_EQ(by_one, by_two) << "quad " << q;
    ASSERT_EQ(by_one[0], (PrimPair{q, q + kQuads})) << "quad " << q;
  }
}

TEST(Pairing, TrianglesSharingOnlyAVertexStayLone) {
  Scene scene;
  add_triangle(scene, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  add_triangle(scene, {0, 0, 0}, {-1, 0, 0}, {0, -1, 0});
  const auto pairs = pair_all(scene, {0, 1});
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], (PrimPair{0, kNoIndex}));
  EXPECT_EQ(pairs[1], (PrimPair{1, kNoIndex}));
}

TEST(Pairing, StripsLeaveAtMostOneLoneTriangle) {
  for (int n = 1; n <= 16; ++n) {
    const Scene scene = strip(n);
    std::vector<uint32_t> tris;
    for (int i = 0; i < n; ++i) tris.push_back(static_cast<uint32_t>(i));
    const auto pairs = pair_all(scene, tris);
    EXPECT_EQ(pairs.size(), static_cast<size_t>((n + 1) / 2)) << n;
    EXPECT_EQ(lone_count(pairs), n % 2) << n;
  }
}

TEST(Pairing, PrefersEndsOfAStripOverLowestIndices) {
  // Strip a-b-c-d numbered b=0, c=1, a=2, d=3: pairing 0 with 1 first would strand a and d.
  Scene scene;
  for (int i = 0; i < 4; ++i) {
    scene.positions.push_back({static_cast<float>(i), 0, 0});
    scene.positions.push_back({static_cast<float>(i), 1, 0});
  }
  add_indexed(scene, 1, 2, 3);  // b
  add_indexed(scene, 2, 3, 4);  // c
  add_indexed(scene, 0, 1, 2);  // a
  add_indexed(scene, 3, 4, 5);  // d
  const auto pairs = pair_all(scene, {0, 1, 2, 3});
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], (PrimPair{0, 2}));
  EXPECT_EQ(pairs[1], (PrimPair{1, 3}));
}

TEST(Pairing, StarPairsCentreOnce) {
  // Centre triangle with a neighbour on each edge: one pair, two lone triangles.
  Scene scene;
  scene.positions = {{0, 0, 0}, {2, 0, 0}, {1, 2, 0}, {1, -1, 0}, {2.5f, 1.5f, 0}, {-0.5f, 1.5f, 0}};
  add_indexed(scene, 0, 1, 2);
  add_indexed(scene, 0, 3, 1);
  add_indexed(scene, 1, 4, 2);
  add_indexed(scene, 2, 5, 0);
  const auto pairs = pair_all(scene, {0, 1, 2, 3});
  EXPECT_EQ(pairs.size(), 3u);
  EXPECT_EQ(lone_count(pairs), 2);
}

TEST(Pairing, IndependentOfInputOrder) {
  const Scene scene = test::grid(4, 2);
  const auto a = pair_all(scene, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  const auto b = pair_all(scene, {15, 3, 9, 0, 12, 6, 1, 14, 2, 8, 11, 5, 13, 4, 10, 7});
  EXPECT_EQ(a, b);
  EXPECT_EQ(lone_count(a), 0);
}

TEST(Pairing, FormatPairTestPicksTheOtherNeighbour) {
  // Strip a-b-c numbered 0, 1, 2: the middle triangle pairs with a unless the format refuses (0, 1); then with c.
  const Scene scene = strip(3);
  std::vector<PrimPair> out;
  const auto refuse_first = [](const Scene&, uint32_t tri0, uint32_t tri1) { return !(tri0 == 0 && tri1 == 1); };
  TrianglePairing(scene, false, refuse_first).pair(std::vector<uint32_t>{0, 1, 2}, out);
  EXPECT_EQ(out, (std::vector<PrimPair>{{0, kNoIndex}, {1, 2}}));
  // Leftover pairing (no shared edge needed) asks the format too.
  out.clear();
  const auto nothing = [](const Scene&, uint32_t, uint32_t) { return false; };
  TrianglePairing(scene, true, nothing).pair(std::vector<uint32_t>{0, 1, 2}, out);
  EXPECT_EQ(lone_count(out), 3);
}

}  // namespace
}  // namespace hwbvh::bvh_build
