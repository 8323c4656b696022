// hwbvh machine sweep's library side and the machine figures stats, compare and report show: each sweep point is
// the machine model run with that value, utilisation is summed tests over summed cycles at the preset's peak, the
// plot draws what the table says, and bad parameters are refused before any work.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "fixtures/paths.h"
#include "hwbvh/core/error.h"
#include "hwbvh/stats/machine_output.h"
#include "hwbvh/stats/machine_sweep.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

SweepOptions sweep_options(std::vector<std::string> presets, std::string parameter, std::vector<std::string> values) {
  SweepOptions o;
  o.presets = std::move(presets);
  o.parameter = std::move(parameter);
  o.values = std::move(values);
  o.stats = test::small_stats_options();
  o.stats.kinds = {RayKind::Primary, RayKind::Shadow};
  return o;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MachineSweep, EachPointIsTheModelRunWithThatValue) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("rotated-objects.obj"));
  SweepOptions o = sweep_options({"rdna4"}, "memory.levels[L0].bytes", {"2048", "65536"});
  // 9 tiles a row, so that the simulated shader array's tiles (every eighth) fall in every column, not only the
  // frame's left edge.
  o.stats.width = 72;
  const SweepResult r = run_machine_sweep(bvh, o);
  EXPECT_EQ(r.unit, "bytes per CU");
  ASSERT_EQ(r.points.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(o.values[i]);
    StatsOptions so = o.stats;
    so.oracle = false;
    so.machine = emu::load_machine_preset("rdna4", "memory.levels[L0].bytes", o.values[i]);
    const StatsReport direct = run_stats(bvh, so);
    const SweepPoint& p = r.points[i];
    EXPECT_EQ(p.value, o.values[i]);
    EXPECT_EQ(p.config.memory.levels.at(0).bytes, std::stoul(o.values[i]));
    ASSERT_EQ(p.runs.size(), 2u);
    uint64_t cycles = 0, boxes = 0, triangles = 0;
    for (std::size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(p.runs[k].first, direct.kinds[k].kind);
      EXPECT_EQ(emu::to_json(p.runs[k].second, p.config), emu::to_json(*direct.kinds[k].machine, *so.machine));
      cycles += p.runs[k].second.cycles;
      boxes += p.runs[k].second.box_tests;
      triangles += p.runs[k].second.triangle_tests;
    }
    ASSERT_TRUE(p.cycles.has_value());
    EXPECT_EQ(*p.cycles, cycles);
    // Per CU: the 7 simulated CUs' tests (one shader array) over 7 CUs' peak rates (8 box, 2 triangle tests a clock).
    const double cu_cycles = static_cast<double>(cycles) * p.config.gpu.simulated_cus();
    EXPECT_EQ(p.config.gpu.simulated_cus(), 7u);
    EXPECT_DOUBLE_EQ(p.box_utilization, static_cast<double>(boxes) / (cu_cycles * 8));
    EXPECT_DOUBLE_EQ(p.triangle_utilization, static_cast<double>(triangles) / (cu_cycles * 2));
    EXPECT_LE(p.box_utilization, 1.0);
  }
  // A 2 KiB L0 holds 16 of the 128-byte nodes: it misses more, and the run is longer.
  EXPECT_LT(r.points[0].runs[0].second.memory_levels.at(0).served_fraction(),
            r.points[1].runs[0].second.memory_levels.at(0).served_fraction());
  EXPECT_GT(*r.points[0].cycles, *r.points[1].cycles);

  const std::string text = sweep_to_text(r);
  EXPECT_NE(text.find("sweep of memory.levels[L0].bytes (bytes per CU)"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(*r.points[1].cycles)), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(sweep_to_json(r));
  EXPECT_EQ(j["points"][1]["cycles"], *r.points[1].cycles);
  EXPECT_EQ(j["points"][0]["runs"][1]["ray_type"], "shadow");
  EXPECT_EQ(j["points"][0]["runs"][0]["memory_levels"][0]["name"], "L0");
}

