// hwbvh machine sensitivity FILE --machine PRESET [rays options] [--factor-low 0.5 --factor-high 2] [--json]
// [--svg FILE]: every [assumption] and [UNCERTAIN] parameter of the preset changed alone, ranked by its effect on the
// model's cycles and tests per second; a table (or JSON) on stdout and a tornado plot (stats/sensitivity.h).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/stats/sensitivity.h"
#include "machine_options.h"
#include "output.h"
#include "progress.h"
#include "ray_options.h"

namespace hwbvh::cli {
namespace {

struct SensitivityArgs {
  std::string file;
  std::string preset;
  RayArgs rays;
  double factor_low = 0.5;
  double factor_high = 2.0;
  std::string svg;
  int threads = 0;
  bool json = false;
  bool quiet = false;
};

int run_sensitivity(const SensitivityArgs& a) {
  if (!a.svg.empty()) {
    if (std::filesystem::path(a.svg).extension() != ".svg") {
      throw Error(ErrorKind::BadInput, a.svg, "--svg: the plot is written as SVG; name a .svg file");
    }
    check_output_is_not_input(a.svg, {a.file});
  }
  stats::SensitivityOptions o;
  o.preset = a.preset;
  o.factor_low = a.factor_low;
  o.factor_high = a.factor_high;
  o.stats.kinds = a.rays.kinds();
  set_ray_generation(a.rays, o.stats);
  o.stats.trace = a.rays.trace();
  o.stats.threads = a.threads;

  stats::SensitivityResult result;
  {
    Progress progress("hwbvh machine sensitivity", !a.quiet);
    progress.phase("loading");
    const emu::LoadedBvh bvh = emu::load_bvh(rra::read_blob_or_rra(a.file), a.file);
    a.rays.target_options.refuse_unused(bvh);
    result = stats::run_sensitivity(bvh, o, progress.callback());
  }
  if (!a.svg.empty()) {
    const std::string svg = stats::sensitivity_to_svg(result);
    write_file_atomically(a.svg, std::as_bytes(std::span<const char>(svg)));
  }
  const std::string text = a.json ? stats::sensitivity_to_json(result) + "\n" : stats::sensitivity_to_text(result);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command add_machine_sensitivity_command(CLI::App& machine) {
  auto args = std::make_shared<SensitivityArgs>();
  CLI::App* sub = machine.add_subcommand(
      "sensitivity", "Change each [assumption] and [UNCERTAIN] parameter of a preset alone and rank them by their "
                     "effect on the model's cycles and tests per second; table and SVG tornado plot");
  sub->add_option("file", args->file, "blob file (.hwbvh) or .rra file")->required();
  sub->add_option("--machine", args->preset, "machine preset (" + builtin_preset_list() + ") or a preset JSON file")
      ->required();
  add_ray_options(*sub, args->rays, kImageRays | kRayTypes | kTrace, "primary");
  sub->add_option("--factor-low", args->factor_low, "factor below 1 each whole-number parameter is multiplied by")
      ->check(CLI::Range(1e-6, 0.999999))
      ->capture_default_str();
  sub->add_option("--factor-high", args->factor_high, "factor above 1 each whole-number parameter is multiplied by")
      ->check(CLI::Range(1.000001, 1e6))
      ->capture_default_str();
  sub->add_option("--svg", args->svg, "also write the tornado plot to this .svg file");
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (results are identical at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "print one JSON document instead of the table");
  sub->add_flag("--quiet", args->quiet, "no progress indicator");
  return {sub, [args] { return run_sensitivity(*args); }};
}

}  // namespace hwbvh::cli
