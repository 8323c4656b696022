// hwbvh: command-line front end. Parsing and printing only; the work is done by the library.
//
// Exit codes: 0 success, 1 runtime failure, 2 bad usage or bad input (docs/design.md, "Errors").
#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

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

// Levenshtein distance, for suggesting the command a mistyped name was meant to be.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// "unknown command 'biuld'; did you mean 'build'? (commands: build, info, ...)": the closest command is suggested
// when at most two edits (or a third of its letters, for long names) away.
std::string command_list(const std::vector<CLI::App*>& commands) {
  std::string list;
  for (const CLI::App* c : commands) list += (list.empty() ? "" : ", ") + c->get_name();
  return "(commands: " + list + "; `hwbvh help COMMAND` describes one)";
}

std::string unknown_command_message(const std::string& name, const std::vector<CLI::App*>& commands) {
  std::string closest;
  std::size_t best = std::string::npos;
  for (const CLI::App* c : commands) {
    const std::size_t d = edit_distance(name, c->get_name());
    if (d < best) {
      best = d;
      closest = c->get_name();
    }
  }
  const bool close = best <= std::max<std::size_t>(2, closest.size() / 3);
  return "unknown command '" + name + "'" + (close ? "; did you mean '" + closest + "'?" : "") + " " +
         command_list(commands);
}

int run_cli(int argc, char** argv) {
  CLI::App app{"hwbvh: ray-tracing BVHs in the exact layouts GPU hardware reads", "hwbvh"};
  // Parse errors read like every other error: one line with the `hwbvh: error:` prefix (docs/cli.md).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "hwbvh: error: " + std::string(e.what()) + " (see --help)\n";
  });
  app.set_version_flag("--version", "hwbvh " HWBVH_VERSION);
  app.require_subcommand(1);
  app.footer("`hwbvh help COMMAND` or `hwbvh COMMAND --help` lists a command's options (docs/cli.md).");
  const hwbvh::cli::Command commands[] = {hwbvh::cli::add_build_command(app), hwbvh::cli::add_info_command(app),
                                          hwbvh::cli::add_dump_command(app),
                                          hwbvh::cli::add_stats_command(app), hwbvh::cli::add_render_command(app),
                                          hwbvh::cli::add_compare_command(app), hwbvh::cli::add_report_command(app),
                                          hwbvh::cli::add_export_command(app), hwbvh::cli::add_machine_command(app)};
  const std::vector<CLI::App*> subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  if (argc == 1) {
    print_error("no command given " + command_list(subcommands));
    return kExitBadInput;
  }
  // The first argument names the command unless it is an option (--help, --version).
  if (argv[1][0] != '-') {
    const std::string name = argv[1];
    if (name == "help") {  // `hwbvh help` and `hwbvh help COMMAND`
      if (argc == 2) {
        std::cout << app.help();
        return 0;
      }
      for (const CLI::App* c : subcommands) {
        if (c->get_name() == argv[2]) {
          std::cout << c->help(app.get_name());  // as `hwbvh COMMAND --help` prints it
          return 0;
        }
      }
      print_error(unknown_command_message(argv[2], subcommands));
      return kExitBadInput;
    }
    if (std::none_of(subcommands.begin(), subcommands.end(), [&](const CLI::App* c) { return c->get_name() == name; })) {
      print_error(unknown_command_message(name, subcommands));
      return kExitBadInput;
    }
  }
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
