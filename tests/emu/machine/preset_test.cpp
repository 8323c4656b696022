// Machine presets: the built-in ones, user files with a base, and the errors a bad file gets.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include <nlohmann/json.hpp>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/config.h"

namespace hwbvh::emu {
namespace {

// The message of the BadInput error `f` throws, or a failure.
template <class F>
std::string bad_input(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::string write(const test::ScratchDir& dir, const std::string& name, const std::string& text) {
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(MachinePreset, BuiltinPresets) {
  EXPECT_EQ(builtin_machine_presets(),
            (std::vector<std::string>{"rdna2", "rdna3", "rdna4", "rdna4-dvgpr16", "rdna4-dvgpr32",
                                      "rdna4-dvgpr32-no-avoidance", "rdna4-xt"}));

  const MachineConfig r4 = load_machine_preset("rdna4");
  EXPECT_EQ(r4.name, "rdna4");
  EXPECT_EQ(r4.compute_unit.simds, 2u);
  EXPECT_EQ(r4.compute_unit.wave_slots, 16u);
  EXPECT_EQ(r4.compute_unit.vgprs_per_lane, 1536u);
  EXPECT_EQ(r4.ray_accelerator.box_tests_per_clock, 8u);
  EXPECT_EQ(r4.ray_accelerator.triangle_tests_per_clock, 2u);
  EXPECT_EQ(r4.ray_accelerator.instance_transform_clocks, 1u);
  EXPECT_EQ(r4.vgpr.mode, VgprAllocation::Static);
  EXPECT_EQ(r4.vgpr.static_granule, 24u);
  EXPECT_FALSE(r4.memory.in_order_returns);
  EXPECT_EQ(r4.ray_accelerator.pipeline_latency, 8u);
  EXPECT_EQ(r4.ray_accelerator.queue_depth, 16u);
  EXPECT_EQ(r4.ray_accelerator.result_lanes_per_clock, 4u);
  EXPECT_EQ(r4.memory.address_lanes_per_clock, 4u);
  EXPECT_EQ(r4.memory.levels[0].line_bytes, 64u);
  EXPECT_EQ(r4.memory.levels[0].bytes_per_clock, 128u);
  EXPECT_FALSE(r4.memory.scalar_returns_in_order);
  EXPECT_EQ(r4.memory.counter_limits, (std::array<uint32_t, 4>{63, 63, 63, 31}));  // loadcnt, samplecnt, dscnt, kmcnt
  ASSERT_EQ(r4.kernel.phases.size(), 3u);
  EXPECT_TRUE(r4.kernel.phases[1].traversal);
  EXPECT_EQ(r4.kernel.peak_vgprs(), 128u);  // the shading phase

  const MachineConfig d16 = load_machine_preset("rdna4-dvgpr16");
  EXPECT_EQ(d16.vgpr.mode, VgprAllocation::Dynamic);
  EXPECT_EQ(d16.vgpr.block_vgprs, 16u);
  EXPECT_EQ(d16.vgpr.max_blocks, 8u);
  EXPECT_TRUE(d16.vgpr.deadlock_avoidance);
  EXPECT_EQ(d16.kernel.phases.size(), 3u);  // inherited from rdna4
  EXPECT_EQ(load_machine_preset("rdna4-dvgpr32").vgpr.block_vgprs, 32u);
  const MachineConfig no_avoidance = load_machine_preset("rdna4-dvgpr32-no-avoidance");
  EXPECT_EQ(no_avoidance.vgpr.block_vgprs, 32u);  // from its base, rdna4-dvgpr32
  EXPECT_FALSE(no_avoidance.vgpr.deadlock_avoidance);

  const MachineConfig r3 = load_machine_preset("rdna3");
  EXPECT_EQ(r3.ray_accelerator.box_tests_per_clock, 4u);
  EXPECT_EQ(r3.ray_accelerator.triangle_tests_per_clock, 1u);
  EXPECT_EQ(r3.ray_accelerator.instance_transform_clocks, 1u);
  EXPECT_TRUE(r3.memory.in_order_returns);
  EXPECT_TRUE(r3.memory.scalar_returns_in_order);
  EXPECT_EQ(r3.memory.counter_limits[0], 63u);  // vmcnt
  EXPECT_EQ(r3.memory.counter_limits[2], 63u);  // lgkmcnt
  EXPECT_EQ(r3.ray_accelerator.result_lanes_per_clock, 8u);
  EXPECT_EQ(r3.vgpr.mode, VgprAllocation::Static);
}

// The four cards' presets carry their documented figures (docs/machine-model.md, "Presets"): the product pages'
// CU counts and clocks, the whitepapers' and ROCm's cache sizes, and the node formats each chip reads.
TEST(MachinePreset, TheCardsPresetsHaveTheirPublishedFigures) {
  struct Card {
    const char* preset;
    const char* gpu;
    uint32_t cus, clock_mhz, box, triangle;
    uint64_t l2, mall;
    std::vector<std::string> formats;
  };
  const Card cards[] = {
      {"rdna2", "AMD Radeon RX 6900 XT", 80, 2250, 4, 1, 4u << 20, 128u << 20, {"rtip20"}},
      {"rdna3", "AMD Radeon RX 7900 XTX", 96, 2500, 4, 1, 6u << 20, 96u << 20, {"rtip20"}},
      {"rdna4", "AMD Radeon RX 9070", 56, 2520, 8, 2, 8u << 20, 64u << 20, {"rtip31", "rtip20"}},
      {"rdna4-xt", "AMD Radeon RX 9070 XT", 64, 2970, 8, 2, 8u << 20, 64u << 20, {"rtip31", "rtip20"}},
  };
  for (const Card& card : cards) {
    SCOPED_TRACE(card.preset);
    const MachineConfig c = load_machine_preset(card.preset);
    EXPECT_EQ(c.gpu.name, card.gpu);
    EXPECT_EQ(c.gpu.compute_units(), card.cus);
    EXPECT_EQ(c.gpu.clock_mhz, card.clock_mhz);
    EXPECT_EQ(c.ray_accelerator.box_tests_per_clock, card.box);
    EXPECT_EQ(c.ray_accelerator.triangle_tests_per_clock, card.triangle);
    EXPECT_EQ(c.ray_accelerator.node_formats, card.formats);
    ASSERT_EQ(c.memory.levels.size(), 5u);
    EXPECT_EQ(c.memory.levels[2].bytes, card.l2);
    EXPECT_EQ(c.memory.levels[3].bytes, card.mall);
  }
  // RDNA 2: the RDNA whitepaper's 16 KB L0 per CU and 128 KB graphics L1 per shader array, a 128 KB VGPR file, and
  // 512 GB/s at the boost clock.
  const MachineConfig r2 = load_machine_preset("rdna2");
  EXPECT_EQ(r2.memory.levels[0].bytes, 16384u);
  EXPECT_EQ(r2.memory.levels[0].line_bytes, 128u);
  EXPECT_EQ(r2.memory.levels[1].bytes, 131072u);
  EXPECT_EQ(r2.memory.levels[1].shared_by, SharedBy::ShaderArray);
  EXPECT_EQ(r2.compute_unit.vgprs_per_lane, 1024u);
  EXPECT_EQ(r2.vgpr.static_granule, 8u);
  EXPECT_EQ(r2.memory.levels[4].bytes_per_clock, 228u);  // 512 GB/s / 2.25 GHz = 227.6, rounded
  EXPECT_TRUE(r2.memory.in_order_returns);
}

// A trace of nodes the preset's hardware does not read is labelled hypothetical (emu::hypothetical_note).
TEST(MachinePreset, EveryPresetNamesTheNodesItsHardwareReads) {
  for (const std::string& name : builtin_machine_presets()) {
    SCOPED_TRACE(name);
    const MachineConfig c = load_machine_preset(name);
    EXPECT_FALSE(c.ray_accelerator.node_formats.empty());
    for (const std::string& format : c.ray_accelerator.node_formats) EXPECT_EQ(hypothetical_note(c, format), "");
  }
  EXPECT_EQ(hypothetical_note(load_machine_preset("rdna3"), "rtip31"),
            "hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not this blob's rtip31");
  EXPECT_EQ(hypothetical_note(load_machine_preset("rdna4"), "xe3"),
            "hypothetical: rdna4 (AMD Radeon RX 9070) reads rtip31 and rtip20 nodes, not this blob's xe3");
  EXPECT_EQ(hypothetical_note(load_machine_preset("rdna2"), "rtip20"), "");
  // The mark a table's row of such a run carries (compare's variants, sweep's presets).
  EXPECT_EQ(hypothetical_mark(hypothetical_note(load_machine_preset("rdna3"), "rtip31")), " (hypothetical)");
  EXPECT_EQ(hypothetical_mark(hypothetical_note(load_machine_preset("rdna2"), "rtip20")), "");
  // What the trace needs of the hardware, when it is not its blob's nodes (compare's BVH4x2 row).
  EXPECT_EQ(hypothetical_note(load_machine_preset("rdna2"), "rtip31", "with rtip31's dual intersect (BVH4x2)"),
            "hypothetical: rdna2 (AMD Radeon RX 6900 XT) reads rtip20 nodes, not with rtip31's dual intersect (BVH4x2)");
  EXPECT_EQ(hypothetical_note(load_machine_preset("rdna4"), "rtip31", "with rtip31's dual intersect (BVH4x2)"), "");
  const test::ScratchDir dir("machine-preset-formats");
  const std::string bad = write(dir, "bad.json", R"({"base": "rdna4", "ray_accelerator": {"node_formats": "bvh8"}})");
  EXPECT_NE(bad_input([&] { (void)load_machine_preset(bad); }).find("ray_accelerator.node_formats' names 'bvh8'"),
            std::string::npos);
}

// Every value in the preset files is documented with its unit and source (docs/machine-model.md).
TEST(MachinePreset, PresetFilesDocumentEveryValue) {
  const auto dir = test::source_dir() / "presets";
  int files = 0;
  std::function<void(const nlohmann::json&, const std::string&)> check = [&](const nlohmann::json& j,
                                                                             const std::string& at) {
    if (j.is_object() && j.contains("value")) {
      EXPECT_TRUE(j.contains("unit") && j["unit"].is_string() && !j["unit"].get<std::string>().empty()) << at;
      EXPECT_TRUE(j.contains("source") && j["source"].is_string() && !j["source"].get<std::string>().empty())
          << at;
    } else if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() != "description" && it.key() != "base" && it.key() != "name") check(*it, at + "." + it.key());
      }
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) check(j[i], at + "[" + std::to_string(i) + "]");
    } else if (!j.is_boolean() || at.find("phases") == std::string::npos) {
      ADD_FAILURE() << at << " is not documented";  // only a phase's "traversal" flag may stay plain
    }
  };
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    std::ifstream in(e.path());
    check(nlohmann::json::parse(in), e.path().filename().string());
    // The file on disk loads like the built-in copy of it.
    const MachineConfig from_file = load_machine_preset(e.path().string());
    const MachineConfig builtin = load_machine_preset(e.path().stem().string());
    EXPECT_EQ(from_file.description, builtin.description);
    EXPECT_EQ(from_file.vgpr.block_vgprs, builtin.vgpr.block_vgprs);
  }
  EXPECT_EQ(files, 7);
}

