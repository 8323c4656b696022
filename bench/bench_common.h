#pragma once
// Shared helpers for the plain-timer benchmarks: peak memory, a generated scene, the header line.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "hwbvh/scene/scene.h"

namespace hwbvh::bench {

/// Peak resident set size of this process so far, in bytes.
inline double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

/// A displaced height field of `quads_per_side`^2 quads (2 triangles each): a large, generated scene.
inline Scene displaced_grid(uint32_t quads_per_side) {
  Scene s;
  s.source = "generated-grid-" + std::to_string(quads_per_side);
  const uint32_t n = quads_per_side;
  s.positions.reserve(std::size_t{n + 1} * (n + 1));
  for (uint32_t y = 0; y <= n; ++y) {
    for (uint32_t x = 0; x <= n; ++x) {
      const float fx = static_cast<float>(x) / static_cast<float>(n), fy = static_cast<float>(y) / static_cast<float>(n);
      const float h = 0.05f * std::sin(40.0f * fx) * std::cos(33.0f * fy) + 0.02f * std::sin(170.0f * (fx + fy));
      s.positions.push_back({fx, h, fy});
    }
  }
  s.geometries.push_back({"grid", 0, 0});
  s.triangles.reserve(std::size_t{2} * n * n);
  for (uint32_t y = 0; y < n; ++y) {
    for (uint32_t x = 0; x < n; ++x) {
      const uint32_t i = y * (n + 1) + x;
      Triangle a, b;
      a.v[0] = i; a.v[1] = i + 1; a.v[2] = i + n + 1;
      b.v[0] = i + 1; b.v[1] = i + n + 2; b.v[2] = i + n + 1;
      a.primitive = s.geometries[0].triangle_count++;
      s.triangles.push_back(a);
      b.primitive = s.geometries[0].triangle_count++;
      s.triangles.push_back(b);
    }
  }
  return s;
}

inline void print_header(const char* name, int threads) {
  std::printf("# %s — hwbvh benchmark (median of repeated runs; wall clock; noisy machines: compare ratios)\n", name);
  std::printf("# threads: %d of %u hardware threads\n", threads, std::thread::hardware_concurrency());
}

}  // namespace hwbvh::bench
