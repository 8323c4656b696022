// End-to-end tests of the machine model's commands: `hwbvh machine run` (docs/machine-model.md "Wave programs": the
// shipped reproduction programs run and print their per-wave figures, --json parses, bad program or preset files exit
// 2 with one line), `hwbvh machine sweep` (table, SVG plot, refusals that leave nothing behind), whole-GPU figures on stats,
// compare and report, and the report's sweep.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "e2e/report_fixture.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;
using test::quote;

class MachineCli : public test::ReportCliTest {
 protected:
  static std::string program(const std::string& name) {
    return quote((test::source_dir() / "presets" / "programs" / name).string());
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return quote(path(name));
  }
  // A blob of the cornell box, small rays for speed.
  std::string blob() {
    const std::string out = path("cornell.hwbvh");
    if (!std::filesystem::exists(out)) {
      EXPECT_EQ(hwbvh("build " + quote(test::project_scene("cornell-box.obj").string()) + " -o " + quote(out)).code, 0);
    }
    return quote(out);
  }
  static constexpr const char* kSmall = " --width 32 --height 32 --quiet";
};

TEST_F(MachineCli, RunsTheCrossWaveOrderingProgram) {
  test::Outcome r = hwbvh("machine run " + program("cross-wave-ordering.json") + " --machine rdna3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("completed: completed 2 waves"));
  EXPECT_THAT(r.out, HasSubstr("outputs of a model, not hardware measurements"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Y#0 +0 +0 +0 +36266 +36266 +131 +64 +1"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("X#0 +0 +1 +0 +[0-9]+ +[0-9]+ +[0-9]+ +256 "));
  EXPECT_THAT(r.out, HasSubstr("DRAM"));

  r = hwbvh("machine run " + program("cross-wave-ordering.json") + " --machine rdna4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(j["preset"], "rdna4");
  ASSERT_EQ(j["per_wave"].size(), 2u);
  EXPECT_EQ(j["per_wave"][1]["loads"], 1664);
  EXPECT_EQ(j["memory_levels"].size(), 6u);  // L0, L1, L2, MALL, DRAM and the scalar cache
  EXPECT_EQ(j["memory_levels"][5]["name"], "scalar");

  // A deadlock is a result: exit 0, the status says it.
  r = hwbvh("machine run " + program("dvgpr-mutual-wait.json") + " --machine rdna4-dvgpr32");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("deadlocked: deadlock at cycle"));
}

TEST_F(MachineCli, BadProgramsAndPresetsExitTwoWithOneLine) {
  const auto expect_bad = [](const test::Outcome& r, const std::string& needle) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("hwbvh: error: "));
    EXPECT_THAT(r.err, HasSubstr(needle));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  const std::string bad = write("bad.json", R"({"description": "d", "vgprs": 32, "waves": [
      {"name": "w", "program": [{"op": "load", "stream": "nowhere"}]}]})");
  expect_bad(hwbvh("machine run " + bad + " --machine rdna4"), "bad.json: wave program key 'waves[0].program[0].stream'");
  expect_bad(hwbvh("machine run " + write("broken.json", "{") + " --machine rdna4"), "broken.json: malformed JSON");
  expect_bad(hwbvh("machine run " + quote(path("missing.json")) + " --machine rdna4"), "missing.json");
  expect_bad(hwbvh("machine run " + program("occupancy.json") + " --machine rdna9"), "rdna9");
  const std::string wide = write("wide.json", R"({"description": "d", "vgprs": 256, "waves": [
      {"name": "w", "count": 11, "program": [{"op": "alu", "count": 1}]}]})");
  expect_bad(hwbvh("machine run " + wide + " --machine rdna4"), "does not fit the compute unit");
  EXPECT_EQ(hwbvh("machine").code, 2);  // a command group: needs `run`
  EXPECT_EQ(hwbvh("machine run " + program("occupancy.json")).code, 2);  // --machine is required
  EXPECT_EQ(hwbvh("machine --help").code, 0);
}