TEST(MachinePreset, UserFileWithBaseAndPlainValues) {
  const test::ScratchDir dir("machine-preset");
  const std::string path = write(dir, "mine.json", R"({
    // comments are allowed
    "base": "rdna4-dvgpr32",
    "description": "mine",
    "compute_unit": {"simds": 1},
    "memory": {"wait_counters": {"value": "combined", "unit": "", "source": "me"}},
    "kernel": {"phases": [{"name": "t", "vgprs": 64, "traversal": true}]}
  })");
  const MachineConfig c = load_machine_preset(path);
  EXPECT_EQ(c.name, path);
  EXPECT_EQ(c.description, "mine");
  EXPECT_EQ(c.compute_unit.simds, 1u);
  EXPECT_EQ(c.compute_unit.wave_slots, 16u);  // from the base
  EXPECT_EQ(c.memory.wait_counters, WaitCounters::Combined);
  EXPECT_EQ(c.memory.levels.size(), 5u);  // from the base
  EXPECT_EQ(c.vgpr.block_vgprs, 32u);
  ASSERT_EQ(c.kernel.phases.size(), 1u);  // the list replaces the base's
  EXPECT_EQ(c.kernel.phases[0].alu_cycles, 0u);
  EXPECT_EQ(c.kernel.loop_alu_cycles, 12u);
}

