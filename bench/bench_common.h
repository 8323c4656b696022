#pragma once
// Shared helpers for the plain-timer benchmarks: interleaved timed runs and their medians, peak memory, a generated
// scene, the header line.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "hwbvh/scene/scene.h"

namespace hwbvh::bench {

/// Wall time and CPU time of one run, in seconds. On a machine shared with other jobs the CPU time is far steadier
/// than wall time (it still includes slowdowns from sharing caches and cores).
struct Times {
  double wall = 0.0;
  double cpu = 0.0;
};

/// The cases' runs interleaved: after one warm-up run each, `runs` rounds of one run per case, so that changes in
/// the machine's speed, which drifts over seconds, hit all of them alike. Returns times[case][round]. `cpu_clock`:
/// CLOCK_THREAD_CPUTIME_ID for the calling thread's time, CLOCK_PROCESS_CPUTIME_ID for all threads'.
inline std::vector<std::vector<Times>> interleaved_runs(int runs, const std::vector<std::function<void()>>& cases,
                                                        clockid_t cpu_clock) {
  const auto cpu_seconds = [cpu_clock] {
    timespec t{};
    clock_gettime(cpu_clock, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  for (const auto& run : cases) run();
  std::vector<std::vector<Times>> times(cases.size());
  for (int round = 0; round < runs; ++round) {
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const double cpu = cpu_seconds();
      const auto wall = std::chrono::steady_clock::now();
      cases[c]();
      times[c].push_back({std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
                          cpu_seconds() - cpu});
    }
  }
  return times;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
/// Median over the runs of one field (wall or cpu).
inline double median_of(const std::vector<Times>& runs, double Times::*field) {
  std::vector<double> v;
  for (const Times& t : runs) v.push_back(t.*field);
  return median(v);
}

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

/// Parses a bench's command line: --help prints the usage and exits 0; an unknown option, a missing or malformed
/// value exits 2 (bad usage, as hwbvh's own commands do) after saying what is wrong.
inline void parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
}

inline void print_header(const char* name, int threads) {
  std::printf("# %s — hwbvh benchmark (median of repeated runs; wall clock; noisy machines: compare ratios)\n", name);
  std::printf("# threads: %d of %u hardware threads\n", threads, std::thread::hardware_concurrency());
}

}  // namespace hwbvh::bench