TEST_F(MachineCli, SweepPrintsATableAndWritesAnSvgPlot) {
  const std::string svg = path("plot.svg");
  test::Outcome r = hwbvh("machine sweep " + blob() + kSmall +
                          " --machine rdna4-dvgpr16 --param vgpr_allocation.block_vgprs --values 16,32 -o " +
                          quote(svg));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sweep of vgpr_allocation.block_vgprs (VGPRs per block)"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nrdna4-dvgpr16 +16 +[0-9]+ +[0-9.]+% +[0-9.]+% +completed\n"
                                            "rdna4-dvgpr16 +32 +[0-9]+ "));
  const std::string plot = test::slurp(svg);
  EXPECT_TRUE(plot.starts_with("<svg xmlns=")) << plot.substr(0, 80);
  EXPECT_THAT(plot, HasSubstr(">vgpr_allocation.block_vgprs (VGPRs per block)</text>"));

  r = hwbvh("machine sweep " + blob() + kSmall + " --machine rdna4 --param 'memory.levels[L0].bytes' --values 4096,32768 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parameter"], "memory.levels[L0].bytes");
  EXPECT_EQ(j["presets"], nlohmann::json::array({"rdna4"}));
  EXPECT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][1]["runs"][0]["status"], "completed");
}

TEST_F(MachineCli, BadSweepsExitTwoWithOneMessageAndWriteNothing) {
  const std::string svg = path("never.svg");
  const std::string sweep = "machine sweep " + blob() + kSmall + " -o " + quote(svg);
  const std::pair<std::string, std::string> cases[] = {
      {" --machine rdna4 --param memory.cache_size --values 1", "'memory.cache_size' is not a machine parameter"},
      {" --machine rdna4 --param 'memory.levels[L0].bytes' --values 4096,100", "memory.levels[L0].bytes = 100"},
      {" --machine rdna4 --param vgpr_allocation.mode --values static,sometimes", "must be \"static\" or \"dynamic\""},
      {" --machine rdna4 --param stack_size --values 16,1", "'1' is not a whole number in 2..64"},
      {" --machine rdna4 --param 'memory.levels[L0].bytes' --values 4096,,8192", "--values: an empty value"},
      {" --machine nothing --param 'memory.levels[L0].bytes' --values 4096", "no built-in machine preset"},
      {" --machine rdna4 --param 'memory.levels[L0].bytes' --values 4096 --rays primary,file", "not a file"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    const test::Outcome r = hwbvh(sweep + args);
    EXPECT_EQ(r.code, 2);
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(svg));
  }
  const test::Outcome png = hwbvh("machine sweep " + blob() + kSmall +
                                  " --machine rdna4 --param 'memory.levels[L0].bytes' --values 4096 -o " +
                                  quote(path("plot.png")));
  EXPECT_EQ(png.code, 2);
  EXPECT_THAT(png.err, HasSubstr("name a .svg file"));
  EXPECT_FALSE(std::filesystem::exists(path("plot.png")));
  EXPECT_EQ(hwbvh("machine sweep " + blob() + " --param 'memory.levels[L0].bytes' --values 1").code, 2);  // no --machine
  EXPECT_EQ(hwbvh("machine").code, 2);
}

// A two-level blob's instance steps each cost the preset's ray transform (ray_accelerator.instance_transform_clocks,
// 1 on rdna4): the accelerator's busy clocks drop by exactly the instance steps (steps that are neither box nor
// primitive nodes) when the transform is free.
TEST_F(MachineCli, InstanceStepsOfATwoLevelBlobPayTheTransform) {
  const std::string blob = quote(path("garden.hwbvh"));
  ASSERT_EQ(hwbvh("build " + quote(test::project_scene("instanced-garden.gltf").string()) + " -o " + blob).code, 0);
  // Every CU simulated, so that the model runs every ray the totals count.
  const std::string charged_preset = write("charged.json", R"({"base": "rdna4", "description": "every CU",
                                                  "gpu": {"simulated_shader_arrays": 8}})");
  const std::string free = write("free.json", R"({"base": "rdna4", "description": "no transform cost",
                                                  "gpu": {"simulated_shader_arrays": 8},
                                                  "ray_accelerator": {"instance_transform_clocks": 0}})");
  const auto ray_type = [&](const std::string& preset) {
    const test::Outcome r = hwbvh("stats " + blob + kSmall + " --rays primary --json --machine " + preset);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["ray_types"][0];
  };
  const nlohmann::json charged = ray_type(charged_preset), uncharged = ray_type(free);
  const nlohmann::json& t = charged["totals"];
  const uint64_t instance_steps = t["steps"].get<uint64_t>() - t["box_node_steps"].get<uint64_t>() -
                                  t["primitive_node_steps"].get<uint64_t>();
  EXPECT_GT(instance_steps, 0u);
  EXPECT_EQ(charged["machine_model"]["ra_busy_cycles"].get<uint64_t>(),
            uncharged["machine_model"]["ra_busy_cycles"].get<uint64_t>() + instance_steps);
  EXPECT_EQ(charged["machine_model"]["box_tests"], uncharged["machine_model"]["box_tests"]);
}

