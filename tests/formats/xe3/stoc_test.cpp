// Sub-triangle numbering (docs/xe3-format.md §3.3, §3.4) and STOC mask summaries (§5.2): the spec's tables, the Vulkan
// reference index function re-implemented from its description, and the reduction rules.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/stoc.h"

namespace hwbvh::xe3 {
namespace {

using S = SubTriangleState;
constexpr S O = S::Opaque, T = S::Transparent, U = S::Unknown;

// Centroid barycentrics of a micro-triangle at `level`.
Vec2 centroid(MicroTriangle m, uint32_t level) {
  const float n = static_cast<float>(1u << level);
  const float off = m.inverted ? 2.0f / 3.0f : 1.0f / 3.0f;
  return {(static_cast<float>(m.iu) + off) / n, (static_cast<float>(m.iv) + off) / n};
}

// The bit-parallel form of the Vulkan appendix's BarycentricsToSpaceFillingCurveIndex, written from the
// description in docs/xe3-format.md §3.4 step 4 (independent of the recursive descent in stoc.cpp).
uint32_t vulkan_bird_index(float u, float v, uint32_t level) {
  u = std::clamp(u, 0.0f, 1.0f);
  v = std::clamp(v, 0.0f, 1.0f);
  const uint32_t n = 1u << level;
  const float fu = u * static_cast<float>(n), fv = v * static_cast<float>(n);
  uint32_t iu = static_cast<uint32_t>(fu), iv = static_cast<uint32_t>(fv);
  const float uf = fu - static_cast<float>(iu), vf = fv - static_cast<float>(iv);
  iu = std::min(iu, n - 1);
  iv = std::min(iv, n - 1);
  const uint32_t iuv = iu + iv;
  if (iuv >= n) iu -= iuv - n + 1;
  uint32_t iw = ~(iu + iv);
  if (uf + vf >= 1.0f && iuv < n - 1) --iw;
  const uint32_t b0 = ~(iu ^ iw) & (n - 1);
  const uint32_t t = (iu ^ iv) & b0;
  uint32_t f = t;
  f ^= f >> 1;
  f ^= f >> 2;
  f ^= f >> 4;
  f ^= f >> 8;
  const uint32_t b1 = ((f ^ iu) & ~b0) | t;
  uint32_t index = 0;
  for (uint32_t bit = 0; bit < level; ++bit) {
    index |= ((b0 >> bit) & 1u) << (2 * bit) | ((b1 >> bit) & 1u) << (2 * bit + 1);
  }
  return index;
}

TEST(Xe3Stoc, LevelOneBirdOrderAndTies) {
  const auto idx = [](float u, float v) { return sub_triangle_index({u, v}, 1, SubTriangleOrder::Bird); };
  EXPECT_EQ(idx(0.1f, 0.1f), 0u);   // corner at vertex 0
  EXPECT_EQ(idx(0.3f, 0.3f), 1u);   // middle (inverted)
  EXPECT_EQ(idx(0.7f, 0.1f), 2u);   // corner at vertex 1
  EXPECT_EQ(idx(0.1f, 0.7f), 3u);   // corner at vertex 2
  EXPECT_EQ(idx(0.5f, 0.5f), 3u);   // §3.4's checks
  EXPECT_EQ(idx(0.5f, 0.0f), 2u);
  EXPECT_EQ(idx(0.25f, 0.25f), 1u);
  EXPECT_EQ(idx(2.0f, -1.0f), 2u);  // clamped to (1, 0)
}

TEST(Xe3Stoc, LevelTwoBirdTableOfTheSpec) {
  // §3.4: row j, cells i = 0..3 upright (U) / inverted (D).
  struct Cell {
    uint32_t iu, iv;
    bool inverted;
    uint32_t index;
  };
  const Cell table[] = {{0, 0, false, 0},  {0, 0, true, 1},   {1, 0, false, 2},  {1, 0, true, 7},
                        {2, 0, false, 8},  {2, 0, true, 9},   {3, 0, false, 10}, {0, 1, false, 3},
                        {0, 1, true, 4},   {1, 1, false, 5},  {1, 1, true, 6},   {2, 1, false, 11},
                        {0, 2, false, 14}, {0, 2, true, 13},  {1, 2, false, 12}, {0, 3, false, 15}};
  for (const Cell& c : table) {
    const MicroTriangle m{c.iu, c.iv, c.inverted};
    EXPECT_EQ(bird_index(m, 2), c.index) << c.iu << "," << c.iv << (c.inverted ? " D" : " U");
    EXPECT_EQ(bird_micro_triangle(c.index, 2), m);
    EXPECT_EQ(sub_triangle_index(centroid(m, 2), 2, SubTriangleOrder::Bird), c.index);
  }
}

TEST(Xe3Stoc, RowOrderOfThePaper) {
  // §3.3, N = 2: 0 corner at v0, 1 corner at v1, 2 centre, 3 corner at v2.
  EXPECT_EQ(row_index({0, 0, false}, 1), 0u);
  EXPECT_EQ(row_index({1, 0, false}, 1), 1u);
  EXPECT_EQ(row_index({0, 0, true}, 1), 2u);
  EXPECT_EQ(row_index({0, 1, false}, 1), 3u);
  // N = 4 list: 0 (0,0)U; 1 (1,0)U; 2 (0,0)D; 3 (0,1)U; 4 (2,0)U; 5 (1,0)D; 6 (1,1)U; 7 (0,1)D; 8 (0,2)U; 9 (3,0)U;
  // 10 (2,0)D; 11 (2,1)U; 12 (1,1)D; 13 (1,2)U; 14 (0,2)D; 15 (0,3)U.
  const MicroTriangle list[] = {{0, 0, false}, {1, 0, false}, {0, 0, true},  {0, 1, false},
                                {2, 0, false}, {1, 0, true},  {1, 1, false}, {0, 1, true},
                                {0, 2, false}, {3, 0, false}, {2, 0, true},  {2, 1, false},
                                {1, 1, true},  {1, 2, false}, {0, 2, true},  {0, 3, false}};
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(row_index(list[i], 2), i);
    EXPECT_EQ(row_micro_triangle(i, 2), list[i]);
    EXPECT_EQ(sub_triangle_index(centroid(list[i], 2), 2, SubTriangleOrder::Row), i);
  }
}

TEST(Xe3Stoc, BothOrdersAreBijectionsAndBirdIsHierarchical) {
  for (uint32_t level = 0; level <= 6; ++level) {
    std::set<std::tuple<uint32_t, uint32_t, bool>> cells;
    for (uint32_t i = 0; i < sub_triangle_count(level); ++i) {
      const MicroTriangle b = bird_micro_triangle(i, level), r = row_micro_triangle(i, level);
      ASSERT_EQ(bird_index(b, level), i);
      ASSERT_EQ(row_index(r, level), i);
      ASSERT_LT(b.iu + b.iv + (b.inverted ? 1u : 0u), 1u << level);
      cells.insert({b.iu, b.iv, b.inverted});
      if (level > 0) {
        // The ancestor one level up contains this micro-triangle's centroid.
        ASSERT_EQ(sub_triangle_index(centroid(b, level), level - 1, SubTriangleOrder::Bird), i >> 2);
      }
    }
    EXPECT_EQ(cells.size(), sub_triangle_count(level));
  }
  EXPECT_THROW(bird_micro_triangle(0, 13), Error);
}

TEST(Xe3Stoc, MatchesTheVulkanReferenceOnRandomPoints) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-0.05f, 1.05f);
  for (int i = 0; i < 20000; ++i) {
    // Include exact grid points, where ties decide.
    const bool grid = i % 4 == 0;
    const float u = grid ? static_cast<float>(rng() % 17) / 16.0f : d(rng);
    const float v = grid ? static_cast<float>(rng() % 17) / 16.0f : d(rng);
    for (uint32_t level = 0; level <= 8; ++level) {
      ASSERT_EQ(sub_triangle_index({u, v}, level, SubTriangleOrder::Bird), vulkan_bird_index(u, v, level))
          << u << ", " << v << " level " << level;
    }
  }
}

