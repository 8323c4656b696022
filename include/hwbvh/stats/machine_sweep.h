#pragma once
// `hwbvh machine sweep`: the machine model on one blob's rays while one parameter takes a list of values, as a table
// and a line plot of cycles and ray-accelerator utilisation against the parameter (docs/machine-model.md,
// "Sweeps"). The parameter is a preset key ("memory.levels[L0].bytes", "vgpr_allocation.mode",
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
  std::vector<std::string> presets; ///< built-in preset names or preset files: one series each
  std::string parameter;            ///< a preset key or kStackSizeParameter
  std::vector<std::string> values;  ///< as written on the command line, in order
  /// Rays, camera, trace options and threads; the oracle is not run and `machine` is set per point.
  StatsOptions stats;
};

struct SweepPoint {
  std::string preset;
  std::string value;
  emu::MachineConfig config;  ///< the preset with the value applied
  std::vector<std::pair<RayKind, emu::MachineResult>> runs;  ///< one per ray type, in StatsOptions::kinds order
  emu::MachineStatus status = emu::MachineStatus::Completed;  ///< the first unfinished run's status, if any
  std::optional<uint64_t> cycles;    ///< summed over the runs; nullopt unless every run completed
  double box_utilization = 0.0;      ///< summed box tests / (summed cycles x simulated CUs x box_tests_per_clock)
  double triangle_utilization = 0.0; ///< the same for triangle tests
  /// emu::hypothetical_note of `config` and the blob's target: "" when this hardware reads the blob's nodes.
  std::string hypothetical;
};

struct SweepResult {
  std::string file;
  std::string target;
  std::vector<std::string> presets;
  std::string parameter;
  std::vector<std::string> values;
  std::string unit;  ///< the first preset's documented unit of the parameter ("entries" for stack_size), may be empty
  std::vector<RayKind> kinds;
  std::vector<SweepPoint> points;  ///< preset by preset, each over all values: points[p x values.size() + v]
};

/// One point: the machine model with `config` (`preset` with `value` applied) on the rays of `stats` (traced without
/// the oracle). `progress` hears run_stats' phases: the tracing and each ray type's machine model.
SweepPoint run_machine_point(const emu::LoadedBvh& bvh, const StatsOptions& stats, const std::string& preset,
                             const std::string& value, const emu::MachineConfig& config,
                             const ProgressCallback& progress = {});

/// Runs the sweep: every preset with every value. Every point's preset is loaded before any ray is traced, so a bad
/// preset, parameter name or value throws hwbvh::Error(BadInput) naming it before any work; so do empty lists and
/// stack_size on an xe3 blob.
/// `progress` hears each point's phases after "point 3 of 8: " (run_machine_point; points run preset by preset).
SweepResult run_machine_sweep(const emu::LoadedBvh& bvh, const SweepOptions& options,
                              const ProgressCallback& progress = {});

/// The table's header and one row per point: preset (" (hypothetical)" after it when the point is), value, cycles,
/// box and triangle utilisation, status ("-" for the figures of a run that did not complete).
std::vector<std::string> sweep_header(const SweepResult& result);
std::vector<std::vector<std::string>> sweep_rows(const SweepResult& result);

/// The points' distinct hypothetical notes, in order: what the rows marked "(hypothetical)" are.
std::vector<std::string> sweep_hypothetical_notes(const SweepResult& result);

/// A title line, the hypothetical notes, and the table, aligned.
std::string sweep_to_text(const SweepResult& result);
std::string sweep_to_json(const SweepResult& result);

/// A self-contained SVG line plot, per preset (one colour each) its cycles (solid, left axis) and box-test
/// utilisation (dashed, right axis, percent) against the parameter: a numeric axis when every value is a number,
/// else one evenly spaced tick per value. Both y axes start at zero (the plot says so). A run that did not complete is
/// no point of its lines: its status is written at its value instead. A hypothetical series says so in the legend,
/// and the notes are written under the plot.
std::string sweep_to_svg(const SweepResult& result);

}  // namespace hwbvh::stats
