#pragma once
// The facade that both front ends call: the `hwbvh` CLI (apps/hwbvh) and the Python module (python/). Each
// function here is what one command does, minus the printing, with its options spelled as on the command line, so
// that the two front ends accept the same values, refuse the same ones with the same messages, and give the same
// results. Every function throws hwbvh::Error (BadInput for bad options or input, Runtime otherwise).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::api {

/// Throws hwbvh::Error(BadInput) "OPTION applies to target rtip31 only (SUBJECT targets xe3)" when `given` and
/// `target` is not one of `applies_to`. An option left at its default is never refused (docs/cli.md "Options by
/// target").
void refuse_unless(bool given, const std::string& option, std::initializer_list<blob::Target> applies_to,
                   blob::Target target, const std::string& subject);

/// The options of `hwbvh build`, by their command-line names. An unset optional was not given: the target's default.
struct BuildSettings {
  std::string target = "rtip31";   ///< rtip31, rtip20, xe3
  std::string quality = "medium";  ///< low, medium, high
  std::optional<uint32_t> stoc_level;     ///< rtip31: 0..12; xe3: 0, 1 or 3; not rtip20
  std::optional<std::string> stoc_order;  ///< bird, row; not rtip20
  std::optional<uint32_t> opacity_level;  ///< 0..12; not rtip20
  std::optional<float> alpha_cutoff;      ///< [0, 1]; default the glTF alphaCutoff, else 0.5
  std::optional<std::string> obb;         ///< on, off; rtip31 only
  std::optional<float> obb_ratio;         ///< [0, 1]; rtip31 only
  int threads = 0;                        ///< 0..4096, 0 = all
};

/// The pipeline options `settings` name, after checking every value and refusing options the target does not use.
pipeline::BuildBlobOptions build_options(const BuildSettings& settings);

/// Throws hwbvh::Error(BadInput) "--instance-mask applies to two-level blobs only (SUBJECT has no instances)" when
/// `given`: a one-level BVH has no instances, and the targets disagree on what a mask means without them.
void refuse_instance_mask(bool given, const std::string& subject);

/// The tracing options of `hwbvh stats`, by their command-line names. An unset optional was not given.
struct TraceSettings {
  std::optional<uint32_t> stack_size;     ///< 2..64, default 16; rtip31, rtip20
  std::optional<uint32_t> instance_mask;  ///< 0..255, default 0xFF; two-level blobs only
  std::optional<uint32_t> heuristic;      ///< 0..3, default 0; rtip31, rtip20
  std::string triangle_test;              ///< watertight, gpurt; empty: the target's own
  uint32_t step_limit = emu::kDefaultStepLimit;  ///< 1..1000000000
  std::optional<std::string> stoc;        ///< on, off; default on; rtip31, xe3
  bool no_duplicate_any_hit = false;
  /// Ray flags, the ten pointer-flag bits of emu::PointerFlags::bits (force_opaque = 1 ... skip_procedural = 512),
  /// for every ray; Python only (hwbvh.trace's ray_flags, docs/python.md). Non-zero needs oracle off: the Embree
  /// oracle does not model them.
  uint32_t ray_flags = 0;
  bool oracle = true;                     ///< check every ray against Embree
  int threads = 0;                        ///< 0..4096, 0 = all
};

/// The options of `hwbvh stats` that choose and trace rays (the machine model and output files are the CLI's).
struct StatsSettings {
  std::string rays = "primary,ao,shadow";  ///< comma-separated: primary, ao, shadow, random, file
  uint32_t width = 256;                    ///< 1..16384
  uint32_t height = 256;                   ///< 1..16384
  std::string camera;                      ///< "eye,target,up,fov" (docs/rays.md); empty: framed from the scene
  uint32_t ao_samples = 4;                 ///< 1..1024
  float ao_distance = 0.0f;                ///< > 0; 0: 0.1 x the scene diagonal
  uint32_t random_rays = 16384;            ///< 1..100000000
  uint64_t seed = 1;
  std::string rays_file;                   ///< adds the ray type `file`
  TraceSettings trace;
};

/// The statistics options `settings` name, after checking every value. Target-specific refusals need the BVH
/// (refuse_unused).
stats::StatsOptions stats_options(const StatsSettings& settings);

/// Which tracing options were given that only some targets have (docs/cli.md "Options by target").
struct GivenTraceOptions {
  bool stack_size = false;     ///< rtip31, rtip20
  bool heuristic = false;      ///< rtip31, rtip20
  bool stoc = false;           ///< rtip31, xe3
  bool instance_mask = false;  ///< two-level BVHs
};
/// The options of `settings` that were given.
GivenTraceOptions given_options(const TraceSettings& settings);
/// Refuses the given options `bvh` has no use for, naming its file.
void refuse_unused(const GivenTraceOptions& given, const emu::LoadedBvh& bvh);

/// `hwbvh stats` without the machine model and output: refuses the options `bvh` has no use for, then traces. With
/// `keep_results` every traced ray and its result stay in the report (per-ray output).
stats::StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsSettings& settings, bool keep_results);

/// The caller's rays traced through `bvh` (stats::run_stats_on_rays), after the same checks as stats_file; every
/// ray's result is kept.
stats::StatsReport trace_rays(const emu::LoadedBvh& bvh, std::vector<Ray> rays, bool any_hit,
                              const TraceSettings& settings);

/// `hwbvh info FILE --json`: the document it prints (indented text), for a blob or a .rra file.
std::string info_json(const std::filesystem::path& file);

}  // namespace hwbvh::api
