// hwbvh machine reproduce rt-throughput [--scene FILE] [--json]: the machine model's whole-GPU ray-accelerator
// figures on a stand-in frame beside the published measurements (stats/rt_throughput.h).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "hwbvh/core/error.h"
#include "hwbvh/stats/rt_throughput.h"
#include "output.h"
#include "progress.h"

namespace hwbvh::cli {
namespace {

struct ReproduceArgs {
  std::string figure;
  std::string scene;  ///< empty: the interior the build generated (default_scene)
  std::string camera;  ///< empty: down the default interior's hall, or framed on another scene's bounds
  uint32_t width = 1920;
  uint32_t height = 1080;
  int threads = 0;
  std::vector<std::string> params;  ///< [PRESET:]KEY=VALUE
  bool json = false;
  bool quiet = false;
};

// The interior the build generates beside the executable: build/scenes/ in a build tree (build/bin/hwbvh),
// share/hwbvh/scenes/ where `cmake --install` put it (PREFIX/bin/hwbvh).
std::filesystem::path default_scene() {
  std::error_code ec;
  const std::filesystem::path bin = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const char* dir : {"../scenes", "../share/hwbvh/scenes"}) {
    const std::filesystem::path candidate = (bin / dir / "interior.glb").lexically_normal();
    if (!ec && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  throw_bad_input("interior.glb", "the stand-in interior was not generated beside this hwbvh (build/scenes/ or "
                                  "share/hwbvh/scenes/); generate it with python3 scripts/generate_scenes.py "
                                  "--interior FILE and give --scene FILE");
}

// `--param [PRESET:]KEY=VALUE`: a what-if replacement of one preset parameter, in every GPU's preset or in PRESET's.
stats::RtThroughputOverride parse_param(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw_bad_input("--param " + text, "expected [PRESET:]KEY=VALUE, e.g. kernel.loop_alu_cycles=48 or "
                                       "rdna2:kernel.loop_alu_cycles=48");
  }
  const std::string target = text.substr(0, equals);
  const size_t colon = target.find(':');
  stats::RtThroughputOverride o;
  if (colon != std::string::npos) o.preset = target.substr(0, colon);
  o.parameter = {colon == std::string::npos ? target : target.substr(colon + 1), text.substr(equals + 1)};
  if (o.parameter.key.empty() || (colon != std::string::npos && o.preset.empty())) {
    throw_bad_input("--param " + text, "expected [PRESET:]KEY=VALUE with a preset name before ':' and a key after it");
  }
  return o;
}

int run_reproduce(ReproduceArgs a) {
  if (a.scene.empty()) {
    a.scene = default_scene().string();
    if (a.camera.empty()) a.camera = stats::kInteriorHallCamera;
  }
  const std::optional<Camera> camera = a.camera.empty() ? std::nullopt : std::optional<Camera>(parse_camera(a.camera));
  std::vector<stats::RtThroughputOverride> overrides;
  for (const std::string& p : a.params) overrides.push_back(parse_param(p));
  if (!std::filesystem::is_regular_file(a.scene)) {
    throw_bad_input(a.scene, "no such scene file (the stand-in interior: python3 scripts/generate_scenes.py "
                             "--interior FILE; or leave --scene out for the one the build generated)");
  }
  stats::RtThroughputReport report;
  Warnings warnings;
  {
    Progress progress("hwbvh machine reproduce", !a.quiet);
    progress.phase("loading");
    const AnyScene scene = load_any_scene(a.scene, {}, warnings.collector(), progress.callback());
    report = stats::reproduce_rt_throughput(scene, std::filesystem::path(a.scene).filename().string(),
                                            {.width = a.width, .height = a.height, .camera = camera,
                                             .threads = static_cast<uint32_t>(a.threads),
                                             .overrides = overrides},
                                            progress.callback());
  }
  warnings.print(a.quiet);
  const std::string text = a.json ? stats::rt_throughput_json(report) + "\n" : stats::rt_throughput_text(report);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command add_machine_reproduce_command(CLI::App& machine) {
  auto args = std::make_shared<ReproduceArgs>();
  CLI::App* sub = machine.add_subcommand(
      "reproduce", "Run the whole-GPU model on a stand-in frame and print its figures beside published measurements");
  sub->add_option("figure", args->figure, "the published figure to reproduce: rt-throughput")
      ->required()
      ->check(CLI::IsMember({"rt-throughput"}));
  sub->add_option("--scene", args->scene,
                  "the frame's scene (.obj, .gltf, .glb); default: the interior the build generated (scenes/interior.glb "
                  "beside bin/)");
  sub->add_option("--camera", args->camera,
                  "eye,target,up,fov (docs/rays.md); default: down the hall of the default interior, else framed on "
                  "the scene's bounds");
  sub->add_option("--width", args->width, "frame width")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--height", args->height, "frame height")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (the figures are identical at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_option("--param", args->params,
                  "[PRESET:]KEY=VALUE: a what-if run with a preset parameter replaced (as machine sweep names it), in "
                  "every GPU's preset or only in PRESET's; repeatable, applied in order; the output lists them")
      ->allow_extra_args(false);
  sub->add_flag("--json", args->json, "print one JSON document: one record per GPU");
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_reproduce(*args); }};
}

}  // namespace hwbvh::cli
