#pragma once
// The machine model's figures as `hwbvh stats`, `compare` and `report` show them (docs/machine-model.md,
// "Outputs"): one list, so that the text tables, the HTML and the JSON say the same things.
#include <string>
#include <vector>

#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"

namespace hwbvh::stats {

struct MachineFigure {
  std::string label;   ///< for label / value tables, e.g. "RA box tests per clock (peak 8)"
  std::string column;  ///< short table header, e.g. "box/clk"
  std::string value;   ///< plain text
};

enum class MachineFigureSet {
  All,         ///< everything a run reports (stats, report)
  Throughput,  ///< status, cycles, ray-accelerator and memory figures (one row per run in compare tables)
};

/// A run's figures: status, cycles, rays per 1000 cycles; box and triangle tests per clock against the preset's
/// peak rates (utilisation); per memory level its hit rate and bandwidth in bytes per clock; the whole GPU's box and
/// triangle tests, rays per second and ray-accelerator utilization (MachineResult::gpu). `All` adds the
/// ray accelerator's busy share, occupancy, VGPR waits, deadlock and the mean node-fetch latency.
std::vector<MachineFigure> machine_figures(const emu::MachineResult& result, const emu::MachineConfig& config,
                                           MachineFigureSet set);

/// The sample a run simulated, as the outputs name it: "1 shader array", "8 shader arrays".
std::string simulated_arrays_text(const emu::GpuFigures& gpu);

}  // namespace hwbvh::stats
