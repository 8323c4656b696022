#pragma once
// The machine model through the facade (api.h): a preset by name with parameters overridden by key, as
// `hwbvh machine sweep --param KEY --values V` varies one; traversal statistics with the model, as
// `hwbvh stats --machine PRESET`; and wave programs, as `hwbvh machine run` (docs/machine-model.md). Every function
// throws hwbvh::Error (BadInput for a bad preset, key, value or program).
#include <filesystem>
#include <string>
#include <vector>

#include "hwbvh/api/api.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/program.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::api {

/// A machine preset and the parameters replaced in it.
struct MachineSettings {
  std::string preset;  ///< a built-in preset name (emu::builtin_machine_presets) or a preset JSON file
  /// Preset keys ("memory.levels[L0].bytes", "kernel.phases[hit_shading].vgprs", "vgpr_allocation.mode") and
  /// their values as written on the command line ("65536", "true", "dynamic"), applied in order.
  std::vector<emu::ParameterOverride> parameters;
};

/// The preset with its parameters replaced, validated.
emu::MachineConfig machine_config(const MachineSettings& settings);

/// `hwbvh stats --machine PRESET` (with the parameters replaced): run_stats with the machine model on each ray
/// type. The report's JSON (stats::stats_to_json) is what `hwbvh stats --machine PRESET --json` prints.
stats::StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsSettings& settings, bool keep_results,
                             const MachineSettings& machine);

/// A wave program's run on one compute unit, with the preset and the program it ran.
struct WaveProgramRun {
  emu::MachineConfig config;
  emu::WaveProgram program;
  emu::ProgramRunResult result;
};

/// `hwbvh machine run PROGRAM --machine PRESET`: `program` is a program file; with `program_json` non-empty, that
/// text is the program and `program` only names it. emu::to_json(result, config, program) is what `--json` prints.
WaveProgramRun run_wave_program(const std::filesystem::path& program, const MachineSettings& machine,
                                const std::string& program_json = "");

}  // namespace hwbvh::api
