// bench_build: the whole hwbvh build pipeline (Embree binary BVH, SAH collapse, pairing, OBB selection,
// RT IP 3.1 encoding) against Embree's own scene commit on the same triangles, in the same process.
//
//   bench_build [--runs N] [--threads N] [--grid QUADS_PER_SIDE] [SCENE.obj ...]
// Without scene arguments it uses ../shared/scenes/ogre.obj (when present) and a generated 2M-triangle grid.
#include <embree3/rtcore.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "embree_commit.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/formats/rdna4/encode.h"

namespace {

using namespace hwbvh;

struct EmbreeScene {
  RTCDevice device;
  explicit EmbreeScene(int threads) {
    const std::string config = "threads=" + std::to_string(threads);
    device = rtcNewDevice(config.c_str());
  }
  ~EmbreeScene() { rtcReleaseDevice(device); }

  void commit(const Scene& scene, RTCBuildQuality quality) const { bench::embree_commit(device, scene, quality); }
};

using bench::Times;

// Each case's median wall time and median process CPU time. CPU time sums all threads (including TBB workers
// waiting for work), so on a machine shared with other jobs it is the steadier figure of the two.
std::vector<Times> median_times(int runs, const std::vector<std::function<void()>>& cases) {
  std::vector<Times> medians;
  for (const std::vector<Times>& runs_of_case : bench::interleaved_runs(runs, cases, CLOCK_PROCESS_CPUTIME_ID)) {
    medians.push_back({bench::median_of(runs_of_case, &Times::wall), bench::median_of(runs_of_case, &Times::cpu)});
  }
  return medians;
}

void run_scene(const Scene& scene, int runs, int threads) {
  bvh_build::BuildOptions bo;
  bo.threads = threads;
  bo.quality = bvh_build::BuildQuality::Medium;
  rdna4::adapt_build_options(bo);
  rdna4::EncodeOptions eo;
  eo.threads = threads;
  rdna4::EncodeStats stats;
  bvh_build::BuildStats bstats;
  bvh_build::BuildOptions bo_high = bo;
  bo_high.quality = bvh_build::BuildQuality::High;
  const EmbreeScene embree(threads);
  const std::vector<Times> medians = median_times(runs, {
      [&] {
        auto built = bvh_build::build_wide_bvh(scene, bo);
        bstats = built.stats;
        stats = rdna4::encode(scene, built.bvh, eo).stats;
      },
      [&] {
        auto built = bvh_build::build_wide_bvh(scene, bo_high);
        (void)rdna4::encode(scene, built.bvh, eo);
      },
      [&] { embree.commit(scene, RTC_BUILD_QUALITY_MEDIUM); },
      [&] { embree.commit(scene, RTC_BUILD_QUALITY_HIGH); }});
  const Times &medium = medians[0], &high = medians[1], &embree_default = medians[2], &embree_high = medians[3];
  const double tris = static_cast<double>(scene.triangles.size());
  std::printf("scene\t%s\ttriangles\t%zu\n", scene.source.c_str(), scene.triangles.size());
  std::printf("                               wall (median)  CPU (median, all threads)\n");
  const auto row = [&](const char* name, const Times& t) {
    std::printf("  %-28s %9.3f s  %9.3f s   %7.2f Mtri/s\n", name, t.wall, t.cpu, tris / t.wall * 1e-6);
  };
  row("hwbvh pipeline (medium)", medium);
  row("hwbvh pipeline (high/splits)", high);
  row("embree commit (default)", embree_default);
  row("embree commit (high)", embree_high);
  const auto ratio = [](const char* name, const Times& a, const Times& b) {
    std::printf("  ratio %-32s %6.2fx wall  %6.2fx CPU\n", name, a.wall / b.wall, a.cpu / b.cpu);
  };
  ratio("hwbvh(medium) / embree(high)", medium, embree_high);
  ratio("hwbvh(high) / embree(high)", high, embree_high);
  ratio("hwbvh(medium) / embree(default)", medium, embree_default);
  std::printf("  phases (medium): binary %.3f s, collapse %.3f s, obb %.3f s, encode %.3f s\n",
              bstats.seconds_binary, bstats.seconds_collapse, stats.seconds_obb, stats.seconds_encode);
  std::printf("  blob: %.2f bytes/triangle, %.2f triangles/primitive node, %.1f%% OBB box nodes\n",
              static_cast<double>(stats.node_bytes) / tris, static_cast<double>(stats.triangles) / stats.primitive_nodes,
              100.0 * stats.obb_box_nodes / stats.box_nodes);
  std::printf("  peak resident memory so far: %.1f bytes/triangle (%.0f MB)\n", bench::peak_rss_bytes() / tris,
              bench::peak_rss_bytes() / 1e6);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5, threads = 0;
  uint32_t grid = 1000;  // 1000^2 quads = 2,000,000 triangles
  std::vector<std::string> scenes;
  CLI::App app{"The whole build pipeline against Embree's own commit on the same triangles (bench/README.md)",
               "bench_build"};
  app.add_option("--runs", runs, "rounds per scene after a warm-up round (half as many for the grid)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--threads", threads, "build threads; 0 = all hardware threads")->check(CLI::Range(0, 4096));
  app.add_option("--grid", grid, "side of the generated displaced grid in quads (2 x GRID^2 triangles); 0 = none")
      ->check(CLI::Range(0, 4000));
  app.add_option("scenes", scenes, "OBJ scenes; default: ../shared/scenes/ogre.obj (if present)");
  bench::parse_command_line(app, argc, argv);
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  bench::print_header("bench_build", threads);
  if (scenes.empty()) {
    const std::string ogre = std::string(HWBVH_SHARED_DIR) + "/scenes/ogre.obj";
    if (std::filesystem::exists(ogre)) scenes.push_back(ogre);
  }
  try {
    for (const auto& path : scenes) run_scene(load_obj(path), runs, threads);
    if (grid > 0) run_scene(bench::displaced_grid(grid), std::max(1, runs / 2), threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_build: %s\n", e.what());
    return 1;
  }
  return 0;
}
