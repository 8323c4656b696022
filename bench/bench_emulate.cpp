// bench_emulate: rays per second of the functional RT IP 3.1 emulator (emu::trace_rays over waves, all counters
// on) against Embree's rtcIntersect1 on the same rays and the same triangles, in the same process, with the same
// executor and thread count. Embree runs twice: plain and with RTC_SCENE_FLAG_ROBUST (watertight).
//
//   bench_emulate [--runs N] [--threads N] [--size PIXELS] [--random N] [--triangle-test watertight|gpurt]
//                 [--two-level-only] [SCENE.obj|SCENE.gltf ...]
// Without scene arguments it uses ../shared/scenes/ogre.obj (when present), scenes/rotated-objects.obj and
// scenes/instanced-garden.gltf. A glTF scene runs twice: in two levels against Embree's instanced scene, and
// flattened against one Embree scene of its world-space triangles (not with --two-level-only: a billion instanced
// triangles do not fit in memory flattened).
// Each scene is traced with primary rays (PIXELS x PIXELS, default 512) and N random rays (default 512^2),
// single-threaded and with `--threads` threads (default: all hardware threads). The three engines' runs are
// interleaved round by round, and each ratio is the median of the rounds' ratios: the machine's speed drifts.
// The "results" line is a hash of every ray's hit and counters: it must not change when the emulator is optimised.
#include <embree3/rtcore.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <variant>
#include <span>
#include <string>
#include <vector>

#include "bench_common.h"
#include "embree_commit.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/fnv1a.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/scene/ray_gen.h"

namespace {

using namespace hwbvh;

/// An Embree scene over the blob's Geometry section: the triangles the emulated BVH was encoded from. For a
/// two-level blob, Embree's own two levels: one scene per BLAS and a top scene of instance geometries with the
/// sideband's object-to-world matrices and the instances' masks.
class EmbreeTracer {
 public:
  EmbreeTracer(const emu::LoadedBvh& bvh, int threads, bool robust) {
    const std::string config = "threads=" + std::to_string(threads);
    device_ = rtcNewDevice(config.c_str());
    const blob::GeometrySection& g = bvh.geometry;
    if (!bvh.two_level()) {
      scene_ = triangle_scene(g, 0, static_cast<uint32_t>(g.triangles.size()), robust);
      return;
    }
    scene_ = new_scene(robust);
    std::vector<RTCScene> blases;
    for (const blob::BlasRange& b : bvh.levels->blases)
      blases.push_back(triangle_scene(g, b.first_triangle, b.triangle_count, robust));
    for (uint32_t n = 0; n < bvh.instance_count(); ++n) {
      RTCGeometry inst = rtcNewGeometry(device_, RTC_GEOMETRY_TYPE_INSTANCE);
      rtcSetGeometryInstancedScene(inst, blases[bvh.levels->instances[n].blas]);
      rtcSetGeometryMask(inst, bvh.levels->instances[n].mask);
      rtcSetGeometryTransform(inst, 0, RTC_FORMAT_FLOAT3X4_ROW_MAJOR, bvh.sideband[n].object_to_world.data());
      rtcCommitGeometry(inst);
      rtcAttachGeometry(scene_, inst);
      rtcReleaseGeometry(inst);
    }
    for (RTCScene b : blases) rtcReleaseScene(b);  // the instances keep them
    rtcCommitScene(scene_);
  }
  ~EmbreeTracer() {
    rtcReleaseScene(scene_);
    rtcReleaseDevice(device_);
  }
  EmbreeTracer(const EmbreeTracer&) = delete;
  EmbreeTracer& operator=(const EmbreeTracer&) = delete;

  RTCScene new_scene(bool robust) const {
    RTCScene scene = rtcNewScene(device_);
    rtcSetSceneFlags(scene, robust ? RTC_SCENE_FLAG_ROBUST : RTC_SCENE_FLAG_NONE);
    rtcSetSceneBuildQuality(scene, RTC_BUILD_QUALITY_HIGH);
    return scene;
  }

  /// Triangles [first, first + count) of the Geometry section as one committed scene.
  RTCScene triangle_scene(const blob::GeometrySection& g, uint32_t first, uint32_t count, bool robust) const {
    RTCScene scene = new_scene(robust);
    bench::attach_triangles(device_, scene, std::span<const Vec3>(g.positions),
                            std::span<const blob::GeometrySection::Tri>(g.triangles).subspan(first, count),
                            RTC_BUILD_QUALITY_HIGH);
    rtcCommitScene(scene);
    return scene;
  }

