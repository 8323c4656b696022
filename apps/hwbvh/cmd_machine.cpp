// hwbvh machine SUBCOMMAND: the compute-unit machine model on its own (docs/machine-model.md). `sweep` lives in
// cmd_machine_sweep.cpp.
#include "commands.h"

namespace hwbvh::cli {

Command add_machine_command(CLI::App& app) {
  CLI::App* group = app.add_subcommand("machine", "The compute-unit machine model on its own (sweep)");
  group->require_subcommand(1);
  const std::vector<Command> subcommands{add_machine_sweep_command(*group)};
  return {group, [subcommands] {
            for (const Command& c : subcommands)
              if (c.app->parsed()) return c.run();
            return 2;  // unreachable: require_subcommand(1)
          }};
}

}  // namespace hwbvh::cli
