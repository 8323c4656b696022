// Wave programs on the machine model: exact cycle counts of small programs computed by hand from the presets, the
// wait counters and return order of RDNA 3 and RDNA 4, the three reproductions shipped under presets/programs/
// (their figures are quoted in docs/machine-model.md), and the errors a bad program file gets.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/program.h"

namespace hwbvh::emu {
namespace {

// A program of one workgroup from its waves' JSON (without the brackets).
WaveProgram program(const std::string& waves, uint32_t vgprs = 32) {
  return parse_wave_program(R"({"description": "test", "vgprs": )" + std::to_string(vgprs) + R"(, "waves": [)" +
                                waves + "]}",
                            "test program");
}

ProgramRunResult run(const std::string& preset, const WaveProgram& p) {
  return run_wave_program(load_machine_preset(preset), p);
}

uint64_t cycles(const std::string& preset, const std::string& waves) {
  const ProgramRunResult r = run(preset, program(waves));
  EXPECT_EQ(r.machine.status, MachineStatus::Completed) << r.machine.message;
  return r.machine.cycles;
}

// The presets' figures used below: every instruction takes one issue cycle (an ALU block of N takes N, in bursts of
// 8), a load reaches the memory when issued; L0 hit 40, DRAM 565 (both presets), DRAM port 4 bytes per clock (a
// 128-byte line busies it 32 cycles); LDS 40. A wave ends once all its requests are back.
constexpr const char* kFar =
    R"("far": {"pattern": "chase", "base": 4294967296, "footprint": 4294967296, "stride": 4096})";

TEST(WaveProgram, ExactCyclesOfSmallPrograms) {
  for (const char* preset : {"rdna4", "rdna3"}) {
    SCOPED_TRACE(preset);
    // One miss to DRAM: issued 0..1, data at 1 + 565.
    EXPECT_EQ(cycles(preset, R"({"name": "w", "streams": {"a": {"pattern": "fixed"}},
        "program": [{"op": "load", "stream": "a"}]})"), 566u);
    // The same line again once it is back: the second load (issued 566..567) hits the L0: 567 + 40.
    EXPECT_EQ(cycles(preset, R"({"name": "w", "streams": {"a": {"pattern": "fixed"}},
        "program": [{"op": "load", "stream": "a"}, {"op": "wait", "count": 0}, {"op": "load", "stream": "a"}]})"),
              607u);
    // Two dependent loads (a pointer chase, both to DRAM): the loop counter is set 0..1, the first load issued
    // 1..2 (data at 567), the branch 2..3; the second issues when the first's data are back, 567..568, and takes
    // 565 more.
    EXPECT_EQ(cycles(preset, std::string(R"({"name": "w", "streams": {)") + kFar + R"(}, "program": [
        {"op": "repeat", "count": 2, "body": [{"op": "load", "stream": "far"}]}]})"),
              1 + 1 + 565 + 1 + 565u);
    // An ALU block: 20 instructions in bursts of 8, 8 and 4.
    EXPECT_EQ(cycles(preset, R"({"name": "w", "program": [{"op": "alu", "count": 20}]})"), 20u);
    // s_sleep 2: issued 0..1, then 128 cycles.
    EXPECT_EQ(cycles(preset, R"({"name": "w", "program": [{"op": "sleep", "count": 2}]})"), 129u);
    // An LDS write and a read of the flag: issued at 1 and 2, in the LDS at 1 and 2, the read back at 2 + 40.
    EXPECT_EQ(cycles(preset, R"({"name": "w", "program": [{"op": "lds_write", "flag": "f"},
        {"op": "lds_read", "flag": "f"}]})"), 42u);
  }
  // One wave's dependent chase of 2 took 1133 cycles above; two independent loads to two far lines overlap: issued
  // 0..1 and 1..2, each line moves through the whole GPU's DRAM port (254 bytes a clock) within its cycle: the second
  // is back at 2 + 565 = 567.
  EXPECT_EQ(cycles("rdna4", R"({"name": "w", "streams": {"s": {"pattern": "stride", "footprint": 8192, "stride": 4096}},
      "program": [{"op": "load", "stream": "s"}, {"op": "load", "stream": "s"}]})"), 2 + 565u);
}