  /// Closest hits of all rays; returns the hit count (so the work cannot be optimised away).
  std::size_t trace(std::span<const Ray> rays, const Executor& executor) const {
    std::vector<unsigned char> hit(rays.size());
    executor.for_ranges(0, rays.size(), 1024, [&](std::size_t b, std::size_t e) {
      RTCIntersectContext context;
      rtcInitIntersectContext(&context);
      for (std::size_t i = b; i < e; ++i) {
        const Ray& r = rays[i];
        RTCRayHit rh{};
        rh.ray.org_x = r.origin.x, rh.ray.org_y = r.origin.y, rh.ray.org_z = r.origin.z;
        rh.ray.dir_x = r.direction.x, rh.ray.dir_y = r.direction.y, rh.ray.dir_z = r.direction.z;
        rh.ray.tnear = r.tmin;
        rh.ray.tfar = r.tmax;
        rh.ray.mask = 0xFFFFFFFFu;
        rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
        rtcIntersect1(scene_, &context, &rh);
        hit[i] = rh.hit.geomID != RTC_INVALID_GEOMETRY_ID ? 1 : 0;
      }
    });
    std::size_t hits = 0;
    for (unsigned char h : hit) hits += h;
    return hits;
  }

 private:
  RTCDevice device_;
  RTCScene scene_;
};

/// FNV-1a over every ray's hit, ids, barycentrics and counters.
uint64_t results_hash(const emu::TraceOutput& out) {
  Fnv1a64 h;
  for (const emu::RayResult& r : out.rays) {
    h.add_le64(r.hit);
    h.add_le64(float_bits(r.t));
    h.add_le64(r.primitive_id);
    h.add_le64(r.geometry_id);
    h.add_le64(float_bits(r.barycentrics.x));
    h.add_le64(float_bits(r.barycentrics.y));
    h.add_le64(r.front_face);
    const emu::RayCounters& c = r.counters;
    for (uint64_t v : {c.steps, c.box_node_steps, c.primitive_node_steps, c.box_tests, c.triangle_tests, c.obb_steps,
                       c.stack_pushes, c.stack_pops, c.stack_lost, c.walk_back_steps, c.max_stack_depth,
                       c.step_limit_hits})
      h.add_le64(v);
    h.add_le64(static_cast<uint64_t>(r.fault));
  }
  for (const emu::WaveStats& w : out.waves) {
    for (uint64_t v : {uint64_t{w.lanes}, w.iterations, w.active_lane_steps, w.box_lane_steps, w.primitive_lane_steps,
                       w.mixed_iterations})
      h.add_le64(v);
  }
  return h.value();
}

using bench::median_of;
using bench::Times;

/// Median over the rounds of a's time over b's time (b's rate over a's: a's speed relative to b).
double median_speed_ratio(const std::vector<Times>& a, const std::vector<Times>& b, double Times::*field) {
  std::vector<double> ratios;
  for (size_t i = 0; i < a.size(); ++i) ratios.push_back(b[i].*field / a[i].*field);
  return bench::median(ratios);
}

struct Options {
  int runs = 5;
  int threads = 0;
  uint32_t size = 512;
  uint32_t random = 512 * 512;
  std::optional<emu::TriangleTest> triangle_test;  ///< empty: RT IP 3.1's own (the traversal's default path)
  bool two_level_only = false;                     ///< glTF scenes: skip the flattened run
};

void run_rays(const char* name, const emu::LoadedBvh& bvh, const RayBatch& batch, const Options& opt,
              const EmbreeTracer& embree, const EmbreeTracer& embree_robust) {
  emu::TraceOptions trace;
  trace.intersect.triangle_test = opt.triangle_test;
  const double rays = static_cast<double>(batch.rays.size());
  const auto mrays = [rays](double seconds) { return rays / seconds * 1e-6; };

  std::printf("  %s rays: %zu in %zu waves\n", name, batch.rays.size(), batch.wave_count());
  double emu_rate[2] = {}, embree_rate[2] = {}, robust_rate[2] = {};
  const int thread_counts[2] = {1, opt.threads};
  uint64_t hash[2] = {};
  std::size_t emu_hits = 0, embree_hits = 0;
  for (int k = 0; k < 2; ++k) {
    const Executor executor(thread_counts[k]);
    emu::TraceOutput out;
    const std::vector<std::vector<Times>> t = bench::interleaved_runs(
        opt.runs, {[&] { emu::trace_rays(bvh.memory(), bvh.root, batch.rays, batch.wave_begin, trace, executor, out); },
                   [&] { embree_hits = embree.trace(batch.rays, executor); },
                   [&] { (void)embree_robust.trace(batch.rays, executor); }},
        CLOCK_THREAD_CPUTIME_ID);  // the single-threaded ratios are the calling thread's CPU time
    hash[k] = results_hash(out);
    emu_hits = 0;
    for (const emu::RayResult& r : out.rays) emu_hits += r.hit ? 1 : 0;
    emu_rate[k] = mrays(median_of(t[0], &Times::wall));
    embree_rate[k] = mrays(median_of(t[1], &Times::wall));
    robust_rate[k] = mrays(median_of(t[2], &Times::wall));
    std::printf("    %d thread%s  emulator %8.3f Mrays/s   embree %8.3f Mrays/s   embree robust %8.3f Mrays/s"
                "   emu/embree %.3fx   emu/robust %.3fx\n",
                thread_counts[k], thread_counts[k] == 1 ? " " : "s", emu_rate[k], embree_rate[k], robust_rate[k],
                median_speed_ratio(t[0], t[1], &Times::wall), median_speed_ratio(t[0], t[2], &Times::wall));
    if (k == 0) {
      std::printf("    1 thread, thread CPU time: emulator %8.3f Mrays/s   embree %8.3f   embree robust %8.3f"
                  "   emu/embree %.3fx   emu/robust %.3fx\n",
                  mrays(median_of(t[0], &Times::cpu)), mrays(median_of(t[1], &Times::cpu)),
                  mrays(median_of(t[2], &Times::cpu)), median_speed_ratio(t[0], t[1], &Times::cpu),
                  median_speed_ratio(t[0], t[2], &Times::cpu));
    }
  }
  std::printf("    scaling %d/1 threads: emulator %.2fx   embree %.2fx   embree robust %.2fx\n", opt.threads,
              emu_rate[1] / emu_rate[0], embree_rate[1] / embree_rate[0], robust_rate[1] / robust_rate[0]);
  std::printf("    results %016llx%s   hits: emulator %zu, embree %zu\n", static_cast<unsigned long long>(hash[0]),
              hash[0] == hash[1] ? "" : " (DIFFERS BETWEEN THREAD COUNTS)", emu_hits, embree_hits);
  std::fflush(stdout);
}

void run_scene(const std::string& path, bool flatten, const Options& opt) {
  pipeline::BuildBlobOptions bo;
  bo.build.threads = opt.threads;
  bo.encode.threads = opt.threads;
  const AnyScene scene = load_any_scene(path, {.flatten = flatten});
  const bool two_level = std::holds_alternative<InstancedScene>(scene);
  const emu::LoadedBvh bvh = emu::load_bvh(
      two_level ? pipeline::build_instanced_blob(std::get<InstancedScene>(scene), bo).blob
                : pipeline::build_blob(std::get<Scene>(scene), bo).blob,
      path);
  std::printf("scene\t%s%s\ttriangles\t%zu\tinstances\t%u\tnode bytes\t%zu\n", path.c_str(),
              flatten ? " (flattened)" : "", bvh.geometry.triangles.size(), bvh.instance_count(),
              bvh.nodes.size() * 4);
  const EmbreeTracer embree(bvh, opt.threads, false), embree_robust(bvh, opt.threads, true);
  const Executor executor(opt.threads);
  const RayBatch primary = primary_rays(auto_frame(bvh.bounds, 1.0f), opt.size, opt.size, executor);
  run_rays("primary", bvh, primary, opt, embree, embree_robust);
  if (opt.random > 0) {
    run_rays("random", bvh, random_rays(bvh.bounds, opt.random, 1, executor), opt, embree, embree_robust);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string> scenes;
  std::string triangle_test;
  CLI::App app{"Rays per second of the RT IP 3.1 emulator against Embree on the same rays (bench/README.md)",
               "bench_emulate"};
  app.add_option("--runs", opt.runs, "interleaved rounds after a warm-up round")->check(CLI::Range(1, 1000));
  app.add_option("--threads", opt.threads, "threads of the multi-threaded runs; 0 = all hardware threads")
      ->check(CLI::Range(0, 4096));
  app.add_option("--size", opt.size, "primary rays: an image of SIZE x SIZE")->check(CLI::Range(1, 16384));
  app.add_option("--random", opt.random, "random rays; 0 = none")->check(CLI::Range(0, 100000000));
  app.add_option("--triangle-test", triangle_test, "watertight or gpurt; default: RT IP 3.1's own")
      ->check(CLI::IsMember({"watertight", "gpurt"}));
  app.add_flag("--two-level-only", opt.two_level_only, "glTF scenes: only in two levels, not also flattened");
  app.add_option("scenes", scenes, "OBJ or glTF scenes; default: ../shared/scenes/ogre.obj (if present), "
                                   "scenes/rotated-objects.obj and scenes/instanced-garden.gltf");
  bench::parse_command_line(app, argc, argv);
  if (!triangle_test.empty()) opt.triangle_test = emu::parse_triangle_test(triangle_test);
  if (opt.threads <= 0) opt.threads = static_cast<int>(std::thread::hardware_concurrency());
  bench::print_header("bench_emulate", opt.threads);
  std::printf("# triangle test: %s; emulator with all counters; embree rtcIntersect1, build quality high\n",
              emu::triangle_test_name(opt.triangle_test.value_or(emu::kRtip31TriangleTest)));
  if (scenes.empty()) {
    const std::string ogre = std::string(HWBVH_SHARED_DIR) + "/scenes/ogre.obj";
    if (std::filesystem::exists(ogre)) scenes.push_back(ogre);
    scenes.push_back(std::string(HWBVH_SOURCE_DIR) + "/scenes/rotated-objects.obj");
    scenes.push_back(std::string(HWBVH_SOURCE_DIR) + "/scenes/instanced-garden.gltf");
  }
  try {
    for (const auto& path : scenes) {
      run_scene(path, false, opt);
      if (is_instanced_scene_file(path) && !opt.two_level_only) run_scene(path, true, opt);  // the same scene in one level, beside it
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_emulate: %s\n", e.what());
    return 1;
  }
  return 0;
}
