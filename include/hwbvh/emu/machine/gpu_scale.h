#pragma once
// A compute unit's machine-model figures scaled to a whole GPU, so that they can sit next to a profiler's figures
// (box and triangle tests per second, rays per second). A model's estimate, no more: the CU's rates per clock times
// the preset's CU count at its clock (MachineConfig::gpu); no contention between CUs (shared L2, Infinity Cache,
// DRAM bandwidth) is modelled. docs/machine-model.md, "Scaling to a GPU".
#include <cstdint>
#include <string>

#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"

namespace hwbvh::emu {

struct GpuEstimate {
  std::string gpu;                          ///< GpuConfig::name
  uint32_t compute_units = 0;
  uint32_t clock_mhz = 0;
  double box_tests_per_second = 0.0;       ///< box_tests_per_clock x compute_units x clock
  double triangle_tests_per_second = 0.0;  ///< triangle_tests_per_clock x compute_units x clock
  double rays_per_second = 0.0;            ///< rays_completed / cycles x compute_units x clock
};

/// Throws hwbvh::Error(BadInput) naming the preset when it has no "gpu" section to scale to.
void require_gpu(const MachineConfig& config);

/// Throws as require_gpu.
[[nodiscard]] GpuEstimate gpu_estimate(const MachineResult& result, const MachineConfig& config);

/// The estimate as a JSON object (compact text), labelled as a model's estimate.
[[nodiscard]] std::string to_json(const GpuEstimate& estimate);

}  // namespace hwbvh::emu
