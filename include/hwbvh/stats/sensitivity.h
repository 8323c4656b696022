#pragma once
// `hwbvh machine sensitivity`: what each of a preset's unsourced figures is worth (docs/machine-model.md,
// "Sensitivity"). Every parameter whose source says [assumption] or [UNCERTAIN] is changed on its own, the machine
// model rerun on the same rays, and the parameters ranked by how far they move the cycles and the box- and
// triangle-tests-per-second figures; a table, JSON and an SVG tornado plot. Every figure is a model output.
//
// How a value is changed:
//   * a whole number is multiplied by factor_low and by factor_high and rounded to the nearest whole number (halves
//     away from zero); a result equal to the preset's value (0 stays 0, 1 x 0.5 rounds to 1) is not run, and says so;
//   * true/false is run once, at the other value;
//   * a word (an enum such as "split") is run at each other word its documented unit lists ("split (...) | combined
//     (...)"), at most two;
//   * a changed value the preset refuses (a line size that is no power of two, a latency below the level above's, a
//     simulated CU count above the GPU's) is not run: the row gives the loader's message.
#include <optional>
#include <string>
#include <vector>

#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/stats/machine_sweep.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::stats {

struct SensitivityOptions {
  std::string preset;         ///< built-in preset name or preset file
  double factor_low = 0.5;    ///< > 0 and < 1
  double factor_high = 2.0;   ///< > 1
  /// Rays, camera, trace options and threads; the oracle is not run and `machine` is set per run.
  StatsOptions stats;
};

/// The model's headline figures for one run: cycles and the whole GPU's tests per second (emu::GpuFigures) at the
/// preset's clock, over all its ray types.
struct SensitivityFigures {
  uint64_t cycles = 0;
  double box_tests_per_second = 0.0;
  double triangle_tests_per_second = 0.0;
};

/// One changed value of a parameter.
struct SensitivityVariant {
  std::string label;  ///< "x0.5", "x2", "other value"
  std::string value;  ///< the value run (or refused)
  std::string note;   ///< why it was not run ("rounds to the preset's value", the loader's message), else ""
  emu::MachineStatus status = emu::MachineStatus::Completed;
  std::optional<SensitivityFigures> figures;  ///< when it ran to completion
  double cycles_change = 0.0;  ///< figures' cycles / the base's - 1
  double box_rate_change = 0.0;
  double triangle_rate_change = 0.0;
};

struct SensitivityParameter {
  std::string key;     ///< as machine sweep's --param takes it
  std::string value;   ///< the preset's
  std::string unit;
  std::string source;  ///< the preset's source text, with its [assumption] or [UNCERTAIN]
  std::string tag;     ///< "[assumption]" or "[UNCERTAIN]"
  std::vector<SensitivityVariant> variants;  ///< one or two
  double cycles_effect = 0.0;  ///< the largest |cycles_change| of the variants that ran
  double rate_effect = 0.0;    ///< the largest |box_rate_change| or |triangle_rate_change|
  std::size_t rate_rank = 0;   ///< 1-based place when ranked by rate_effect
};

struct SensitivityResult {
  std::string file;
  std::string target;
  std::string preset;
  std::string hypothetical;  ///< emu::hypothetical_note of the preset and the blob's target, "" when it reads them
  std::vector<RayKind> kinds;
  double factor_low = 0.5, factor_high = 2.0;
  uint32_t clock_mhz = 0;
  SensitivityFigures base;
  /// Ranked by cycles_effect (largest first; ties by key); parameters none of whose variants ran come last.
  std::vector<SensitivityParameter> parameters;
};

/// Runs the preset once as it is and once per variant. Throws hwbvh::Error(BadInput) for a bad preset or factor, a
/// preset without a clock (gpu.clock_mhz) or one whose own run does not complete, before or instead of the variants.
/// `progress` hears each model run's phases after "run 3 of 12: " (run_machine_point; the preset's own run first,
/// then each variant's that is run).
SensitivityResult run_sensitivity(const emu::LoadedBvh& bvh, const SensitivityOptions& options,
                                  const ProgressCallback& progress = {});

/// The ranked table: rank by cycles, rank by tests per second, parameter, preset value, effect (the largest change in
/// cycles), and per variant its value and the changes in cycles, box and triangle tests per second (or why it did not
/// run).
std::vector<std::string> sensitivity_header();
std::vector<std::vector<std::string>> sensitivity_rows(const SensitivityResult& result);

/// A title, the base figures and the ranked table.
std::string sensitivity_to_text(const SensitivityResult& result);
std::string sensitivity_to_json(const SensitivityResult& result);

/// A tornado plot: per parameter that ran (at most `rows`, the highest ranked), a bar per variant from 0 to its
/// change in cycles, in percent of the preset's cycles; the x axis holds 0, the preset itself.
std::string sensitivity_to_svg(const SensitivityResult& result, std::size_t rows = 20);

}  // namespace hwbvh::stats
