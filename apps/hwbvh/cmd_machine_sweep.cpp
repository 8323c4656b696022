// hwbvh machine sweep FILE --machine PRESET[,PRESET...] --param NAME --values A,B,C [-o plot.svg]: the machine
// model on one blob's rays for each value of one parameter, per preset; a table on stdout and a line plot of cycles
// and ray-accelerator utilisation (stats/machine_sweep.h).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/stats/machine_sweep.h"
#include "machine_options.h"
#include "output.h"
#include "progress.h"
#include "target_options.h"

namespace hwbvh::cli {
namespace {

struct SweepArgs {
  std::string file;
  std::vector<std::string> presets;
  std::string parameter;
  std::string values;
  std::string output;
  std::string rays = "primary";
  uint32_t width = 256;
  uint32_t height = 256;
  std::string camera;
  uint32_t ao_samples = 4;
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  uint32_t stack_size = emu::kHardwareStackSize;
  int threads = 0;
  bool json = false;
  bool quiet = false;
  TargetTraceOptions target_options;
};

int run_sweep(const SweepArgs& a) {
  if (!a.output.empty()) {
    if (!std::filesystem::path(a.output).extension().string().ends_with(".svg")) {
      throw Error(ErrorKind::BadInput, a.output, "-o: the plot is written as SVG; name a .svg file");
    }
    check_output_is_not_input(a.output, {a.file});
  }
  stats::SweepOptions o;
  o.presets = a.presets;
  o.parameter = a.parameter;
  o.values = split_values(a.values, "--values");
  o.stats.kinds = stats::parse_ray_kinds(a.rays);
  if (std::find(o.stats.kinds.begin(), o.stats.kinds.end(), stats::RayKind::File) != o.stats.kinds.end()) {
    throw Error(ErrorKind::BadInput, "", "--rays: machine sweep traces primary, ao, shadow, reflection and random rays, not a file");
  }
  o.stats.width = a.width;
  o.stats.height = a.height;
  if (!a.camera.empty()) o.stats.camera = parse_camera(a.camera);
  o.stats.ao_samples = a.ao_samples;
  o.stats.random_rays = a.random_rays;
  o.stats.seed = a.seed;
  o.stats.trace.stack.size = a.stack_size;
  o.stats.threads = a.threads;

  stats::SweepResult result;
  {
    Progress progress("hwbvh machine sweep", !a.quiet);
    progress.phase("loading");
    const emu::LoadedBvh bvh = emu::load_bvh(rra::read_blob_or_rra(a.file), a.file);
    a.target_options.refuse_unused(bvh);
    result = stats::run_machine_sweep(bvh, o, progress.callback());
  }
  if (!a.output.empty()) {
    const std::string svg = stats::sweep_to_svg(result);
    write_file_atomically(a.output, std::as_bytes(std::span<const char>(svg)));
  }
  const std::string text = a.json ? stats::sweep_to_json(result) + "\n" : stats::sweep_to_text(result);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command add_machine_sweep_command(CLI::App& machine) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* sub = machine.add_subcommand(
      "sweep", "Run the machine model on a blob's rays for each value of one preset parameter; table and SVG plot");
  sub->add_option("file", args->file, "blob file (.hwbvh) or .rra file")->required();
  sub->add_option("--machine", args->presets,
                  "presets (" + builtin_preset_list() + ") or preset JSON files, comma-separated: one series each")
      ->required()
      ->delimiter(',');
  sub->add_option("--param", args->parameter,
                  "the parameter: a preset key (section.key, e.g. vgpr_allocation.mode, memory.levels[L0].bytes, "
                  "kernel.phases[hit_shading].vgprs) or stack_size")
      ->required();
  sub->add_option("--values", args->values, "comma-separated values, e.g. 16,32 or static,dynamic")->required();
  sub->add_option("-o,--output", args->output, "also write the line plot to this .svg file");
  sub->add_option("--rays", args->rays, "comma-separated ray types: primary, ao, shadow, reflection, random")
      ->capture_default_str();
  sub->add_option("--width", args->width, "primary-ray image width")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--height", args->height, "primary-ray image height")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--camera", args->camera, "eye,target,up,fov (ten numbers); default: framed from the scene bounds");
  sub->add_option("--ao-samples", args->ao_samples, "ambient-occlusion rays per primary hit")->check(CLI::Range(1u, 1024u))->capture_default_str();
  sub->add_option("--random-rays", args->random_rays, "number of random rays")->check(CLI::Range(1u, 100000000u))->capture_default_str();
  sub->add_option("--seed", args->seed, "seed of the AO and random rays")->capture_default_str();
  args->target_options.stack_size =
      sub->add_option("--stack-size", args->stack_size, "LDS stack ring entries per lane (rtip31, rtip20), unless swept")
          ->check(CLI::Range(2u, emu::kMaxStackSize))
          ->capture_default_str();
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (results are identical at any count)")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  sub->add_flag("--json", args->json, "print one JSON document instead of the table");
  sub->add_flag("--quiet", args->quiet, "no progress indicator");
  return {sub, [args] { return run_sweep(*args); }};
}

}  // namespace hwbvh::cli