TEST(MachineSweep, StackSizeRetracesTheRays) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("rotated-objects.obj"));
  const SweepResult r = run_machine_sweep(bvh, sweep_options({"rdna4"}, "stack_size", {"2", "16"}));
  EXPECT_EQ(r.unit, "entries");
  StatsOptions so = sweep_options({"rdna4"}, "", {}).stats;
  so.oracle = false;
  so.machine = emu::load_machine_preset("rdna4");
  so.trace.stack.size = 2;
  const StatsReport direct = run_stats(bvh, so);
  EXPECT_EQ(*r.points[0].cycles, direct.kinds[0].machine->cycles + direct.kinds[1].machine->cycles);
  // A two-entry stack loses entries and walks back: more steps, and another point than the 16-entry one. Cycles need
  // not rise: with the camera of issue 30 the two-entry run took 88,794 cycles, the 16-entry run 89,140.
  so.trace.stack.size = 16;
  const StatsReport sixteen = run_stats(bvh, so);
  EXPECT_GT(direct.kinds[0].totals.steps, sixteen.kinds[0].totals.steps);
  EXPECT_EQ(*r.points[1].cycles, sixteen.kinds[0].machine->cycles + sixteen.kinds[1].machine->cycles);
  EXPECT_NE(*r.points[0].cycles, *r.points[1].cycles);
  // More steps, so more accelerator work. (Not necessarily more cycles: on these small images the walked-back
  // parents are L0 hits, and the run is bound by first touches.)
  const auto busy = [](const SweepPoint& p) {
    uint64_t clocks = 0;
    for (const auto& run : p.runs) clocks += run.second.ra_busy_cycles;
    return clocks;
  };
  EXPECT_GT(busy(r.points[0]), busy(r.points[1]));
}

// A point that stops at the cycle limit has no cycles or utilisation: "-" in the table, left out of the plot's lines
// and marked on its axis.
TEST(MachineSweep, UnfinishedPointsAreShownAsSuchNeverAsCycles) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const SweepResult r = run_machine_sweep(bvh, sweep_options({"rdna4"}, "limits.max_cycles", {"300", "1000000000000"}));
  EXPECT_EQ(r.points[0].status, emu::MachineStatus::CycleLimit);
  EXPECT_FALSE(r.points[0].cycles.has_value());
  EXPECT_EQ(r.points[1].status, emu::MachineStatus::Completed);
  const std::vector<std::vector<std::string>> rows = sweep_rows(r);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"rdna4", "300", "-", "-", "-", "cycle_limit"}));
  EXPECT_EQ(rows[1][2], std::to_string(*r.points[1].cycles));
  const std::string svg = sweep_to_svg(r);
  EXPECT_EQ(count(svg, "<circle"), 2u);  // the completed point on the cycles line and on the utilisation line
  EXPECT_EQ(count(svg, ">cycle_limit</text>"), 1u);
  EXPECT_TRUE(nlohmann::json::parse(sweep_to_json(r))["points"][0]["cycles"].is_null());
}

TEST(MachineSweep, ThePlotHasLabelledAxesALegendAndIsDeterministic) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const SweepOptions o = sweep_options({"rdna4-dvgpr16"}, "vgpr_allocation.mode", {"static", "dynamic"});
  const SweepResult r = run_machine_sweep(bvh, o);
  const std::string svg = sweep_to_svg(r);
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  for (const char* text : {">vgpr_allocation.mode (static | dynamic)</text>", ">cycles (shader clocks, simulated GPU)</text>",
                           ">RA box-test utilisation (% of peak)</text>", ">cycles (left axis)</text>",
                           ">RA box-test utilisation (right axis)</text>", ">rdna4-dvgpr16</text>", ">static</text>",
                           ">dynamic</text>", "Outputs of a model, not hardware measurements"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 4u);
  EXPECT_NE(svg.find("vgpr_allocation.mode = dynamic: " + std::to_string(*r.points[1].cycles) + " cycles</title>"),
            std::string::npos);
  // Both y axes start at zero, and the plot says so: the bottom ticks are 0 cycles and 0%.
  EXPECT_NE(svg.find("Both y axes start at zero."), std::string::npos);
  EXPECT_NE(svg.find("text-anchor=\"end\">0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0%</text>"), std::string::npos);
  SweepOptions other_threads = o;
  other_threads.stats.threads = 1;
  EXPECT_EQ(sweep_to_svg(run_machine_sweep(bvh, other_threads)), svg);
}

