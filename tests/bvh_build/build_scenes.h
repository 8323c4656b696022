#pragma once
// Small procedural scenes for the build tests, built in code (fixed seeds, so every run sees the same input).
#include <cmath>
#include <cstdint>
#include <random>

#include "hwbvh/scene/scene.h"

namespace hwbvh::test {

/// Adds a triangle with three new vertices.
inline uint32_t add_triangle(Scene& scene, Vec3 a, Vec3 b, Vec3 c) {
  const auto base = static_cast<uint32_t>(scene.positions.size());
  scene.positions.insert(scene.positions.end(), {a, b, c});
  Triangle t;
  t.v[0] = base;
  t.v[1] = base + 1;
  t.v[2] = base + 2;
  t.primitive = static_cast<uint32_t>(scene.triangles.size());
  scene.triangles.push_back(t);
  scene.geometries.assign(1, Geometry{"all", 0, static_cast<uint32_t>(scene.triangles.size())});
  return t.primitive;
}

/// Adds a triangle over existing vertices.
inline uint32_t add_indexed(Scene& scene, uint32_t a, uint32_t b, uint32_t c) {
  Triangle t;
  t.v[0] = a;
  t.v[1] = b;
  t.v[2] = c;
  t.primitive = static_cast<uint32_t>(scene.triangles.size());
  scene.triangles.push_back(t);
  scene.geometries.assign(1, Geometry{"all", 0, static_cast<uint32_t>(scene.triangles.size())});
  return t.primitive;
}

/// n small random triangles in the unit cube.
inline Scene random_soup(int n, uint32_t seed = 1) {
  Scene scene;
  scene.source = "soup";
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), edge(-0.03f, 0.03f);
  for (int i = 0; i < n; ++i) {
    const Vec3 p{unit(rng), unit(rng), unit(rng)};
    add_triangle(scene, p, p + Vec3{edge(rng), edge(rng), edge(rng)}, p + Vec3{edge(rng), edge(rng), edge(rng)});
  }
  return scene;
}

/// An nx * ny grid of quads in the z = 0 plane, two triangles per quad over shared vertices.
inline Scene grid(int nx, int ny) {
  Scene scene;
  scene.source = "grid";
  for (int y = 0; y <= ny; ++y) {
    for (int x = 0; x <= nx; ++x) scene.positions.push_back({static_cast<float>(x), static_cast<float>(y), 0.0f});
  }
  const auto at = [&](int x, int y) { return static_cast<uint32_t>(y * (nx + 1) + x); };
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      add_indexed(scene, at(x, y), at(x + 1, y), at(x + 1, y + 1));
      add_indexed(scene, at(x, y), at(x + 1, y + 1), at(x, y + 1));
    }
  }
  return scene;
}

inline Scene single_triangle() {
  Scene scene;
  scene.source = "single";
  add_triangle(scene, {0, 0, 0}, {1, 0, 0}, {0, 1, 0});
  return scene;
}

/// 9 tight clusters of 3 triangles, far apart: the root has to split them over more than one level.
inline Scene nine_clusters() {
  Scene scene;
  scene.source = "clusters";
  for (int c = 0; c < 9; ++c) {
    const Vec3 o{static_cast<float>(c % 3) * 100.0f, static_cast<float>(c / 3) * 100.0f, static_cast<float>(c)};
    for (int k = 0; k < 3; ++k) {
      const Vec3 p = o + Vec3{static_cast<float>(k), 0.0f, 0.0f};
      add_triangle(scene, p, p + Vec3{0.5f, 0, 0}, p + Vec3{0, 0.5f, 0.5f});
    }
  }
  return scene;
}

/// n long thin triangles across the cube's diagonal, plus a soup: boxes overlap heavily, spatial splits pay.
inline Scene long_diagonals(int n, uint32_t seed = 7) {
  Scene scene = random_soup(n, seed);
  scene.source = "diagonals";
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> jitter(-0.05f, 0.05f);
  for (int i = 0; i < n; ++i) {
    const Vec3 a{jitter(rng), jitter(rng), jitter(rng)};
    const Vec3 b = Vec3{1.0f} + Vec3{jitter(rng), jitter(rng), jitter(rng)};
    add_triangle(scene, a, b, b + Vec3{0.02f, -0.02f, 0.0f});
  }
  return scene;
}

/// n triangles at exponentially growing distances and sizes: SAH peels few off per level, giving a deep tree.
/// Keep n <= 100 so that surface areas stay within float range.
inline Scene deep_chain(int n) {
  Scene scene;
  scene.source = "chain";
  for (int i = 0; i < n; ++i) {
    const float s = std::pow(1.5f, static_cast<float>(i));
    const Vec3 p{s, 0.0f, 0.0f};
    add_triangle(scene, p, p + Vec3{0.25f * s, 0, 0}, p + Vec3{0, 0.25f * s, 0});
  }
  return scene;
}

}  // namespace hwbvh::test