// X warms a line (0..566), works 20 instructions (566..586) and loads it again at 587, an L0 hit ready at 627. Y
// sleeps 9 (1 + 576 = 577) and then misses to DRAM (issued 577..578, data at 1143). On rdna4 X is done at 627; on
// rdna3 its hit leaves the CU's in-order return queue behind Y's older miss, at 1143.
TEST(WaveProgram, Rdna3ReturnsWaitBehindAnotherWavesMiss) {
  const auto waves_hitting_with = [](const std::string& kind) {
    return std::string(R"({"name": "X", "streams": {"a": {"pattern": "fixed"}}, "program": [
        {"op": "load", "stream": "a"}, {"op": "wait", "count": 0}, {"op": "alu", "count": 20},
        {"op": "load", "stream": "a", "kind": ")") + kind + R"("}]},
      {"name": "Y", "streams": {)" + kFar + R"(}, "program": [{"op": "sleep", "count": 9},
        {"op": "load", "stream": "far"}]})";
  };
  const std::string waves = waves_hitting_with("load");
  for (const auto& [preset, x_end] : {std::pair{"rdna4", 627u}, std::pair{"rdna3", 1143u}}) {
    const ProgramRunResult r = run(preset, program(waves));
    ASSERT_EQ(r.waves.size(), 2u);
    EXPECT_EQ(r.waves[0].simd, 0u);
    EXPECT_EQ(r.waves[1].simd, 1u);  // own issue ports
    EXPECT_EQ(r.waves[0].end_cycle, x_end) << preset;
    EXPECT_EQ(r.waves[1].end_cycle, 1143u) << preset;
    EXPECT_EQ(r.waves[0].loads_by_level.front(), 1u);  // the second load hit the L0
    EXPECT_EQ(r.waves[0].instructions, 23u);
  }
  // A scalar load returns on the scalar path, not through the vector return queue; it misses the scalar cache (the
  // line came in through the vector L0) and finds it in rdna3's L1, a cache: 587 + 100 = 687, before Y's miss.
  EXPECT_EQ(run("rdna3", program(waves_hitting_with("scalar"))).waves[0].end_cycle, 687u);
}

// Split counters (RDNA 4): `wait sample 0` waits only for the sample. Combined (RDNA 3): the sample counts in vmcnt
// behind an older load miss, so the wait lasts until the miss is back. The wave warms line 0 with a sample (0..566),
// then a far load (issued 566..567, data at 1132) and a sample hit (567..568, data at 608), waits (568..569) and
// works 1000 instructions: rdna4 resumes at 608 and ends at 1608, rdna3 resumes at 1132 and ends at 2132.
TEST(WaveProgram, SplitCountersWaitOnlyForTheirKind) {
  const std::string wave = std::string(R"({"name": "w", "streams": {"a": {"pattern": "fixed"}, )") + kFar +
                           R"(}, "program": [
        {"op": "load", "stream": "a", "kind": "sample"}, {"op": "wait", "kind": "sample", "count": 0},
        {"op": "load", "stream": "far"}, {"op": "load", "stream": "a", "kind": "sample"},
        {"op": "wait", "kind": "sample", "count": 0}, {"op": "alu", "count": 1000}]})";
  EXPECT_EQ(cycles("rdna4", wave), 1608u);
  EXPECT_EQ(cycles("rdna3", wave), 2132u);
}