TEST_F(MachineCli, WholeGpuFiguresOnStatsCompareAndReport) {
  test::Outcome r = hwbvh("stats " + blob() + kSmall + " --rays primary --machine rdna4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json m = nlohmann::json::parse(r.out)["ray_types"][0]["machine_model"];
  // The 7 simulated CUs' (one shader array's) box tests per cycle, times 56 / 7 CUs at 2520 MHz.
  EXPECT_EQ(m["gpu"]["simulated_shader_arrays"], 1);
  EXPECT_EQ(m["gpu"]["simulated_cus"], 7);
  EXPECT_DOUBLE_EQ(m["gpu"]["box_tests_per_second"].get<double>(),
                   m["box_tests"].get<double>() / m["cycles"].get<double>() * 56 / 7 * 2520e6);
  EXPECT_DOUBLE_EQ(m["box_tests_per_clock"].get<double>(),
                   m["box_tests"].get<double>() / m["cycles"].get<double>() / 7);
  EXPECT_DOUBLE_EQ(m["memory_levels"][0]["bytes_per_clock"].get<double>(),
                   m["memory_levels"][0]["bytes"].get<double>() / m["cycles"].get<double>() * 56 / 7);

  r = hwbvh("stats " + blob() + kSmall + " --rays primary --machine rdna3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("AMD Radeon RX 7900 XTX: 96 CUs (8 simulated: 1 shader array) x 2500 MHz"));
  EXPECT_THAT(r.out, HasSubstr("RA box tests per clock (peak 4)"));
  EXPECT_THAT(r.out, HasSubstr("MALL bandwidth"));

  r = hwbvh("compare " + quote(test::project_scene("cornell-box.obj").string()) + kSmall +
            " --random-rays 64 --machine rdna4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPU box/s"));

  const std::string html = path("r.html");
  r = hwbvh("report " + blob() + kSmall + " --rays primary -o " + quote(html) +
            " --machine rdna4 --sweep-param 'memory.levels[L0].bytes' --sweep-values 4096,32768");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = test::slurp(html);
  EXPECT_THAT(page, HasSubstr("<h3>Machine-model sweep of memory.levels[L0].bytes</h3>"));
  EXPECT_THAT(page, HasSubstr("<svg xmlns="));
  EXPECT_THAT(page, HasSubstr("box tests per second"));

  // --gpu-scale is gone: the figures above are the whole GPU's. A preset's GPU must be whole.
  EXPECT_EQ(hwbvh("stats " + blob() + kSmall + " --machine rdna4 --gpu-scale").code, 2);
  const std::string preset = path("no-gpu.json");
  std::ofstream(preset) << R"({"base": "rdna4", "description": "no gpu", "gpu": {"clock_mhz": 0}})";
  r = hwbvh("stats " + blob() + kSmall + " --machine " + quote(preset));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no-gpu.json: machine parameter 'gpu.clock_mhz' is 0"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(hwbvh("report " + blob() + " -o " + quote(path("x.html")) + " --sweep-param 'memory.levels[L0].bytes'").code, 2);
  EXPECT_FALSE(std::filesystem::exists(path("x.html")));
}

// `machine reproduce rt-throughput` on a small frame: one record per GPU with the model's whole-GPU figures (those of
// its machine-model run) beside the published ones, the same at any thread count; bad usage exits 2 with one line.
TEST_F(MachineCli, ReproduceRtThroughputPrintsOneRecordPerGpu) {
  const std::string scene = quote(test::project_scene("instanced-garden.gltf").string());
  const std::string small = " --width 64 --height 32 --quiet --scene " + scene;
  test::Outcome r = hwbvh("machine reproduce rt-throughput --json --threads 1" + small);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["width"], 64);
  ASSERT_EQ(j["gpus"].size(), 2u);
  const nlohmann::json& rdna4 = j["gpus"][0];
  EXPECT_EQ(rdna4["preset"], "rdna4");
  EXPECT_EQ(rdna4["target"], "rtip31");
  EXPECT_TRUE(rdna4["obb"].get<bool>());
  EXPECT_EQ(rdna4["published"]["box_tests_per_second"].get<double>(), 111.76e9);
  EXPECT_EQ(rdna4["published"]["triangle_tests_per_second"].get<double>(), 19.61e9);
  EXPECT_EQ(j["gpus"][1]["target"], "rtip20");
  EXPECT_EQ(j["gpus"][1]["published"]["box_tests_per_second"].get<double>(), 38.8e9);
  for (const nlohmann::json& g : j["gpus"]) {
    const nlohmann::json& m = g["machine_model"];
    EXPECT_EQ(m["status"], "completed");
    EXPECT_GT(g["box_tests_per_second"].get<double>(), 0.0);
    EXPECT_EQ(g["box_tests_per_second"], m["gpu"]["box_tests_per_second"]);
    EXPECT_EQ(g["triangle_tests_per_second"], m["gpu"]["triangle_tests_per_second"]);
    EXPECT_EQ(g["utilization"], m["gpu"]["ra_utilization"]);
    // Only the simulated CUs' tiles are traced: of the 64 tiles, 0, 8, .., 56 (rdna4: one shader array, slots 0, 8,
    // .., 48 of 56; rdna2: slots 0, 8, .., 72 of 80), in four passes.
    EXPECT_LE(g["rays_traced"].get<uint64_t>(), 4u * 8 * 32);
    EXPECT_GT(g["rays_traced"].get<uint64_t>(), 0u);
  }
  EXPECT_DOUBLE_EQ(j["ratios"]["published_box_tests"].get<double>(), 111.76 / 38.8);
  EXPECT_EQ(hwbvh("machine reproduce rt-throughput --json --threads 2" + small).out, r.out);

  r = hwbvh("machine reproduce rt-throughput" + small);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("AMD Radeon RX 9070"));
  EXPECT_THAT(r.out, HasSubstr("ratio rdna4 / "));

  // Without --scene: the interior generated beside the executable (build/scenes/ for build/bin/hwbvh), seen down its
  // hall (stats::kInteriorHallCamera), not framed from outside.
  const std::string interior =
      quote((std::filesystem::path(HWBVH_CLI).parent_path() / ".." / "scenes" / "interior.glb").string());
  const std::string tiny = " --json --width 32 --height 16 --quiet";
  const test::Outcome by_default = hwbvh("machine reproduce rt-throughput" + tiny);
  ASSERT_EQ(by_default.code, 0) << by_default.err;
  EXPECT_EQ(by_default.out, hwbvh("machine reproduce rt-throughput" + tiny + " --scene " + interior +
                                  " --camera=-31,1.7,0.5,32,2.5,-1,0,1,0,70").out);
  EXPECT_NE(by_default.out, hwbvh("machine reproduce rt-throughput" + tiny + " --scene " + interior).out);

  EXPECT_EQ(hwbvh("machine reproduce rt-latency" + small).code, 2);
  r = hwbvh("machine reproduce rt-throughput --quiet --scene " + quote(path("none.glb")));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("none.glb: no such scene file"));
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace hwbvh

