#pragma once
// Vectors (glm), axis-aligned boxes, rays and 3x4 affine matrices shared by every module.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <glm/common.hpp>
#include <glm/geometric.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>

namespace hwbvh {

using Vec2 = glm::vec2;
using Vec3 = glm::vec3;

/// Axis-aligned box; the default value is empty (min = +inf, max = -inf) so it can be grown.
struct Aabb {
  Vec3 min{std::numeric_limits<float>::infinity()};
  Vec3 max{-std::numeric_limits<float>::infinity()};

  static Aabb of_point(Vec3 p) { return {p, p}; }
  void grow(Vec3 p) {
    min = glm::min(min, p);
    max = glm::max(max, p);
  }
  void grow(const Aabb& b) {
    min = glm::min(min, b.min);
    max = glm::max(max, b.max);
  }
  [[nodiscard]] bool empty() const { return min.x > max.x || min.y > max.y || min.z > max.z; }
  [[nodiscard]] Vec3 extent() const { return max - min; }
  [[nodiscard]] Vec3 center() const { return (min + max) * 0.5f; }
  /// Surface area; 0 for an empty box.
  [[nodiscard]] float surface_area() const { return surface_area(1.0f); }
  /// Surface area of the box scaled by `scale`, a power of two from range_scale(): the extents are taken after
  /// scaling, so boxes of scenes near the float range still have finite extents and areas.
  [[nodiscard]] float surface_area(float scale) const {
    if (empty()) return 0.0f;
    const Vec3 e = max * scale - min * scale;
    return 2.0f * (e.x * e.y + e.y * e.z + e.z * e.x);
  }
  [[nodiscard]] bool contains(Vec3 p) const {
    return p.x >= min.x && p.y >= min.y && p.z >= min.z && p.x <= max.x && p.y <= max.y && p.z <= max.z;
  }
  [[nodiscard]] bool contains(const Aabb& b) const { return contains(b.min) && contains(b.max); }
  /// The eight corners: corner k has max x if k & 1, max y if k & 2, max z if k & 4 (else min).
  [[nodiscard]] std::array<Vec3, 8> corners() const {
    std::array<Vec3, 8> c{};
    for (int k = 0; k < 8; ++k) {
      c[static_cast<std::size_t>(k)] = {(k & 1) ? max.x : min.x, (k & 2) ? max.y : min.y, (k & 4) ? max.z : min.z};
    }
    return c;
  }
  friend bool operator==(const Aabb&, const Aabb&) = default;
};

inline Aabb triangle_bounds(Vec3 a, Vec3 b, Vec3 c) {
  Aabb box = Aabb::of_point(a);
  box.grow(b);
  box.grow(c);
  return box;
}

/// The float nearest `x` on the side of `direction` (-inf: at most x, +inf: at least x), so that bounds computed in
/// double stay bounds in float; finite values beyond the float range give the largest float or infinity.
inline float round_toward(double x, float direction) {
  constexpr double kMax = std::numeric_limits<float>::max();
  const auto rounded = static_cast<float>(std::isinf(x) ? x : std::clamp(x, -kMax, kMax));
  const bool on_the_wrong_side = direction < 0 ? static_cast<double>(rounded) > x : static_cast<double>(rounded) < x;
  return on_the_wrong_side ? std::nextafter(rounded, direction) : rounded;
}

/// True when every coordinate of v is finite.
inline bool is_finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

/// The largest magnitude of v's coordinates.
inline float max_abs(Vec3 v) { return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)}); }

/// Largest coordinate magnitude that box extents, areas and SAH costs can be computed from in float: an
/// extent is then at most 2^61 and a surface area at most 6 * 2^122, far below the float limit (about 2^128).
inline constexpr float kMaxSafeCoordinate = 0x1p60f;

/// 1 for a box within +-reach (a power of two); otherwise the power of two that scales it into that range. Scaling
/// by a power of two is exact (but for values that become subnormal), so scaled boxes compare as the originals do.
inline float range_scale(const Aabb& box, float reach = kMaxSafeCoordinate) {
  const float largest = std::max(max_abs(box.min), max_abs(box.max));
  if (!(largest > reach) || std::isinf(largest)) return 1.0f;  // an empty box's infinities too
  return std::ldexp(1.0f, std::ilogb(reach) - std::ilogb(largest) - 1);
}

/// A ray with its valid parameter interval [tmin, tmax]. The direction need not be normalised.
struct Ray {
  Vec3 origin{0.0f};
  Vec3 direction{0.0f, 0.0f, 1.0f};
  float tmin = 0.0f;
  float tmax = std::numeric_limits<float>::infinity();
};

/// glm::length that survives coordinates past about 1.8e19, whose squares overflow float: there it is computed in
/// double (and is infinite only if the length itself exceeds the float range). Elsewhere glm::length, bit for bit.
inline float vector_length(Vec3 v) {
  const float length = glm::length(v);
  if (std::isfinite(length)) return length;
  return static_cast<float>(glm::length(glm::dvec3(v)));
}

/// glm::normalize that survives coordinates past about 1.8e19, whose squares overflow float: there it is computed in
/// double. Elsewhere it is glm::normalize itself, bit for bit.
inline Vec3 unit_vector(Vec3 v) {
  const Vec3 u = glm::normalize(v);
  if (glm::dot(u, u) > 0.5f) return u;  // finite and of unit length (an overflow gives 0 or NaN)
  return Vec3(glm::normalize(glm::dvec3(v)));
}

/// A normal of triangle (a, b, c), of any length: the cross product of its edges, or, where that overflows float,
/// the unit normal computed in double.
inline Vec3 triangle_normal(Vec3 a, Vec3 b, Vec3 c) {
  const Vec3 n = glm::cross(b - a, c - a);
  if (std::isfinite(n.x) && std::isfinite(n.y) && std::isfinite(n.z)) return n;
  const glm::dvec3 da(a);
  return Vec3(glm::normalize(glm::cross(glm::dvec3(b) - da, glm::dvec3(c) - da)));
}

/// Row-major 3x4 affine matrix, as instance nodes and leaves of every target store their transforms:
/// p'[r] = m[r][0] x + m[r][1] y + m[r][2] z + m[r][3].
using Mat3x4 = std::array<std::array<float, 4>, 3>;

/// m applied to the point p, in double and rounded once to float: how tools outside the emulator (the oracle's
/// scene bounds, world-space triangle lists) place an instance's vertices.
inline Vec3 affine_point(const Mat3x4& m, const Vec3& p) {
  Vec3 out;
  for (std::size_t r = 0; r < 3; ++r) {
    out[static_cast<int>(r)] =
        static_cast<float>(double{m[r][0]} * p.x + double{m[r][1]} * p.y + double{m[r][2]} * p.z + m[r][3]);
  }
  return out;
}

}  // namespace hwbvh
