#include "hwbvh/scene/camera.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include <glm/common.hpp>
#include <glm/geometric.hpp>
#include <gtest/gtest.h>

#include "hwbvh/core/error.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh {
namespace {

/// Normalised device coordinates of `p` seen by `c` (x right, y up, z = depth along the view direction).
Vec3 project(const Camera& c, float aspect, Vec3 p) {
  const Vec3 forward = glm::normalize(c.target - c.eye);
  const Vec3 right = glm::normalize(glm::cross(forward, c.up));
  const Vec3 up = glm::cross(right, forward);
  const float tan_half = std::tan(0.5f * c.fov_deg * std::numbers::pi_v<float> / 180.0f);
  const Vec3 v = p - c.eye;
  const float depth = glm::dot(v, forward);
  return {glm::dot(v, right) / (depth * tan_half * aspect), glm::dot(v, up) / (depth * tan_half), depth};
}

TEST(AutoFrame, EveryCornerOfTheSceneIsInsideTheImage) {
  const std::array<Aabb, 4> boxes{Aabb{{-1, -1, -1}, {1, 1, 1}}, Aabb{{0, 0, 0}, {100, 1, 3}},
                                  Aabb{{-5, 2, 7}, {-5, 2, 7}}, Aabb{{10, -3, 0}, {11, 40, 0}}};
  for (const Aabb& box : boxes) {
    for (float aspect : {0.5f, 1.0f, 16.0f / 9.0f, 4.0f}) {
      const Camera c = auto_frame(box, aspect);
      EXPECT_NO_THROW(validate_camera(c));
      for (int corner = 0; corner < 8; ++corner) {
        const Vec3 p{corner & 1 ? box.max.x : box.min.x, corner & 2 ? box.max.y : box.min.y,
                     corner & 4 ? box.max.z : box.min.z};
        const Vec3 ndc = project(c, aspect, p);
        EXPECT_GT(ndc.z, 0.0f);
        EXPECT_LE(std::abs(ndc.x), 1.0f) << "aspect " << aspect << " corner " << corner;
        EXPECT_LE(std::abs(ndc.y), 1.0f) << "aspect " << aspect << " corner " << corner;
      }
    }
  }
}

TEST(AutoFrame, IsAThreeQuarterViewFromAbove) {
  const Aabb box{{-1, -1, -1}, {1, 1, 1}};
  const Camera c = auto_frame(box, 1.0f);
  const Vec3 back = glm::normalize(c.eye - c.target);  // 35 degrees right of +z, 25 degrees up
  EXPECT_NEAR(back.y, std::sin(25.0f * std::numbers::pi_v<float> / 180.0f), 1e-5f);
  EXPECT_NEAR(back.x / back.z, std::tan(35.0f * std::numbers::pi_v<float> / 180.0f), 1e-5f);
  const Camera again = auto_frame(box, 1.0f);
  EXPECT_EQ(format_camera(c), format_camera(again));
}

// The fit is tight: on the axis that binds, the outermost corners touch 95% of the half-image on both sides;
// on the other axis no corner is further out than that, and the corners are centred there too.
TEST(AutoFrame, TheBoxFillsTheImageOnItsTighterAxis) {
  const std::array<Aabb, 4> boxes{Aabb{{-1, -1, -1}, {1, 1, 1}}, Aabb{{0, 0, 0}, {100, 1, 3}},
                                  Aabb{{10, -3, 0}, {11, 40, 0}}, Aabb{{-2, 0, -7}, {30, 5, 1}}};
  for (const Aabb& box : boxes) {
    for (float aspect : {0.5f, 1.0f, 16.0f / 9.0f, 4.0f}) {
      const Camera c = auto_frame(box, aspect);
      Vec3 lo(std::numeric_limits<float>::infinity()), hi(-std::numeric_limits<float>::infinity());
      for (int corner = 0; corner < 8; ++corner) {
        const Vec3 p{corner & 1 ? box.max.x : box.min.x, corner & 2 ? box.max.y : box.min.y,
                     corner & 4 ? box.max.z : box.min.z};
        const Vec3 ndc = project(c, aspect, p);
        lo = glm::min(lo, ndc);
        hi = glm::max(hi, ndc);
      }
      const bool horizontal_binds = std::abs(hi.x - 0.95f) < 1e-3f && std::abs(lo.x + 0.95f) < 1e-3f;
      const bool vertical_binds = std::abs(hi.y - 0.95f) < 1e-3f && std::abs(lo.y + 0.95f) < 1e-3f;
      EXPECT_TRUE(horizontal_binds || vertical_binds) << "aspect " << aspect << " x " << lo.x << ".." << hi.x
                                                      << " y " << lo.y << ".." << hi.y;
      EXPECT_LE(std::max({hi.x, hi.y, -lo.x, -lo.y}), 0.95f + 1e-3f);
      EXPECT_NEAR(hi.x + lo.x, 0.0f, 1e-3f) << "aspect " << aspect;
      EXPECT_NEAR(hi.y + lo.y, 0.0f, 1e-3f) << "aspect " << aspect;
    }
  }
}

// What the default camera shows of a solid box (flat, long, tall, cubic): the pixels whose primary ray meets the
// box, found by a slab test in double. The hit region is centred in the image on both axes and reaches the 5% margin
// on the binding axis; a flat plane and a long bar, which leave most of a 25-degree view empty, are seen from higher
// up (issue 30: a 10 x 10 plane used to fill rows 58-139 of 256 with 16% of the pixels).
struct Coverage {
  double fraction = 0.0;                  ///< of the pixels
  double centre_x = 0.0, centre_y = 0.0;  ///< of the hit region's bounding rectangle, in pixels from the image centre
  double width = 0.0, height = 0.0;       ///< of that rectangle, as shares of the image's
};

bool meets_box(const Ray& ray, const Aabb& box) {
  double t0 = 0.0, t1 = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) {
    const double o = ray.origin[k], d = ray.direction[k];
    if (d == 0.0) {
      if (o < box.min[k] || o > box.max[k]) return false;
      continue;
    }
    double a = (box.min[k] - o) / d, b = (box.max[k] - o) / d;
    if (a > b) std::swap(a, b);
    t0 = std::max(t0, a);
    t1 = std::min(t1, b);
  }
  return t0 <= t1;
}

