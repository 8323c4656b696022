// hwbvh stats FILE: trace rays through a blob with the wavefront emulator, check every ray against Embree, and
// print traversal statistics per ray type.
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "hwbvh/api/api.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/stats/per_ray.h"
#include "hwbvh/stats/stats_output.h"
#include "hwbvh/stats/traversal_stats.h"
#include "machine_options.h"
#include "output.h"
#include "progress.h"
#include "target_options.h"

namespace hwbvh::cli {
namespace {

struct StatsArgs {
  std::string file;
  std::string rays = "primary,ao,shadow";
  uint32_t width = 256;
  uint32_t height = 256;
  std::string camera;
  uint32_t ao_samples = 4;
  float ao_distance = 0.0f;
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  std::string rays_file;
  uint32_t stack_size = 16;
  uint32_t instance_mask = 0xFF;
  uint32_t heuristic = 0;
  std::string triangle_test;  ///< empty: the target's own
  uint32_t step_limit = emu::kDefaultStepLimit;
  int threads = 0;
  MachineArgs machine;
  std::string stoc = "on";
  std::string per_ray;
  std::string export_rra;
  bool no_duplicate_any_hit = false;
  bool no_oracle = false;
  bool json = false;
  bool quiet = false;
  TargetTraceOptions target_options;
};

// The blob's .rra file with one ray-history dispatch per ray type, in the order traced (docs/rra.md §6).
void write_rra_with_history(const StatsArgs& a, const blob::Blob& blob, const stats::StatsReport& report) {
  std::vector<rra::HistoryDispatch> history;
  for (const stats::KindStats& ks : report.kinds)
    history.push_back(rra::history_dispatch(report.width, report.height, ks.pixel, ks.rays_traced, ks.results,
                                            stats::is_occlusion(ks.kind), a.instance_mask,
                                            rra::accel_struct_address(0)));
  rra::write_file(a.export_rra, blob, a.file, {}, history);
}

int run_stats(const StatsArgs& a) {
  if (!a.per_ray.empty()) {
    (void)stats::per_ray_format(a.per_ray);  // a bad name is refused before the work
    check_output_is_not_input(a.per_ray, {a.file});
  }
  if (!a.export_rra.empty()) check_output_is_not_input(a.export_rra, {a.file});
  const auto if_given = [](const CLI::Option* option, const auto& value) {
    return option->count() > 0 ? std::optional(value) : std::nullopt;
  };
  const TargetTraceOptions& given = a.target_options;
  stats::StatsOptions options = api::stats_options({
      .rays = a.rays,
      .width = a.width,
      .height = a.height,
      .camera = a.camera,
      .ao_samples = a.ao_samples,
      .ao_distance = a.ao_distance,
      .random_rays = a.random_rays,
      .seed = a.seed,
      .rays_file = a.rays_file,
      .trace = {.stack_size = if_given(given.stack_size, a.stack_size),
                .instance_mask = if_given(given.instance_mask, a.instance_mask),
                .heuristic = if_given(given.heuristic, a.heuristic),
                .triangle_test = a.triangle_test,
                .step_limit = a.step_limit,
                .stoc = if_given(given.stoc, a.stoc),
                .no_duplicate_any_hit = a.no_duplicate_any_hit,
                .oracle = !a.no_oracle,
                .threads = a.threads},
  });
  options.keep_results = !a.per_ray.empty() || !a.export_rra.empty();
  options.machine = load_machine(a.machine);
  options.gpu_scale = a.machine.gpu_scale;

  stats::StatsReport report;
  blob::Blob blob;
  {
    Progress progress("hwbvh stats", !a.quiet);
    progress.phase("loading");
    blob = rra::read_blob_or_rra(a.file);
    if (!a.export_rra.empty()) (void)rra::accel_structs_from_blob(blob, a.file);  // refused before the work
    const emu::LoadedBvh bvh = emu::load_bvh(blob, a.file);
    a.target_options.refuse_unused(bvh);
    progress.phase("tracing");
    report = stats::run_stats(bvh, options);
  }
  if (!a.per_ray.empty()) stats::write_per_ray(a.per_ray, report);
  if (!a.export_rra.empty()) write_rra_with_history(a, blob, report);
  const std::string text = a.json ? stats::stats_to_json(report) + "\n" : stats::stats_to_text(report);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command add_stats_command(CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("stats", "Trace rays through a blob with the RT IP 3.1 emulator and print traversal statistics");
  sub->add_option("file", args->file, "blob file (.hwbvh) or .rra file (hwbvh export or a driver's RT IP 3.1 capture)")->required();
  sub->add_option("--rays", args->rays, "comma-separated ray types: primary, ao, shadow, random, file")->capture_default_str();
  sub->add_option("--width", args->width, "primary-ray image width")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--height", args->height, "primary-ray image height")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--camera", args->camera, "eye,target,up,fov (ten numbers); default: framed from the scene bounds");
  sub->add_option("--ao-samples", args->ao_samples, "ambient-occlusion rays per primary hit")->check(CLI::Range(1u, 1024u))->capture_default_str();
  sub->add_option("--ao-distance", args->ao_distance, "AO ray length; default 0.1 x the scene diagonal")->check(CLI::PositiveNumber);
  sub->add_option("--random-rays", args->random_rays, "number of random rays")->check(CLI::Range(1u, 100000000u))->capture_default_str();
  sub->add_option("--seed", args->seed, "seed of the AO and random rays")->capture_default_str();
  sub->add_option("--rays-file", args->rays_file, "trace these rays too (format: docs/rays.md)");
  args->target_options.instance_mask = add_instance_mask_option(*sub, args->instance_mask);
  args->target_options.stack_size =
      sub->add_option("--stack-size", args->stack_size, "LDS stack ring entries per lane (rtip31, rtip20)")
          ->check(CLI::Range(2u, 64u))->capture_default_str();
  args->target_options.heuristic =
      sub->add_option("--heuristic", args->heuristic,
                      "box sort heuristic (rtip31, rtip20): 0 closest, 1 largest interval, 2 midpoint, 3 no sort")
          ->check(CLI::Range(0u, 3u))->capture_default_str();
  sub->add_option("--triangle-test", args->triangle_test,
                  "ray/triangle test: watertight (as DXR/Vulkan hardware must be) or gpurt (GPURT's emulation); "
                  "default: the target's own, watertight for rtip31 and xe3, gpurt for rtip20")
      ->check(CLI::IsMember({"watertight", "gpurt"}));
  sub->add_option("--step-limit", args->step_limit, "stop (and report) a ray after this many steps")->check(CLI::Range(1u, 1000000000u))->capture_default_str();
  args->target_options.stoc =
      sub->add_option("--stoc", args->stoc,
                      "skip any-hit work with STOC states (xe3 leaf masks, rtip31 sideband) on alpha-tested triangles")
          ->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (counters are identical at any count)")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  add_machine_options(*sub, args->machine);
  sub->add_option("--per-ray", args->per_ray,
                  "also write every ray (origin, direction, hit, ids, counters) to FILE: .csv or .npy (docs/rays.md)");
  sub->add_option("--export-rra", args->export_rra,
                  "also write the blob (rtip31) as a .rra file with these rays and their counters as RRA ray "
                  "history, one dispatch per ray type (docs/rra.md)");
  sub->add_flag("--no-duplicate-any-hit", args->no_duplicate_any_hit,
                "run the any-hit shader at most once per primitive and ray (DXR's NO_DUPLICATE_ANYHIT_INVOCATION)");
  sub->add_flag("--no-oracle", args->no_oracle, "skip the Embree comparison");
  sub->add_flag("--json", args->json, "print one JSON document (with histograms)");
  sub->add_flag("--quiet", args->quiet, "no progress indicator");
  return {sub, [args] { return run_stats(*args); }};
}

}  // namespace hwbvh::cli
