#pragma once
// `hwbvh machine reproduce rt-throughput` (docs/machine-model.md, "Reproducing the published RT throughput"): the
// machine model's whole-GPU box and triangle tests per second and ray-accelerator utilization on a stand-in for
// 3DMark's DXR feature test, beside what Chips and Cheese measured ("RDNA 4's Raytracing Improvements", 2025).
//
// The frame: W x H primary rays in 8 x 4 pixel tiles (one wave each), then one reflection ray per primary hit, a
// shadow ray per primary hit and a shadow ray per reflection hit, as four dispatches run back to back, each with one
// wave per tile (lanes whose pixel has no such ray end at once). Only the tiles the preset's simulated CUs run are
// traced (emu::simulated_waves), so memory grows with the sample, not the frame. Outputs are a model's.
#include <optional>
#include <string>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::stats {

/// Figures measured on a card (the published values the model is held against).
struct PublishedRtThroughput {
  std::string card;                        ///< e.g. "AMD Radeon RX 9070"
  double box_tests_per_second = 0.0;
  double triangle_tests_per_second = 0.0;
  double utilization = 0.0;                ///< ray-accelerator utilization as published
  std::string source;
};

/// One GPU of the reproduction: the machine preset, the blob format its hardware reads, the published figures.
struct RtThroughputGpu {
  std::string preset;
  blob::Target target = blob::Target::Rtip31;
  bool obb = false;
  PublishedRtThroughput published;
};

/// The RX 9070 (rdna4, rtip31 with OBBs) and the RX 6900 XT (rdna2, rtip20).
[[nodiscard]] std::vector<RtThroughputGpu> rt_throughput_gpus();

/// A view down the hall of the default interior (scripts/generate_scenes.py --interior, scenes/README.md), in
/// parse_camera's syntax: the frame a game would show, rather than the building from outside.
inline constexpr const char* kInteriorHallCamera = "-31,1.7,0.5,32,2.5,-1,0,1,0,70";

/// A preset parameter replaced for a what-if run (`machine reproduce --param`), in every GPU's preset or in one.
struct RtThroughputOverride {
  std::string preset;  ///< empty: every GPU's preset; else only this GPU's (an rt_throughput_gpus() preset)
  emu::ParameterOverride parameter;
};

struct RtThroughputOptions {
  uint32_t width = 1920;
  uint32_t height = 1080;
  std::optional<Camera> camera;  ///< default: auto_frame(the scene bounds, width / height)
  uint32_t threads = 0;  ///< tracing and building; 0: all hardware threads. The figures do not depend on it.
  bool every_cu = false;  ///< simulate every CU of each GPU (the whole frame traced) instead of the preset's sample
  std::vector<RtThroughputOverride> overrides{};  ///< applied in order; none: the presets as shipped
};

struct RtThroughputRecord {
  RtThroughputGpu gpu;
  std::vector<emu::ParameterOverride> overrides;  ///< replaced in this GPU's preset (what-if); empty: as shipped
  emu::MachineConfig config;
  emu::MachineResult machine;
  uint64_t rays_traced = 0;          ///< the simulated CUs' rays, all four passes
  double emulation_seconds = 0.0;    ///< building excluded
  double model_seconds = 0.0;
};

struct RtThroughputReport {
  std::string scene;
  uint32_t width = 0, height = 0;
  std::vector<RtThroughputRecord> records;  ///< rt_throughput_gpus() order
};

/// Builds the scene for each GPU's target, traces its frame and runs its preset (with the options' overrides).
/// `progress` hears, prefixed with the preset ("rdna4: "), the build's phases (pipeline::build_any_blob), "tracing"
/// (the frame's four passes) and "machine model" (waves run). Throws hwbvh::Error(BadInput) for a zero image size,
/// and, before any work, for an override of a preset no GPU runs or a bad key or value (naming the preset, the key
/// and the value).
[[nodiscard]] RtThroughputReport reproduce_rt_throughput(const AnyScene& scene, const std::string& scene_name,
                                                         const RtThroughputOptions& options,
                                                         const ProgressCallback& progress = {});

/// A table: per GPU the model's box and triangle tests per second and utilization beside the published ones, its box
/// tests per triangle test and each figure over the published one; the first GPU's ratios over the second's beside
/// the published ratios, and the quotient of the two ratios, which is the GPUs' mixes' quotient.
[[nodiscard]] std::string rt_throughput_text(const RtThroughputReport& report);

/// One record per GPU ("gpus": box_tests_per_second, triangle_tests_per_second, utilization,
/// box_per_triangle_test, "published", "model_over_published", "overrides", the whole machine-model run) and the
/// ratios.
[[nodiscard]] std::string rt_throughput_json(const RtThroughputReport& report);

}  // namespace hwbvh::stats
