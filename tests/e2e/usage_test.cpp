// End-to-end tests of the command line's usage messages: unknown commands are named with the closest one, `hwbvh
// help` helps, parser errors carry the `hwbvh: error:` prefix, ranges are printed as plain numbers, and
// --heuristic takes names as well as numbers.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include "report_fixture.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::quote;

class Usage : public test::ReportCliTest {
 protected:
  std::string blob() {
    const std::string out = path("cornell.hwbvh");
    if (!std::filesystem::exists(out)) {
      const test::Outcome r =
          hwbvh("build " + quote(test::project_scene("cornell-box.obj").string()) + " -o " + quote(out) + " --quiet");
      EXPECT_EQ(r.code, 0) << r.err;
    }
    return out;
  }
};

// One line on stderr with the prefix, exit 2, nothing on stdout.
void expect_usage_error(const test::Outcome& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("hwbvh: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(needle));
}

TEST_F(Usage, UnknownCommandsAreNamedWithTheClosestOne) {
  test::Outcome r = hwbvh("biuld scene.obj");
  expect_usage_error(r, "unknown command 'biuld'; did you mean 'build'?");
  EXPECT_THAT(r.err, HasSubstr("commands: build, info, dump, stats, render, compare, report, export, machine"));
  expect_usage_error(hwbvh("stat x.hwbvh"), "did you mean 'stats'?");
  r = hwbvh("foo");
  expect_usage_error(r, "unknown command 'foo'");
  EXPECT_THAT(r.err, Not(HasSubstr("did you mean")));  // nothing is close to foo
  expect_usage_error(hwbvh(""), "no command given");
  expect_usage_error(hwbvh("help biuld"), "unknown command 'biuld'; did you mean 'build'?");
}

TEST_F(Usage, HelpListsTheCommandsOrOneCommandsOptions) {
  test::Outcome r = hwbvh("help");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* command : {"build", "stats", "render", "report", "machine"}) EXPECT_THAT(r.out, HasSubstr(command));
  EXPECT_THAT(r.out, HasSubstr("hwbvh help COMMAND"));
  r = hwbvh("help stats");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--ao-samples"));
  EXPECT_EQ(r.out, hwbvh("stats --help").out);
}

TEST_F(Usage, ParserErrorsHaveThePrefixAndPlainRanges) {
  const std::string b = quote(blob());
  expect_usage_error(hwbvh("stats " + b + " --width 0"), "--width");
  expect_usage_error(hwbvh("stats " + b + " --no-such-option"), "--no-such-option");
  test::Outcome r = hwbvh("stats " + b + " --ao-distance 0");
  expect_usage_error(r, "must be a positive number (got 0)");
  EXPECT_THAT(r.err, Not(HasSubstr("1797693")));  // DBL_MAX
  EXPECT_THAT(r.err, Not(HasSubstr("0.000000")));
  r = hwbvh("render " + b + " -o " + quote(path("x.png")) + " --mode steps --max -1");
  expect_usage_error(r, "must be a positive number (got -1)");
  expect_usage_error(hwbvh("build x.obj -o y.hwbvh --obb-ratio 2"), "must be between 0 and 1 (got 2)");
}

TEST_F(Usage, HeuristicTakesNamesAndNumbers) {
  const std::string b = quote(blob());
  const auto steps = [&](const std::string& heuristic) {
    const test::Outcome r = hwbvh("stats " + b + " --rays primary --width 24 --height 16 --no-oracle --json --heuristic " +
                                  heuristic);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out)["ray_types"][0]["totals"].dump() : std::string();
  };
  EXPECT_EQ(steps("closest"), steps("0"));
  EXPECT_EQ(steps("largest-interval"), steps("1"));
  EXPECT_EQ(steps("midpoint"), steps("2"));
  EXPECT_EQ(steps("none"), steps("3"));
  EXPECT_NE(steps("none"), steps("closest"));  // the name reaches the emulator
  expect_usage_error(hwbvh("stats " + b + " --heuristic nearest"),
                     "must be closest, largest-interval, midpoint or none, or their numbers 0..3 (got nearest)");
  expect_usage_error(hwbvh("stats " + b + " --heuristic 4"), "(got 4)");
}

}  // namespace
}  // namespace hwbvh
