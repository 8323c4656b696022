// `hwbvh machine run` (docs/cli.md, docs/machine-model.md "Wave programs"): the shipped reproduction programs run
// and print their per-wave figures, --json parses, and bad program or preset files exit 2 with one line.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
};

TEST_F(MachineCli, RunsTheCrossWaveOrderingProgram) {
  test::Outcome r = hwbvh("machine run " + program("cross-wave-ordering.json") + " --machine rdna3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("completed: completed 2 waves"));
  EXPECT_THAT(r.out, HasSubstr("outputs of a model, not hardware measurements"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Y#0 +0 +0 +0 +36297 +36297 +131 +64 +1"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("X#0 +0 +1 +0 +[0-9]+ +[0-9]+ +[0-9]+ +256 "));
  EXPECT_THAT(r.out, HasSubstr("DRAM"));

  r = hwbvh("machine run " + program("cross-wave-ordering.json") + " --machine rdna4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(j["preset"], "rdna4");
  ASSERT_EQ(j["per_wave"].size(), 2u);
  EXPECT_EQ(j["per_wave"][1]["loads"], 1664);
  EXPECT_EQ(j["memory_levels"].size(), 5u);

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

}  // namespace
}  // namespace hwbvh