TEST(Xe3Stoc, SummaryReducesReplicatesAndFlagsSoftwareStoc) {
  // Level 2 -> level 1: quarter 0 all opaque, quarter 1 all transparent, quarter 2 mixed known, quarter 3 unknown.
  const std::vector<S> level2 = {O, O, O, O, T, T, T, T, O, T, O, O, U, U, U, U};
  const StocMasks m = summarize(level2, 1, SubTriangleOrder::Bird);
  EXPECT_EQ(m.opaque, 0b0001u);
  EXPECT_EQ(m.transparent, 0b0010u);
  EXPECT_TRUE(m.swstoc);  // quarter 2 is unknown at level 1 but known at level 2
  EXPECT_FALSE(
      summarize(std::vector<S>{O, O, O, O, T, T, T, T, U, U, U, U, O, O, O, O}, 1, SubTriangleOrder::Bird).swstoc);
  // Row order puts bird sub-triangle 1 (the middle) at bit 2 and bird 2 (corner at v1) at bit 1.
  const StocMasks row = summarize(level2, 1, SubTriangleOrder::Row);
  EXPECT_EQ(row.opaque, 0b0001u);
  EXPECT_EQ(row.transparent, 0b0100u);
  // Level 0 -> level 3: one state everywhere; level 1 -> 3: each quarter's 16 descendants.
  EXPECT_EQ(summarize(std::vector<S>{O}, 3, SubTriangleOrder::Bird), (StocMasks{~uint64_t{0}, 0, false}));
  const StocMasks up = summarize(std::vector<S>{T, U, O, T}, 3, SubTriangleOrder::Bird);
  EXPECT_EQ(up.opaque, uint64_t{0xFFFF} << 32);
  EXPECT_EQ(up.transparent, 0xFFFF00000000FFFFull);
  EXPECT_FALSE(up.swstoc);
  // Level 3 in row order: bit k is the row-order sub-triangle k.
  std::vector<S> level3(64, U);
  level3[bird_index({7, 0, false}, 3)] = O;  // the corner at vertex 1
  const StocMasks corner = summarize(level3, 3, SubTriangleOrder::Row);
  EXPECT_EQ(corner.opaque, uint64_t{1} << row_index({7, 0, false}, 3));
  EXPECT_EQ(row_index({7, 0, false}, 3), 49u);  // row 7 starts at 49
  EXPECT_THROW(summarize(std::vector<S>(5, U), 1, SubTriangleOrder::Bird), Error);
  EXPECT_THROW(summarize(level3, 4, SubTriangleOrder::Bird), Error);
}

TEST(Xe3Stoc, StateOfPlanarBits) {
  EXPECT_EQ(state_of(0b01, 0b10, 0), O);
  EXPECT_EQ(state_of(0b01, 0b10, 1), T);
  EXPECT_EQ(state_of(0b01, 0b10, 2), U);
  EXPECT_EQ(state_of(1, 1, 0), U);  // undefined (1, 1) reads as unknown
  EXPECT_EQ(stoc_level_of(64), 3);
  EXPECT_EQ(stoc_level_of(1), 0);
  EXPECT_EQ(stoc_level_of(8), -1);
}

}  // namespace
}  // namespace hwbvh::xe3
