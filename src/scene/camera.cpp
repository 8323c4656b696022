#include "hwbvh/scene/camera.h"

#include <array>
#include <charconv>
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
  if (up_len == 0.0f || glm::length(glm::cross(glm::normalize(view), c.up / up_len)) < 1e-6f) {
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

Camera auto_frame(const Aabb& scene_bounds, float aspect) {
  if (scene_bounds.empty()) throw_bad_input("", "cannot frame an empty scene");
  if (!(aspect > 0.0f) || !std::isfinite(aspect)) throw_bad_input("", "image aspect ratio must be positive");

  // Frame the bounding sphere, so the whole box is visible whatever the view direction.
  const Vec3 center = scene_bounds.center();
  float radius = 0.5f * glm::length(scene_bounds.extent());
  if (!(radius > 0.0f)) radius = 1.0f;  // a single point: any distance shows it

  // 35 degrees to the right of +z and 25 degrees above the horizon: a classic three-quarter view.
  const float azimuth = 35.0f * kDegToRad, elevation = 25.0f * kDegToRad;
  const Vec3 dir{std::sin(azimuth) * std::cos(elevation), std::sin(elevation),
                 std::cos(azimuth) * std::cos(elevation)};

  Camera c;
  c.fov_deg = 45.0f;
  const float tan_half_v = std::tan(0.5f * c.fov_deg * kDegToRad);
  // The narrower of the two half-angles decides; 5% margin keeps silhouettes off the border.
  const float half = std::atan(tan_half_v * std::min(1.0f, aspect));
  const float distance = 1.05f * radius / std::sin(half);
  c.target = center;
  c.eye = center + distance * dir;
  c.up = Vec3{0.0f, 1.0f, 0.0f};
  return c;
}

}  // namespace hwbvh