std::string source_text(const std::string& relative) {
  std::ifstream in(test::source_dir() / relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

WaveProgram shipped(const std::string& name) {
  const auto path = test::source_dir() / "presets" / "programs" / name;
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << path;
  return load_wave_program(path.string());
}

void expect_quoted(const std::string& figure) {
  static const std::string doc = source_text("docs/machine-model.md");
  EXPECT_NE(doc.find(figure), std::string::npos) << "docs/machine-model.md should quote: " << figure;
}

// A full wait counter stalls the wave's next request of that counter. With room for one load, the second of two
// independent DRAM loads issues only when the first is back (566..567) and returns at 567 + 565 = 1132, where the two
// overlapped in 567 cycles above. On rdna4 kmcnt holds 31 scalar loads: the 32nd waits for the first's return.
TEST(WaveProgram, AFullCounterStallsTheNextRequest) {
  const std::string two_loads = R"({"name": "w", "streams": {"s": {"pattern": "stride", "footprint": 8192,
      "stride": 4096}}, "program": [{"op": "load", "stream": "s"}, {"op": "load", "stream": "s"}]})";
  const MachineConfig one = parse_machine_preset(
      R"({"base": "rdna4", "description": "test", "memory": {"load_counter_limit": 1}})", "test preset");
  const ProgramRunResult r = run_wave_program(one, program(two_loads));
  EXPECT_EQ(r.machine.status, MachineStatus::Completed) << r.machine.message;
  EXPECT_EQ(r.machine.cycles, 1132u);
  EXPECT_EQ(cycles("rdna4", two_loads), 567u);
  // 32 scalar loads of one far line in a loop (the counter set 0..1, a load and a branch per pass): the first,
  // issued 1..2, misses (data at 567), the next 30 merge with its fill in flight; the 32nd, due at 63, waits for kmcnt
  // to drop below 31 (all return at 567), issues 567..568 and hits the scalar cache (568 + 39 = 607). rdna3's lgkmcnt
  // holds 63: the 32nd merges too and the wave ends at 567.
  const std::string scalars = std::string(R"({"name": "w", "streams": {"f": {"pattern": "fixed", "base": 4294967296}},
      "program": [{"op": "repeat", "count": 32, "body": [{"op": "load", "kind": "scalar", "stream": "f"}]}]})");
  EXPECT_EQ(cycles("rdna4", scalars), 607u);
  EXPECT_EQ(cycles("rdna3", scalars), 567u);
}

// Scalar return order (presets/programs/scalar-ordering.json): a warm line (a scalar load 0..1, back at 566), a far
// scalar miss issued 566..567 (back at 1132), a scalar-cache hit 567..568 (back at 607), a wait for kmcnt <= 1 (568..569)
// and 1000 instructions. RDNA 4's kmcnt counts out of order: the wait ends with the hit, at 607, and the wave at 1607.
// RDNA 3's lgkmcnt (in order, as issue 31 reads the sources) ends it with the miss, at 1132; the wave at 2132.
TEST(WaveProgramReproduction, ScalarReturnOrder) {
  const WaveProgram p = shipped("scalar-ordering.json");
  for (const auto& [preset, end] : {std::pair{"rdna4", 1607u}, {"rdna3", 2132u}}) {
    const ProgramRunResult r = run(preset, p);
    ASSERT_EQ(r.machine.status, MachineStatus::Completed) << r.machine.message;
    EXPECT_EQ(r.waves.at(0).end_cycle, end) << preset;
    EXPECT_EQ(r.waves.at(0).loads_by_level.front(), 1u) << preset;  // the third load hit the scalar cache
  }
}

