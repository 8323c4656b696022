#pragma once
// --machine and --gpu-scale, as stats, compare and report take them (docs/cli.md).
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "hwbvh/emu/machine/config.h"

namespace hwbvh::cli {

struct MachineArgs {
  std::string preset;  ///< empty: no machine model
  bool gpu_scale = false;
};

/// Registers --machine PRESET and --gpu-scale (which needs --machine) on `command`.
void add_machine_options(CLI::App& command, MachineArgs& args);

/// The names of the built-in presets, comma-separated, for help texts.
std::string builtin_preset_list();

/// The preset, or nullopt without --machine. Throws hwbvh::Error(BadInput) for a bad preset, or with --gpu-scale for
/// one without a "gpu" section: before any work is done.
std::optional<emu::MachineConfig> load_machine(const MachineArgs& args);

}  // namespace hwbvh::cli