TEST(MachinePreset, ErrorsNameTheFileAndTheKey) {
  const test::ScratchDir dir("machine-preset-errors");
  const auto load = [&](const std::string& name, const std::string& text) {
    const std::string path = write(dir, name, text);
    return bad_input([&] { (void)load_machine_preset(path); });
  };
  std::string m = load("typo.json", R"({"base": "rdna4", "memory": {"hit_latncy": 3}})");
  EXPECT_NE(m.find("typo.json"), std::string::npos) << m;
  EXPECT_NE(m.find("memory.hit_latncy"), std::string::npos) << m;

  m = load("type.json", R"({"base": "rdna4", "lds": {"latency": "fast"}})");
  EXPECT_NE(m.find("lds.latency"), std::string::npos) << m;
  m = load("negative.json", R"({"base": "rdna4", "lds": {"latency": -1}})");
  EXPECT_NE(m.find("lds.latency"), std::string::npos) << m;
  m = load("fraction.json", R"({"base": "rdna4", "lds": {"latency": 1.5}})");
  EXPECT_NE(m.find("lds.latency"), std::string::npos) << m;
  m = load("doc.json", R"({"base": "rdna4", "lds": {"latency": {"value": 3, "units": "c"}}})");
  EXPECT_NE(m.find("lds.latency.units"), std::string::npos) << m;
  m = load("missing.json", R"({"description": "no base", "compute_unit": {}})");
  EXPECT_NE(m.find("compute_unit.simds"), std::string::npos) << m;
  m = load("mode.json", R"({"base": "rdna4", "vgpr_allocation": {"mode": "elastic"}})");
  EXPECT_NE(m.find("vgpr_allocation.mode"), std::string::npos) << m;
  m = load("phase.json", R"({"base": "rdna4", "kernel": {"phases": [{"name": "x", "vgprs": 8, "colour": 1}]}})");
  EXPECT_NE(m.find("kernel.phases[0].colour"), std::string::npos) << m;
  m = load("base.json", R"({"base": "rdna9"})");
  EXPECT_NE(m.find("rdna9"), std::string::npos) << m;
  EXPECT_NE(m.find("rdna4-dvgpr16"), std::string::npos) << m;  // lists the built-ins
  m = load("broken.json", R"({"base": "rdna4",)");
  EXPECT_NE(m.find("broken.json"), std::string::npos) << m;
  EXPECT_NE(m.find("malformed JSON"), std::string::npos) << m;
  m = load("twice.json", R"({"base": "rdna4", "lds": {"latency": 3}, "lds": {"busy_cycles": 3}})");
  EXPECT_NE(m.find("'lds' appears twice"), std::string::npos) << m;
  m = load("array.json", "[1, 2]");
  EXPECT_NE(m.find("array.json"), std::string::npos) << m;

  // Values that parse but cannot run.
  m = load("limit.json", R"({"base": "rdna4-dvgpr16", "vgpr_allocation": {"dynamic_wave_limit": 17}})");
  EXPECT_NE(m.find("vgpr_allocation.dynamic_wave_limit"), std::string::npos) << m;
  m = load("big.json", R"({"base": "rdna4-dvgpr16", "kernel": {"phases": [
      {"name": "t", "vgprs": 64, "traversal": true}, {"name": "s", "vgprs": 200}]}})");
  EXPECT_NE(m.find("kernel.phases[s].vgprs"), std::string::npos) << m;  // 13 blocks of 16 > 8
  m = load("two.json", R"({"base": "rdna4", "kernel": {"phases": [{"name": "s", "vgprs": 8}]}})");
  EXPECT_NE(m.find("traversal"), std::string::npos) << m;
  const std::string level = R"({"name": "L0", "shared_by": "cu", "bytes": 1024, "line_bytes": 64, "ways": 4, "hit_latency": 40,
      "bytes_per_clock": 64, "misses_in_flight": 8})";
  const std::string memory = R"({"name": "DRAM", "shared_by": "gpu", "bytes": 0, "line_bytes": 128, "ways": 1, "hit_latency": 500,
      "bytes_per_clock": 4, "misses_in_flight": 1})";
  const auto levels = [](const std::string& list) {
    return R"({"base": "rdna4", "memory": {"levels": [)" + list + "]}}";
  };
  ASSERT_EQ(load_machine_preset(write(dir, "levels.json", levels(level + ", " + memory))).memory.levels.size(), 2u);
  m = load("line.json", levels(std::regex_replace(level, std::regex("\"line_bytes\": 64"), "\"line_bytes\": 100") +
                               ", " + memory));
  EXPECT_NE(m.find("memory.levels[0].line_bytes"), std::string::npos) << m;
  m = load("sets.json", levels(std::regex_replace(level, std::regex("1024"), "1000") + ", " + memory));
  EXPECT_NE(m.find("memory.levels[0].bytes"), std::string::npos) << m;
  m = load("huge.json", levels(std::regex_replace(level, std::regex("1024"), "1099511627776") + ", " + memory));
  EXPECT_NE(m.find("memory.levels[0].bytes' holds more than"), std::string::npos) << m;
  m = load("faster.json", levels(level + ", " + std::regex_replace(memory, std::regex("500"), "30")));
  EXPECT_NE(m.find("memory.levels[1].hit_latency"), std::string::npos) << m;  // farther cannot be faster
  m = load("nomemory.json", levels(level + ", " + level));
  EXPECT_NE(m.find("memory.levels[1].bytes"), std::string::npos) << m;  // the last level holds all
  m = load("shared.json", levels(level + ", " + std::regex_replace(memory, std::regex("\"gpu\""), "\"wgp\"")));
  EXPECT_NE(m.find("memory.levels[1].shared_by' must be"), std::string::npos) << m;
  m = load("narrower.json", levels(std::regex_replace(level, std::regex("\"cu\""), "\"gpu\"") + ", " +
                                   std::regex_replace(memory, std::regex("\"gpu\""), "\"shader_array\"")));
  EXPECT_NE(m.find("memory.levels[1].shared_by' is narrower"), std::string::npos) << m;
  m = load("simulated.json", R"({"base": "rdna4", "gpu": {"simulated_shader_arrays": 9}})");
  EXPECT_NE(m.find("gpu.simulated_shader_arrays' is 9, must be in 1..8"), std::string::npos) << m;
  m = load("one.json", levels(memory));
  EXPECT_NE(m.find("memory.levels"), std::string::npos) << m;
  m = load("counters.json", R"({"base": "rdna4", "memory": {"wait_counters": "vmcnt"}})");
  EXPECT_NE(m.find("memory.wait_counters"), std::string::npos) << m;

  m = bad_input([] { (void)load_machine_preset("no-such-preset"); });
  EXPECT_NE(m.find("no-such-preset"), std::string::npos) << m;
  EXPECT_NE(m.find("rdna4"), std::string::npos) << m;
  m = bad_input([&] { (void)load_machine_preset(dir.path().string()); });  // a directory is not a preset
  EXPECT_NE(m.find(dir.path().string()), std::string::npos) << m;
}

}  // namespace
}  // namespace hwbvh::emu