// Reproduction 1 (Chips and Cheese, "RDNA 4's 'Out-of-Order' Memory Accesses"): Y's 64 chained DRAM misses; X's
// loads to a small footprint, 4 (or 8) per wait, until Y's flag.
TEST(WaveProgramReproduction, CrossWaveMemoryOrdering) {
  const WaveProgram four = shipped("cross-wave-ordering.json");
  const WaveProgram eight = shipped("cross-wave-ordering-unrolled.json");
  const ProgramRunResult r3 = run("rdna3", four), r3_8 = run("rdna3", eight), r4 = run("rdna4", four);
  for (const ProgramRunResult* r : {&r3, &r3_8, &r4}) {
    ASSERT_EQ(r->machine.status, MachineStatus::Completed) << r->machine.message;
    ASSERT_EQ(r->waves.size(), 2u);
    EXPECT_EQ(r->waves[0].name, "Y");
    EXPECT_EQ(r->waves[0].loads, 64u);
    EXPECT_EQ(r->waves[0].loads_by_level.back(), 64u);  // every Y access a DRAM miss
  }
  const WaveRunResult& y = r3.waves[0];
  // rdna3: exactly 4 (8) X accesses per Y access; X's loop runs once per Y miss. Each program's description says so.
  EXPECT_EQ(r3.waves[1].loads, 4 * y.loads);
  EXPECT_EQ(r3_8.waves[1].loads, 8 * y.loads);
  for (const auto& [program, result] : {std::pair{&four, &r3}, std::pair{&eight, &r3_8}}) {
    const std::string claim = std::to_string(result->waves[1].loads / result->waves[0].loads) + " X accesses per Y access";
    std::smatch match;
    ASSERT_TRUE(std::regex_search(program->description, match, std::regex(R"(\d+ X accesses per Y access)")))
        << program->description;
    EXPECT_EQ(match.str(), claim) << program->description;
    EXPECT_EQ(match.suffix().str().find("X accesses per Y access"), std::string::npos) << program->description;
  }
  // rdna4: X runs at its own latency, one iteration every 86 cycles (4 loads issued 1..4, the last L0 hit back at
  // 44, the wait, a flag read 45..85, the wait, the branch at 86), whatever Y does.
  const WaveRunResult& x4 = r4.waves[1];
  const uint64_t iterations = x4.loads / 4;
  EXPECT_GT(x4.loads, 4 * r3.waves[1].loads);
  EXPECT_LE(iterations * 86, x4.end_cycle);
  EXPECT_GT((iterations + 8) * 86, x4.end_cycle);  // a few slower first iterations: the footprint's cold misses

  char line[160];
  std::snprintf(line, sizeof line, "| `rdna3` | %lu | %lu | %lu | %.2f |", y.loads, y.end_cycle, r3.waves[1].loads,
                static_cast<double>(r3.waves[1].loads) / static_cast<double>(y.loads));
  expect_quoted(line);
  std::snprintf(line, sizeof line, "| `rdna3`, unrolled 8 | %lu | %lu | %lu | %.2f |", r3_8.waves[0].loads,
                r3_8.waves[0].end_cycle, r3_8.waves[1].loads,
                static_cast<double>(r3_8.waves[1].loads) / static_cast<double>(r3_8.waves[0].loads));
  expect_quoted(line);
  std::snprintf(line, sizeof line, "| `rdna4` | %lu | %lu | %lu | %.2f |", r4.waves[0].loads, r4.waves[0].end_cycle,
                x4.loads, static_cast<double>(x4.loads) / static_cast<double>(r4.waves[0].loads));
  expect_quoted(line);
}

// Reproduction 2: dynamic VGPR deadlocks, and avoidance's limit.
TEST(WaveProgramReproduction, DynamicVgprDeadlock) {
  const WaveProgram together = shipped("dvgpr-grow-together.json");
  const ProgramRunResult on = run("rdna4-dvgpr32", together);
  EXPECT_EQ(on.machine.status, MachineStatus::Completed) << on.machine.message;
  EXPECT_EQ(on.machine.waves_completed, 64u);
  EXPECT_GT(on.machine.waves_waited_on_vgprs, 0u);

  const ProgramRunResult off = run("rdna4-dvgpr32-no-avoidance", together);
  EXPECT_EQ(off.machine.status, MachineStatus::Deadlocked) << off.machine.message;
  EXPECT_EQ(off.machine.waves_completed, 0u);
  EXPECT_EQ(off.machine.waves_blocked_at_end, 32u);
  EXPECT_NE(off.machine.message.find("32 retrying S_ALLOC_VGPR"), std::string::npos) << off.machine.message;

  const ProgramRunResult mutual = run("rdna4-dvgpr32", shipped("dvgpr-mutual-wait.json"));
  EXPECT_EQ(mutual.machine.status, MachineStatus::Deadlocked) << mutual.machine.message;
  EXPECT_NE(mutual.machine.message.find("24 retrying S_ALLOC_VGPR"), std::string::npos) << mutual.machine.message;
  EXPECT_NE(mutual.machine.message.find("8 polling an LDS flag"), std::string::npos) << mutual.machine.message;

  expect_quoted("completed 64 waves in " + std::to_string(on.machine.cycles) + " cycles");
  expect_quoted(off.machine.message);
  expect_quoted(mutual.machine.message);
}

