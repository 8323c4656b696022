#pragma once
// The machine model: a deterministic discrete-event model of a GPU's compute units running the ray-tracing kernel
// over the node sequences the wavefront emulator recorded (TraceOptions::record_node_sequence), or wave programs
// (program.h, on one CU) on the same engine. It does not traverse again: the sequences say which node every lane
// intersects at every wave iteration; the model says how long that takes when waves share each CU's SIMDs, ray
// accelerator, L0 and LDS, the CUs of a shader array share its L1 and all CUs the L2, MALL and DRAM (config.h
// GpuConfig; docs/machine-model.md, "A whole GPU"), and how many waves fit under static or dynamic VGPR allocation.
// Parameters: config.h; allocation rules: vgpr.h; the model and its assumptions: docs/machine-model.md. Outputs are
// outputs of a model, not hardware measurements.
//
// A wave's life: its workgroup is dealt to a CU -> launch (a free slot; static mode also needs its peak VGPRs,
// dynamic mode starts with one block)
// -> for each phase: [dynamic: S_ALLOC_VGPR to the phase's need, busy-waiting on failure] [barrier] then either
// ALU work or the traversal loop -> end (all registers and the slot return; the CU's next queued wave launches).
// One loop iteration: per ray slot with an active lane, one intersect instruction (every active lane fetches its
// step's nodes through the memory hierarchy, then the ray accelerator tests them: the boxes and triangles each target's
// emulator recorded per node, node_fetch.h) -> s_wait_bvhcnt 0 -> one DS_BVH_STACK op per ray slot -> wait -> loop
// ALU instructions.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/core/progress.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/node_fetch.h"

namespace hwbvh::emu {

enum class MachineStatus {
  Completed,   ///< every wave ran to its end
  Deadlocked,  ///< every resident wave is blocked on VGPR allocation or a barrier and nothing can free registers
  CycleLimit,  ///< stopped at MachineConfig::max_cycles while still making progress
};

[[nodiscard]] const char* to_string(MachineStatus status);

/// One memory level's traffic in a run (MachineResult::memory_levels, in MemoryConfig::levels order).
struct MemoryLevelResult {
  enum class Kind {
    Cache,        ///< holds lines: serves the ones it holds, merges requests for lines in flight, passes on the rest
    MergeBuffer,  ///< no storage (RDNA 4's L1): only merges requests for lines in flight, passes on the rest
    Memory,       ///< the last level: serves every request
  };
  std::string name;
  Kind kind = Kind::Cache;
  uint64_t port_bytes_per_clock = 0;  ///< the whole GPU's: bytes_per_clock x the level's instances on the GPU
  double simulated_share = 1.0;       ///< the simulated CUs' share of the GPU's CUs (GpuConfig::simulated_cus() / CUs)
  // The counts are the simulated CUs' (summed over the level's simulated instances).
  uint64_t requests = 0;       ///< line requests that reached this level
  uint64_t hits = 0;           ///< served from a line it held (a cache; the memory: every request)
  uint64_t merged = 0;         ///< joined a fill of the same line already in flight (as a miss-status register does)
  uint64_t misses = 0;         ///< passed on to the next level (one line fill each)
  uint64_t first_touches = 0;  ///< of the misses, lines this cache had never held before (cold misses)
  uint64_t bytes = 0;          ///< bytes it served (to the wave for the nearest level, else line fills of the one above)

  [[nodiscard]] uint64_t served() const { return hits + merged; }  ///< requests this level served itself
  [[nodiscard]] double served_fraction() const;                      ///< served / requests; 0 without requests
  /// The whole GPU's bytes per clock: bytes / cycles / simulated_share; 0 without cycles.
  [[nodiscard]] double bytes_per_clock(uint64_t cycles) const;
  [[nodiscard]] double bandwidth_use(uint64_t cycles) const;  ///< bytes_per_clock / port_bytes_per_clock
};

/// "cache", "merge_buffer" or "memory".
[[nodiscard]] const char* to_string(MemoryLevelResult::Kind kind);

/// A run's figures for the whole GPU (docs/machine-model.md, "Whole-GPU figures"): the simulated CUs' work times
/// compute_units / simulated_cus, at clock_mhz.
struct GpuFigures {
  std::string name;                 ///< GpuConfig::name
  uint32_t compute_units = 0;
  uint32_t simulated_shader_arrays = 0;
  uint32_t simulated_cus = 0;       ///< every CU of the simulated shader arrays
  uint32_t clock_mhz = 0;
  double box_tests_per_second = 0.0;
  double triangle_tests_per_second = 0.0;
  double rays_per_second = 0.0;     ///< rays completed
  double ra_utilization = 0.0;      ///< the ray accelerators' busy cycles / (cycles x simulated CUs)
};

/// Outputs of one run (model outputs, not measurements). Rates are 0 when no cycle elapsed. A kernel run counts the
/// simulated CUs' rays, waves and work; per-clock rates and utilizations are per CU (their average).
struct MachineResult {
  MachineStatus status = MachineStatus::Completed;
  std::string message;                  ///< one line saying how the run ended
  bool deadlock = false;                ///< status == Deadlocked
  uint64_t cycles = 0;                  ///< cycle the last wave ended (or the run stopped)
  uint64_t rays = 0;                    ///< rays dealt to the simulated CUs
  uint64_t rays_completed = 0;          ///< rays whose wave ran to its end
  uint64_t waves = 0;                   ///< machine waves (rays_per_lane recorded waves each)
  uint64_t waves_completed = 0;
  double rays_per_1000_cycles = 0.0;    ///< rays_completed x 1000 / cycles

