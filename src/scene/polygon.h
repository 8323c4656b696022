#pragma once
// Triangulation of OBJ polygons with more than four corners. Convex ones keep the fan (0, k, k+1), as quads do,
// so the triangles of existing scenes do not change, and so do concave ones that the fan covers exactly (corner 0
// sees the whole outline); other concave ones are ear-clipped, since their fan makes triangles outside the outline.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/core/geometry.h"

namespace hwbvh::scene {

enum class PolygonTriangulation {
  Fan,         ///< convex, or concave but covered by the fan (in the plane of its Newell normal): the fan
  EarClipped,  ///< concave and simple: ear clipping
  Fallback,    ///< degenerate (no area) or self-intersecting outline: the fan, which the caller reports
  TooLarge,    ///< concave with more than kMaxClippedCorners: the fan, which the caller reports
};

/// Ear clipping takes O(n^2) steps and more; longer concave outlines are fanned rather than stall the loader.
inline constexpr std::size_t kMaxClippedCorners = 1024;

/// Triangulates the polygon with corners `points` (in order, at least 3) into exactly points.size() - 2 triangles
/// of corner indices, written to `out` (cleared first), each wound as the polygon is.
PolygonTriangulation triangulate_polygon(std::span<const Vec3> points, std::vector<std::array<uint32_t, 3>>& out);

}  // namespace hwbvh::scene
