// bench_machine: the machine model's own speed, so that later changes to it can be compared: simulated cycles and
// rays per second of run_machine_model on the node fetches of camera rays, per preset, next to the time the
// functional emulator took to record them (the model runs after every `stats --machine` trace) in the same run.
//
//   bench_machine [--runs N] [--size PIXELS] [--preset NAME ...] [SCENE.obj ...]
//   bench_machine --frame SCENE [--camera C] [--every-cu]
// --frame: `machine reproduce rt-throughput`'s whole-GPU stand-in frame (1920x1080 primary, reflection and shadow
// rays) on SCENE, once, for its GPUs: the model's simulated CU-cycles per second against the emulator's time on the
// same rays, and the wall time of the whole frame; --every-cu simulates every CU (the whole frame traced) instead of
// the presets' samples.
// Without scene arguments it uses scenes/rotated-objects.obj and ../shared/scenes/ogre.obj (when present); without
// --preset the built-in presets rdna4, rdna4-dvgpr16 and rdna3. Primary rays, PIXELS x PIXELS (default 256), in
// their 8x4 tiles; single-threaded (the model is), CPU time of the calling thread, median of interleaved runs.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_common.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/scene/ray_gen.h"
#include "hwbvh/stats/rt_throughput.h"

namespace {

using namespace hwbvh;
using bench::median_of;
using bench::Times;

struct Options {
  int runs = 5;
  uint32_t size = 256;
  std::vector<std::string> presets;
};

void run_scene(const std::string& path, const Options& opt) {
  const Scene scene = load_obj(path);
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_blob(scene, {}).blob, path);
  const Executor one_thread(1);
  const RayBatch batch = primary_rays(auto_frame(scene.bounds(), 1.0f), opt.size, opt.size, one_thread);
  emu::TraceOptions trace;
  trace.record_node_sequence = true;
  emu::TraceOutput out = bvh.trace(batch.rays, batch.wave_begin, trace, one_thread);
  std::printf("scene\t%s\ttriangles\t%zu\trays\t%zu\tsteps\t%llu\n", scene.source.c_str(), scene.triangles.size(),
              batch.rays.size(), static_cast<unsigned long long>(out.total_counters().steps));

  std::vector<emu::MachineConfig> configs;
  for (const std::string& name : opt.presets) configs.push_back(emu::load_machine_preset(name));
  std::vector<emu::MachineResult> results(configs.size());
  std::vector<std::function<void()>> cases{[&] { out = bvh.trace(batch.rays, batch.wave_begin, trace, one_thread); }};
  for (std::size_t p = 0; p < configs.size(); ++p) {
    cases.push_back([&, p] { results[p] = emu::run_machine_model(configs[p], out.node_sequences, batch.wave_begin); });
  }
  const auto times = bench::interleaved_runs(opt.runs, cases, CLOCK_THREAD_CPUTIME_ID);
  const double trace_seconds = median_of(times[0], &Times::cpu);
  std::printf("    emulator (recording fetches)  %8.3f s   %8.3f Mrays/s\n", trace_seconds,
              static_cast<double>(batch.rays.size()) / trace_seconds * 1e-6);
  for (std::size_t p = 0; p < configs.size(); ++p) {
    const double seconds = median_of(times[p + 1], &Times::cpu);
    std::printf("    %-14s %-10s %8.3f s   %8.3f Mcycles/s simulated   %8.3f Mrays/s   %.2fx the emulator's "
                "time   (%llu cycles)\n",
                configs[p].name.c_str(), emu::to_string(results[p].status), seconds,
                static_cast<double>(results[p].cycles) / seconds * 1e-6,
                static_cast<double>(batch.rays.size()) / seconds * 1e-6, seconds / trace_seconds,
                static_cast<unsigned long long>(results[p].cycles));
  }
  std::fflush(stdout);
}

// One whole-GPU frame per GPU of the reproduction, timed by wall clock (it traces with every thread).
void run_frame(const std::string& path, const std::string& camera, bool every_cu) {
  const auto start = std::chrono::steady_clock::now();
  const AnyScene scene = load_any_scene(path, {}, {});
  const stats::RtThroughputReport report =
      stats::reproduce_rt_throughput(scene, path,
                                     {.width = 1920,
                                      .height = 1080,
                                      .camera = camera.empty() ? std::nullopt : std::optional(parse_camera(camera)),
                                      .every_cu = every_cu});
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("frame\t%s\t1920x1080\t%s\n", path.c_str(), every_cu ? "every CU" : "the presets' samples");
  for (const stats::RtThroughputRecord& r : report.records) {
    const double cu_cycles = static_cast<double>(r.machine.cycles) * r.machine.gpu.simulated_cus;
    std::printf("    %-8s %2u of %3u CUs  %9llu rays  emulator %7.2f s  model %7.2f s (%.2fx)  %8.2f M CU-cycles/s "
                "simulated  %s\n",
                r.gpu.preset.c_str(), r.machine.gpu.simulated_cus, r.machine.gpu.compute_units,
                static_cast<unsigned long long>(r.rays_traced), r.emulation_seconds, r.model_seconds,
                r.model_seconds / r.emulation_seconds, cu_cycles / r.model_seconds * 1e-6,
                emu::to_string(r.machine.status));
  }
  std::printf("    whole run (loading, building, tracing, model) %.1f s\n", total);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string> scenes;
  CLI::App app{"The machine model's own speed against the functional emulator on the same rays (bench/README.md)",
               "bench_machine"};
  app.add_option("--runs", opt.runs, "interleaved rounds")->check(CLI::Range(1, 1000));
  app.add_option("--size", opt.size, "primary rays: an image of SIZE x SIZE")->check(CLI::Range(1, 16384));
  app.add_option("--preset", opt.presets, "a machine preset or preset JSON file (repeatable); default: rdna4, "
                                          "rdna4-dvgpr16 and rdna3");
  app.add_option("scenes", scenes, "OBJ scenes; default: scenes/rotated-objects.obj and "
                                   "../shared/scenes/ogre.obj (if present)");
  std::string frame;
  bool every_cu = false;
  CLI::Option* frame_option =
      app.add_option("--frame", frame, "the whole-GPU stand-in frame of machine reproduce rt-throughput on this scene");
  std::string camera;
  app.add_option("--camera", camera, "with --frame: eye,target,up,fov; default: framed on the scene's bounds (machine "
                                     "reproduce's default frame: build/scenes/interior.glb with the camera down its hall, "
                                     "docs/machine-model.md)")
      ->needs(frame_option);
  app.add_flag("--every-cu", every_cu, "with --frame: simulate every CU instead of the presets' samples")
      ->needs(frame_option);
  bench::parse_command_line(app, argc, argv);
  if (!frame.empty()) {
    bench::print_header("bench_machine", static_cast<int>(std::thread::hardware_concurrency()));
    try {
      run_frame(frame, camera, every_cu);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_machine: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  if (opt.presets.empty()) opt.presets = {"rdna4", "rdna4-dvgpr16", "rdna3"};
  bench::print_header("bench_machine", 1);
  if (scenes.empty()) {
    scenes.push_back(std::string(HWBVH_SOURCE_DIR) + "/scenes/rotated-objects.obj");
    const std::string ogre = std::string(HWBVH_SHARED_DIR) + "/scenes/ogre.obj";
    if (std::filesystem::exists(ogre)) scenes.push_back(ogre);
  }
  try {
    for (const auto& path : scenes) run_scene(path, opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_machine: %s\n", e.what());
    return 1;
  }
  return 0;
}