// Several presets: one series each, every value on every preset. With the shading phase as the VGPR peak, static
// allocation keeps 16 waves per SIMD up to 96 VGPRs and 10 at 128 (144 in 24-VGPR granules); dynamic keeps 16.
TEST(MachineSweep, SeveralPresetsAreSeveralSeries) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const std::vector<std::string> presets{"rdna4", "rdna4-dvgpr16", "rdna4-dvgpr32"};
  const SweepResult r = run_machine_sweep(bvh, sweep_options(presets, "kernel.phases[hit_shading].vgprs", {"64", "96", "128"}));
  ASSERT_EQ(r.points.size(), 9u);
  const uint32_t limits[3][3] = {{16, 16, 10}, {16, 16, 16}, {16, 16, 16}};
  for (std::size_t p = 0; p < 3; ++p) {
    for (std::size_t v = 0; v < 3; ++v) {
      const SweepPoint& point = r.points[p * 3 + v];
      EXPECT_EQ(point.preset, presets[p]);
      EXPECT_EQ(point.value, r.values[v]);
      EXPECT_EQ(point.config.kernel.phases.at(2).vgprs, std::stoul(r.values[v]));
      EXPECT_EQ(point.runs.at(0).second.wave_limit_per_simd, limits[p][v]) << point.preset << " " << point.value;
    }
  }
  const std::string svg = sweep_to_svg(r);
  EXPECT_EQ(count(svg, "<polyline"), 6u);
  for (const std::string& preset : presets) EXPECT_NE(svg.find(">" + preset + "</text>"), std::string::npos) << preset;
  EXPECT_NE(sweep_to_text(r).find("rdna4-dvgpr32"), std::string::npos);
}

TEST(MachineSweep, BadParametersAndValuesAreRefused) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const auto message = [&](std::vector<std::string> presets, const std::string& parameter,
                           std::vector<std::string> values) {
    try {
      (void)run_machine_sweep(bvh, sweep_options(std::move(presets), parameter, std::move(values)));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      return std::string(e.what());
    }
    ADD_FAILURE() << parameter << " accepted";
    return std::string();
  };
  EXPECT_NE(message({"rdna4"}, "memory.cache_size", {"1"}).find("'memory.cache_size' is not a machine parameter"),
            std::string::npos);
  EXPECT_NE(message({"rdna4-dvgpr16"}, "vgpr_allocation.block_vgprs", {"16", "0"}).find("vgpr_allocation.block_vgprs = 0"),
            std::string::npos);
  EXPECT_NE(message({"rdna4"}, "stack_size", {"16", "65"}).find("'65' is not a whole number in 2..64"),
            std::string::npos);
  EXPECT_NE(message({"rdna4"}, "memory.levels[L0].bytes", {}).find("no values"), std::string::npos);
  EXPECT_NE(message({"rdna4", "no-such-preset"}, "memory.levels[L0].bytes", {"65536"}).find("no built-in machine preset"),
            std::string::npos);
  EXPECT_NE(message({}, "memory.levels[L0].bytes", {"1"}).find("no machine preset"), std::string::npos);
  // A value every preset must take: 160 shading VGPRs are more than 8 blocks of 16.
  EXPECT_NE(message({"rdna4", "rdna4-dvgpr16"}, "kernel.phases[hit_shading].vgprs", {"128", "160"})
                .find("rdna4-dvgpr16 with kernel.phases[hit_shading].vgprs = 160"),
            std::string::npos);
}

