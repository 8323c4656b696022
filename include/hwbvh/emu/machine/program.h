#pragma once
// Wave programs: small programs of loads, waits, ALU work, LDS flags, S_ALLOC_VGPR and S_SLEEP that the machine
// model runs as the waves of one compute unit, on the same engine as the traversal kernel (machine.h): the same
// issue ports, memory hierarchy, return order, wait counters, LDS and VGPR allocation. They reproduce published
// behaviours (cross-wave memory ordering, dynamic VGPR deadlocks, occupancy) and pin the model's timing with
// hand-computed cases. The JSON format, the cost of each instruction and the shipped programs (presets/programs/)
// are in docs/machine-model.md, "Wave programs".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"

namespace hwbvh::emu {

/// What a wait waits for, and which counter a request counts in: split counters (RDNA 4) have one per kind
/// (loadcnt, samplecnt, dscnt, kmcnt); combined ones (RDNA 3) count loads and samples in vmcnt, LDS ops and scalar
/// loads in lgkmcnt.
enum class RequestKind : uint8_t { Load, Sample, Lds, Scalar };

/// Where a wave's loads of one stream go.
struct AddressStream {
  enum class Pattern : uint8_t {
    Fixed,   ///< always `base`
    Stride,  ///< base + (i x stride) mod footprint, i = the stream's load number
    Chase,   ///< a pointer chase: a pseudo-random cycle over the footprint's stride slots, each load's address the
             ///< previous load's data (so it waits for it)
  };
  std::string name;
  Pattern pattern = Pattern::Fixed;
  uint64_t base = 0;
  uint64_t footprint = 0;  ///< bytes (Stride, Chase)
  uint64_t stride = 0;     ///< bytes (Stride, Chase)
};

/// One instruction of a flattened program (loops become branches).
struct WaveInstruction {
  enum class Op : uint8_t {
    Load,          ///< a memory load of `bytes` from `stream` (kind Load, Sample or Scalar)
    Wait,          ///< s_wait: until the counter holding `kind` is at most `count`
    Alu,           ///< `count` ALU instructions
    LdsRead,       ///< ds_read of `flag` (the wave sees its value when the read reaches the LDS)
    LdsWrite,      ///< ds_write of `count` to `flag`
    AllocVgpr,     ///< s_alloc_vgpr `count` VGPRs (dynamic mode; ignored under static allocation)
    Sleep,         ///< s_sleep `count`: 64 x count cycles
    RepeatInit,    ///< loop counter `loop` = `count`
    RepeatBranch,  ///< decrement loop counter `loop`; back to `target` while it is not 0
    FlagBranch,    ///< back to `target` while the wave's last read of `flag` saw 0
  };
  Op op = Op::Alu;
  RequestKind kind = RequestKind::Load;
  uint32_t count = 0;
  uint32_t stream = 0;
  uint32_t bytes = 0;
  int32_t depends = -1;  ///< Load: a stream whose latest load's data this load needs (a chase: its own)
  uint32_t flag = 0;
  uint32_t loop = 0;
  uint32_t target = 0;
  bool poll = false;     ///< FlagBranch: the loop does nothing but read the flag (a busy-wait)
};

/// A wave of the workgroup, `count` times.
struct WaveDefinition {
  std::string name;
  uint32_t count = 1;
  std::vector<AddressStream> streams;
  std::vector<WaveInstruction> code;
  uint32_t loops = 0;  ///< loop counters the code uses
};

struct WaveProgram {
  std::string name;  ///< file path it came from
  std::string description;
  uint32_t vgprs = 0;       ///< the dispatch's VGPRs per wave: what static allocation reserves
  uint32_t workgroups = 1;  ///< copies of the workgroup, launched in order, each with its own LDS flags
  uint64_t max_cycles = 0;  ///< the run stops here (and at the preset's limits.max_cycles)
  std::vector<std::string> flags;
  std::vector<WaveDefinition> waves;  ///< one workgroup

  [[nodiscard]] uint32_t workgroup_waves() const;
};

/// Parses a program (docs/machine-model.md, "Wave programs"); `origin` names it in errors. Throws
/// hwbvh::Error(BadInput) naming `origin` and the problem: malformed JSON, unknown, missing or mistyped keys,
/// impossible values, undefined streams or flags.
[[nodiscard]] WaveProgram parse_wave_program(std::string_view json, const std::string& origin);
/// Reads and parses a program file.
[[nodiscard]] WaveProgram load_wave_program(const std::string& path);

struct WaveRunResult {
  std::string name;
  uint32_t copy = 0;       ///< which of the definition's `count` waves
  uint32_t workgroup = 0;
  uint32_t simd = 0;
  bool completed = false;
  uint64_t start_cycle = 0;   ///< launch
  uint64_t end_cycle = 0;     ///< end (or the run's end if it did not complete)
  uint64_t instructions = 0;  ///< instructions issued (an ALU block of N counts N)
  uint64_t loads = 0;         ///< loads issued
  uint64_t lds_ops = 0;
  std::vector<uint64_t> loads_by_level;  ///< per memory level: loads the farthest part of which came from it
};

struct ProgramRunResult {
  MachineResult machine;  ///< status, cycles, occupancy, VGPR waits, memory_levels (kernel fields stay 0)
  std::vector<WaveRunResult> waves;  ///< in launch order
};

/// Runs the program on one compute unit of `config` (its kernel section is not used). Validates both
/// (hwbvh::Error(BadInput): a workgroup that cannot fit the CU, VGPRs the allocation cannot give).
/// Never hangs: a deadlock is detected when it happens, and a run stops at the cycle limit.
[[nodiscard]] ProgramRunResult run_wave_program(const MachineConfig& config, const WaveProgram& program);

/// The result as a JSON object (compact text), labelled as a model output.
[[nodiscard]] std::string to_json(const ProgramRunResult& result, const MachineConfig& config,
                                  const WaveProgram& program);

}  // namespace hwbvh::emu
