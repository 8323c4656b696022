// hwbvh machine: the machine model on its own. `machine run PROGRAM.json --machine PRESET` runs a wave program
// (docs/machine-model.md, "Wave programs") on one compute unit and prints per-wave counts and cycles; `sweep` lives
// in cmd_machine_sweep.cpp, `reproduce` in cmd_machine_reproduce.cpp, `sensitivity` in
// cmd_machine_sensitivity.cpp.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "hwbvh/api/machine.h"
#include "hwbvh/emu/machine/program.h"
#include "machine_options.h"
#include "output.h"

namespace hwbvh::cli {
namespace {

struct RunArgs {
  std::string program;
  std::string machine;
  bool json = false;
};

int run_program(const RunArgs& a) {
  const api::WaveProgramRun run = api::run_wave_program(a.program, {.preset = a.machine, .parameters = {}});
  const emu::MachineConfig& config = run.config;
  const emu::WaveProgram& program = run.program;
  const emu::ProgramRunResult& r = run.result;
  if (a.json) {
    print_json(Json::parse(emu::to_json(r, config, program)));
    return 0;
  }
  const emu::MachineResult& m = r.machine;
  Table t;
  t.row("program", a.program);
  t.row("machine preset", config.name + " (outputs of a model, not hardware measurements)");
  t.row("status", fmt::format("{}: {}", emu::to_string(m.status), m.message));
  t.row("cycles", fmt::format("{}", m.cycles));
  t.row("waves", fmt::format("{} ({} completed; at most {} per SIMD, {} at peak)", m.waves, m.waves_completed,
                             m.wave_limit_per_simd, m.peak_active_waves_per_simd));
  if (m.failed_vgpr_allocations > 0) {
    t.row("failed S_ALLOC_VGPR", fmt::format("{} (by {} waves)", m.failed_vgpr_allocations, m.waves_waited_on_vgprs));
  }
  t.print();

  std::string levels;
  for (const emu::MemoryLevelResult& l : m.memory_levels) levels += fmt::format(" {:>9}", l.name);
  fmt::print("\n{:<12} {:>9} {:>4} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8}  loads served by{}\n", "wave",
             "workgroup", "simd", "start", "end", "cycles", "instructions", "loads", "lds ops", levels);
  for (const emu::WaveRunResult& w : r.waves) {
    std::string by_level;
    for (const uint64_t n : w.loads_by_level) by_level += fmt::format(" {:>9}", n);
    fmt::print("{:<12} {:>9} {:>4} {:>10} {:>10} {:>10} {:>12} {:>8} {:>8}  {:15}{}{}\n",
               w.name + "#" + std::to_string(w.copy), w.workgroup, w.simd, w.start_cycle, w.end_cycle, w.end_cycle - w.start_cycle,
               w.instructions, w.loads, w.lds_ops, "", by_level, w.completed ? "" : "  (did not complete)");
  }
  fmt::print("\n{:<12} {:>12} {:>12} {:>12} {:>12} {:>14}\n", "memory level", "requests", "hits", "merged", "misses",
             "bytes served");
  for (const emu::MemoryLevelResult& l : m.memory_levels) {
    fmt::print("{:<12} {:>12} {:>12} {:>12} {:>12} {:>14}\n", l.name, l.requests, l.hits, l.merged, l.misses, l.bytes);
  }
  return 0;
}

Command add_run_command(CLI::App& group) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = group.add_subcommand("run", "Run a wave program (JSON, docs/machine-model.md) on one compute unit");
  sub->add_option("program", args->program, "wave program JSON file")->required();
  sub->add_option("--machine", args->machine, "machine preset (" + builtin_preset_list() + ") or a preset JSON file")
      ->required();
  sub->add_flag("--json", args->json, "print one JSON document");
  return {sub, [args] { return run_program(*args); }};
}

}  // namespace

Command add_machine_command(CLI::App& app) {
  CLI::App* group = app.add_subcommand("machine", "Run the machine model on its own: a wave program, a sweep of a preset parameter, the sensitivity to its assumptions, or a published figure reproduced (docs/machine-model.md)");
  group->require_subcommand(1);
  const std::vector<Command> commands{add_run_command(*group), add_machine_sweep_command(*group),
                                      add_machine_sensitivity_command(*group), add_machine_reproduce_command(*group)};
  return {group, [commands] {
            for (const Command& c : commands)
              if (c.app->parsed()) return c.run();
            return 2;  // unreachable: require_subcommand(1)
          }};
}

}  // namespace hwbvh::cli
