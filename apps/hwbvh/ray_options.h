#pragma once
// The ray and trace options of every command that traces (stats, render, report, compare), defined once so that an
// option has the same name, range, default and help text wherever it appears (docs/cli.md "Ray options").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hwbvh/emu/rtip31/lds_stack.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/stats/traversal_stats.h"
#include "target_options.h"

namespace hwbvh::cli {

/// Which of the shared options a command takes.
enum RayOptionGroup : unsigned {
  kImageRays = 1u,  ///< --width, --height, --camera: the primary rays
  kRayTypes = 2u,   ///< --rays, --ao-samples, --ao-distance, --random-rays, --seed: the other generated rays
  kRaysFile = 4u,   ///< --rays-file
  kTrace = 8u,      ///< --instance-mask, --stack-size, --heuristic, --triangle-test, --step-limit, --no-duplicate-any-hit
  kStoc = 16u,      ///< --stoc (commands whose blobs may hold STOC states)
};

/// The parsed values; the defaults are the commands' defaults.
struct RayArgs {
  std::string rays;  ///< --rays; the command's default list is given to add_ray_options
  uint32_t width = 256;
  uint32_t height = 256;
  std::string camera;  ///< empty: framed from the scene
  uint32_t ao_samples = 4;
  float ao_distance = 0.0f;  ///< 0: not given, 0.1 x the scene diagonal
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  std::string rays_file;
  uint32_t instance_mask = 0xFF;
  uint32_t stack_size = emu::kHardwareStackSize;
  uint32_t heuristic = 0;
  std::string triangle_test;  ///< empty: the target's own
  uint32_t step_limit = emu::kDefaultStepLimit;
  std::string stoc = "on";
  bool no_duplicate_any_hit = false;
  TargetTraceOptions target_options;  ///< the options some targets have no use for, as registered

  /// The ray types of --rays, and `file` when --rays-file is given.
  [[nodiscard]] std::vector<stats::RayKind> kinds() const;
  /// The camera of --camera, or nullopt to frame the scene.
  [[nodiscard]] std::optional<Camera> parsed_camera() const;
  /// --ao-distance, or nullopt for the default.
  [[nodiscard]] std::optional<float> parsed_ao_distance() const;
  /// The trace options the command line sets (the options of groups the command does not take stay at defaults).
  [[nodiscard]] emu::TraceOptions trace() const;
};

/// Registers the options of `groups` on `command`, writing into `args`; `default_rays` is --rays' default.
void add_ray_options(CLI::App& command, RayArgs& args, unsigned groups,
                     const std::string& default_rays = "primary,ao,shadow");

/// Copies the generated rays' options (image, camera, AO, random rays, seed, rays file) into a library options
/// struct (stats::StatsOptions, ReportOptions, CompareOptions: each has these fields).
template <class Options>
void set_ray_generation(const RayArgs& a, Options& o) {
  o.width = a.width;
  o.height = a.height;
  o.camera = a.parsed_camera();
  o.ao_samples = a.ao_samples;
  o.ao_distance = a.parsed_ao_distance();
  o.random_rays = a.random_rays;
  o.seed = a.seed;
}

}  // namespace hwbvh::cli