// The figures stats and report print, and compare's per-run rows, against the run's own counts.
TEST(MachineOutput, FiguresAreTheRunsCountsAtThePresetsPeakAndGpu) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  StatsOptions so = test::small_stats_options();
  so.kinds = {RayKind::Primary};
  so.machine = emu::load_machine_preset("rdna3");
  const emu::MachineResult m = *run_stats(bvh, so).kinds[0].machine;
  const double cycles = static_cast<double>(m.cycles);
  const double cus = m.gpu.simulated_cus;  // per-clock figures are per CU
  const auto value = [](const std::vector<MachineFigure>& figures, const std::string& label) {
    for (const MachineFigure& f : figures)
      if (f.label == label || f.column == label) return f.value;
    ADD_FAILURE() << label;
    return std::string();
  };
  const std::vector<MachineFigure> all = machine_figures(m, *so.machine, MachineFigureSet::All);
  EXPECT_EQ(value(all, "RA box tests per clock (peak 4)"),
            fmt::format("{:.2f} ({:.1f}%)", static_cast<double>(m.box_tests) / cycles / cus,
                        100.0 * static_cast<double>(m.box_tests) / cycles / cus / 4));
  EXPECT_EQ(value(all, "RA triangle tests per clock (peak 1)"),
            fmt::format("{:.2f} ({:.1f}%)", static_cast<double>(m.triangle_tests) / cycles / cus,
                        100.0 * static_cast<double>(m.triangle_tests) / cycles / cus));
  const emu::MemoryLevelResult& level = m.memory_levels.at(0);
  const double served = 100.0 * static_cast<double>(level.hits + level.merged) / static_cast<double>(level.requests);
  EXPECT_EQ(value(all, "L0 served here"),
            fmt::format("{:.1f}% ({} of {} line requests: {} hits, {} merged with fills in flight)", served,
                        level.hits + level.merged, level.requests, level.hits, level.merged));
  // The whole GPU's: the simulated CUs' bytes x CUs / simulated CUs, against 96 L0 ports of 128 bytes.
  const double l0_bytes_per_clock = static_cast<double>(level.bytes) / cycles * 96 / cus;
  EXPECT_EQ(value(all, "L0 bandwidth"), fmt::format("{:.1f} B/clock ({:.1f}% of {})", l0_bytes_per_clock,
                                                    100.0 * l0_bytes_per_clock / (96 * 128), 96 * 128));
  // rdna3's L1 is a cache too; the memory has no hit rate, only the lines it served.
  const emu::MemoryLevelResult& dram = m.memory_levels.back();
  EXPECT_EQ(value(all, "DRAM lines served"), fmt::format("{}", dram.requests));
  for (const MachineFigure& f : all) EXPECT_EQ(f.label.find("DRAM hit"), std::string::npos) << f.label;
  EXPECT_EQ(value(all, "  box tests per second"),
            fmt::format("{:.1f} G", static_cast<double>(m.box_tests) / cycles * 96 / cus * 2500e6 / 1e9));
  EXPECT_EQ(value(all, "whole GPU"), "AMD Radeon RX 7900 XTX: 96 CUs (8 simulated: 1 shader array) x 2500 MHz");
  EXPECT_EQ(value(all, "GPU RA busy"),
            fmt::format("{:.1f}%", 100.0 * static_cast<double>(m.ra_busy_cycles) / cycles / cus));

  // Throughput: what compare shows per run, without occupancy.
  const std::vector<MachineFigure> brief = machine_figures(m, *so.machine, MachineFigureSet::Throughput);
  EXPECT_EQ(value(brief, "box/clk"), value(all, "box/clk"));
  EXPECT_EQ(value(brief, "GPU tri/s"), value(all, "GPU tri/s"));
  EXPECT_TRUE(std::none_of(brief.begin(), brief.end(), [](const MachineFigure& f) { return f.column == "waves"; }));
}

