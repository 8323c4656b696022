// End-to-end tests of the ray and trace options every tracing command shares (apps/hwbvh/ray_options.h): stats,
// render, report and compare list each option they take with the same type, range, default and help text.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;
using ::testing::HasSubstr;

class RayOptions : public test::ReportCliTest {
 protected:
  // `hwbvh COMMAND --help`: per option its help line, whitespace runs collapsed to one space.
  std::map<std::string, std::string> option_lines(const std::string& command) {
    const test::Outcome r = hwbvh(command + " --help");
    EXPECT_EQ(r.code, 0) << r.err;
    std::map<std::string, std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, std::regex("^\\s+(--[a-z-]+)"))) continue;
      lines[m[1]] = std::regex_replace(line, std::regex("\\s+"), " ");
    }
    return lines;
  }
};

// Which command takes which shared option: --rays-file and --stoc only where they do something (compare traces
// no rays file and bakes no STOC states; render traces primary rays only).
TEST_F(RayOptions, TracingCommandsShareTheSameDefinitions) {
  const std::vector<std::string> all{"stats", "render", "report", "compare"};
  const std::vector<std::string> generating{"stats", "report", "compare"};
  const std::map<std::string, std::vector<std::string>> takers{
      {"--width", all},           {"--height", all},          {"--camera", all},
      {"--ao-samples", generating}, {"--ao-distance", generating}, {"--random-rays", generating},
      {"--seed", generating},     {"--rays-file", {"stats", "report"}},
      {"--instance-mask", all},   {"--stack-size", all},      {"--heuristic", all},
      {"--triangle-test", all},   {"--step-limit", all},      {"--no-duplicate-any-hit", all},
      {"--stoc", {"stats", "render", "report"}},
  };
  std::map<std::string, std::map<std::string, std::string>> help;
  for (const std::string& c : all) help[c] = option_lines(c);
  for (const auto& [option, commands] : takers) {
    const std::string& reference = help[commands.front()][option];
    EXPECT_FALSE(reference.empty()) << commands.front() << " has no " << option;
    for (const std::string& c : commands) EXPECT_EQ(help[c][option], reference) << c << " " << option;
  }
  // The figures the issue found different: AO samples 4 everywhere, images up to 16384 pixels everywhere.
  EXPECT_THAT(help["report"]["--ao-samples"], HasSubstr("=4"));
  EXPECT_THAT(help["report"]["--width"], HasSubstr("16384"));
  EXPECT_THAT(help["compare"]["--ao-distance"], HasSubstr("--ao-distance"));
  EXPECT_EQ(help["render"].count("--ao-samples"), 0u);  // render traces primary rays only
  EXPECT_EQ(help["compare"].count("--stoc"), 0u);
}

// The options report and compare gained are used, not only accepted: shorter AO rays visit fewer nodes.
TEST_F(RayOptions, ReportAndCompareTraceWithTheAoDistance) {
  const auto scene = test::project_scene("rotated-objects.obj");
  ASSERT_TRUE(std::filesystem::exists(scene));
  const std::string small = " --width 16 --height 16 --quiet --rays ao --json";
  const test::Outcome near = hwbvh("compare " + quote(scene.string()) + small + " --ao-distance 0.01");
  const test::Outcome far = hwbvh("compare " + quote(scene.string()) + small + " --ao-distance 1000");
  ASSERT_EQ(near.code, 0) << near.err;
  ASSERT_EQ(far.code, 0) << far.err;
  const auto steps = [](const test::Outcome& o) {
    return nlohmann::json::parse(o.out)["variants"][0]["steps_per_ray"].get<double>();
  };
  EXPECT_LT(steps(near), steps(far));
  const std::string html = path("r.html");
  const test::Outcome r = hwbvh("report " + quote(scene.string()) + " -o " + quote(html) +
                                " --width 16 --height 16 --quiet --ao-distance 0.01 --heuristic 2 --step-limit 500");
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace hwbvh
