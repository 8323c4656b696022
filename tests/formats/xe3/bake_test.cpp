// The conservative opacity bake (bake.h, docs/xe3-format.md §5.2): conservativeness against the ground truth on random
// textures and triangles, an exact texel-overlap reference on small textures, hierarchy, restate, determinism, and
// the pine tree's speed.
#include "hwbvh/formats/xe3/bake.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>

#include <glm/geometric.hpp>

#include "fixtures/paths.h"
#include "hwbvh/core/error.h"

namespace hwbvh::xe3 {
namespace {

using S = SubTriangleState;

// A random texture of w x h texels made of uniform blocks (so that decided sub-triangles exist), with some noise.
AlphaTexture random_texture(std::mt19937& rng, uint32_t w, uint32_t h) {
  AlphaTexture t{"", w, h, std::vector<uint8_t>(std::size_t{w} * h)};
  const uint32_t block = 1 + rng() % 4;
  std::vector<uint8_t> block_alpha(((w + block - 1) / block) * ((h + block - 1) / block));
  for (auto& a : block_alpha) a = static_cast<uint8_t>(rng() % 2 == 0 ? rng() % 100 : 155 + rng() % 101);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      uint8_t a = block_alpha[(y / block) * ((w + block - 1) / block) + x / block];
      if (rng() % 16 == 0) a = static_cast<uint8_t>(rng() % 256);  // noise, including values at the cutoff
      t.alpha[std::size_t{y} * w + x] = a;
    }
  return t;
}

Vec2 random_uv(std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  return {d(rng), d(rng)};
}

// One texture, `count` random triangles over it: small ones inside a texel or two, big ones wrapping around.
AlphaTest random_alpha_test(std::mt19937& rng, uint32_t count) {
  AlphaTest a;
  a.cutoff = std::uniform_real_distribution<float>(0.05f, 0.95f)(rng);
  a.textures.push_back(random_texture(rng, 1 + rng() % 12, 1 + rng() % 12));
  for (uint32_t i = 0; i < count; ++i) {
    const Vec2 base = random_uv(rng, -2.0f, 2.0f);
    const float size = std::array<float, 4>{0.05f, 0.3f, 1.0f, 3.0f}[rng() % 4];
    AlphaTest::Tri t{0, {base, base + random_uv(rng, -size, size), base + random_uv(rng, -size, size)}};
    if (rng() % 8 == 0) t.uv[2] = t.uv[1];  // a degenerate UV triangle
    if (rng() % 8 == 0) {                   // corners on texel boundaries
      for (Vec2& uv : t.uv) uv = glm::round(uv * 4.0f) / 4.0f;
    }
    a.triangles.push_back(t);
  }
  return a;
}

// Barycentrics of the corners of micro-triangle `m` at `level`.
std::array<Vec2, 3> corners(MicroTriangle m, uint32_t level) {
  const float s = std::ldexp(1.0f, -static_cast<int>(level));
  const float u = static_cast<float>(m.iu) * s, v = static_cast<float>(m.iv) * s;
  if (m.inverted) return {Vec2{u + s, v}, Vec2{u, v + s}, Vec2{u + s, v + s}};
  return {Vec2{u, v}, Vec2{u + s, v}, Vec2{u, v + s}};
}

// A random point of the closed triangle (a, b, c): corners, edge points and interior points.
Vec2 random_point(std::mt19937& rng, const std::array<Vec2, 3>& c) {
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  float w[3] = {d(rng), d(rng), d(rng)};
  const uint32_t kind = rng() % 4;
  if (kind == 0) w[rng() % 3] = 0.0f;  // on an edge
  if (kind == 1) {                      // a corner
    w[0] = w[1] = w[2] = 0.0f;
    w[rng() % 3] = 1.0f;
  }
  const float sum = w[0] + w[1] + w[2];
  if (sum == 0.0f) return c[0];
  return (w[0] / sum) * c[0] + (w[1] / sum) * c[1] + (w[2] / sum) * c[2];
}

// No Opaque sub-triangle holds a failing point, no Transparent one a passing point.
void expect_conservative(const AlphaTest& a, uint32_t tri, uint32_t level, std::span<const S> states,
                         std::mt19937& rng, int samples) {
  for (uint32_t k = 0; k < states.size(); ++k) {
    if (states[k] == S::Unknown) continue;
    const auto c = corners(bird_micro_triangle(k, level), level);
    for (int s = 0; s < samples; ++s) {
      const Vec2 p = random_point(rng, c);
      ASSERT_EQ(a.passes(tri, p), states[k] == S::Opaque)
          << "triangle " << tri << " level " << level << " sub-triangle " << k << " at (" << p.x << ", " << p.y << ")";
    }
  }
  // The way the emulator looks states up: any barycentrics of the triangle -> sub_triangle_index.
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  for (int s = 0; s < samples * 8; ++s) {
    Vec2 p{d(rng), d(rng)};
    if (p.x + p.y > 1.0f) p = Vec2{1.0f} - p;
    const S state = states[sub_triangle_index(p, level, SubTriangleOrder::Bird)];
    if (state != S::Unknown) {
      ASSERT_EQ(a.passes(tri, p), state == S::Opaque) << tri << " " << p.x << " " << p.y;
    }
  }
}

// Bakes every triangle of `rounds` random alpha tests of `triangles` triangles each, at a random level below
// `levels`, and hands `fn` the alpha test, the triangle, the level and the states. Stops at a fatal failure.
void for_each_random_bake(
    std::mt19937& rng, int rounds, uint32_t triangles, uint32_t levels,
    const std::function<void(const AlphaTest&, uint32_t tri, uint32_t level, const std::vector<S>& states)>& fn) {
  for (int round = 0; round < rounds; ++round) {
    const AlphaTest a = random_alpha_test(rng, triangles);
    for (uint32_t tri = 0; tri < a.triangles.size(); ++tri) {
      const uint32_t level = rng() % levels;
      fn(a, tri, level, bake_opacity(a, tri, level));
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(Xe3Bake, ConservativeOnRandomTexturesAndTriangles) {
  std::mt19937 rng(1234);
  uint64_t decided = 0, total = 0;
  const auto check = [&](const AlphaTest& a, uint32_t tri, uint32_t level, const std::vector<S>& states) {
    ASSERT_EQ(states.size(), sub_triangle_count(level));
    expect_conservative(a, tri, level, states, rng, 24);
    for (S s : states) decided += s != S::Unknown ? 1 : 0;
    total += states.size();
  };
  for_each_random_bake(rng, 40, 8, 5, check);
  EXPECT_GT(decided, total / 10);  // the test is not vacuous
}

// Exact reference on small textures: the closed UV image of a sub-triangle against every closed texel square
// (separating axes), with wrapping. The bake may only be less decided than this.
bool overlaps(const std::array<glm::dvec2, 3>& t, double x0, double y0) {
  const glm::dvec2 box[4] = {{x0, y0}, {x0 + 1, y0}, {x0, y0 + 1}, {x0 + 1, y0 + 1}};
  const auto separated = [&](glm::dvec2 axis) {
    double tmin = INFINITY, tmax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    for (const auto& p : t) tmin = std::min(tmin, glm::dot(p, axis)), tmax = std::max(tmax, glm::dot(p, axis));
    for (const auto& p : box) bmin = std::min(bmin, glm::dot(p, axis)), bmax = std::max(bmax, glm::dot(p, axis));
    return tmax < bmin || bmax < tmin;
  };
  if (separated({1, 0}) || separated({0, 1})) return false;
  for (int k = 0; k < 3; ++k) {
    const glm::dvec2 e = t[(k + 1) % 3] - t[k];
    if (separated({-e.y, e.x})) return false;
  }
  return true;
}

S reference_state(const AlphaTest& a, uint32_t tri, MicroTriangle m, uint32_t level) {
  const AlphaTexture& tex = a.textures[a.triangles[tri].texture];
  std::array<glm::dvec2, 3> t;
  const auto c = corners(m, level);
  for (int k = 0; k < 3; ++k) {
    const double u = c[k].x, v = c[k].y, w = 1.0 - u - v;
    const auto& uv = a.triangles[tri].uv;
    t[k] = {(w * uv[0].x + u * uv[1].x + v * uv[2].x) * tex.width, (w * uv[0].y + u * uv[1].y + v * uv[2].y) * tex.height};
  }
  bool pass = false, fail = false;
  const auto lo = glm::floor(glm::min(t[0], glm::min(t[1], t[2]))) - 1.0;
  const auto hi = glm::floor(glm::max(t[0], glm::max(t[1], t[2]))) + 1.0;
  for (double j = lo.y; j <= hi.y; ++j)
    for (double i = lo.x; i <= hi.x; ++i) {
      if (!overlaps(t, i, j)) continue;
      const auto x = static_cast<uint32_t>(std::fmod(std::fmod(i, tex.width) + tex.width, tex.width));
      const auto row = tex.height - 1 - static_cast<uint32_t>(std::fmod(std::fmod(j, tex.height) + tex.height, tex.height));
      (a.alpha_passes(tex.alpha[std::size_t{row} * tex.width + x]) ? pass : fail) = true;
    }
  return pass && fail ? S::Unknown : pass ? S::Opaque : S::Transparent;
}

TEST(Xe3Bake, AgreesWithAnExactTexelOverlapReference) {
  std::mt19937 rng(99);
  uint64_t reference_decided = 0, bake_decided = 0;
  const auto check = [&](const AlphaTest& a, uint32_t tri, uint32_t level, const std::vector<S>& states) {
    for (uint32_t k = 0; k < states.size(); ++k) {
      const S ref = reference_state(a, tri, bird_micro_triangle(k, level), level);
      // The bake's texel set contains the reference's: it decides only what the reference decides the same way.
      if (states[k] != S::Unknown) {
        ASSERT_EQ(states[k], ref) << tri << " " << level << " " << k;
      }
      reference_decided += ref != S::Unknown ? 1 : 0;
      bake_decided += states[k] != S::Unknown ? 1 : 0;
    }
  };
  for_each_random_bake(rng, 20, 6, 4, check);
  // Only a thin margin separates the two sets: the bake decides nearly everything the reference does.
  EXPECT_GE(static_cast<double>(bake_decided), 0.9 * static_cast<double>(reference_decided));
}

TEST(Xe3Bake, UniformTexturesAndUntestedTriangles) {
  AlphaTest a;
  a.textures.push_back(AlphaTexture{"", 2, 1, {255, 200}});
  a.textures.push_back(AlphaTexture{"", 1, 2, {3, 0}});
  a.triangles = {AlphaTest::Tri{0, {{0, 0}, {50, 0}, {0, 9}}}, AlphaTest::Tri{1, {{0, 0}, {1, 0}, {0, 1}}},
                 AlphaTest::Tri{}};
  for (uint32_t level : {0u, 2u}) {
    for (S s : bake_opacity(a, 0, level)) EXPECT_EQ(s, S::Opaque);
    for (S s : bake_opacity(a, 1, level)) EXPECT_EQ(s, S::Transparent);
    for (S s : bake_opacity(a, 2, level)) EXPECT_EQ(s, S::Opaque);  // not alpha-tested
  }
  const auto all = bake_all(a, 1, 1);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].size(), 4u);
  EXPECT_TRUE(all[2].empty());  // untested: no information
  EXPECT_THROW((void)bake_opacity(a, 0, 13), Error);
  EXPECT_THROW((void)bake_opacity(a, 3, 1), Error);
}

TEST(Xe3Bake, TwoColumnTextureAtLevelOne) {
  // Left half transparent, right half opaque (4 x 1 texels); texture u runs along barycentric u.
  // Level 1 (bird): 0 = corner at vertex 0, 1 = middle, 2 = corner at vertex 1, 3 = corner at vertex 2; all but 2
  // have u <= 0.5.
  AlphaTest a;
  a.textures.push_back(AlphaTexture{"", 4, 1, {0, 0, 255, 255}});
  a.triangles = {AlphaTest::Tri{0, {{0.01f, 0.5f}, {0.7f, 0.5f}, {0.01f, 0.5f}}},   // u = 0.5 -> x = 1.42 texels
                 AlphaTest::Tri{0, {{0.3f, 0.5f}, {0.99f, 0.5f}, {0.3f, 0.5f}}}};   // u = 0.5 -> x = 2.58 texels
  EXPECT_EQ(bake_opacity(a, 0, 1), (std::vector<S>{S::Transparent, S::Transparent, S::Unknown, S::Transparent}));
  EXPECT_EQ(bake_opacity(a, 1, 1), (std::vector<S>{S::Unknown, S::Unknown, S::Opaque, S::Unknown}));
  // Exactly on a texel boundary the point belongs to the upper texel: the half ending at x = 2.0 is Unknown.
  a.triangles[0].uv[1].x = 0.99f;  // u = 0.5 -> texture u = 0.5 -> x = 2.0
  EXPECT_EQ(bake_opacity(a, 0, 1)[0], S::Unknown);
}

TEST(Xe3Bake, DeeperLevelsRefineCoarserOnes) {
  std::mt19937 rng(5);
  const AlphaTest a = random_alpha_test(rng, 6);
  for (uint32_t tri = 0; tri < a.triangles.size(); ++tri) {
    const std::vector<S> fine = bake_opacity(a, tri, 6);
    for (uint32_t level = 0; level < 6; ++level) {
      const std::vector<S> coarse = bake_opacity(a, tri, level);
      const std::vector<S> down = restate(fine, level);
      // A decided coarse sub-triangle stays decided the same way in all its descendants.
      for (uint32_t k = 0; k < coarse.size(); ++k)
        if (coarse[k] != S::Unknown) {
          EXPECT_EQ(down[k], coarse[k]) << tri << " " << level << " " << k;
        }
    }
  }
  // Level 12 on demand (16.7 M states): fast for a triangle inside one texel.
  AlphaTest one;
  one.textures.push_back(AlphaTexture{"", 2, 2, {0, 255, 255, 0}});
  one.triangles = {AlphaTest::Tri{0, {{0.1f, 0.1f}, {0.2f, 0.1f}, {0.1f, 0.2f}}}};
  const std::vector<S> deep = bake_opacity(one, 0, 12);
  EXPECT_EQ(deep.size(), sub_triangle_count(12));
  EXPECT_TRUE(std::all_of(deep.begin(), deep.end(), [](S s) { return s == S::Opaque; }));  // bottom left: 255
}

TEST(Xe3Bake, Restate) {
  const std::vector<S> l1 = {S::Opaque, S::Transparent, S::Unknown, S::Opaque};
  const std::vector<S> l2 = restate(l1, 2);
  ASSERT_EQ(l2.size(), 16u);
  for (uint32_t k = 0; k < 16; ++k) EXPECT_EQ(l2[k], l1[k / 4]);
  EXPECT_EQ(restate(l2, 1), l1);
  EXPECT_EQ(restate(l1, 0), std::vector<S>{S::Unknown});
  EXPECT_EQ(restate(std::vector<S>(4, S::Opaque), 0), std::vector<S>{S::Opaque});
  EXPECT_THROW((void)restate(std::vector<S>(3), 1), Error);
  EXPECT_THROW((void)restate(l1, 13), Error);
}

TEST(Xe3Bake, BakeAllIsIndependentOfThreads) {
  std::mt19937 rng(77);
  const AlphaTest a = random_alpha_test(rng, 64);
  const auto one = bake_all(a, 3, 1);
  EXPECT_EQ(bake_all(a, 3, 0), one);
  EXPECT_EQ(bake_all(a, 3, 2), one);
  for (uint32_t t = 0; t < a.triangles.size(); ++t) EXPECT_EQ(one[t], bake_opacity(a, t, 3));
}

TEST(Xe3Bake, PineTreeAtLevelThreeIsConservative) {
  const auto path = test::shared_scene("smallpine/smallpine.obj");
  if (path.empty()) GTEST_SKIP() << "../shared is absent";
  const AlphaTest a = make_alpha_test(load_obj(path));
  const auto states = bake_all(a, 3, 1);
  uint64_t decided = 0, total = 0;
  for (const auto& s : states) {
    total += s.size();
    decided += static_cast<uint64_t>(std::count_if(s.begin(), s.end(), [](S x) { return x != S::Unknown; }));
  }
  EXPECT_EQ(total, uint64_t{a.tested_count()} * 64);
  EXPECT_GT(decided, 0u);
  std::mt19937 rng(3);
  for (uint32_t t = 0; t < a.triangles.size(); t += 7) {
    if (a.tested(t)) expect_conservative(a, t, 3, states[t], rng, 4);
  }
}

}  // namespace
}  // namespace hwbvh::xe3