// Reproduction 3: occupancy under static and dynamic allocation.
TEST(WaveProgramReproduction, Occupancy) {
  WaveProgram p = shipped("occupancy.json");
  for (const auto& [vgprs, waves] : {std::pair{24u, 16u}, {96u, 16u}, {97u, 12u}, {120u, 12u}, {128u, 10u},
                                     {192u, 8u}, {256u, 5u}}) {
    p.vgprs = vgprs;
    const ProgramRunResult r = run("rdna4", p);
    EXPECT_EQ(r.machine.status, MachineStatus::Completed) << r.machine.message;
    EXPECT_EQ(r.machine.wave_limit_per_simd, waves) << vgprs;
    EXPECT_EQ(r.machine.peak_active_waves_per_simd, waves) << vgprs;
  }
  p.vgprs = 96;
  for (const char* preset : {"rdna4-dvgpr16", "rdna4-dvgpr32"}) {
    const ProgramRunResult r = run(preset, p);
    EXPECT_EQ(r.machine.status, MachineStatus::Completed) << r.machine.message;
    EXPECT_EQ(r.machine.peak_active_waves_per_simd, 16u) << preset;
  }
  // The configured limit, whatever it is.
  MachineConfig twelve = load_machine_preset("rdna4-dvgpr16");
  twelve.vgpr.dynamic_wave_limit = 12;
  EXPECT_EQ(run_wave_program(twelve, p).machine.peak_active_waves_per_simd, 12u);
  // At most 8 blocks: 129 VGPRs are 9 blocks of 16, a request that can never succeed (reported as a deadlock);
  // 256 are 8 blocks of 32.
  const ProgramRunResult nine = run("rdna4-dvgpr16", program(R"({"name": "w", "program": [
      {"op": "alloc_vgpr", "vgprs": 129}]})", 256));
  EXPECT_EQ(nine.machine.status, MachineStatus::Deadlocked) << nine.machine.message;
  EXPECT_EQ(run("rdna4-dvgpr32", program(R"({"name": "w", "program": [{"op": "alloc_vgpr", "vgprs": 256}]})", 256))
                .machine.status,
            MachineStatus::Completed);
}

TEST(WaveProgram, DeterministicJsonWithPerWaveCounts) {
  const WaveProgram p = shipped("cross-wave-ordering.json");
  const MachineConfig c = load_machine_preset("rdna3");
  const std::string a = to_json(run_wave_program(c, p), c, p);
  EXPECT_EQ(a, to_json(run_wave_program(c, p), c, p));
  EXPECT_NE(a.find("\"model_output\""), std::string::npos);
  EXPECT_NE(a.find("\"loads_by_level\":{\"L0\":0,\"L1\":0,\"L2\":0,\"MALL\":0,\"DRAM\":64}"), std::string::npos) << a;
}

