#pragma once
// Spatial-split reference splitting (Stich, Friedrich, Dietrich 2009, "Spatial Splits in Bounding Volume
// Hierarchies"): a reference's box is split by an axis-aligned plane into the boxes of the two parts of the
// triangle inside it, rather than by cutting the box, so both halves stay tight.
#include "hwbvh/core/geometry.h"

namespace hwbvh::bvh_build {

struct SplitBoxes {
  Aabb left;   ///< part with coordinate <= position on the axis; empty if the triangle has none
  Aabb right;  ///< part with coordinate >= position on the axis; empty if the triangle has none
};

/// Clips triangle (a, b, c) to `box` (the reference's current box), cuts the clipped polygon at `position` on
/// `axis` (0 = x, 1 = y, 2 = z) and returns the bounds of the two halves. Both results lie inside `box`, left
/// has max[axis] <= position and right has min[axis] >= position. If rounding leaves no polygon inside
/// `box`, the box itself is cut (still conservative: the triangle's part in `box` lies in the box).
SplitBoxes split_triangle(Vec3 a, Vec3 b, Vec3 c, const Aabb& box, int axis, float position);

}  // namespace hwbvh::bvh_build
