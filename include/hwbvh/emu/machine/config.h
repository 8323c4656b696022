#pragma once
// Parameters of the machine model (docs/machine-model.md): one RDNA-style compute unit — SIMDs with wave slots and
// a VGPR file, one shared ray accelerator, a memory hierarchy (L0 to DRAM) and its return order, the LDS — and
// the ray-tracing kernel it runs, as phases with VGPR needs. Hardware facts and their sources are in
// docs/machine-model.md: §4.6 ray accelerator throughput, §7 bvhcnt, §8.1 static allocation,
// §8.2 dynamic VGPRs (ISA §3.3.3), §9 memory. The values live in preset files (presets/*.json), where every
// parameter carries its unit and the source of its value; the built-in presets are compiled into the library.
//
// Preset file: a JSON object with a "description" and the sections compute_unit, ray_accelerator, memory, lds,
// vgpr_allocation, kernel, limits and gpu, keyed as the fields below (docs/machine-model.md). A value is either plain
// (`"simds": 2`) or documented (`"simds": {"value": 2, "unit": "...", "source": "..."}`). `"base": "rdna4"` starts
// from a built-in preset and overrides only the keys given (a documented value or a plain value replaces the base
// value whole; `kernel.phases` and `memory.levels` replace the base's list). Unknown keys are errors.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hwbvh::emu {

struct ComputeUnitConfig {
  uint32_t simds = 0;           ///< SIMD32s sharing the ray accelerator, the L0 and the LDS
  uint32_t wave_slots = 0;      ///< wave slots per SIMD
  uint32_t vgprs_per_lane = 0;  ///< VGPR file per SIMD in wave32 VGPRs (192 KB = 1536)
  uint32_t issue_burst = 0;     ///< instructions a wave issues back-to-back before the SIMD serves another wave
};

struct RayAcceleratorConfig {
  /// The hwbvh targets ("rtip31", "rtip20", "xe3") whose node layouts this hardware's intersect instructions read;
  /// a trace of another target's blob is hypothetical on it (hypothetical_note). A preset writes them comma-separated.
  std::vector<std::string> node_formats;
  uint32_t box_tests_per_clock = 0;       ///< a box node is 8 box tests
  uint32_t triangle_tests_per_clock = 0;  ///< a primitive (pair) step is 2 triangle tests
  uint32_t bvhcnt_limit = 0;              ///< outstanding BVH instructions per wave before issue stalls
  uint32_t instance_transform_clocks = 0; ///< an instance node's ray transform, on top of its filter node's box tests
  uint32_t pipeline_latency = 0;         ///< cycles from an instruction's last test to its results leaving the accelerator
  uint32_t queue_depth = 0;              ///< intersect instructions the CU holds from issue to write-back; issue stalls
                                         ///< while it is full
  uint32_t result_lanes_per_clock = 0;   ///< lanes whose results the write-back path returns to VGPRs per clock
};

/// One level of the memory hierarchy (docs/machine-model.md, "Memory"). Latencies are load-to-use from the wave:
/// data found at this level arrive `hit_latency` cycles after the request reaches it (later if its port is busy).
/// Which units share one instance of a memory level (docs/machine-model.md, "A whole GPU").
enum class SharedBy {
  ComputeUnit,  ///< one per CU (the L0, the scalar cache)
  ShaderArray,  ///< one per shader array, shared by its CUs (the graphics L1)
  Gpu,          ///< one for the whole GPU (L2, MALL, DRAM)
};

[[nodiscard]] const char* to_string(SharedBy shared_by);

struct MemoryLevelConfig {
  std::string name;               ///< e.g. "L0", "L2", "MALL", "DRAM"
  SharedBy shared_by = SharedBy::ComputeUnit;  ///< one instance per CU, per shader array or for the GPU
  uint64_t bytes = 0;             ///< one instance's capacity; 0: holds no data, only merges requests for lines in flight (the last
                                  ///< level, the memory, must be 0 and serves every request)
  uint32_t line_bytes = 0;        ///< a power of two
  uint32_t ways = 0;              ///< associativity (LRU within a set)
  uint32_t hit_latency = 0;       ///< cycles from the request to the data when this level has the line
  uint32_t bytes_per_clock = 0;   ///< bytes one instance delivers per cycle, whatever shares it (the L2's: the whole
                                  ///< GPU's); its port serves requests in arrival order
  uint32_t misses_in_flight = 0;  ///< misses one instance can have outstanding; a further miss waits for the oldest
};

/// How a wave's outstanding memory requests are counted (s_wait* semantics, docs/machine-model.md).
enum class WaitCounters {
  Split,     ///< RDNA 4: loadcnt, samplecnt, bvhcnt, dscnt, each decremented in order within its own kind
  Combined,  ///< RDNA 3: vmcnt (loads, samples, BVH) and lgkmcnt (LDS), in order within each
};

