#include "hwbvh/bvh_build/spatial_split.h"

namespace hwbvh::bvh_build {
namespace {

// Plain float triples: indexing glm vectors by a run-time axis goes through a switch, which dominated the
// build time at high quality (Embree calls the splitter millions of times).
using Point = float[3];

// A triangle clipped by the 6 planes of a box has at most 3 + 6 vertices.
constexpr int kMaxVertices = 9;

// Point of segment a-b where coordinate `axis` equals `position`; that coordinate is set exactly so the point
// lies on the plane despite rounding.
void cut(const Point& a, const Point& b, int axis, float position, Point& out) {
  const float t = (position - a[axis]) / (b[axis] - a[axis]);
  for (int k = 0; k < 3; ++k) out[k] = a[k] + t * (b[k] - a[k]);
  out[axis] = position;
}

// Sutherland-Hodgman step: keeps the part of polygon `in` with sign * (p[axis] - position) >= 0.
int clip(const Point* in, int n, Point* out, int axis, float position, float sign) {
  int m = 0;
  const Point* a = &in[n - 1];
  float da = sign * ((*a)[axis] - position);
  for (int i = 0; i < n; ++i) {
    const Point& b = in[i];
    const float db = sign * (b[axis] - position);
    if ((da < 0.0f && db > 0.0f) || (da > 0.0f && db < 0.0f)) cut(*a, b, axis, position, out[m++]);
    if (db >= 0.0f) {
      for (int k = 0; k < 3; ++k) out[m][k] = b[k];
      ++m;
    }
    a = &b;
    da = db;
  }
  return m;
}

void grow(Aabb& box, const Point& p) {
  box.grow(Vec3{p[0], p[1], p[2]});
}

Aabb intersect(const Aabb& x, const Aabb& y) { return {glm::max(x.min, y.min), glm::min(x.max, y.max)}; }

}  // namespace

SplitBoxes split_triangle(Vec3 a, Vec3 b, Vec3 c, const Aabb& box, int axis, float position) {
  Point buffers[2][kMaxVertices] = {{{a.x, a.y, a.z}, {b.x, b.y, b.z}, {c.x, c.y, c.z}}};
  int n = 3, current = 0;
  const float lo[3] = {box.min.x, box.min.y, box.min.z}, hi[3] = {box.max.x, box.max.y, box.max.z};
  const Aabb whole = triangle_bounds(a, b, c);
  const float whole_lo[3] = {whole.min.x, whole.min.y, whole.min.z};
  const float whole_hi[3] = {whole.max.x, whole.max.y, whole.max.z};
  // Only planes that cut the triangle's box can change the polygon; usually one or two do.
  for (int k = 0; k < 3 && n > 0; ++k) {
    if (whole_lo[k] < lo[k]) {
      n = clip(buffers[current], n, buffers[1 - current], k, lo[k], 1.0f);
      current = 1 - current;
    }
    if (n > 0 && whole_hi[k] > hi[k]) {
      n = clip(buffers[current], n, buffers[1 - current], k, hi[k], -1.0f);
      current = 1 - current;
    }
  }

  Aabb left_half = box, right_half = box;
  left_half.max[axis] = position;
  right_half.min[axis] = position;
  if (n == 0) return {left_half, right_half};

  // Cut the clipped polygon at the plane: vertices go to their side, edge crossings to both.
  SplitBoxes out;
  const Point* poly = buffers[current];
  for (int i = 0; i < n; ++i) {
    const Point& p = poly[i];
    const Point& q = poly[i + 1 < n ? i + 1 : 0];
    if (p[axis] <= position) grow(out.left, p);
    if (p[axis] >= position) grow(out.right, p);
    if ((p[axis] < position && q[axis] > position) || (p[axis] > position && q[axis] < position)) {
      Point x;
      cut(p, q, axis, position, x);
      grow(out.left, x);
      grow(out.right, x);
    }
  }
  // Crossing points are rounded; clamping keeps the halves inside the box and on their side of the plane.
  if (!out.left.empty()) out.left = intersect(out.left, left_half);
  if (!out.right.empty()) out.right = intersect(out.right, right_half);
  return out;
}

}  // namespace hwbvh::bvh_build
