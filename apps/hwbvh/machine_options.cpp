#include "machine_options.h"

#include "hwbvh/emu/machine/gpu_scale.h"

namespace hwbvh::cli {

std::string builtin_preset_list() {
  std::string presets;
  for (const std::string& p : emu::builtin_machine_presets()) presets += (presets.empty() ? "" : ", ") + p;
  return presets;
}

void add_machine_options(CLI::App& command, MachineArgs& args) {
  CLI::Option* machine = command.add_option(
      "--machine", args.preset,
      "also run the machine model with a preset (" + builtin_preset_list() + ") or a preset JSON file");
  command
      .add_flag("--gpu-scale", args.gpu_scale,
                "also scale the machine model's figures to the preset's whole GPU (box and triangle tests/s, rays/s: "
                "a model's estimate, no contention between CUs)")
      ->needs(machine);
}

std::optional<emu::MachineConfig> load_machine(const MachineArgs& args) {
  if (args.preset.empty()) return std::nullopt;
  emu::MachineConfig config = emu::load_machine_preset(args.preset);
  if (args.gpu_scale) emu::require_gpu(config);
  return config;
}

}  // namespace hwbvh::cli