Coverage coverage(const Aabb& box, uint32_t width, uint32_t height) {
  const RayBatch batch = primary_rays(auto_frame(box, static_cast<float>(width) / static_cast<float>(height)), width,
                                      height);
  uint32_t x0 = width, x1 = 0, y0 = height, y1 = 0, hits = 0;
  for (std::size_t i = 0; i < batch.rays.size(); ++i) {
    if (!meets_box(batch.rays[i], box)) continue;
    const uint32_t x = batch.pixel[i] % width, y = batch.pixel[i] / width;
    ++hits;
    x0 = std::min(x0, x);
    x1 = std::max(x1, x);
    y0 = std::min(y0, y);
    y1 = std::max(y1, y);
  }
  Coverage c;
  if (hits == 0) return c;
  c.fraction = static_cast<double>(hits) / static_cast<double>(batch.rays.size());
  c.centre_x = 0.5 * (x0 + x1 + 1) - 0.5 * width;
  c.centre_y = 0.5 * (y0 + y1 + 1) - 0.5 * height;
  c.width = static_cast<double>(x1 + 1 - x0) / width;
  c.height = static_cast<double>(y1 + 1 - y0) / height;
  return c;
}

TEST(AutoFrame, FlatLongAndTallScenesAreCentredAndFillTheImage) {
  struct Case {
    const char* name;
    Aabb box;
    double min_fraction;  ///< of a square image's pixels that hit (with 25 degrees only: 0.20, 0.20, 0.04, 0.05, 0.63)
  };
  const Case cases[] = {
      {"10 x 10 plane", Aabb{{-5, 0, -5}, {5, 0, 5}}, 0.38},
      {"terrain", Aabb{{0, -0.3f, 0}, {64, 0.4f, 64}}, 0.38},
      {"long bar", Aabb{{-20, 0, -0.5f}, {20, 1, 0.5f}}, 0.035},
      {"tall tower", Aabb{{-0.5f, 0, -0.5f}, {0.5f, 30, 0.5f}}, 0.11},
      {"cube", Aabb{{0, 0, 0}, {555, 555, 555}}, 0.6},
  };
  for (const Case& c : cases) {
    for (const auto& [w, h] : {std::pair{256u, 256u}, std::pair{320u, 180u}, std::pair{180u, 320u}}) {
      const Coverage cov = coverage(c.box, w, h);
      const std::string what = std::string(c.name) + " at " + std::to_string(w) + " x " + std::to_string(h) +
                               ": " + std::to_string(cov.fraction) + " of the pixels hit";
      EXPECT_LE(std::abs(cov.centre_x), 1.0) << what;
      EXPECT_LE(std::abs(cov.centre_y), 1.0) << what;
      EXPECT_GE(std::max(cov.width, cov.height), 0.93) << what;
      EXPECT_LE(std::max(cov.width, cov.height), 0.96) << what;
      if (w == h) {
        EXPECT_GE(cov.fraction, c.min_fraction) << what;
      }
    }
  }
}

