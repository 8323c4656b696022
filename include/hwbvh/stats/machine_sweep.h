#pragma once
// `hwbvh machine sweep`: the machine model on one blob's rays while one parameter takes a list of values, as a table
// and a line plot of cycles and ray-accelerator utilisation against the parameter (docs/machine-model.md,
// "Sweeps"). The parameter is a preset key ("memory.cache_bytes", "vgpr_allocation.mode",
// "kernel.phases[hit_shading].vgprs", see emu::load_machine_preset) or "stack_size", the LDS stack the rays are
// traced with. Every point is a model output, not a measurement.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::stats {

/// The parameter that is not a preset key: the traversal's LDS stack entries (rtip31, rtip20).
inline constexpr const char* kStackSizeParameter = "stack_size";

struct SweepOptions {
  std::string preset;               ///< built-in preset name or preset file
  std::string parameter;            ///< a preset key or kStackSizeParameter
  std::vector<std::string> values;  ///< as written on the command line, in order
  /// Rays, camera, trace options and threads; the oracle is not run and `machine` is set per point.
  StatsOptions stats;
};

struct SweepPoint {
  std::string value;
  emu::MachineConfig config;  ///< the preset with the value applied
  std::vector<std::pair<RayKind, emu::MachineResult>> runs;  ///< one per ray type, in StatsOptions::kinds order
  emu::MachineStatus status = emu::MachineStatus::Completed;  ///< the first unfinished run's status, if any
  std::optional<uint64_t> cycles;    ///< summed over the runs; nullopt unless every run completed
  double box_utilization = 0.0;      ///< summed box tests / (summed cycles x box_tests_per_clock)
  double triangle_utilization = 0.0; ///< the same for triangle tests
};

struct SweepResult {
  std::string file;
  std::string target;
  std::string preset;
  std::string parameter;
  std::string unit;  ///< the preset's documented unit of the parameter ("entries" for stack_size), may be empty
  std::vector<RayKind> kinds;
  std::vector<SweepPoint> points;
};

/// Runs the sweep. Every point's preset is loaded before any ray is traced, so a bad parameter name or value throws
/// hwbvh::Error(BadInput) naming it before any work; so do an empty value list and stack_size on an xe3 blob.
SweepResult run_machine_sweep(const emu::LoadedBvh& bvh, const SweepOptions& options);

/// The table's header and one row per value: value, cycles, box and triangle utilisation, status ("-" for the
/// figures of a run that did not complete).
std::vector<std::string> sweep_header(const SweepResult& result);
std::vector<std::vector<std::string>> sweep_rows(const SweepResult& result);

/// A title line and the table, aligned.
std::string sweep_to_text(const SweepResult& result);
std::string sweep_to_json(const SweepResult& result);

/// A self-contained SVG line plot: cycles (left axis) and box and triangle utilisation (right axis, percent) against
/// the parameter (numeric axis when every value is a number, else one evenly spaced tick per value); points of runs
/// that did not complete are left out.
std::string sweep_to_svg(const SweepResult& result);

}  // namespace hwbvh::stats
