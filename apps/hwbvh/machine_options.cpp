#include "machine_options.h"

namespace hwbvh::cli {

std::string builtin_preset_list() {
  std::string presets;
  for (const std::string& p : emu::builtin_machine_presets()) presets += (presets.empty() ? "" : ", ") + p;
  return presets;
}

void add_machine_options(CLI::App& command, MachineArgs& args) {
  command.add_option("--machine", args.preset,
                     "also run the machine model (a whole GPU) with a preset (" + builtin_preset_list() +
                         ") or a preset JSON file");
}

std::optional<emu::MachineConfig> load_machine(const MachineArgs& args) {
  if (args.preset.empty()) return std::nullopt;
  return emu::load_machine_preset(args.preset);
}

}  // namespace hwbvh::cli