struct MemoryConfig {
  std::vector<MemoryLevelConfig> levels;  ///< nearest first; the last is the memory (DRAM)
  /// The scalar data cache: scalar loads look there first and its misses go to levels[1]. Its name is "scalar",
  /// it is per CU and holds lines (bytes > 0). Optional in a preset: without it (bytes == 0) scalar loads take the
  /// vector path from levels[0].
  MemoryLevelConfig scalar_cache;
  uint32_t address_lanes_per_clock = 0;   ///< lanes whose addresses the texture-addressing unit processes per clock;
                                          ///< lanes of one instruction that ask for the same nearest-level line merge
  bool in_order_returns = false;          ///< vector memory data leave one in-order queue per CU (RDNA 3)
  WaitCounters wait_counters = WaitCounters::Split;
  bool scalar_returns_in_order = false;   ///< scalar loads decrement their counter in request order (else as they return)
  /// Per request kind (load, sample, LDS, scalar; program.h RequestKind): the most requests its counter can count
  /// (combined counters: vmcnt takes the loads' limit, lgkmcnt the LDS ops'). A wave whose counter is full stalls at
  /// its next request of that counter until one returns.
  std::array<uint32_t, 4> counter_limits{};
};

struct LdsConfig {
  uint32_t latency = 0;      ///< cycles from a DS_BVH_STACK op entering the LDS to its result
  uint32_t busy_cycles = 0;  ///< cycles one wave's stack op occupies the CU's LDS (its bandwidth share)
};

enum class VgprAllocation { Static, Dynamic };

struct VgprConfig {
  VgprAllocation mode = VgprAllocation::Static;
  uint32_t static_granule = 0;      ///< static allocation granule in VGPRs
  uint32_t block_vgprs = 0;         ///< dynamic block size (16 or 32 on RDNA 4)
  uint32_t max_blocks = 0;          ///< most blocks one wave may hold (8)
  uint32_t dynamic_wave_limit = 0;  ///< SQ_DYN_VGPR wave limit: slots per SIMD, each owning one block
  bool deadlock_avoidance = false;  ///< keep max_blocks - 1 blocks that only one wave at a time may draw on
  uint32_t alloc_cycles = 0;        ///< cycles an S_ALLOC_VGPR takes after issue (it waits for idle)
  uint32_t retry_cycles = 0;        ///< cycles between a failed S_ALLOC_VGPR and the retry (busy-wait loop)
};

/// One phase of the kernel. A wave allocates `vgprs` before the phase (dynamic mode: S_ALLOC_VGPR to that
/// size, growing or shrinking), waits at a workgroup barrier if `barrier`, then runs the traversal loop (if
/// `traversal`) or `alu_cycles` of instructions followed by `wait_cycles` of latency.
struct PhaseConfig {
  std::string name;
  uint32_t vgprs = 0;
  uint32_t alu_cycles = 0;
  uint32_t wait_cycles = 0;
  bool traversal = false;
  bool barrier = false;
};

struct KernelConfig {
  std::vector<PhaseConfig> phases;  ///< in order; exactly one is the traversal loop
  uint32_t loop_alu_cycles = 0;     ///< other instructions per traversal-loop iteration
  uint32_t rays_per_lane = 0;       ///< independent rays each lane traverses interleaved (software pipelining)
  uint32_t workgroup_waves = 0;     ///< waves launched together that share barriers
  bool warm_caches = false;         ///< an untimed pass over the same rays fills the caches before the timed run

  /// The largest `vgprs` of any phase: what static allocation reserves for the whole wave.
  [[nodiscard]] uint32_t peak_vgprs() const;
};

/// The whole GPU the model runs (docs/machine-model.md, "A whole GPU"): shader engines of shader arrays of CUs, each
/// CU as compute_unit describes it. Workgroups are dealt to the CUs in turn over engines, then arrays, then CUs; every
/// CU of `simulated_shader_arrays` shader arrays spread evenly over that order is simulated (the GPU-wide levels'
/// bandwidth, capacity and misses in flight scaled to their share; docs "Sampling") and the rest stand idle.
struct GpuConfig {
  std::string name;                       ///< e.g. "AMD Radeon RX 9070"
  uint32_t clock_mhz = 0;                 ///< shader clock the per-second figures assume
  uint32_t shader_engines = 0;
  uint32_t shader_arrays_per_engine = 0;
  uint32_t cus_per_shader_array = 0;
  uint32_t simulated_shader_arrays = 0;   ///< 1..shader_arrays(): the sample, whole shader arrays

