// hwbvh stats FILE: trace rays through a blob with the wavefront emulator, check every ray against Embree, and
// print traversal statistics per ray type.
#include <cstdio>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <memory>
#include <optional>

#include "commands.h"
#include "hwbvh/api/api.h"
#include "hwbvh/api/stats_files.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/stats/per_ray.h"
#include "hwbvh/stats/stats_output.h"
#include "hwbvh/stats/traversal_stats.h"
#include "inputs.h"
#include "machine_options.h"
#include "output.h"
#include "progress.h"
#include "ray_options.h"

namespace hwbvh::cli {
namespace {

struct StatsArgs {
  std::string file;
  RayArgs rays;
  int threads = 0;
  MachineArgs machine;
  std::string per_ray;
  std::string export_rra;
  bool no_oracle = false;
  bool flatten = false;
  CLI::Option* flatten_option = nullptr;
  bool json = false;
  bool quiet = false;
  uint32_t batch_rays = stats::StatsOptions{}.batch_rays;
};

int run_stats(const StatsArgs& a) {
  if (!a.per_ray.empty()) {
    (void)stats::per_ray_format(a.per_ray);  // a bad name is refused before the work
    check_output_is_not_input(a.per_ray, {a.file});
  }
  if (!a.export_rra.empty()) check_output_is_not_input(a.export_rra, {a.file});
  const auto if_given = [](const CLI::Option* option, const auto& value) {
    return option->count() > 0 ? std::optional(value) : std::nullopt;
  };
  const RayArgs& r = a.rays;
  const TargetTraceOptions& given = r.target_options;
  stats::StatsOptions options = api::stats_options({
      .rays = r.rays,
      .width = r.width,
      .height = r.height,
      .camera = r.camera,
      .ao_samples = r.ao_samples,
      .ao_distance = r.ao_distance,
      .random_rays = r.random_rays,
      .seed = r.seed,
      .rays_file = r.rays_file,
      .trace = {.stack_size = if_given(given.stack_size, r.stack_size),
                .instance_mask = if_given(given.instance_mask, r.instance_mask),
                .heuristic = if_given(given.heuristic, r.heuristic),
                .triangle_test = r.triangle_test,
                .step_limit = r.step_limit,
                .stoc = if_given(given.stoc, r.stoc),
                .no_duplicate_any_hit = r.no_duplicate_any_hit,
                .oracle = !a.no_oracle,
                .threads = a.threads},
  });
  options.batch_rays = a.batch_rays;
  options.machine = load_machine(a.machine);

  stats::StatsReport report;
  blob::Blob blob;
  Warnings warnings;
  {
    Progress progress("hwbvh stats", !a.quiet);
    progress.phase("loading");
    blob = read_traced_input(a.file, a.flatten_option, a.flatten, a.threads, warnings.collector(), progress.callback());
    const emu::LoadedBvh bvh = emu::load_bvh(blob, a.file);
    a.rays.target_options.refuse_unused(bvh);
    progress.phase("tracing");
    report = api::run_stats_with_files(bvh, blob, a.file, options, {.per_ray = a.per_ray, .export_rra = a.export_rra},
                                       progress.callback());
  }
  warnings.print(a.quiet);
  // The files written, each with what it holds: a "wrote" line under the text, a "wrote" array in the JSON.
  std::vector<std::pair<std::string, std::string>> wrote;
  uint64_t rays = 0;
  for (const stats::KindStats& k : report.kinds) rays += k.rays;
  if (!a.per_ray.empty()) {
    wrote.emplace_back(a.per_ray, fmt::format("{} rays, one row each", rays));
  }
  if (!a.export_rra.empty()) {
    wrote.emplace_back(a.export_rra, fmt::format("the BVH and {} rays in {} ray-history dispatch{}", rays,
                                                 report.kinds.size(), report.kinds.size() == 1 ? "" : "es"));
  }
  if (a.json) {
    Json json = Json::parse(stats::stats_to_json(report));
    for (const auto& [file, what] : wrote) json["wrote"].push_back({{"file", file}, {"contents", what}});
    print_json(json);
    return 0;
  }
  std::fputs(stats::stats_to_text(report).c_str(), stdout);
  for (const auto& [file, what] : wrote) fmt::print("wrote {} ({})\n", file, what);
  return 0;
}

}  // namespace

Command add_stats_command(CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  CLI::App* sub = app.add_subcommand("stats", "Trace rays through a blob with the RT IP 3.1 emulator and print traversal statistics");
  sub->add_option("file", args->file,
                  "blob file (.hwbvh), .rra file (hwbvh export or a driver's RT IP 3.1 capture), or a scene (.obj, "
                  ".gltf, .glb) built on the fly as `hwbvh build` does by default")
      ->required();
  args->flatten_option = add_flatten_flag(*sub, args->flatten);
  add_ray_options(*sub, args->rays, kImageRays | kRayTypes | kRaysFile | kTrace | kStoc);
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (counters are identical at any count)")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  add_machine_options(*sub, args->machine);
  sub->add_option("--per-ray", args->per_ray,
                  "also write every ray (origin, direction, hit, ids, counters) to FILE: .csv or .npy (docs/rays.md)");
  sub->add_option("--export-rra", args->export_rra,
                  "also write the blob (rtip31) as a .rra file with these rays and their counters as RRA ray "
                  "history, one dispatch per ray type (docs/rra.md)");
  sub->add_flag("--no-oracle", args->no_oracle, "skip the Embree comparison");
  sub->add_option("--batch-rays", args->batch_rays,
                  "rays generated, traced and reduced at a time (whole waves of 32; camera rays: the primary rays of "
                  "that many pixels and their secondary rays); bounds the memory, never changes a result")
      ->check(CLI::Range(1u, 1u << 30))->capture_default_str();
  sub->add_flag("--json", args->json, "print one JSON document (with histograms)");
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_stats(*args); }};
}

}  // namespace hwbvh::cli