  uint64_t box_tests = 0;               ///< the fetched nodes' NodeFetch::box_tests (8 per RT IP 3.1 box node)
  uint64_t triangle_tests = 0;          ///< the fetched nodes' NodeFetch::triangle_tests
  uint64_t ra_busy_cycles = 0;          ///< cycles the ray accelerator was testing
  double ra_box_utilization = 0.0;      ///< box_tests / (cycles x box_tests_per_clock)
  double ra_triangle_utilization = 0.0; ///< triangle_tests / (cycles x triangle_tests_per_clock)
  double ra_busy_fraction = 0.0;        ///< ra_busy_cycles / cycles
  double box_tests_per_clock = 0.0;     ///< box_tests / cycles, against ray_accelerator.box_tests_per_clock
  double triangle_tests_per_clock = 0.0;  ///< triangle_tests / cycles, against triangle_tests_per_clock

  uint32_t wave_limit_per_simd = 0;     ///< static: VGPR-limited occupancy; dynamic: the SQ_DYN_VGPR wave limit
  double average_active_waves_per_simd = 0.0;  ///< resident waves, time-averaged over the run and the SIMDs
  uint32_t peak_active_waves_per_simd = 0;     ///< most resident waves on one SIMD at any time

  uint64_t waves_waited_on_vgprs = 0;   ///< waves with at least one failed S_ALLOC_VGPR
  uint64_t vgpr_wait_cycles = 0;        ///< wave-cycles from a first failed request to the success (or the end)
  uint64_t failed_vgpr_allocations = 0; ///< failed S_ALLOC_VGPR attempts, retries included
  uint32_t waves_blocked_at_end = 0;    ///< deadlock: resident waves blocked on allocation or a barrier

  uint64_t node_fetches = 0;            ///< nodes fetched (one per lane step, two for a BVH4x2 dual step)
  uint64_t cache_hits = 0;              ///< fetches the nearest level served whole (lines held or in flight)
  double cache_hit_rate = 0.0;
  double mean_node_fetch_latency = 0.0; ///< cycles from lookup to data return, in-order delay included
  uint64_t lane_line_requests = 0;      ///< nearest-level lines the lanes of intersect instructions asked for
  uint64_t merged_lane_requests = 0;    ///< of those, merged with another lane's request of the same instruction
                                        ///< (the rest reached the nearest level)

  std::vector<MemoryLevelResult> memory_levels;  ///< traffic per level, nearest first (node fetches and loads)
  GpuFigures gpu;  ///< kernel runs: the whole GPU's figures (empty for wave programs)
};

/// The whole GPU's figures of a kernel run on `gpu`.
[[nodiscard]] GpuFigures gpu_figures(const MachineResult& result, const GpuConfig& gpu);

/// Per recorded wave of a dispatch of `waves` waves (trace_rays' grouping): whether a simulated CU runs it. The
/// others' rays need not be traced (their node sequences may be empty): the model never runs them.
[[nodiscard]] std::vector<bool> simulated_waves(const MachineConfig& config, size_t waves);

/// Runs the model. node_sequences[i] is ray i's node fetches in step order (TraceOutput); rays form waves of 32 in
/// order (as trace_rays groups them), and kernel.rays_per_lane consecutive waves form one machine wave.
/// Validates `config` (hwbvh::Error(BadInput)). Never hangs: a deadlock is detected when it happens, and a run
/// stops at config.max_cycles.
[[nodiscard]] MachineResult run_machine_model(const MachineConfig& config,
                                              std::span<const std::vector<NodeFetch>> node_sequences);

/// Same, with the waves trace_rays was given: wave i is rays [wave_begin[i], wave_begin[i + 1]) (the last one ends
/// at node_sequences.size()), 1..32 rays each. Throws hwbvh::Error(BadInput) for other boundaries. `progress` hears
/// "machine model" (waves completed of the waves dealt to the simulated CUs); the result is the same without it.
[[nodiscard]] MachineResult run_machine_model(const MachineConfig& config,
                                              std::span<const std::vector<NodeFetch>> node_sequences,
                                              std::span<const uint32_t> wave_begin,
                                              const ProgressCallback& progress = {});

/// Same, with each workgroup's dispatch slot given (0..CUs-1; workgroups are rays_per_lane x workgroup_waves
/// consecutive waves): a frame of several dispatches, or only the simulated CUs' waves of one (the others'
/// workgroups left out), as `machine reproduce` gives them. Throws hwbvh::Error(BadInput) for a wrong count or slot.
[[nodiscard]] MachineResult run_machine_model(const MachineConfig& config,
                                              std::span<const std::vector<NodeFetch>> node_sequences,
                                              std::span<const uint32_t> wave_begin,
                                              std::span<const uint32_t> workgroup_slot,
                                              const ProgressCallback& progress = {});

/// The result as a JSON object (compact text), labelled as a model output, with the preset name.
[[nodiscard]] std::string to_json(const MachineResult& result, const MachineConfig& config);

}  // namespace hwbvh::emu
