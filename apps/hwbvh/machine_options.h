#pragma once
// --machine, as stats, compare and report take it (docs/cli.md).
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "hwbvh/emu/machine/config.h"

namespace hwbvh::cli {

struct MachineArgs {
  std::string preset;  ///< empty: no machine model
};

/// Registers --machine PRESET on `command`.
void add_machine_options(CLI::App& command, MachineArgs& args);

/// The names of the built-in presets, comma-separated, for help texts.
std::string builtin_preset_list();

/// The preset, or nullopt without --machine. Throws hwbvh::Error(BadInput) for a bad preset, before any work is done.
std::optional<emu::MachineConfig> load_machine(const MachineArgs& args);

}  // namespace hwbvh::cli
