#include "scene/polygon.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <glm/common.hpp>
#include <glm/vec3.hpp>

namespace hwbvh::scene {
namespace {

// Corners projected on the plane of the polygon, in double so that float inputs give exact differences.
struct Point {
  double x = 0.0;
  double y = 0.0;
};

// Twice the signed area of triangle (a, b, c): positive when it turns counter-clockwise.
double orientation(Point a, Point b, Point c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); }

// Whether segments ab and cd cross or touch (collinear overlaps included).
bool segments_meet(Point a, Point b, Point c, Point d) {
  const double d1 = orientation(c, d, a), d2 = orientation(c, d, b), d3 = orientation(a, b, c),
               d4 = orientation(a, b, d);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  const auto on_segment = [](Point p, Point q, Point r) {  // r on pq, given that the three are collinear
    return std::min(p.x, q.x) <= r.x && r.x <= std::max(p.x, q.x) && std::min(p.y, q.y) <= r.y &&
           r.y <= std::max(p.y, q.y);
  };
  return (d1 == 0 && on_segment(c, d, a)) || (d2 == 0 && on_segment(c, d, b)) || (d3 == 0 && on_segment(a, b, c)) ||
         (d4 == 0 && on_segment(a, b, d));
}

// Whether two edges that do not share a corner meet: then the outline intersects itself. O(n^2), which is why
// the caller sends only concave polygons here.
bool self_intersecting(const std::vector<Point>& p) {
  const std::size_t n = p.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // adjacent through the closing edge
      if (segments_meet(p[i], p[(i + 1) % n], p[j], p[(j + 1) % n])) return true;
    }
  }
  return false;
}

// Whether the fan (0, k, k+1) covers exactly the polygon: every fan triangle turns the polygon's way (or is flat)
// and together they go around corner 0 less than once. Then every ray from corner 0 leaves the polygon once, so
// the triangles tile it; this holds for every convex polygon, and for concave ones whose corner 0 sees the whole
// outline. A star outline wound twice turns the same way throughout but sweeps two full turns.
bool fan_covers(const std::vector<Point>& p, double winding) {
  double swept = 0.0;
  for (std::size_t k = 1; k + 1 < p.size(); ++k) {
    const Point a = p[0], b = p[k], c = p[k + 1];
    const double cross = orientation(a, b, c);
    if (cross * winding < 0) return false;
    const double dot = (b.x - a.x) * (c.x - a.x) + (b.y - a.y) * (c.y - a.y);
    swept += std::atan2(std::abs(cross), dot);
  }
  return swept < 2 * std::numbers::pi;
}

// Whether p blocks the ear abc (wound counter-clockwise when winding > 0): it lies inside or on the triangle, which
// includes lying on the diagonal ac that cutting the ear would add. A corner repeated at a, b or c (outlines that
// touch themselves) does not block, or no ear would be left.
bool blocks_ear(Point p, Point a, Point b, Point c, double winding) {
  const auto same = [](Point u, Point v) { return u.x == v.x && u.y == v.y; };
  if (same(p, a) || same(p, b) || same(p, c)) return false;
  return orientation(a, b, p) * winding >= 0 && orientation(b, c, p) * winding >= 0 &&
         orientation(c, a, p) * winding >= 0;
}

void fan(std::size_t n, std::vector<std::array<uint32_t, 3>>& out) {
  for (uint32_t k = 1; k + 1 < n; ++k) out.push_back({0, k, k + 1});
}

}  // namespace

PolygonTriangulation triangulate_polygon(std::span<const Vec3> points, std::vector<std::array<uint32_t, 3>>& out) {
  out.clear();
  const std::size_t n = points.size();
  // Newell's normal: robust for non-planar outlines; its largest axis is dropped to project on a plane.
  glm::dvec3 normal(0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const glm::dvec3 a(points[i]), b(points[(i + 1) % n]);
    normal += glm::dvec3((a.y - b.y) * (a.z + b.z), (a.z - b.z) * (a.x + b.x), (a.x - b.x) * (a.y + b.y));
  }
  const glm::dvec3 magnitude = glm::abs(normal);
  const int drop = magnitude.x >= magnitude.y && magnitude.x >= magnitude.z ? 0 : magnitude.y >= magnitude.z ? 1 : 2;
  const double winding = normal[drop];
  if (!(winding != 0.0) || !std::isfinite(winding)) {
    fan(n, out);
    return PolygonTriangulation::Fallback;
  }
  std::vector<Point> projected(n);
  for (std::size_t i = 0; i < n; ++i) {
    projected[i] = {points[i][(drop + 1) % 3], points[i][(drop + 2) % 3]};
  }
  if (fan_covers(projected, winding)) {
    fan(n, out);
    return PolygonTriangulation::Fan;
  }
  if (n > kMaxClippedCorners) {
    fan(n, out);
    return PolygonTriangulation::TooLarge;
  }
  if (self_intersecting(projected)) {
    fan(n, out);
    return PolygonTriangulation::Fallback;
  }

  // Ear clipping: repeatedly cut off a corner whose triangle turns the polygon's way and holds no other corner.
  std::vector<uint32_t> ring(n);
  for (uint32_t i = 0; i < n; ++i) ring[i] = i;
  for (std::size_t i = 0, misses = 0; ring.size() > 3;) {
    const std::size_t m = ring.size();
    const uint32_t a = ring[(i + m - 1) % m], b = ring[i % m], c = ring[(i + 1) % m];
    bool ear = orientation(projected[a], projected[b], projected[c]) * winding > 0;
    for (std::size_t k = 0; ear && k < m; ++k) {
      const uint32_t q = ring[k];
      ear = q == a || q == b || q == c || !blocks_ear(projected[q], projected[a], projected[b], projected[c], winding);
    }
    if (ear) {
      out.push_back({a, b, c});
      ring.erase(ring.begin() + static_cast<std::ptrdiff_t>(i % m));
      misses = 0;
    } else if (++misses > m) {  // a full round without an ear: only rounding can cause it
      out.clear();
      fan(n, out);
      return PolygonTriangulation::Fallback;
    } else {
      ++i;
    }
    i %= ring.size();
  }
  out.push_back({ring[0], ring[1], ring[2]});
  return PolygonTriangulation::EarClipped;
}

}  // namespace hwbvh::scene
