#include "hwbvh/bvh_build/spatial_split.h"

#include <gtest/gtest.h>

#include <random>

namespace hwbvh::bvh_build {
namespace {

const Vec3 kA{0, 0, 0}, kB{1, 0, 0}, kC{0, 1, 0};

TEST(SpatialSplit, SplitsTheTriangleNotTheBox) {
  const SplitBoxes s = split_triangle(kA, kB, kC, triangle_bounds(kA, kB, kC), 0, 0.5f);
  EXPECT_EQ(s.left, (Aabb{{0, 0, 0}, {0.5f, 1, 0}}));
  EXPECT_EQ(s.right, (Aabb{{0.5f, 0, 0}, {1, 0.5f, 0}}));
}

TEST(SpatialSplit, ClipsToTheReferenceBoxFirst) {
  // The reference is the part with x >= 0.5, which lies at y <= 0.5: nothing is left above y = 0.75.
  const Aabb right_part{{0.5f, 0, 0}, {1, 0.5f, 0}};
  const SplitBoxes s = split_triangle(kA, kB, kC, right_part, 1, 0.25f);
  EXPECT_EQ(s.left, (Aabb{{0.5f, 0, 0}, {1, 0.25f, 0}}));
  EXPECT_EQ(s.right, (Aabb{{0.5f, 0.25f, 0}, {0.75f, 0.5f, 0}}));
}

TEST(SpatialSplit, PlaneOutsideThePartGivesAnEmptySide) {
  const Aabb right_part{{0.5f, 0, 0}, {1, 0.5f, 0}};
  const Aabb box{{0.5f, 0, -1}, {1, 1, 1}};  // loose box: the triangle part still ends at y = 0.5
  const SplitBoxes s = split_triangle(kA, kB, kC, box, 1, 0.75f);
  EXPECT_EQ(s.left, right_part);
  EXPECT_TRUE(s.right.empty());
}

TEST(SpatialSplit, HalvesStayInsideTheBoxAndOnTheirSide) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), frac(0.0f, 1.0f);
  for (int iter = 0; iter < 2000; ++iter) {
    const Vec3 a{unit(rng), unit(rng), unit(rng)};
    const Vec3 b{unit(rng), unit(rng), unit(rng)};
    const Vec3 c{unit(rng), unit(rng), unit(rng)};
    Aabb box = triangle_bounds(a, b, c);
    // Shrink the box on one side to mimic an earlier split.
    const int shrink_axis = iter % 3;
    box.min[shrink_axis] += 0.3f * frac(rng) * box.extent()[shrink_axis];
    const int axis = (iter / 3) % 3;
    const float position = box.min[axis] + frac(rng) * box.extent()[axis];
    const SplitBoxes s = split_triangle(a, b, c, box, axis, position);
    for (const Aabb* half : {&s.left, &s.right}) {
      if (!half->empty()) {
        EXPECT_TRUE(box.contains(*half)) << iter;
      }
    }
    if (!s.left.empty()) {
      EXPECT_LE(s.left.max[axis], position);
    }
    if (!s.right.empty()) {
      EXPECT_GE(s.right.min[axis], position);
    }
    EXPECT_FALSE(s.left.empty() && s.right.empty()) << iter;
  }
}

}  // namespace
}  // namespace hwbvh::bvh_build
