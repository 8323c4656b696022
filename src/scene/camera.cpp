#include "hwbvh/scene/camera.h"

#include <array>
#include <algorithm>
#include <charconv>
#include <limits>
#include <cmath>
#include <numbers>

#include <glm/geometric.hpp>
#include <glm/vec2.hpp>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

[[noreturn]] void bad_camera(std::string_view text, const std::string& problem) {
  throw_bad_input("", "camera \"" + std::string(text) + "\": " + problem);
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

void append_number(std::string& out, float v) {
  std::array<char, 32> buf{};
  const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), result.ptr);
}

/// What makes a camera unusable, or nullptr.
const char* camera_problem(const Camera& c) {
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(c.eye[k]) || !std::isfinite(c.target[k]) || !std::isfinite(c.up[k])) {
      return "coordinates must be finite numbers";
    }
  }
  if (!(c.fov_deg > 0.0f && c.fov_deg < 180.0f)) return "fov must be in (0, 180) degrees";
  const Vec3 view = c.target - c.eye;
  if (glm::dot(view, view) == 0.0f) return "eye and target are the same point";
  // The cross product of the normalised vectors is sin(angle); below ~1e-6 the camera basis is noise.
  const float up_len = glm::length(c.up);
  if (up_len == 0.0f || glm::length(glm::cross(unit_vector(view), c.up / up_len)) < 1e-6f) {
    return "up is zero or parallel to the view direction";
  }
  return nullptr;
}

}  // namespace

void validate_camera(const Camera& c) {
  if (const char* problem = camera_problem(c)) bad_camera(format_camera(c), problem);
}

Camera parse_camera(std::string_view text) {
  std::array<float, 10> v{};
  std::size_t count = 0;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view token = trim(text.substr(pos, comma == std::string_view::npos ? comma : comma - pos));
    if (count < v.size()) {
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v[count]);
      if (token.empty() || ec != std::errc{} || end != token.data() + token.size() || !std::isfinite(v[count])) {
        bad_camera(text, "\"" + std::string(token) + "\" is not a finite number");
      }
    }
    ++count;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (count != v.size()) {
    bad_camera(text, "expected 10 comma-separated numbers ex,ey,ez,tx,ty,tz,ux,uy,uz,fov, found " +
                         std::to_string(count));
  }
  const Camera c{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, {v[6], v[7], v[8]}, v[9]};
  if (const char* problem = camera_problem(c)) bad_camera(text, problem);
  return c;
}

std::string format_camera(const Camera& c) {
  std::string out;
  for (const Vec3& p : {c.eye, c.target, c.up}) {
    for (int k = 0; k < 3; ++k) {
      append_number(out, p[k]);
      out += ',';
    }
  }
  append_number(out, c.fov_deg);
  return out;
}

namespace {

// The view family: 35 degrees to the right of +z, at an elevation above the horizon chosen per scene.
constexpr double kAzimuthDeg = 35.0;
constexpr std::array<double, 8> kElevationsDeg{25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0};
// A higher elevation is taken only where the box's projection covers this much more of the image: views stay low
// unless the scene is flat, long or tall enough to leave most of the image empty from 25 degrees.
constexpr double kFillGain = 1.1;
constexpr double kMargin = 0.95;  ///< the binding axis fills 95% of the half-image on both sides

struct ViewBasis {
  glm::dvec3 right, up, back;  ///< back: from the target towards the eye
};

ViewBasis view_basis(double elevation_deg) {
  const double azimuth = kAzimuthDeg * std::numbers::pi / 180.0, elevation = elevation_deg * std::numbers::pi / 180.0;
  const glm::dvec3 back{std::sin(azimuth) * std::cos(elevation), std::sin(elevation),
                        std::cos(azimuth) * std::cos(elevation)};
  const glm::dvec3 right = glm::normalize(glm::cross(glm::dvec3(0.0, 1.0, 0.0), back));
  return {right, glm::cross(back, right), back};
}

// The shift s along one image axis that centres the projections (x_i - s) / d_i of points at offsets x_i and depths
// d_i > 0: the largest is minus the smallest. Their sum falls as s grows, from >= 0 at min x to <= 0 at max x, so
// bisection finds it (to the last bit of a double: the loop stops when the midpoint rounds to an end).
double centring_shift(const std::array<double, 8>& x, const std::array<double, 8>& d) {
  const auto excess = [&](double s) {
    double hi = -std::numeric_limits<double>::infinity(), lo = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < x.size(); ++i) {
      hi = std::max(hi, (x[i] - s) / d[i]);
      lo = std::min(lo, (x[i] - s) / d[i]);
    }
    return hi + lo;
  };
  double lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  while (true) {
    const double mid = lo + 0.5 * (hi - lo);
    if (mid <= lo || mid >= hi) return mid;
    (excess(mid) > 0.0 ? lo : hi) = mid;
  }
}

