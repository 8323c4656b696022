// hwbvh: command-line front end. Parsing and printing only; the work is done by the library.
//
// Exit codes: 0 success, 1 runtime failure, 2 bad usage or bad input (docs/design.md, "Errors").
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "hwbvh/core/error.h"

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitBadInput = 2;

// Messages are printed as one line so scripts can grep them; library messages already name the file.
void print_error(const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "hwbvh: error: " << line << '\n';
}

int run_guarded(const hwbvh::cli::RunFn& run) {
  try {
    return run();
  } catch (const hwbvh::Error& e) {
    print_error(e.what());
    return e.kind() == hwbvh::ErrorKind::BadInput ? kExitBadInput : kExitRuntime;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return kExitRuntime;
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    return kExitRuntime;
  } catch (...) {
    print_error("internal error: unknown exception");
    return kExitRuntime;
  }
}

int run_cli(int argc, char** argv) {
  CLI::App app{"hwbvh: ray-tracing BVHs in the exact layouts GPU hardware reads", "hwbvh"};
  app.set_version_flag("--version", "hwbvh " HWBVH_VERSION);
  app.require_subcommand(1);
  const hwbvh::cli::Command commands[] = {hwbvh::cli::add_build_command(app), hwbvh::cli::add_info_command(app),
                                          hwbvh::cli::add_dump_command(app),
                                          hwbvh::cli::add_stats_command(app), hwbvh::cli::add_render_command(app),
                                          hwbvh::cli::add_compare_command(app), hwbvh::cli::add_report_command(app),
                                          hwbvh::cli::add_export_command(app), hwbvh::cli::add_machine_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every real parse error is bad usage.
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  for (const hwbvh::cli::Command& c : commands)
    if (c.app->parsed()) return run_guarded(c.run);
  return kExitBadInput;  // unreachable: require_subcommand(1)
}

}  // namespace

int main(int argc, char** argv) {
  return run_guarded([&] { return run_cli(argc, argv); });
}
