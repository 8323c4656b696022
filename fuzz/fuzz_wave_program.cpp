// Wave programs (emu::parse_wave_program, `hwbvh machine run`): any text is refused with hwbvh::Error(BadInput) or
// gives a program that runs on the machine model without hanging: capped at a few thousand cycles, every run ends
// completed, deadlocked or at the cycle limit, with its counts consistent and the same result twice.
#include <algorithm>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hwbvh::emu;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  WaveProgram program;
  try {
    program = parse_wave_program(text, "fuzz.json");
  } catch (const hwbvh::Error& e) {
    hwbvh::fuzz::fuzz_check(e.kind() == hwbvh::ErrorKind::BadInput, "a bad program is bad input");
    return 0;
  }
  program.max_cycles = std::min<uint64_t>(program.max_cycles, 5000);
  program.workgroups = std::min<uint32_t>(program.workgroups, 4);
  for (const char* preset : {"rdna3", "rdna4-dvgpr16"}) {
    const MachineConfig config = load_machine_preset(preset);
    try {
      const ProgramRunResult r = run_wave_program(config, program);
      hwbvh::fuzz::fuzz_check(r.machine.cycles <= program.max_cycles, "a run stops at its cycle limit");
      hwbvh::fuzz::fuzz_check(r.waves.size() == r.machine.waves && r.machine.waves_completed <= r.machine.waves,
                              "one result per wave");
      hwbvh::fuzz::fuzz_check(r.machine.status != MachineStatus::Completed ||
                                  r.machine.waves_completed == r.machine.waves,
                              "a completed run completed every wave");
      const std::string again = to_json(run_wave_program(config, program), config, program);
      hwbvh::fuzz::fuzz_check(to_json(r, config, program) == again, "runs are deterministic");
    } catch (const hwbvh::Error& e) {
      hwbvh::fuzz::fuzz_check(e.kind() == hwbvh::ErrorKind::BadInput, "a program that cannot run is bad input");
    }
  }
  return 0;
}
