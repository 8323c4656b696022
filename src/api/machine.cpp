#include "hwbvh/api/machine.h"

#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/program.h"

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

std::string run_wave_program_json(const std::filesystem::path& program, const MachineSettings& machine,
                                  const std::string& program_json) {
  const emu::MachineConfig config = machine_config(machine);
  const emu::WaveProgram parsed = program_json.empty() ? emu::load_wave_program(program.string())
                                                       : emu::parse_wave_program(program_json, program.string());
  return emu::to_json(emu::run_wave_program(config, parsed), config, parsed);
}

}  // namespace hwbvh::api
