#include "hwbvh/stats/machine_output.h"

#include <fmt/format.h>


namespace hwbvh::stats {
namespace {

std::string percent(double share) { return fmt::format("{:.1f}%", 100.0 * share); }

// Tests per second with an SI prefix: "615.2 G".
std::string per_second(double value) {
  return value >= 1e12 ? fmt::format("{:.2f} T", value / 1e12) : fmt::format("{:.1f} G", value / 1e9);
}

// What one memory level did, in terms that fit what it is: a cache serves, merges and misses (and says how many
// misses were first touches, which no cache can avoid); a buffer without storage only merges; the memory serves all.
// A cache or buffer that no request reached says so instead of a share of nothing ("0.0%").
void level_figures(const emu::MemoryLevelResult& l, uint64_t cycles, bool all, std::vector<MachineFigure>& f) {
  using Kind = emu::MemoryLevelResult::Kind;
  const std::string& n = l.name;
  if (l.requests == 0 && l.kind != Kind::Memory) {
    f.push_back({n + (l.kind == Kind::Cache ? " served here" : " merged (holds no lines)"),
                 n + (l.kind == Kind::Cache ? " served" : " merged"),
                 all ? "no requests (the levels above served every line)" : "no requests"});
  } else {
    switch (l.kind) {
      case Kind::Cache:
        f.push_back({n + " served here", n + " served",
                     all ? fmt::format("{} ({} of {} line requests: {} hits, {} merged with fills in flight)",
                                       percent(l.served_fraction()), l.served(), l.requests, l.hits, l.merged)
                         : percent(l.served_fraction())});
        if (all) {
          f.push_back({n + " misses (first touches)", n + " misses", fmt::format("{} ({})", l.misses, l.first_touches)});
        }
        break;
      case Kind::MergeBuffer:
        f.push_back({n + " merged (holds no lines)", n + " merged",
                     all ? fmt::format("{} of {} line requests merged with fills in flight, {} passed on", l.merged,
                                       l.requests, l.misses)
                         : fmt::format("{} of {}", l.merged, l.requests)});
        break;
      case Kind::Memory: f.push_back({n + " lines served", n + " lines", fmt::format("{}", l.requests)}); break;
    }
  }
  f.push_back({n + " bandwidth", n + " B/clk",
               fmt::format("{:.1f} B/clock ({} of {})", l.bytes_per_clock(cycles), percent(l.bandwidth_use(cycles)),
                           l.port_bytes_per_clock)});
}

}  // namespace

std::string simulated_arrays_text(const emu::GpuFigures& gpu) {
  return fmt::format("{} shader array{}", gpu.simulated_shader_arrays, gpu.simulated_shader_arrays == 1 ? "" : "s");
}

std::vector<MachineFigure> machine_figures(const emu::MachineResult& m, const emu::MachineConfig& c,
                                           MachineFigureSet set) {
  const bool all = set == MachineFigureSet::All;
  std::vector<MachineFigure> f;
  f.push_back({"status", "status", emu::to_string(m.status)});
  f.push_back({"cycles", "cycles", fmt::format("{}", m.cycles)});
  f.push_back({"rays per 1000 cycles", "rays/kclk", fmt::format("{:.2f}", m.rays_per_1000_cycles)});
  f.push_back({fmt::format("RA box tests per clock (peak {})", c.ray_accelerator.box_tests_per_clock), "box/clk",
               fmt::format("{:.2f} ({})", m.box_tests_per_clock, percent(m.ra_box_utilization))});
  f.push_back({fmt::format("RA triangle tests per clock (peak {})", c.ray_accelerator.triangle_tests_per_clock),
               "tri/clk", fmt::format("{:.2f} ({})", m.triangle_tests_per_clock, percent(m.ra_triangle_utilization))});
  if (all) {
    f.push_back({"RA busy", "RA busy", percent(m.ra_busy_fraction)});
    f.push_back({"wave limit per SIMD", "wave limit", fmt::format("{}", m.wave_limit_per_simd)});
    f.push_back({"active waves per SIMD avg / peak", "waves",
                 fmt::format("{:.2f} / {}", m.average_active_waves_per_simd, m.peak_active_waves_per_simd)});
    f.push_back({"waves waiting on VGPRs", "VGPR waits",
                 fmt::format("{} ({} wave-cycles)", m.waves_waited_on_vgprs, m.vgpr_wait_cycles)});
    f.push_back({"failed VGPR allocations", "failed allocs", fmt::format("{}", m.failed_vgpr_allocations)});
    f.push_back({"deadlock detected", "deadlock", m.deadlock ? "yes" : "no"});
  }
  // Whole node fetches the nearest level served (every line held or in flight); the per-level rates count lines.
  if (all) f.push_back({"node fetches the L0 served whole", "fetch hits", percent(m.cache_hit_rate)});
  if (all) {
    f.push_back({"lane line requests (merged)", "lane merges",
                 fmt::format("{} ({} merged)", m.lane_line_requests, m.merged_lane_requests)});
  }
  for (const emu::MemoryLevelResult& l : m.memory_levels) level_figures(l, m.cycles, all, f);
  if (all) f.push_back({"mean node-fetch latency", "fetch latency", fmt::format("{:.1f} cycles", m.mean_node_fetch_latency)});
  const emu::GpuFigures& g = m.gpu;
  if (all) {
    f.push_back({"whole GPU", "GPU",
                 fmt::format("{}: {} CUs ({} simulated: {}) x {} MHz", g.name, g.compute_units, g.simulated_cus,
                             simulated_arrays_text(g), g.clock_mhz)});
  }
  f.push_back({"  box tests per second", "GPU box/s", per_second(g.box_tests_per_second)});
  f.push_back({"  triangle tests per second", "GPU tri/s", per_second(g.triangle_tests_per_second)});
  f.push_back({"  rays per second", "GPU rays/s", per_second(g.rays_per_second)});
  f.push_back({"  ray-accelerator utilization", "GPU RA busy", percent(g.ra_utilization)});
  return f;
}

}  // namespace hwbvh::stats
