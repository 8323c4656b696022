// What users see of a machine-model run beyond cycles: ray-accelerator tests per clock against the preset's peak,
// the memory levels' requests, hits, misses and bytes, the whole-GPU figures, and presets with one parameter replaced (the
// sweep's input). Every figure is checked against quantities the test works out from the sequences it gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emu/machine/one_cu.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/machine.h"

namespace hwbvh::emu {
namespace {

using Sequences = std::vector<std::vector<NodeFetch>>;

// `rays` rays of `steps` steps over `nodes` distinct nodes of `bytes` bytes each (64 or 128), laid out back to back;
// every third step is a leaf with two triangle tests, the others boxes of `width` children.
Sequences walks(uint32_t rays, uint32_t steps, uint32_t nodes, uint32_t bytes, uint8_t width) {
  Sequences s(rays);
  for (uint32_t r = 0; r < rays; ++r) {
    for (uint32_t i = 0; i < steps; ++i) {
      const uint32_t n = (r * 7 + i) % nodes;
      const bool leaf = i % 3 == 2;
      s[r].push_back(NodeFetch{.node = n, .offset_64 = n * bytes / 64, .blocks_64 = static_cast<uint8_t>(bytes / 64),
                               .box_tests = static_cast<uint8_t>(leaf ? 0 : width),
                               .triangle_tests = static_cast<uint8_t>(leaf ? 2 : 0)});
    }
  }
  return s;
}

struct Expected {
  uint64_t fetches = 0, bytes = 0, boxes = 0, triangles = 0;
  std::set<uint64_t> l0_lines;  // distinct 64-byte lines (rdna4's L0 line) touched
  std::set<uint64_t> l2_lines;  // distinct 128-byte lines (the L2's, MALL's and DRAM's) touched
};
Expected expected(const Sequences& s) {
  Expected e;
  for (const auto& ray : s) {
    for (const NodeFetch& f : ray) {
      ++e.fetches;
      e.bytes += f.bytes();
      e.boxes += f.box_tests;
      e.triangles += f.triangle_tests;
      for (uint64_t b = f.byte_offset(); b < f.byte_offset() + f.bytes(); b += 64) {
        e.l0_lines.insert(b / 64);
        e.l2_lines.insert(b / 128);
      }
    }
  }
  return e;
}

// With caches far larger than the footprint nothing is evicted: the L0 misses every distinct 64-byte line once, the
// L2 and the MALL every distinct 128-byte line once, every other request hits (held or in flight); each level below
// the L0 sees exactly the misses of the one above, and counts the bytes of the requests it served.
TEST(MachineFigures, TestsPerClockAndTheMemoryLevelsFollowFromTheModelsCounts) {
  const MachineConfig config = one_cold_cu("rdna4");
  for (const uint32_t node_bytes : {128u, 64u}) {  // RT IP 3.1 nodes, then Xe3's 64-byte blocks (two per line)
    SCOPED_TRACE(node_bytes);
    const Sequences s = walks(96, 12, 40, node_bytes, node_bytes == 128 ? 8 : 6);
    const Expected e = expected(s);
    const MachineResult r = run_machine_model(config, s);
    ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
    ASSERT_GT(r.cycles, 0u);
    const double cycles = static_cast<double>(r.cycles);

    EXPECT_EQ(r.box_tests, e.boxes);
    EXPECT_EQ(r.triangle_tests, e.triangles);
    EXPECT_DOUBLE_EQ(r.box_tests_per_clock, static_cast<double>(e.boxes) / cycles);
    EXPECT_DOUBLE_EQ(r.triangle_tests_per_clock, static_cast<double>(e.triangles) / cycles);
    EXPECT_DOUBLE_EQ(r.ra_box_utilization, static_cast<double>(e.boxes) / cycles / 8.0);
    EXPECT_DOUBLE_EQ(r.ra_triangle_utilization, static_cast<double>(e.triangles) / cycles / 2.0);

    ASSERT_EQ(r.memory_levels.size(), 5u);
    const MemoryLevelResult& l0 = r.memory_levels[0];
    EXPECT_EQ(l0.name, "L0");
    // One line request per 64-byte line a lane's node spans, less those merged with another lane's in the same
    // instruction.
    EXPECT_EQ(r.lane_line_requests, e.bytes / 64);
    EXPECT_EQ(l0.requests, r.lane_line_requests - r.merged_lane_requests);
    EXPECT_EQ(l0.misses, e.l0_lines.size());
    EXPECT_EQ(l0.served(), l0.requests - l0.misses);
    EXPECT_EQ(l0.first_touches, e.l0_lines.size());  // the L0 is large enough never to evict one of these lines
    EXPECT_EQ(l0.bytes, l0.served() * 64);  // a level counts the bytes it served itself: a hit's 64-byte line
    EXPECT_DOUBLE_EQ(l0.served_fraction(), static_cast<double>(l0.served()) / static_cast<double>(l0.requests));
    EXPECT_DOUBLE_EQ(l0.bytes_per_clock(r.cycles), static_cast<double>(l0.served() * 64) / cycles);
    EXPECT_DOUBLE_EQ(l0.bandwidth_use(r.cycles), static_cast<double>(l0.served() * 64) / cycles / 128.0);
    for (size_t k = 1; k < r.memory_levels.size(); ++k) {
      const MemoryLevelResult& above = r.memory_levels[k - 1];
      const MemoryLevelResult& level = r.memory_levels[k];
      SCOPED_TRACE(level.name);
      EXPECT_EQ(level.requests, above.misses);
      EXPECT_EQ(level.served() + level.misses, level.requests);
      EXPECT_EQ(level.bytes, level.served() * config.memory.levels[k - 1].line_bytes);
    }
    EXPECT_EQ(r.memory_levels[1].kind, MemoryLevelResult::Kind::MergeBuffer);  // rdna4's L1 holds no lines
    EXPECT_EQ(r.memory_levels[1].hits, 0u);
    EXPECT_EQ(r.memory_levels[4].kind, MemoryLevelResult::Kind::Memory);
    EXPECT_EQ(r.memory_levels[2].misses, e.l2_lines.size());  // L2
    EXPECT_EQ(r.memory_levels[3].misses, e.l2_lines.size());  // MALL
    EXPECT_EQ(r.memory_levels[4].requests, e.l2_lines.size());  // DRAM serves each line once

    const std::string json = to_json(r, config);
    for (const char* key : {"\"box_tests_per_clock\"", "\"peak_box_tests_per_clock\":8", "\"memory_levels\":[{",
                            "\"name\":\"L0\"", "\"bytes_per_clock\""}) {
      EXPECT_NE(json.find(key), std::string::npos) << key << " in " << json;
    }
  }
}

// An L0 without storage only merges requests for lines in flight: one ray's fetches, each waiting for the one
// before, miss every time, and the L2 serves the alternating nodes' lines from the second visit on.
TEST(MachineFigures, AnL0WithoutStorageMissesEveryFetch) {
  const MachineConfig config = one_cold_cu("rdna4", "memory.levels[L0].bytes", "0");
  Sequences s(1);
  for (uint32_t i = 0; i < 10; ++i) {
    s[0].push_back(NodeFetch{.node = i % 2, .offset_64 = 2 * (i % 2), .blocks_64 = 2, .box_tests = 8});
  }
  const MachineResult r = run_machine_model(config, s);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.memory_levels[0].kind, MemoryLevelResult::Kind::MergeBuffer);
  EXPECT_EQ(r.memory_levels[0].requests, 20u);  // two 64-byte lines per node
  EXPECT_EQ(r.memory_levels[0].served(), 0u);
  EXPECT_EQ(r.memory_levels[2].misses, 2u);  // the L2 fetches each node's 128-byte line once
}

// The presets' GPUs (AMD's product pages) and the whole-GPU figures: the simulated CUs' work x CUs / simulated CUs
// at the preset's clock.
TEST(MachineGpu, PresetsDescribeTheirGpuAndItsFiguresFollowFromTheRun) {
  const MachineConfig rdna4 = load_machine_preset("rdna4");
  EXPECT_EQ(rdna4.gpu.name, "AMD Radeon RX 9070");
  EXPECT_EQ(rdna4.gpu.compute_units(), 56u);
  EXPECT_EQ(rdna4.gpu.shader_arrays(), 8u);
  EXPECT_EQ(rdna4.gpu.simulated_shader_arrays, 1u);
  EXPECT_EQ(rdna4.gpu.simulated_cus(), 7u);
  EXPECT_EQ(rdna4.gpu.clock_mhz, 2520u);
  EXPECT_EQ(load_machine_preset("rdna4-dvgpr16").gpu.compute_units(), 56u);  // inherited from its base
  const MachineConfig rdna3 = load_machine_preset("rdna3");
  EXPECT_EQ(rdna3.gpu.name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(rdna3.gpu.compute_units(), 96u);
  EXPECT_EQ(rdna3.gpu.clock_mhz, 2500u);

  // 224 waves: workgroup i (one wave) goes to dispatch slot i mod 56, and the 7 simulated CUs (one shader array: slots
  // 0, 8, .., 48) run 4 each.
  const Sequences s = walks(224 * 32, 9, 30, 128, 8);
  const std::vector<bool> simulated = simulated_waves(rdna4, 224);
  EXPECT_EQ(std::count(simulated.begin(), simulated.end(), true), 28);
  EXPECT_TRUE(simulated[8] && !simulated[7] && simulated[48] && !simulated[55] && simulated[56] && simulated[64]);
  const MachineResult r = run_machine_model(rdna4, s);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.rays, 28u * 32);
  EXPECT_EQ(r.waves, 28u);
  const GpuFigures& g = r.gpu;
  const double per_second = 56.0 / 7 * 2520e6 / static_cast<double>(r.cycles);
  EXPECT_DOUBLE_EQ(g.box_tests_per_second, static_cast<double>(r.box_tests) * per_second);
  EXPECT_DOUBLE_EQ(g.triangle_tests_per_second, static_cast<double>(r.triangle_tests) * per_second);
  EXPECT_DOUBLE_EQ(g.rays_per_second, 896.0 * per_second);
  EXPECT_DOUBLE_EQ(g.ra_utilization, static_cast<double>(r.ra_busy_cycles) / static_cast<double>(r.cycles) / 7);
  EXPECT_DOUBLE_EQ(r.box_tests_per_clock, static_cast<double>(r.box_tests) / static_cast<double>(r.cycles) / 7);
  EXPECT_EQ(g.compute_units, 56u);
  const nlohmann::json j = nlohmann::json::parse(to_json(r, rdna4));
  EXPECT_EQ(j["gpu"]["box_tests_per_second"].get<double>(), g.box_tests_per_second);

  EXPECT_THROW((void)parse_machine_preset(R"({"base": "rdna4", "description": "x", "gpu": {"name": "x",
      "simulated_shader_arrays": 0}})", "zero.json"), Error);
  EXPECT_THROW((void)parse_machine_preset(R"({"base": "rdna4", "description": "x", "gpu": {"name": "x",
      "clock_mhz": 1000, "memory_gb": 16}})", "extra.json"), Error);
}