std::string bad_program(const std::string& text) {
  try {
    (void)parse_wave_program(text, "bad.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

TEST(WaveProgram, ErrorsNameTheFileAndTheProblem) {
  const auto wave = [](const std::string& program) {
    return R"({"description": "d", "vgprs": 32, "waves": [{"name": "w", "streams": {"s": {"pattern": "fixed"}},
        "program": [)" + program + "]}]}";
  };
  const std::pair<std::string, std::string> cases[] = {
      {"{", "malformed JSON"},
      {R"({"description": "d", "vgprs": 32})", "'waves' is missing"},
      {R"({"description": "d", "vgprs": 32, "waves": []})", "'waves' must list"},
      {R"({"description": "d", "vgprs": 300, "waves": [{"name": "w", "program": []}]})", "'vgprs' must be at most"},
      {wave(R"({"op": "jump"})"), "waves[0].program[0].op' must be one of"},
      {wave(R"({"op": "load", "stream": "t"})"), "names no stream"},
      {wave(R"({"op": "load", "stream": "s", "bytes": 0})"), "program[0].bytes"},
      {wave(R"({"op": "load", "stream": "s", "kind": "lds"})"), "program[0].kind' must be \"load\", \"sample\" or"},
      {wave(R"({"op": "wait", "kind": "bvh"})"), "program[0].kind"},
      {wave(R"({"op": "alu", "count": 0})"), "program[0].count' must be at least 1"},
      {wave(R"({"op": "alu", "count": 1, "colour": 2})"), "program[0].colour' is not a wave program key"},
      {wave(R"({"op": "repeat", "count": 2, "body": [{"op": "alu"}]})"), "program[0].body[0].count' is missing"},
      {wave(R"({"op": "sleep", "count": 128})"), "s_sleep"},
      {wave(R"({"op": "alloc_vgpr", "vgprs": 64})"), "less than an alloc_vgpr of 64"},
      {wave(R"({"op": "until_flag", "flag": "", "body": []})"), "flag' must not be empty"},
      {R"({"description": "d", "vgprs": 32, "waves": [{"name": "w", "streams": {"s": {"pattern": "stride",
          "stride": 0, "footprint": 8}}, "program": []}]})", "streams.s.footprint"},
      {R"({"description": "d", "vgprs": 32, "waves": [{"name": "w", "count": 1, "count": 2, "program": []}]})",
       "'count' appears twice"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string m = bad_program(text);
    EXPECT_NE(m.find("bad.json"), std::string::npos) << m;
    EXPECT_NE(m.find(expected), std::string::npos) << text << "\n" << m;
  }
  // Loops nested too deep, and programs that do not fit the CU.
  std::string deep = R"({"op": "alu", "count": 1})";
  for (int i = 0; i < 20; ++i) deep = R"({"op": "repeat", "count": 2, "body": [)" + deep + "]}";
  EXPECT_NE(bad_program(wave(deep)).find("nests loops too deep"), std::string::npos);
  try {
    (void)run("rdna4", program(R"({"name": "w", "count": 33, "program": []})", 96));
    ADD_FAILURE() << "33 waves of 96 VGPRs fit 2 SIMDs x 16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the compute unit"), std::string::npos) << e.what();
  }
  const test::ScratchDir dir("wave-program");
  try {
    (void)load_wave_program((dir / "missing.json").string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos);
  }
}

// A loop that never ends stops at the program's cycle limit; polling a flag nobody sets is a deadlock.
TEST(WaveProgram, RunsNeverHang) {
  WaveProgram p = program(R"({"name": "w", "program": [{"op": "until_flag", "flag": "f", "body": [
      {"op": "alu", "count": 4}]}]})");
  p.max_cycles = 5000;
  const ProgramRunResult r = run("rdna4", p);
  EXPECT_EQ(r.machine.status, MachineStatus::CycleLimit);
  EXPECT_EQ(r.machine.cycles, 5000u);
  EXPECT_FALSE(r.waves[0].completed);
  const ProgramRunResult poll = run("rdna4", program(R"({"name": "w", "program": [
      {"op": "until_flag", "flag": "f", "body": []}]})"));
  EXPECT_EQ(poll.machine.status, MachineStatus::Deadlocked) << poll.machine.message;
  EXPECT_NE(poll.machine.message.find("1 polling an LDS flag"), std::string::npos) << poll.machine.message;
}

}  // namespace
}  // namespace hwbvh::emu
