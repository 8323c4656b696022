// cover_points and transformed_bounds: an instance's world box in a top-level structure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

#include "build_scenes.h"
#include "hwbvh/bvh_build/instance_bounds.h"

namespace hwbvh::bvh_build {
namespace {

/// A rotation about an arbitrary axis, a non-uniform scale, a mirror on `mirror` and a translation (fixed seed).
glm::dmat4 random_affine(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), scale(0.25, 4.0);
  glm::dvec3 axis(u(rng), u(rng), u(rng));
  if (glm::length(axis) < 1e-3) axis = {0, 0, 1};
  glm::dmat4 m = glm::translate(glm::dmat4(1.0), glm::dvec3(u(rng), u(rng), u(rng)) * 50.0);
  m = glm::rotate(m, u(rng) * 3.14159, glm::normalize(axis));
  glm::dvec3 s(scale(rng), scale(rng), scale(rng));
  if (rng() % 3 == 0) s.x = -s.x;
  return glm::scale(m, s);
}

/// Every vertex of `mesh`, mapped exactly (double) by `world`, lies in `box`.
void expect_contains_image(const Aabb& box, const Scene& mesh, const glm::dmat4& world) {
  for (const Triangle& t : mesh.triangles) {
    for (uint32_t v : t.v) {
      const Vec3 p = mesh.positions[v];
      const glm::dvec4 w = world * glm::dvec4(p.x, p.y, p.z, 1.0);
      for (int a = 0; a < 3; ++a) {
        ASSERT_LE(double{box.min[a]}, w[a]);
        ASSERT_GE(double{box.max[a]}, w[a]);
      }
    }
  }
}

/// The bounds of the root box's eight corners mapped by `world` (what a top level without cover points would use).
Aabb corner_bounds(const Scene& mesh, const glm::dmat4& world) {
  return transformed_bounds(mesh.bounds().corners(), world);
}

double volume(const Aabb& b) {
  const Vec3 e = b.extent();
  return double{e.x} * e.y * e.z;
}

TEST(InstanceBounds, SmallMeshCoverIsItsDistinctVertices) {
  Scene mesh = test::grid(2, 1);  // 2 quads: 6 distinct positions
  const std::vector<Vec3> cover = cover_points(mesh);
  std::vector<Vec3> used;
  for (const Triangle& t : mesh.triangles)
    for (uint32_t v : t.v) used.push_back(mesh.positions[v]);
  for (const Vec3& p : used) EXPECT_NE(std::find(cover.begin(), cover.end(), p), cover.end());
  for (const Vec3& p : cover) EXPECT_NE(std::find(used.begin(), used.end(), p), used.end());
  EXPECT_EQ(cover.size(), 6u);
}

TEST(InstanceBounds, LargeMeshCoverIsBoundedAndContainsEveryImage) {
  const Scene mesh = test::random_soup(20000, 3);
  const std::vector<Vec3> cover = cover_points(mesh);
  EXPECT_LE(cover.size(), kMaxCoverPoints);
  EXPECT_EQ(cover, cover_points(mesh));  // deterministic
  std::mt19937 rng(11);
  for (int i = 0; i < 20; ++i) {
    const glm::dmat4 world = random_affine(rng);
    const Aabb box = transformed_bounds(cover, world);
    expect_contains_image(box, mesh, world);
    EXPECT_TRUE(corner_bounds(mesh, world).contains(box));
  }
}

TEST(InstanceBounds, TighterThanTheRootBoxCornersUnderRotation) {
  // A ring of triangles in the xy plane: its root box is a square, and turned 45 degrees about z the corners'
  // bounds grow by sqrt(2) per axis while the ring's own bounds do not.
  Scene ring;
  constexpr int kSegments = 64;
  for (int i = 0; i < kSegments; ++i) {
    const double a0 = 2 * 3.14159265358979 * i / kSegments, a1 = 2 * 3.14159265358979 * (i + 1) / kSegments;
    test::add_triangle(ring, {float(std::cos(a0)), float(std::sin(a0)), 0.0f},
                       {float(std::cos(a1)), float(std::sin(a1)), 0.0f}, {0.0f, 0.0f, 0.1f});
  }
  const glm::dmat4 world = glm::rotate(glm::dmat4(1.0), 3.14159265358979 / 4, glm::dvec3(0, 0, 1));
  const Aabb tight = transformed_bounds(cover_points(ring), world);
  expect_contains_image(tight, ring, world);
  const Aabb loose = corner_bounds(ring, world);
  EXPECT_NEAR(tight.extent().x, 2.0f, 0.01f);
  EXPECT_NEAR(loose.extent().x, 2.0f * std::sqrt(2.0f), 0.01f);
  EXPECT_LT(volume(tight), 0.55 * volume(loose));
}

TEST(InstanceBounds, RoundsOutwardToFloat) {
  // 1/3 and 0.1 are not floats: the box must still hold the exact images.
  const std::vector<Vec3> points{{1.0f, 1.0f, 1.0f}, {3.0f, -7.0f, 0.5f}};
  const glm::dmat4 world = glm::scale(glm::translate(glm::dmat4(1.0), {0.1, 0.1, 0.1}), {1.0 / 3, 1.0 / 3, 0.1});
  const Aabb box = transformed_bounds(points, world);
  for (const Vec3& p : points) {
    const glm::dvec4 w = world * glm::dvec4(p.x, p.y, p.z, 1.0);
    for (int a = 0; a < 3; ++a) {
      EXPECT_LE(double{box.min[a]}, w[a]);
      EXPECT_GE(double{box.max[a]}, w[a]);
    }
  }
  EXPECT_LT(double{box.min.x}, 1.0 / 3 + 0.1);  // strictly: 1/3 + 0.1 is not a float
}

TEST(InstanceBounds, BeyondTheFloatRangeIsInfinite) {
  const std::vector<Vec3> points{{3e38f, 0.0f, 0.0f}};
  const Aabb box = transformed_bounds(points, glm::scale(glm::dmat4(1.0), {4.0, 1.0, 1.0}));
  EXPECT_EQ(box.min.x, std::numeric_limits<float>::max());
  EXPECT_TRUE(std::isinf(box.max.x));
}

TEST(InstanceBounds, CoarsenMergesTheCheapestPairsFirst) {
  // Eight unit boxes along x with gaps of 0, 5, 0, 5, 0, 5, 0: the touching pairs merge first, into four boxes
  // of length 2 that still cover all eight.
  std::vector<Aabb> boxes;
  float x = 0.0f;
  for (int i = 0; i < 8; ++i) {
    boxes.push_back({{x, 0.0f, 0.0f}, {x + 1.0f, 1.0f, 1.0f}});
    x += (i % 2 == 0) ? 1.0f : 6.0f;
  }
  const std::vector<Aabb> four = coarsen_boxes(boxes, 4);
  ASSERT_EQ(four.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(four[k].min, boxes[2 * k].min) << k;
    EXPECT_EQ(four[k].max, boxes[2 * k + 1].max) << k;
  }
  EXPECT_EQ(coarsen_boxes(boxes, 8).size(), 8u);
  EXPECT_EQ(coarsen_boxes({boxes[0], boxes[1]}, 4).size(), 2u);
  const std::vector<Aabb> one = coarsen_boxes(boxes, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].min, boxes[0].min);
  EXPECT_EQ(one[0].max, boxes[7].max);
}

TEST(InstanceBounds, CoarsenKeepsAreasFiniteNearTheFloatRange) {
  // Areas of these boxes overflow float unless scaled (every area infinite would merge the first pair, 0 and 1):
  // the touching boxes 1 and 2 must merge, not the far box 0.
  const float big = 1e37f;
  const std::vector<Aabb> boxes{{{big * 2, 0, 0}, {big * 3, big, big}},
                                {{-big, 0, 0}, {-big * 0.5f, big, big}},
                                {{-big * 0.5f, 0, 0}, {0, big, big}}};
  const std::vector<Aabb> two = coarsen_boxes(boxes, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].min, boxes[0].min);
  EXPECT_EQ(two[0].max, boxes[0].max);
  EXPECT_EQ(two[1].min, boxes[1].min);
  EXPECT_EQ(two[1].max, boxes[2].max);
}

TEST(InstanceBounds, MeshWithoutTrianglesHasNoCover) { EXPECT_TRUE(cover_points(Scene{}).empty()); }

}  // namespace
}  // namespace hwbvh::bvh_build