  [[nodiscard]] uint32_t shader_arrays() const { return shader_engines * shader_arrays_per_engine; }
  [[nodiscard]] uint32_t compute_units() const { return shader_arrays() * cus_per_shader_array; }
  [[nodiscard]] uint32_t simulated_cus() const { return simulated_shader_arrays * cus_per_shader_array; }
};

struct MachineConfig {
  std::string name;         ///< preset name or file path it came from
  std::string description;
  ComputeUnitConfig compute_unit;
  RayAcceleratorConfig ray_accelerator;
  MemoryConfig memory;
  LdsConfig lds;
  VgprConfig vgpr;
  KernelConfig kernel;
  uint64_t max_cycles = 0;  ///< limits.max_cycles: a run still going at this cycle stops (status CycleLimit)
  GpuConfig gpu;

  /// Throws hwbvh::Error(BadInput), naming `name` and the offending key (e.g. "memory.line_bytes"), if a value is
  /// out of range or the kernel cannot run at all (no slot fits its VGPRs, a phase needs more than max_blocks).
  /// A default-constructed config is not valid: start from a preset.
  void validate() const;
};

/// "" when `config`'s hardware reads `target`'s nodes (RayAcceleratorConfig::node_formats), else the label every
/// output of such a run carries, e.g. "hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not this
/// blob's rtip31". `traced` replaces "this blob's <target>" when the trace needs `target`'s hardware for another
/// reason than its nodes (compare's BVH4x2 row: RT IP 3.1's dual intersect on rtip20 nodes).
[[nodiscard]] std::string hypothetical_note(const MachineConfig& config, std::string_view target,
                                            std::string_view traced = {});

/// What a table's row or cell of a run with hypothetical_note `note` appends to its name: " (hypothetical)", or ""
/// when the note is empty.
[[nodiscard]] std::string_view hypothetical_mark(std::string_view note);

/// The names of the built-in presets (compiled in from presets/*.json), sorted.
[[nodiscard]] std::vector<std::string> builtin_machine_presets();

/// A built-in preset by name, or else a JSON preset file at that path. The result is validated.
/// Throws hwbvh::Error(BadInput) naming the file (or preset) and the problem: unknown name and no such file,
/// malformed JSON, a missing, unknown or mistyped key, an invalid value.
[[nodiscard]] MachineConfig load_machine_preset(std::string_view name_or_path);

/// load_machine_preset with one parameter replaced, as `hwbvh machine sweep` varies it. `key` is a preset key,
/// "section.key" (e.g. "ray_accelerator.box_tests_per_clock"), a nested section's "section.inner.key" or, in an array
/// of named objects, "memory.levels[NAME].key"
/// or "kernel.phases[NAME].key"; `value` is written as on a command line:
/// a whole number, true or false, or a word such as "dynamic". The result is validated. Throws
/// hwbvh::Error(BadInput) naming the preset, the key and the problem (no such key, a list or section, a bad value).
[[nodiscard]] MachineConfig load_machine_preset(std::string_view name_or_path, std::string_view key,
                                                std::string_view value);

/// One parameter replaced: a preset key and its value as written on a command line (see above).
struct ParameterOverride {
  std::string key;
  std::string value;
};
/// load_machine_preset with every parameter of `overrides` replaced, in order (a later one of the same key wins).
/// Throws as above, naming the first bad key; the origin in messages lists every override.
[[nodiscard]] MachineConfig load_machine_preset(std::string_view name_or_path,
                                                std::span<const ParameterOverride> overrides);

/// One single value of a resolved preset (its base applied), as `machine sweep` and `machine sensitivity` address it.
struct MachinePresetParameter {
  std::string key;     ///< e.g. "memory.levels[L0].line_bytes", "memory.scalar_cache.bytes", "vgpr_allocation.mode"
  std::string value;   ///< as a command line writes it: "64", "true", "split"
  std::string unit;    ///< "" when the value is plain
  std::string source;  ///< "" when the value is plain
};

/// Every single value of the preset, in file order, each keyed as load_machine_preset(name, key, value) takes it
/// (names and descriptions are not parameters). Throws hwbvh::Error(BadInput) as load_machine_preset.
[[nodiscard]] std::vector<MachinePresetParameter> machine_preset_parameters(std::string_view name_or_path);

/// The unit the preset documents for `key` (as above), or "" when its value is plain. Throws as above.
[[nodiscard]] std::string machine_parameter_unit(std::string_view name_or_path, std::string_view key);

/// Parses preset JSON text; `origin` names it in errors and becomes MachineConfig::name. The result is validated.
[[nodiscard]] MachineConfig parse_machine_preset(std::string_view json, const std::string& origin);

}  // namespace hwbvh::emu
