#pragma once
// The hwbvh subcommands. Each add_* registers one subcommand and its options on the top-level app and returns
// it with the function that runs it once the command line has been parsed. Results go to stdout, diagnostics to stderr;
// errors are thrown as hwbvh::Error and turned into exit codes by main.
#include <functional>

#include <CLI/CLI.hpp>

namespace hwbvh::cli {

/// Runs a parsed subcommand; returns the process exit code.
using RunFn = std::function<int()>;

struct Command {
  CLI::App* app = nullptr;  ///< the registered subcommand
  RunFn run;
};

/// --flatten on the commands that read scene files (docs/gltf.md).
inline CLI::Option* add_flatten_flag(CLI::App& command, bool& flatten) {
  return command.add_flag("--flatten", flatten,
                   "glTF: one BLAS of every instance's triangles in world space instead of a BLAS per mesh and a top level of instances");
}

Command add_build_command(CLI::App& app);  ///< hwbvh build SCENE -o OUT.hwbvh
Command add_info_command(CLI::App& app);   ///< hwbvh info FILE
Command add_dump_command(CLI::App& app);   ///< hwbvh dump FILE
Command add_stats_command(CLI::App& app);  ///< hwbvh stats FILE
Command add_compare_command(CLI::App& app);  ///< hwbvh compare SCENE
Command add_render_command(CLI::App& app);  ///< hwbvh render FILE -o OUT.png --mode MODE
Command add_report_command(CLI::App& app);  ///< hwbvh report SCENE_OR_FILE... -o OUT.html
Command add_export_command(CLI::App& app);  ///< hwbvh export BLOB -o FILE.rra
Command add_machine_command(CLI::App& app);  ///< hwbvh machine run|sweep|sensitivity|reproduce (the group)
Command add_machine_sweep_command(CLI::App& machine);  ///< hwbvh machine sweep FILE --machine P,.. --param --values
Command add_machine_reproduce_command(CLI::App& machine);  ///< hwbvh machine reproduce rt-throughput
Command add_machine_sensitivity_command(CLI::App& machine);  ///< hwbvh machine sensitivity FILE --machine P

}  // namespace hwbvh::cli
