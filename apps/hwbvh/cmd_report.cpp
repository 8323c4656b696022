// hwbvh report SCENE_OR_FILE... -o report.html: one self-contained HTML page with, per input, the build report,
// traversal statistics, histograms, heatmaps, oracle agreement and optionally the machine model and the
// cross-target comparison (docs/report.md).
#include <algorithm>
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
#include "target_options.h"

namespace hwbvh::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string rays = "primary,ao,shadow";
  uint32_t width = 256;
  uint32_t height = 256;
  std::string camera;
  uint32_t ao_samples = 2;
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  std::string rays_file;
  uint32_t stack_size = emu::kHardwareStackSize;
  uint32_t instance_mask = 0xFF;
  MachineArgs machine;
  std::string sweep_parameter;
  std::string sweep_values;
  bool compare = false;
  bool flatten = false;
  int threads = 0;
  bool quiet = false;
  TargetTraceOptions target_options;
};

int run_report(const ReportArgs& a) {
  check_output_is_not_input(a.output, a.inputs);
  stats::ReportOptions o;
  o.kinds = stats::parse_ray_kinds(a.rays);
  if (!a.rays_file.empty() && std::find(o.kinds.begin(), o.kinds.end(), stats::RayKind::File) == o.kinds.end())
    o.kinds.push_back(stats::RayKind::File);
  o.width = a.width;
  o.height = a.height;
  if (!a.camera.empty()) o.camera = parse_camera(a.camera);
  o.ao_samples = a.ao_samples;
  o.random_rays = a.random_rays;
  o.seed = a.seed;
  o.rays_file = a.rays_file;
  o.trace.stack.size = a.stack_size;
  o.trace.instance_mask = a.instance_mask;
  o.machine = load_machine(a.machine);
  o.gpu_scale = a.machine.gpu_scale;
  o.sweep_parameter = a.sweep_parameter;
  if (!a.sweep_values.empty()) o.sweep_values = split_values(a.sweep_values, "--sweep-values");
  o.compare = a.compare;
  o.flatten = a.flatten;
  o.threads = a.threads;
  Warnings warnings;
  o.warn = warnings.collector();
  o.check_input = [&a](const emu::LoadedBvh& bvh) { a.target_options.refuse_unused(bvh); };

  stats::Report report;
  {
    Progress progress("hwbvh report", !a.quiet);
    const std::vector<std::filesystem::path> inputs(a.inputs.begin(), a.inputs.end());
    report =
        stats::make_report(inputs, o, [&](const std::filesystem::path& p) { progress.phase(p.filename().string()); });
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
  sub->add_option("--rays", args->rays,
                  "comma-separated ray types: primary, ao, shadow, random, file (primary is always traced)")
      ->capture_default_str();
  sub->add_option("--width", args->width, "primary-ray image width")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  sub->add_option("--height", args->height, "primary-ray image height")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  sub->add_option("--camera", args->camera,
                  "eye,target,up,fov (ten numbers); default: framed from each scene's bounds");
  sub->add_option("--ao-samples", args->ao_samples, "ambient-occlusion rays per primary hit")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  sub->add_option("--random-rays", args->random_rays, "number of random rays")
      ->check(CLI::Range(1u, 100000000u))
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "seed of the AO and random rays")->capture_default_str();
  sub->add_option("--rays-file", args->rays_file, "trace these rays too (format: docs/rays.md)");
  args->target_options.instance_mask = add_instance_mask_option(*sub, args->instance_mask);
  args->target_options.stack_size =
      sub->add_option("--stack-size", args->stack_size, "LDS stack ring entries per lane (rtip31, rtip20 inputs)")
          ->check(CLI::Range(2u, emu::kMaxStackSize))
          ->capture_default_str();
  add_machine_options(*sub, args->machine);
  CLI::Option* sweep_values =
      sub->add_option("--sweep-values", args->sweep_values, "the values of --sweep-param, comma-separated");
  sub->add_option("--sweep-param", args->sweep_parameter,
                  "with --machine: also sweep this preset parameter on every input, as `hwbvh machine sweep --param`")
      ->needs("--machine")
      ->needs(sweep_values);
  sweep_values->needs("--sweep-param");
  sub->add_flag("--compare", args->compare,
                "for scene inputs, add the cross-target table of `hwbvh compare` (builds every target; slower)");
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (the report is identical at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_report(*args); }};
}

}  // namespace hwbvh::cli
