#include "hwbvh/scene/camera.h"

#include <array>
#include <algorithm>
#include <charconv>
#include <limits>
#include <cmath>
#include <numbers>

#include <glm/geometric.hpp>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

constexpr float kDegToRad = std::numbers::pi_v<float> / 180.0f;

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

Camera auto_frame(std::span<const Vec3> points, float aspect) {
  Aabb bounds;
  for (const Vec3& p : points) bounds.grow(p);
  if (bounds.empty()) throw_bad_input("", "cannot frame an empty scene");
  if (!(aspect > 0.0f) || !std::isfinite(aspect)) throw_bad_input("", "image aspect ratio must be positive");

  // 35 degrees to the right of +z and 25 degrees above the horizon: a classic three-quarter view.
  const float azimuth = 35.0f * kDegToRad, elevation = 25.0f * kDegToRad;
  const Vec3 back{std::sin(azimuth) * std::cos(elevation), std::sin(elevation),
                  std::cos(azimuth) * std::cos(elevation)};  // from the target towards the eye
  const Vec3 world_up{0.0f, 1.0f, 0.0f};
  const Vec3 right = glm::normalize(glm::cross(world_up, back));
  const Vec3 view_up = glm::cross(back, right);

  Camera c;
  c.fov_deg = 45.0f;
  c.up = world_up;
  const Vec3 center = bounds.center();
  const float radius = 0.5f * vector_length(bounds.extent());
  if (!(radius > 0.0f)) {  // a single point: any distance shows it
    c.target = center;
    c.eye = center + back;
    return c;
  }
  // Per image axis a (a unit vector in the view plane, half-angle tangent tan_a), a point at offset q from the
  // centre lies at depth D - q.back from an eye D behind a target shifted by s along a, and is inside the image
  // when |q.a - s| <= (D - q.back) tan_a. The least D over s is (A + B) / 2 with A = max(q.a / tan_a + q.back)
  // and B = max(-q.a / tan_a + q.back), reached at s = tan_a (A - B) / 2; the larger of the two axes' D decides.
  // 5% margin: the tangents are those of an image 0.95 times as large.
  const float tan_v = 0.95f * std::tan(0.5f * c.fov_deg * kDegToRad);
  const float tan_h = tan_v * aspect;
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  float a_h = kLowest, b_h = kLowest, a_v = kLowest, b_v = kLowest, nearest = kLowest;  // nearest: max q.back
  for (const Vec3& p : points) {
    const Vec3 q = p - center;
    const float x = glm::dot(q, right), y = glm::dot(q, view_up), z = glm::dot(q, back);
    a_h = std::max(a_h, x / tan_h + z);
    b_h = std::max(b_h, -x / tan_h + z);
    a_v = std::max(a_v, y / tan_v + z);
    b_v = std::max(b_v, -y / tan_v + z);
    nearest = std::max(nearest, z);
  }
  // Every point stays in front of the eye, also for a flat scene seen edge-on.
  const float distance = std::max({0.5f * (a_h + b_h), 0.5f * (a_v + b_v), nearest + 1e-3f * radius});
  c.target = center + (0.5f * tan_h * (a_h - b_h)) * right + (0.5f * tan_v * (a_v - b_v)) * view_up;
  c.eye = c.target + distance * back;
  if (camera_problem(c) != nullptr) {  // an eye beyond the float range: coordinates near 1e38
    std::string reach;
    append_number(reach, std::max(max_abs(bounds.min), max_abs(bounds.max)));
    throw_bad_input("", "the scene reaches " + reach + ": too far out for an automatic camera in float; give one with "
                        "--camera");
  }
  return c;
}

Camera auto_frame(const Aabb& scene_bounds, float aspect) {
  if (scene_bounds.empty()) throw_bad_input("", "cannot frame an empty scene");
  return auto_frame(scene_bounds.corners(), aspect);
}

}  // namespace hwbvh