namespace hwbvh {
namespace {

// A preset whose hardware does not read the blob's nodes runs, labelled hypothetical in text, JSON and HTML; one
// that reads them is not labelled.
TEST_F(MachineCli, OtherHardwaresNodesAreLabelledHypothetical) {
  const std::string label = "hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not this blob's rtip31";
  test::Outcome r = hwbvh("stats " + blob() + " --rays primary --machine rdna3" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(label));
  r = hwbvh("stats " + blob() + " --rays primary --machine rdna3 --json" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ray_types"][0]["machine_model"]["hypothetical"], label);
  r = hwbvh("stats " + blob() + " --rays primary --machine rdna4 --json" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["ray_types"][0]["machine_model"].contains("hypothetical"));
  const std::string html = path("hypothetical.html");
  r = hwbvh("report " + blob() + " -o " + quote(html) + " --rays primary --machine rdna3" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(test::slurp(html), HasSubstr("hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not this "
                                           "blob&#39;s rtip31"));

  // An rtip20 blob on rdna3 is what the hardware reads: no label.
  const std::string bvh4 = path("cornell-rtip20.hwbvh");
  ASSERT_EQ(hwbvh("build " + quote(test::project_scene("cornell-box.obj").string()) + " --target rtip20 -o " +
                  quote(bvh4)).code,
            0);
  r = hwbvh("stats " + quote(bvh4) + " --rays primary --machine rdna3" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("hypothetical")));
}

// compare labels the variants a preset's hardware does not run: on rdna3 (rtip20 nodes only) the BVH4x2 row (RT IP
// 3.1's dual intersect), the BVH8 rows and xe3; on rdna4 only xe3. In the table, the per-run lines, the JSON and the
// report's comparison.
TEST_F(MachineCli, CompareLabelsTheVariantsThePresetsHardwareDoesNotRun) {
  const std::string scene = quote(test::project_scene("cornell-box.obj").string());
  const std::string rdna3 = "hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not ";
  test::Outcome r = hwbvh("compare " + scene + kSmall + " --rays primary --machine rdna3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nrtip31 BVH4x2: " + rdna3 + "with rtip31's dual intersect (BVH4x2)\n"));
  EXPECT_THAT(r.out, HasSubstr("\nrtip31 BVH8: " + rdna3 + "this blob's rtip31\n"));
  EXPECT_THAT(r.out, HasSubstr("\nrtip31 BVH8 + OBB: " + rdna3 + "this blob's rtip31\n"));
  EXPECT_THAT(r.out, HasSubstr("\nxe3 QBVH6: " + rdna3 + "this blob's xe3\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nrtip20 BVH4 [^\n]* [0-9]+\n"));  // cycles, no label
  EXPECT_THAT(r.out, testing::ContainsRegex("\nrtip31 BVH8 \\+ OBB [^\n]* [0-9]+ \\(hypothetical\\)\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nxe3 QBVH6 \\(hypothetical\\) +primary "));  // the per-run lines
  EXPECT_THAT(r.out, testing::ContainsRegex("\nrtip20 BVH4 +primary "));

  r = hwbvh("compare " + scene + kSmall + " --rays primary --machine rdna3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json variants = nlohmann::json::parse(r.out)["variants"];
  ASSERT_EQ(variants.size(), 5u);
  EXPECT_FALSE(variants[0].contains("machine_model_hypothetical")) << variants[0]["variant"];
  EXPECT_EQ(variants[1]["machine_model_hypothetical"], rdna3 + "with rtip31's dual intersect (BVH4x2)");
  EXPECT_EQ(variants[3]["machine_model_hypothetical"], rdna3 + "this blob's rtip31");
  EXPECT_EQ(variants[4]["machine_model_hypothetical"], rdna3 + "this blob's xe3");

  // rdna4 reads rtip31 and rtip20 nodes and has the dual intersect: only xe3 is hypothetical.
  r = hwbvh("compare " + scene + kSmall + " --rays primary --machine rdna4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json rdna4_variants = nlohmann::json::parse(r.out)["variants"];  // kept: the loop reads it
  for (const nlohmann::json& v : rdna4_variants) {
    EXPECT_EQ(v.contains("machine_model_hypothetical"), v["variant"] == "xe3 QBVH6") << v["variant"];
  }

  const std::string html = path("compare-rdna3.html");
  r = hwbvh("report " + scene + " -o " + quote(html) + kSmall + " --rays primary --compare --machine rdna3");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = test::slurp(html);
  EXPECT_THAT(page, HasSubstr("<strong>rtip31 BVH8 + OBB: hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 "
                              "nodes, not this blob&#39;s rtip31</strong>"));
  EXPECT_THAT(page, HasSubstr("<td>xe3 QBVH6 (hypothetical)</td>"));
}

// machine sweep labels a preset whose hardware does not read the blob's nodes: its rows, the note under the title,
// each point's JSON, and the plot's legend and notes; the preset that reads them is not labelled.
TEST_F(MachineCli, SweepLabelsHypotheticalSeries) {
  const std::string svg = path("hypothetical-sweep.svg");
  const std::string label = "hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not this blob's rtip31";
  const std::string sweep = "machine sweep " + blob() + kSmall +
                            " --machine rdna4,rdna3 --param 'memory.levels[L0].hit_latency' --values 40,80";
  test::Outcome r = hwbvh(sweep + " -o " + quote(svg));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n" + label + "\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nrdna4 +40 +[0-9]+ "));
  EXPECT_THAT(r.out, testing::ContainsRegex("\nrdna3 \\(hypothetical\\) +40 +[0-9]+ [^\n]*completed\n"
                                            "rdna3 \\(hypothetical\\) +80 "));
  const std::string plot = test::slurp(svg);
  EXPECT_THAT(plot, HasSubstr(">rdna3 (hypothetical)</text>"));
  EXPECT_THAT(plot, HasSubstr(">rdna4</text>"));
  EXPECT_THAT(plot, HasSubstr(">hypothetical: rdna3 (AMD Radeon RX 7900 XTX) reads rtip20 nodes, not this "
                              "blob&#39;s rtip31</text>"));

  r = hwbvh(sweep + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json points = nlohmann::json::parse(r.out)["points"];
  ASSERT_EQ(points.size(), 4u);
  EXPECT_FALSE(points[0].contains("hypothetical"));
  EXPECT_FALSE(points[1].contains("hypothetical"));
  EXPECT_EQ(points[2]["hypothetical"], label);
  EXPECT_EQ(points[3]["hypothetical"], label);
}

// machine sensitivity: the ranked table, the JSON, the tornado plot, and refusals that leave nothing behind.
TEST_F(MachineCli, SensitivityRanksTheUnsourcedParametersAndPlotsThem) {
  const std::string svg = path("tornado.svg");
  test::Outcome r = hwbvh("machine sensitivity " + blob() + " --machine rdna4 --svg " + quote(svg) + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("machine-model sensitivity of rdna4"));
  EXPECT_THAT(r.out, HasSubstr("memory.levels[L0].bytes_per_clock"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("compute_unit.simds")));  // sourced
  const std::string plot = test::slurp(svg);
  EXPECT_TRUE(plot.starts_with("<svg"));
  EXPECT_THAT(plot, HasSubstr("0 = the preset"));

  r = hwbvh("machine sensitivity " + blob() + " --machine rdna4 --json --factor-low 0.25 --factor-high 4" + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["factor_low"], 0.25);
  EXPECT_EQ(j["factor_high"], 4.0);
  EXPECT_GT(j["parameters"].size(), 10u);
  EXPECT_EQ(j["parameters"][0]["rank"], 1);
  EXPECT_GT(j["preset_figures"]["cycles"].get<uint64_t>(), 0u);

  const std::string bad = path("bad.svg"), png = path("plot.png");
  for (const std::string& args : {" --machine nope --svg " + quote(bad), " --machine rdna4 --factor-low 2 --svg " +
                                  quote(bad), " --machine rdna4 --svg " + quote(png)}) {
    r = hwbvh("machine sensitivity " + blob() + args + kSmall);
    EXPECT_EQ(r.code, 2) << args << r.err;
    EXPECT_FALSE(std::filesystem::exists(bad) || std::filesystem::exists(png)) << args;
  }
}

// The frame's mix of work is what timing cannot change: each GPU's box tests per triangle test (against the
// published one), and the box ratio over the triangle ratio, which is the two GPUs' mixes' quotient. A what-if
// `--param` slows the loop on every GPU (or, with PRESET:, on one): the rates and factors move, the mixes do not,
// the record lists the replacement, and a GPU it does not name runs exactly as shipped. Bad --param exits 2.
TEST_F(MachineCli, ReproduceRtThroughputShowsTheMixTimingCannotChange) {
  // 9 tiles a row: the simulated shader array's tiles (every eighth) fall in every column of the frame, and some
  // reach the garden's triangles (at 8 tiles a row they would all be its empty left edge).
  const std::string small = " --json --threads 2 --width 72 --height 32 --quiet --scene " +
                            quote(test::project_scene("instanced-garden.gltf").string());
  const auto run = [&](const std::string& extra) {
    const test::Outcome r = hwbvh("machine reproduce rt-throughput" + small + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json shipped = run("");
  const nlohmann::json slower = run(" --param kernel.loop_alu_cycles=96");
  const nlohmann::json rdna2_slower = run(" --param rdna2:kernel.loop_alu_cycles=96");
  std::vector<double> mixes;
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& g = shipped["gpus"][i];
    const nlohmann::json& m = g["machine_model"];
    const double mix = m["box_tests"].get<double>() / m["triangle_tests"].get<double>();
    mixes.push_back(mix);
    EXPECT_DOUBLE_EQ(g["box_per_triangle_test"].get<double>(), mix);
    const nlohmann::json& p = g["published"];
    EXPECT_DOUBLE_EQ(p["box_per_triangle_test"].get<double>(),
                     p["box_tests_per_second"].get<double>() / p["triangle_tests_per_second"].get<double>());
    EXPECT_DOUBLE_EQ(g["model_over_published"]["box_tests_per_second"].get<double>(),
                     g["box_tests_per_second"].get<double>() / p["box_tests_per_second"].get<double>());
    EXPECT_DOUBLE_EQ(g["model_over_published"]["triangle_tests_per_second"].get<double>(),
                     g["triangle_tests_per_second"].get<double>() / p["triangle_tests_per_second"].get<double>());
    EXPECT_TRUE(g["overrides"].empty());

    const nlohmann::json& s = slower["gpus"][i];
    EXPECT_DOUBLE_EQ(s["box_per_triangle_test"].get<double>(), mix);
    EXPECT_LT(s["box_tests_per_second"].get<double>(), g["box_tests_per_second"].get<double>());
    ASSERT_EQ(s["overrides"].size(), 1u);
    EXPECT_EQ(s["overrides"][0]["key"], "kernel.loop_alu_cycles");
    EXPECT_EQ(s["overrides"][0]["value"], "96");
  }
  EXPECT_NEAR(shipped["ratios"]["box_over_triangle"].get<double>(), mixes[0] / mixes[1], 1e-9 * mixes[0] / mixes[1]);
  EXPECT_DOUBLE_EQ(shipped["ratios"]["published_box_over_triangle"].get<double>(), (111.76 / 19.61) / (38.8 / 10.76));
  EXPECT_EQ(rdna2_slower["gpus"][0]["machine_model"], shipped["gpus"][0]["machine_model"]);
  EXPECT_TRUE(rdna2_slower["gpus"][0]["overrides"].empty());
  EXPECT_EQ(rdna2_slower["gpus"][1]["machine_model"], slower["gpus"][1]["machine_model"]);

  const test::Outcome text = hwbvh("machine reproduce rt-throughput --width 64 --height 32 --quiet --scene " +
                                   quote(test::project_scene("instanced-garden.gltf").string()) +
                                   " --param rdna2:kernel.loop_alu_cycles=96");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("what-if: kernel.loop_alu_cycles = 96 (not the preset's value)"));
  EXPECT_THAT(text.out, HasSubstr("box ratio / triangle ratio "));
  EXPECT_THAT(text.out, HasSubstr("box tests per triangle test"));

  for (const auto& [param, message] :
       {std::pair<std::string, std::string>{"rdna3:kernel.loop_alu_cycles=9", "rdna3: no GPU of rt-throughput runs"},
        {"kernel.no_such_key=1", "rdna4: machine preset key 'kernel.no_such_key' is not a machine parameter"},
        {"kernel.loop_alu_cycles", "--param kernel.loop_alu_cycles: expected [PRESET:]KEY=VALUE"},
        {":kernel.loop_alu_cycles=9", "a preset name before ':'"}}) {
    const test::Outcome r = hwbvh("machine reproduce rt-throughput" + small + " --param=" + quote(param));
    EXPECT_EQ(r.code, 2) << param;
    EXPECT_THAT(r.err, HasSubstr(message)) << param;
    EXPECT_TRUE(r.out.empty()) << param;
  }
}

}  // namespace
}  // namespace hwbvh
