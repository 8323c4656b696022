#pragma once
// One cold compute unit of an otherwise idle GPU: the preset's CU and memory, with the GPU cut to that one CU (every
// shared level its alone) and no warm-up, so that tests can pin a CU's mechanisms cycle by cycle.
#include <string_view>

#include "hwbvh/emu/machine/config.h"

namespace hwbvh::emu {

inline MachineConfig one_cold_cu(MachineConfig c) {
  c.gpu.shader_engines = c.gpu.shader_arrays_per_engine = c.gpu.cus_per_shader_array = c.gpu.simulated_shader_arrays = 1;
  c.kernel.warm_caches = false;
  c.validate();
  return c;
}

template <class... Args>
MachineConfig one_cold_cu(std::string_view preset, Args... parameter) {
  return one_cold_cu(load_machine_preset(preset, parameter...));
}

}  // namespace hwbvh::emu
