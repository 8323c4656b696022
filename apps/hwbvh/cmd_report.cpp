// hwbvh report SCENE_OR_FILE... -o report.html: one self-contained HTML page with, per input, the build report,
// traversal statistics, histograms, heatmaps, oracle agreement and optionally the machine model and the
// cross-target comparison (docs/report.md).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "commands.h"
#include "hwbvh/core/error.h"
#include "hwbvh/render/render.h"
#include "hwbvh/stats/report.h"
#include "machine_options.h"
#include "output.h"
#include "progress.h"
#include "ray_options.h"

namespace hwbvh::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output;
  RayArgs rays;
  MachineArgs machine;
  std::string sweep_parameter;
  std::string sweep_values;
  bool sensitivity = false;
  bool compare = false;
  bool flatten = false;
  int threads = 0;
  bool quiet = false;
};

int run_report(const ReportArgs& a) {
  check_output_is_not_input(a.output, a.inputs);
  stats::ReportOptions o;
  o.kinds = a.rays.kinds();
  set_ray_generation(a.rays, o);
  o.rays_file = a.rays.rays_file;
  o.trace = a.rays.trace();
  o.machine = load_machine(a.machine);
  o.sweep_parameter = a.sweep_parameter;
  o.sensitivity = a.sensitivity;
  if (!a.sweep_values.empty()) o.sweep_values = split_values(a.sweep_values, "--sweep-values");
  o.compare = a.compare;
  o.flatten = a.flatten;
  o.threads = a.threads;
  Warnings warnings;
  o.warn = warnings.collector();
  o.check_input = [&a](const emu::LoadedBvh& bvh) { a.rays.target_options.refuse_unused(bvh); };

  stats::Report report;
  {
    Progress progress("hwbvh report", !a.quiet);
    const std::vector<std::filesystem::path> inputs(a.inputs.begin(), a.inputs.end());
    report = stats::make_report(inputs, o, progress.callback());
  }
  warnings.print(a.quiet);
  stats::write_report(a.output, stats::report_to_html(report));
  std::printf("wrote %s (%zu %s)\n", a.output.c_str(), report.scenes.size(),
              report.scenes.size() == 1 ? "input" : "inputs");
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "report", "Write one self-contained HTML report (statistics, histograms, heatmaps) for scenes or blobs");
  sub->add_option("inputs", args->inputs,
                  "scenes (.obj; .gltf / .glb, two levels unless --flatten; built with the default rtip31 options) "
                  "or blob files")
      ->required();
  add_flatten_flag(*sub, args->flatten);
  sub->add_option("-o,--output", args->output, "HTML file to write")->required();
  add_ray_options(*sub, args->rays, kImageRays | kRayTypes | kRaysFile | kTrace | kStoc);
  add_machine_options(*sub, args->machine);
  CLI::Option* sweep_values =
      sub->add_option("--sweep-values", args->sweep_values, "the values of --sweep-param, comma-separated");
  sub->add_option("--sweep-param", args->sweep_parameter,
                  "with --machine: also sweep this preset parameter on every input, as `hwbvh machine sweep --param`")
      ->needs("--machine")
      ->needs(sweep_values);
  sweep_values->needs("--sweep-param");
  sub->add_flag("--sensitivity", args->sensitivity,
                "with --machine: also rank the preset's [assumption] and [UNCERTAIN] parameters on every input, as "
                "`hwbvh machine sensitivity`")
      ->needs("--machine");
  sub->add_flag("--compare", args->compare,
                "for scene inputs, add the cross-target table of `hwbvh compare` (builds every target; slower)");
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (the report is identical at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_report(*args); }};
}

}  // namespace hwbvh::cli