// Each level says what it did in terms that fit it: no hit rate for the memory, a buffer without storage the requests
// it merged (no share, no hits), and a level no request reached "no requests" instead of a share of nothing (the
// issue's "L1 hit rate 50.0%", "MALL 0%", "DRAM hit rate 100%"); the JSON leaves out what a level cannot have.
TEST(MachineOutput, LevelsSayWhatTheyDidInTermsThatFitThem) {
  using Kind = emu::MemoryLevelResult::Kind;
  const auto level = [](const char* name, Kind kind, uint64_t requests, uint64_t hits, uint64_t merged, uint64_t misses) {
    emu::MemoryLevelResult l;
    l.name = name;
    l.kind = kind;
    l.port_bytes_per_clock = 1024;
    l.requests = requests;
    l.hits = hits;
    l.merged = merged;
    l.misses = misses;
    l.bytes = 64 * requests;
    return l;
  };
  emu::MachineResult m;
  m.cycles = 1000;
  m.memory_levels = {level("L0", Kind::Cache, 10, 6, 2, 2), level("L1", Kind::MergeBuffer, 2, 0, 1, 1),
                     level("L2", Kind::Cache, 1, 1, 0, 0), level("MALL", Kind::Cache, 0, 0, 0, 0),
                     level("DRAM", Kind::Memory, 0, 0, 0, 0)};
  const emu::MachineConfig config = emu::load_machine_preset("rdna4");
  const auto value = [](const std::vector<MachineFigure>& figures, const std::string& label) -> std::string {
    for (const MachineFigure& f : figures)
      if (f.label == label || f.column == label) return f.value;
    return "(no " + label + ")";
  };
  const std::vector<MachineFigure> all = machine_figures(m, config, MachineFigureSet::All);
  EXPECT_EQ(value(all, "L0 served here"), "80.0% (8 of 10 line requests: 6 hits, 2 merged with fills in flight)");
  EXPECT_EQ(value(all, "L1 merged (holds no lines)"), "1 of 2 line requests merged with fills in flight, 1 passed on");
  EXPECT_EQ(value(all, "MALL served here"), "no requests (the levels above served every line)");
  EXPECT_EQ(value(all, "MALL misses (first touches)"), "(no MALL misses (first touches))");
  EXPECT_EQ(value(all, "DRAM lines served"), "0");
  for (const MachineFigure& f : all) {
    EXPECT_EQ(f.label.find("hit rate"), std::string::npos) << f.label;
    // Only the caches that served requests (L0, L2) and the ports show a share.
    const bool no_share = f.label.starts_with("L1 ") || f.label.starts_with("MALL ") || f.label.starts_with("DRAM ");
    if (no_share && !f.label.ends_with(" bandwidth")) {
      EXPECT_EQ(f.value.find('%'), std::string::npos) << f.label;
    }
  }
  const std::vector<MachineFigure> brief = machine_figures(m, config, MachineFigureSet::Throughput);
  EXPECT_EQ(value(brief, "MALL served"), "no requests");
  EXPECT_EQ(value(brief, "L1 merged"), "1 of 2");

  const nlohmann::json levels = nlohmann::json::parse(emu::to_json(m, config))["memory_levels"];
  ASSERT_EQ(levels.size(), 5u);
  EXPECT_EQ(levels[0]["served_fraction"], 0.8);
  EXPECT_EQ(levels[1]["kind"], "merge_buffer");
  EXPECT_EQ(levels[1]["merged"], 1);
  EXPECT_EQ(levels[1]["misses"], 1);
  for (const char* key : {"hits", "first_touches", "served_fraction"}) {
    EXPECT_FALSE(levels[1].contains(key)) << key;
    EXPECT_FALSE(levels[4].contains(key)) << key;
  }
  EXPECT_TRUE(levels[3]["served_fraction"].is_null());
}

}  // namespace
}  // namespace hwbvh::stats