// Area of the convex hull of points in the plane (Andrew's monotone chain, then the shoelace formula).
double hull_area(std::array<glm::dvec2, 8> p) {
  std::sort(p.begin(), p.end(), [](glm::dvec2 a, glm::dvec2 b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  const auto turn = [](glm::dvec2 o, glm::dvec2 a, glm::dvec2 b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  };
  std::array<glm::dvec2, 16> hull{};
  std::size_t n = 0;
  for (int pass = 0; pass < 2; ++pass) {  // the lower chain left to right, then the upper one back
    const std::size_t start = n;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const glm::dvec2 q = pass == 0 ? p[i] : p[p.size() - 1 - i];
      while (n >= start + 2 && turn(hull[n - 2], hull[n - 1], q) <= 0.0) --n;
      hull[n++] = q;
    }
    --n;  // each chain's last point starts the other
  }
  double twice = 0.0;
  for (std::size_t i = 0; i < n; ++i) twice += hull[i].x * hull[(i + 1) % n].y - hull[(i + 1) % n].x * hull[i].y;
  return 0.5 * std::abs(twice);
}

struct Framing {
  ViewBasis view;
  double distance = 0.0;           ///< from the target to the eye
  double shift_h = 0.0, shift_v = 0.0;  ///< the target's offset from the box centre along right and up
  double fill = 0.0;               ///< the box's projection (its hull) as a share of the image less the margin
};

// The nearest eye from which every corner (offsets q from the box centre) is in view, with the target moved in the
// view plane so that the corners' projections are centred on both image axes. Per image axis a (half-angle tangent
// tan_a), a point at offset q lies at depth D - q.back from an eye D behind the target and projects inside the image
// at a target shift s when |q.a - s| <= (D - q.back) tan_a. The least D over s is (A + B) / 2 with
// A = max(q.a / tan_a + q.back) and B = max(-q.a / tan_a + q.back); the larger axis's D decides, and both axes are
// then centred at that D (the other axis's own optimum shift would not centre it there).
Framing fit(const std::array<glm::dvec3, 8>& q, const ViewBasis& view, double tan_h, double tan_v, double radius) {
  constexpr double kLowest = -std::numeric_limits<double>::infinity();
  double a_h = kLowest, b_h = kLowest, a_v = kLowest, b_v = kLowest, nearest = kLowest;  // nearest: max q.back
  std::array<double, 8> x{}, y{}, z{};
  for (std::size_t i = 0; i < q.size(); ++i) {
    x[i] = glm::dot(q[i], view.right);
    y[i] = glm::dot(q[i], view.up);
    z[i] = glm::dot(q[i], view.back);
    a_h = std::max(a_h, x[i] / tan_h + z[i]);
    b_h = std::max(b_h, -x[i] / tan_h + z[i]);
    a_v = std::max(a_v, y[i] / tan_v + z[i]);
    b_v = std::max(b_v, -y[i] / tan_v + z[i]);
    nearest = std::max(nearest, z[i]);
  }
  Framing f;
  f.view = view;
  // Every point stays in front of the eye, also for a flat scene seen edge-on.
  f.distance = std::max({0.5 * (a_h + b_h), 0.5 * (a_v + b_v), nearest + 1e-3 * radius});
  std::array<double, 8> depth{};
  for (std::size_t i = 0; i < q.size(); ++i) depth[i] = f.distance - z[i];
  f.shift_h = centring_shift(x, depth);
  f.shift_v = centring_shift(y, depth);
  std::array<glm::dvec2, 8> image{};  // the corners in the image, [-1, 1] on both axes
  for (std::size_t i = 0; i < q.size(); ++i)
    image[i] = {(x[i] - f.shift_h) / (depth[i] * tan_h), (y[i] - f.shift_v) / (depth[i] * tan_v)};
  f.fill = hull_area(image) / 4.0;
  return f;
}

}  // namespace

Camera auto_frame(const Aabb& scene_bounds, float aspect) {
  if (scene_bounds.empty()) throw_bad_input("", "cannot frame an empty scene");
  if (!(aspect > 0.0f) || !std::isfinite(aspect)) throw_bad_input("", "image aspect ratio must be positive");

  Camera c;
  c.fov_deg = 45.0f;
  c.up = {0.0f, 1.0f, 0.0f};
  const glm::dvec3 lo(scene_bounds.min), hi(scene_bounds.max);
  const glm::dvec3 center = lo + 0.5 * (hi - lo);
  const double radius = 0.5 * glm::length(hi - lo);
  const auto to_float = [](const glm::dvec3& v) { return Vec3(v); };
  if (!(radius > 0.0)) {  // a single point: any distance shows it
    c.target = to_float(center);
    c.eye = to_float(center + view_basis(kElevationsDeg[0]).back);
    return c;
  }
  std::array<glm::dvec3, 8> q{};
  const std::array<Vec3, 8> corners = scene_bounds.corners();
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = glm::dvec3(corners[i]) - center;
  const double tan_v = kMargin * std::tan(0.5 * static_cast<double>(c.fov_deg) * std::numbers::pi / 180.0);
  const double tan_h = tan_v * static_cast<double>(aspect);
  // The lowest elevation, unless a higher one fills kFillGain times as much of the image.
  Framing best = fit(q, view_basis(kElevationsDeg[0]), tan_h, tan_v, radius);
  Framing fullest = best;
  for (std::size_t e = 1; e < kElevationsDeg.size(); ++e) {
    const Framing f = fit(q, view_basis(kElevationsDeg[e]), tan_h, tan_v, radius);
    if (f.fill > fullest.fill) fullest = f;
  }
  if (fullest.fill > kFillGain * best.fill) best = fullest;
  const glm::dvec3 target = center + best.shift_h * best.view.right + best.shift_v * best.view.up;
  const glm::dvec3 eye = target + best.distance * best.view.back;
  double farthest = 0.0;
  for (int k = 0; k < 3; ++k) farthest = std::max({farthest, std::abs(eye[k]), std::abs(target[k])});
  const bool fits_float = farthest <= std::numeric_limits<float>::max();
  if (fits_float) {
    c.target = to_float(target);
    c.eye = to_float(eye);
  }
  if (!fits_float || camera_problem(c) != nullptr) {  // coordinates near 1e38
    std::string reach;
    append_number(reach, std::max(max_abs(scene_bounds.min), max_abs(scene_bounds.max)));
    throw_bad_input("", "the scene reaches " + reach + ": too far out for an automatic camera in float; give one with "
                        "--camera");
  }
  return c;
}

}  // namespace hwbvh