std::string bad_input_message(const std::string& key, const std::string& value) {
  try {
    (void)one_cold_cu("rdna4", key, value);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << key << " = " << value << " was accepted";
  return {};
}

TEST(MachinePresetParameter, OneValueReplacedEverythingElseKept) {
  const MachineConfig base = load_machine_preset("rdna4");
  MachineConfig c = load_machine_preset("rdna4", "memory.levels[L0].bytes", "65536");
  EXPECT_EQ(c.memory.levels.at(0).bytes, 65536u);
  EXPECT_EQ(c.name, "rdna4");
  c.memory.levels.at(0).bytes = base.memory.levels.at(0).bytes;
  EXPECT_EQ(c.memory.levels.at(2).bytes, base.memory.levels.at(2).bytes);
  EXPECT_EQ(to_json(MachineResult{}, c), to_json(MachineResult{}, base));

  EXPECT_EQ(load_machine_preset("rdna4", "vgpr_allocation.mode", "dynamic").vgpr.mode, VgprAllocation::Dynamic);
  EXPECT_EQ(load_machine_preset("rdna4-dvgpr16", "vgpr_allocation.block_vgprs", "32").vgpr.block_vgprs, 32u);
  EXPECT_FALSE(load_machine_preset("rdna3", "memory.in_order_returns", "false").memory.in_order_returns);
  const MachineConfig shading = load_machine_preset("rdna4", "kernel.phases[hit_shading].vgprs", "192");
  EXPECT_EQ(shading.kernel.phases.at(2).vgprs, 192u);
  EXPECT_EQ(shading.kernel.peak_vgprs(), 192u);

  EXPECT_EQ(machine_parameter_unit("rdna4", "memory.levels[L0].bytes"), "bytes per CU");
  EXPECT_EQ(load_machine_preset("rdna3", "memory.levels[L2].hit_latency", "300").memory.levels.at(2).hit_latency, 300u);
  EXPECT_EQ(machine_parameter_unit("rdna4", "kernel.phases[hit_shading].vgprs"), "VGPRs");
  EXPECT_EQ(machine_parameter_unit("rdna4", "gpu.cus_per_shader_array"), "CUs per shader array");
  EXPECT_EQ(load_machine_preset("rdna4", "memory.scalar_cache.hit_latency", "50").memory.scalar_cache.hit_latency, 50u);
  EXPECT_EQ(load_machine_preset("rdna4", "gpu.simulated_shader_arrays", "8").gpu.simulated_cus(), 56u);

  EXPECT_NE(bad_input_message("memory.cache_bytes", "1").find("'memory.cache_bytes' is not a machine parameter"),
            std::string::npos);  // the one-level cache's key before the hierarchy
  EXPECT_NE(bad_input_message("memory.levels[L0].bytez", "1").find("is not a machine parameter"), std::string::npos);
  EXPECT_NE(bad_input_message("memory.levels[L9].bytes", "1").find("names no element of memory.levels"),
            std::string::npos);
  EXPECT_NE(bad_input_message("memory.levels", "1").find("is not a single value"), std::string::npos);
  EXPECT_NE(bad_input_message("limits.levels[L0].bytes", "1").find("is not a machine parameter"), std::string::npos);
  EXPECT_NE(bad_input_message("cache", "1").find("'cache' is not a machine parameter"), std::string::npos);
  EXPECT_NE(bad_input_message("memory", "1").find("is not a machine parameter"), std::string::npos);
  EXPECT_NE(bad_input_message("kernel.phases", "1").find("is not a single value"), std::string::npos);
  EXPECT_NE(bad_input_message("kernel.phases[shading].vgprs", "1").find("names no element of kernel.phases"), std::string::npos);
  EXPECT_NE(bad_input_message("kernel.phases[hit_shading].name", "x").find("is not a machine parameter"),
            std::string::npos);
  EXPECT_NE(bad_input_message("memory.levels[L0].bytes", "lots").find("must be a whole number"), std::string::npos);
  EXPECT_NE(bad_input_message("memory.levels[L0].bytes", "-128").find("must be a whole number"), std::string::npos);
  EXPECT_NE(bad_input_message("vgpr_allocation.mode", "dyn").find("must be \"static\" or \"dynamic\""),
            std::string::npos);
  const std::string invalid = bad_input_message("memory.levels[L0].bytes", "100");
  EXPECT_NE(invalid.find("rdna4 with memory.levels[L0].bytes = 100"), std::string::npos) << invalid;
  EXPECT_NE(invalid.find("machine parameter 'memory.levels[0].bytes' must be a multiple of line_bytes x ways"),
            std::string::npos)
      << invalid;
}

}  // namespace
}  // namespace hwbvh::emu
