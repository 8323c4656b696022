#include "hwbvh/emu/machine/config.h"

#include <algorithm>
#include <set>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/vgpr.h"

namespace hwbvh::emu {
namespace {

// Generous bounds that keep a run's state small; the hardware values are far inside them.
constexpr uint32_t kMaxSimds = 64;
constexpr uint32_t kMaxWaveSlots = 64;
constexpr uint32_t kMaxRaysPerLane = 16;
constexpr uint32_t kMaxInstructionVgprs = 256;  // an instruction addresses at most 256 VGPRs (machine-model.md §8.1)
constexpr uint32_t kMaxWays = 1024;             // a set is searched linearly
constexpr uint64_t kMaxLevelLines = 1 << 24;    // the model keeps every line of every level (16 bytes each)
constexpr uint32_t kMaxGpuUnits = 256;          // engines, arrays per engine, CUs per array

// One memory level's keys (validate() passes its fail and in_range).
template <class Fail, class InRange>
void validate_level(const MemoryLevelConfig& l, const std::string& key, bool memory_level, uint32_t previous_latency,
                    const Fail& fail, const InRange& in_range) {
  const uint32_t line = l.line_bytes;
  if (line < 8 || (line & (line - 1)) != 0) fail(key + ".line_bytes", "must be a power of two of at least 8");
  in_range(key + ".ways", l.ways, 1, kMaxWays);
  if (memory_level && l.bytes != 0) fail(key + ".bytes", "must be 0: the last level is the memory, it holds all");
  if (l.bytes % (uint64_t{line} * l.ways) != 0) fail(key + ".bytes", "must be a multiple of line_bytes x ways");
  if (l.bytes / line > kMaxLevelLines) {
    fail(key + ".bytes", "holds more than " + std::to_string(kMaxLevelLines) + " lines, more than the model keeps");
  }
  // Latencies are load-to-use, so a farther level cannot be faster than a nearer one.
  in_range(key + ".hit_latency", l.hit_latency, std::max<uint32_t>(1, previous_latency), UINT32_MAX);
  in_range(key + ".bytes_per_clock", l.bytes_per_clock, 1, UINT32_MAX);
  in_range(key + ".misses_in_flight", l.misses_in_flight, 1, UINT32_MAX);
}

}  // namespace

const char* to_string(SharedBy shared_by) {
  switch (shared_by) {
    case SharedBy::ComputeUnit: return "cu";
    case SharedBy::ShaderArray: return "shader_array";
    case SharedBy::Gpu: return "gpu";
  }
  return "unknown";
}

uint32_t KernelConfig::peak_vgprs() const {
  uint32_t peak = 0;
  for (const PhaseConfig& p : phases) peak = std::max(peak, p.vgprs);
  return peak;
}

void MachineConfig::validate() const {
  const auto fail = [&](const std::string& key, const std::string& problem) {
    throw_bad_input(name, "machine parameter '" + key + "' " + problem);
  };
  const auto in_range = [&](const std::string& key, uint64_t value, uint64_t lo, uint64_t hi) {
    if (value < lo || value > hi) {
      fail(key, "is " + std::to_string(value) + ", must be in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
  };
  constexpr uint64_t kAny = UINT32_MAX;

  in_range("compute_unit.simds", compute_unit.simds, 1, kMaxSimds);
  in_range("compute_unit.wave_slots", compute_unit.wave_slots, 1, kMaxWaveSlots);
  in_range("compute_unit.vgprs_per_lane", compute_unit.vgprs_per_lane, 1, kAny);
  in_range("compute_unit.issue_burst", compute_unit.issue_burst, 1, kAny);
  if (ray_accelerator.node_formats.empty()) fail("ray_accelerator.node_formats", "must name at least one target");
  for (const std::string& format : ray_accelerator.node_formats) {
    if (format != "rtip31" && format != "rtip20" && format != "xe3") {
      fail("ray_accelerator.node_formats", "names '" + format + "', not a target (rtip31, rtip20, xe3)");
    }
  }
  in_range("ray_accelerator.box_tests_per_clock", ray_accelerator.box_tests_per_clock, 1, kAny);
  in_range("ray_accelerator.triangle_tests_per_clock", ray_accelerator.triangle_tests_per_clock, 1, kAny);
  in_range("ray_accelerator.bvhcnt_limit", ray_accelerator.bvhcnt_limit, 1, kAny);
  in_range("ray_accelerator.queue_depth", ray_accelerator.queue_depth, 1, kAny);
  in_range("ray_accelerator.result_lanes_per_clock", ray_accelerator.result_lanes_per_clock, 1, kAny);
  in_range("memory.address_lanes_per_clock", memory.address_lanes_per_clock, 1, kAny);
  const std::array<const char*, 4> limit_keys{"memory.load_counter_limit", "memory.sample_counter_limit",
                                              "memory.lds_counter_limit", "memory.scalar_counter_limit"};
  for (size_t i = 0; i < limit_keys.size(); ++i) in_range(limit_keys[i], memory.counter_limits[i], 1, kAny);

  if (memory.levels.size() < 2) fail("memory.levels", "must list at least one cache level and the memory");
  uint32_t previous_latency = 0;
  SharedBy previous_sharing = SharedBy::ComputeUnit;
  for (size_t i = 0; i < memory.levels.size(); ++i) {
    const MemoryLevelConfig& l = memory.levels[i];
    const std::string key = "memory.levels[" + std::to_string(i) + "]";
    if (l.name.empty()) fail(key + ".name", "must not be empty");
    validate_level(l, key, i + 1 == memory.levels.size(), previous_latency, fail, in_range);
    previous_latency = l.hit_latency;
    // A level is shared by at least the units that share the one before it.
    if (l.shared_by < previous_sharing) fail(key + ".shared_by", "is narrower than the level before it");
    previous_sharing = l.shared_by;
  }
  if (memory.levels[0].shared_by != SharedBy::ComputeUnit) fail("memory.levels[0].shared_by", "must be \"cu\"");
  if (memory.scalar_cache.bytes > 0) {
    validate_level(memory.scalar_cache, "memory.scalar_cache", false, 0, fail, in_range);
    if (memory.scalar_cache.hit_latency > memory.levels[1].hit_latency) {
      fail("memory.scalar_cache.hit_latency", "is longer than that of the level its misses go to");
    }
  }

  if (kernel.phases.empty()) fail("kernel.phases", "must list at least one phase");
  std::set<std::string> names;
  for (const PhaseConfig& p : kernel.phases) {
    const std::string key = "kernel.phases[" + p.name + "]";
    if (p.name.empty()) fail("kernel.phases", "has a phase without a name");
    if (!names.insert(p.name).second) fail(key, "appears twice");
    in_range(key + ".vgprs", p.vgprs, 0, kMaxInstructionVgprs);
    if (p.traversal && (p.alu_cycles != 0 || p.wait_cycles != 0)) {
      fail(key, "is the traversal loop: its work is kernel.loop_alu_cycles per iteration, not alu/wait_cycles");
    }
  }
  if (std::count_if(kernel.phases.begin(), kernel.phases.end(), [](const PhaseConfig& p) { return p.traversal; }) !=
      1) {
    fail("kernel.phases", "must have exactly one phase with \"traversal\": true");
  }
  in_range("kernel.rays_per_lane", kernel.rays_per_lane, 1, kMaxRaysPerLane);

  uint32_t waves_per_simd = 0;
  if (vgpr.mode == VgprAllocation::Static) {
    in_range("vgpr_allocation.static_granule", vgpr.static_granule, 1, kAny);
    waves_per_simd = static_waves_per_simd(kernel.peak_vgprs(), vgpr.static_granule, compute_unit.vgprs_per_lane,
                                           compute_unit.wave_slots);
    if (waves_per_simd == 0) {
      fail("kernel.phases", "peak of " + std::to_string(kernel.peak_vgprs()) + " VGPRs does not fit the " +
                                std::to_string(compute_unit.vgprs_per_lane) + "-VGPR file");
    }
  } else {
    in_range("vgpr_allocation.block_vgprs", vgpr.block_vgprs, 1, kMaxInstructionVgprs);
    in_range("vgpr_allocation.max_blocks", vgpr.max_blocks, 1, kAny);
    in_range("vgpr_allocation.dynamic_wave_limit", vgpr.dynamic_wave_limit, 1, compute_unit.wave_slots);
    in_range("vgpr_allocation.retry_cycles", vgpr.retry_cycles, 1, kAny);  // time must advance between retries
    const uint64_t fixed = uint64_t{vgpr.dynamic_wave_limit} * vgpr.block_vgprs +
                           (vgpr.deadlock_avoidance ? uint64_t{vgpr.max_blocks - 1} * vgpr.block_vgprs : 0);
    if (fixed > compute_unit.vgprs_per_lane) {
      fail("vgpr_allocation.dynamic_wave_limit", "slots' blocks" +
                                                     std::string(vgpr.deadlock_avoidance ? " plus the reserve" : "") +
                                                     " need " + std::to_string(fixed) + " VGPRs, more than the file");
    }
    for (const PhaseConfig& p : kernel.phases) {
      if ((p.vgprs + vgpr.block_vgprs - 1) / vgpr.block_vgprs > vgpr.max_blocks) {
        fail("kernel.phases[" + p.name + "].vgprs", "needs more than max_blocks blocks of " +
                                                        std::to_string(vgpr.block_vgprs) + " VGPRs");
      }
    }
    waves_per_simd = vgpr.dynamic_wave_limit;
  }
  in_range("kernel.workgroup_waves", kernel.workgroup_waves, 1, uint64_t{waves_per_simd} * compute_unit.simds);
  in_range("limits.max_cycles", max_cycles, 1, UINT64_MAX);
  in_range("gpu.clock_mhz", gpu.clock_mhz, 1, kAny);
  in_range("gpu.shader_engines", gpu.shader_engines, 1, kMaxGpuUnits);
  in_range("gpu.shader_arrays_per_engine", gpu.shader_arrays_per_engine, 1, kMaxGpuUnits);
  in_range("gpu.cus_per_shader_array", gpu.cus_per_shader_array, 1, kMaxGpuUnits);
  in_range("gpu.simulated_shader_arrays", gpu.simulated_shader_arrays, 1, gpu.shader_arrays());
}

std::string_view hypothetical_mark(std::string_view note) { return note.empty() ? "" : " (hypothetical)"; }

std::string hypothetical_note(const MachineConfig& config, std::string_view target, std::string_view traced) {
  const std::vector<std::string>& formats = config.ray_accelerator.node_formats;
  if (std::find(formats.begin(), formats.end(), target) != formats.end()) return {};
  std::string reads;
  for (const std::string& f : formats) reads += (reads.empty() ? "" : " and ") + f;
  return "hypothetical: " + config.name + (config.gpu.name.empty() ? "" : " (" + config.gpu.name + ")") + " reads " +
         reads + " nodes, not " + (traced.empty() ? "this blob's " + std::string(target) : std::string(traced));
}

}  // namespace hwbvh::emu