TEST(AutoFrame, RejectsEmptyBoundsAndBadAspect) {
  EXPECT_THROW((void)auto_frame(Aabb{}, 1.0f), Error);
  EXPECT_THROW((void)auto_frame(Aabb{{0, 0, 0}, {1, 1, 1}}, 0.0f), Error);
}

// Coordinates whose squares overflow float (past about 1.8e19) still frame, the same view scaled; a scene near the
// float limit cannot put an eye outside itself in float and is refused with a message saying to give --camera.
TEST(AutoFrame, HugeScenesFrameOrAreRefusedClearly) {
  const Aabb unit{{0, 0, 0}, {1, 1, 1}};
  const float scale = 0x1p64f;  // a power of two: the framing is the unit box's, exactly scaled
  const Camera small = auto_frame(unit, 1.5f), huge = auto_frame(Aabb{unit.min * scale, unit.max * scale}, 1.5f);
  for (int k = 0; k < 3; ++k) {
    EXPECT_FLOAT_EQ(huge.eye[k], small.eye[k] * scale) << k;
    EXPECT_FLOAT_EQ(huge.target[k], small.target[k] * scale) << k;
  }
  try {
    (void)auto_frame(Aabb{{-3e38f, -3e38f, 0}, {3e38f, 3e38f, 3e38f}}, 1.0f);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("give one with --camera"), std::string::npos) << e.what();
  }
}

TEST(ParseCamera, ReadsTenNumbers) {
  const Camera c = parse_camera(" 1, 2,3 ,4,5,6, 0,1,0 , 60");
  EXPECT_EQ(c.eye, Vec3(1, 2, 3));
  EXPECT_EQ(c.target, Vec3(4, 5, 6));
  EXPECT_EQ(c.up, Vec3(0, 1, 0));
  EXPECT_EQ(c.fov_deg, 60.0f);
}

TEST(ParseCamera, FormatRoundTripsExactly) {
  const Camera c{{0.1f, -2.5e-7f, 3e8f}, {1.0f / 3.0f, 0, 0}, {0, 1, 1e-3f}, 37.5f};
  const Camera back = parse_camera(format_camera(c));
  EXPECT_EQ(back.eye, c.eye);
  EXPECT_EQ(back.target, c.target);
  EXPECT_EQ(back.up, c.up);
  EXPECT_EQ(back.fov_deg, c.fov_deg);
}

TEST(ParseCamera, RejectsBadText) {
  const std::array<std::pair<const char*, const char*>, 12> cases{{
      {"", "not a finite number"},
      {"1,2,3", "found 3"},
      {"0,0,5,0,0,0,0,1,0,45,1", "found 11"},
      {"0,0,5,0,0,0,0,1,0,45,", "found 11"},
      {"0,0,5,0,0,0,0,1,0,abc", "\"abc\" is not a finite number"},
      {"0,0,5,0,0,0,0,1,0,45x", "\"45x\""},
      {"0,0,nan,0,0,0,0,1,0,45", "\"nan\""},
      {"0,0,5,0,0,0,0,1,0,inf", "\"inf\""},
      {"0,0,5,0,0,0,0,1,0,0", "fov"},
      {"0,0,5,0,0,0,0,1,0,180", "fov"},
      {"1,2,3,1,2,3,0,1,0,45", "same point"},
      {"0,0,5,0,0,0,0,0,-2,45", "parallel"},
  }};
  for (const auto& [text, problem] : cases) {
    try {
      (void)parse_camera(text);
      ADD_FAILURE() << "accepted \"" << text << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)parse_camera("0,0,5,0,0,0,0,0,0,45"), Error);  // zero up
}

}  // namespace
}  // namespace hwbvh
