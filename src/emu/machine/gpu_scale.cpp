#include "hwbvh/emu/machine/gpu_scale.h"

#include <nlohmann/json.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/core/json_text.h"

namespace hwbvh::emu {

void require_gpu(const MachineConfig& config) {
  if (config.gpu.compute_units == 0) {
    throw_bad_input(config.name, "machine preset has no \"gpu\" section (compute_units, clock_mhz) to scale to a GPU");
  }
}

GpuEstimate gpu_estimate(const MachineResult& result, const MachineConfig& config) {
  require_gpu(config);
  GpuEstimate e;
  e.gpu = config.gpu.name;
  e.compute_units = config.gpu.compute_units;
  e.clock_mhz = config.gpu.clock_mhz;
  const double clocks_per_second = 1e6 * config.gpu.clock_mhz * config.gpu.compute_units;
  e.box_tests_per_second = result.box_tests_per_clock * clocks_per_second;
  e.triangle_tests_per_second = result.triangle_tests_per_clock * clocks_per_second;
  e.rays_per_second = result.rays_per_1000_cycles / 1000.0 * clocks_per_second;
  return e;
}

std::string to_json(const GpuEstimate& e) {
  const nlohmann::ordered_json j = {
      {"model_estimate", "one CU's figures x compute_units at clock_mhz; no contention between CUs modelled"},
      {"gpu", e.gpu},
      {"compute_units", e.compute_units},
      {"clock_mhz", e.clock_mhz},
      {"box_tests_per_second", e.box_tests_per_second},
      {"triangle_tests_per_second", e.triangle_tests_per_second},
      {"rays_per_second", e.rays_per_second},
  };
  return json_text(j);
}

}  // namespace hwbvh::emu
