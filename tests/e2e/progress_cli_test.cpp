// The progress line (docs/cli.md "Progress") is drawn on a terminal only: the same seconds-long run shows it with a
// percentage when stderr is a pseudo-terminal (util-linux `script` gives the command one), and prints nothing on
// stderr when stderr is a file or with --quiet; stdout is the same either way.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "e2e/report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;

class ProgressCli : public test::ReportCliTest {
 protected:
  // About 17M camera rays on one thread: seconds of work, past the indicator's one-second delay.
  std::string stats_args(const std::string& extra = {}) const {
    return "stats " + quote(test::project_scene("cornell-box.obj").string()) +
           " --rays primary --width 4096 --height 4096 --no-oracle --threads 1 --json" + extra;
  }
  // `hwbvh ARGS` with stdin, stdout and stderr on a pseudo-terminal; what it wrote comes back as stdout.
  test::Outcome on_terminal(const std::string& args) {
    return run("script -qec " + quote(quote(HWBVH_CLI) + " " + args) + " /dev/null");
  }
};

TEST_F(ProgressCli, ShownOnATerminalOnlyAndNotWithQuiet) {
  const test::Outcome piped = hwbvh(stats_args());
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");  // stderr is a file: no progress

  const test::Outcome shown = on_terminal(stats_args());
  ASSERT_EQ(shown.code, 0) << shown.out;
  EXPECT_NE(shown.out.find("hwbvh stats: tracing primary"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("%"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("\r\x1b[K"), std::string::npos);  // drawn over itself, and erased at the end
  // The JSON document is all the rest, with the same statistics (its wall-clock figures aside).
  const std::size_t json = shown.out.find('{');
  ASSERT_NE(json, std::string::npos);
  const auto on_terminal_json = nlohmann::json::parse(shown.out.substr(json));
  const auto piped_json = nlohmann::json::parse(piped.out);
  for (const char* key : {"rays", "hits", "steps", "box_tests", "triangle_tests", "totals"})
    EXPECT_EQ(on_terminal_json["ray_types"][0][key], piped_json["ray_types"][0][key]) << key;

  const test::Outcome quiet = on_terminal(stats_args(" --quiet"));
  ASSERT_EQ(quiet.code, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("hwbvh stats:"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find('\r'), quiet.out.find("\r\n")) << "no line drawn over itself";
}

}  // namespace
}  // namespace hwbvh
