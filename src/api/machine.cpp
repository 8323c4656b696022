#include "hwbvh/api/machine.h"

#include "hwbvh/core/error.h"

namespace hwbvh::api {

emu::MachineConfig machine_config(const MachineSettings& settings) {
  if (settings.preset.empty()) throw Error(ErrorKind::BadInput, "", "--machine: no preset named");
  return emu::load_machine_preset(settings.preset, settings.parameters);
}

stats::StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsSettings& settings, bool keep_results,
                             const MachineSettings& machine) {
  stats::StatsOptions options = stats_options(settings);
  options.keep_results = keep_results;
  options.machine = machine_config(machine);
  refuse_unused(given_options(settings.trace), bvh);
  return stats::run_stats(bvh, options);
}

WaveProgramRun run_wave_program(const std::filesystem::path& program, const MachineSettings& machine,
                                const std::string& program_json) {
  WaveProgramRun run{.config = machine_config(machine),
                     .program = program_json.empty() ? emu::load_wave_program(program.string())
                                                     : emu::parse_wave_program(program_json, program.string()),
                     .result = {}};
  run.result = emu::run_wave_program(run.config, run.program);
  return run;
}

}  // namespace hwbvh::api
