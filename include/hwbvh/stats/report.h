#pragma once
// `hwbvh report`: one self-contained HTML page for one or more scenes (docs/report.md). Per scene: the build
// report, traversal statistics per ray type (the figures `hwbvh stats` prints), an SVG histogram of steps per ray
// for each ray type, heatmaps of the primary rays' counters with legends (render.h, drawn from the very rays the
// statistics counted), the oracle agreement, the machine model's figures when a machine is given (optionally with a
// sweep of one of its parameters, machine_sweep.h), and for scene inputs optionally the cross-target table of
// `hwbvh compare` (compare.h).
//
// Everything the page needs is inside it: CSS in a <style> element, images as base64 PNG data URIs, histograms
// as inline SVG; it references no URL. The page is a pure function of the inputs and options: no timestamps,
// thread counts or wall-clock figures, so the same inputs give byte-identical files.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwbvh/emu/machine/config.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/render/image.h"
#include "hwbvh/stats/compare.h"
#include "hwbvh/stats/machine_sweep.h"
#include "hwbvh/stats/sensitivity.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::stats {

struct ReportOptions {
  /// Ray types traced; primary rays are always traced as well (the heatmaps show them).
  std::vector<RayKind> kinds{RayKind::Primary, RayKind::AmbientOcclusion, RayKind::Shadow};
  uint32_t width = 256;  ///< primary-ray image (and heatmap) size
  uint32_t height = 256;
  std::optional<Camera> camera;  ///< default: auto_frame(the scene bounds, width / height), as `hwbvh stats`
  uint32_t ao_samples = 4;       ///< AO rays per primary hit, as StatsOptions
  std::optional<float> ao_distance;  ///< AO tmax; default 0.1 x the scene-bounds diagonal, as StatsOptions
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  std::string rays_file;  ///< for RayKind::File
  emu::TraceOptions trace;
  std::optional<emu::MachineConfig> machine;  ///< also run the machine model
  /// With `machine`: also sweep this parameter over sweep_values on every input (machine_sweep.h); empty: none.
  std::string sweep_parameter;
  std::vector<std::string> sweep_values;
  /// With `machine`: also run `machine sensitivity` (sensitivity.h, factors 0.5 and 2) on every input.
  bool sensitivity = false;
  bool compare = false;  ///< scene inputs: add the compare_targets table (builds every target variant)
  bool flatten = false;  ///< glTF inputs: one level (SceneLoadOptions::flatten), not two
  int threads = 0;       ///< 0 = all hardware threads; the report is identical at any count
  WarningFn warn;        ///< receives the warnings of loading scene inputs
  /// Called with each input's BVH before it is traced; may throw (the CLI refuses options its target has no use for).
  std::function<void(const emu::LoadedBvh&)> check_input;
};

/// One embedded image with its caption.
struct ReportImage {
  std::string name;     ///< short id, e.g. "steps"
  std::string caption;  ///< e.g. "steps per ray"
  render::Image image;
};

/// Everything shown for one input.
struct SceneReport {
  std::string file;             ///< the input as given
  std::string name;             ///< its file name without directories
  bool from_scene = false;      ///< built on the fly from an OBJ or glTF scene (else read from a blob)
  pipeline::BuildReport build;  ///< the blob's build report (without run info)
  StatsReport stats;            ///< per-ray results are dropped once the images are drawn
  std::vector<ReportImage> images;
  std::optional<CompareReport> compare;
  std::optional<SweepResult> sweep;  ///< with ReportOptions::sweep_parameter
  std::optional<SensitivityResult> sensitivity;  ///< with ReportOptions::sensitivity
};

struct Report {
  std::vector<SceneReport> scenes;
  std::vector<RayKind> kinds;          ///< as traced
  std::optional<std::string> machine;  ///< machine preset name
};

/// Loads one input (an `.obj` file is built with the default rtip31 options; anything else is read as a blob of
/// any target), traces it and draws its images. `progress` hears "loading", the build's phases (a scene input),
/// the sweep's and sensitivity's (with --machine), run_stats' and compare_targets' (prefixed "compare: "). Throws
/// hwbvh::Error(BadInput) naming the file on bad input.
SceneReport report_scene(const std::filesystem::path& input, const ReportOptions& options,
                         const ProgressCallback& progress = {});

/// report_scene for every input, in order, its phases prefixed with the input's file name ("scene.obj: tracing
/// primary"). Throws hwbvh::Error(BadInput) when `inputs` is empty.
Report make_report(const std::vector<std::filesystem::path>& inputs, const ReportOptions& options,
                   const ProgressCallback& progress = {});

/// The report as one self-contained HTML document.
std::string report_to_html(const Report& report);

/// Writes `html` atomically (a temporary file in the same directory, then rename). Throws hwbvh::Error(Runtime)
/// naming the file if it cannot be written.
void write_report(const std::filesystem::path& path, std::string_view html);

}  // namespace hwbvh::stats
