// End-to-end tests of `hwbvh report`: an OBJ scene and a blob in one page, --compare and --machine, identical
// output on a second run, and bad usage or bad input -> exit 2 with one message and no output file.
#include <gmock/gmock.h>

#include <algorithm>

#include "report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;
using ::testing::HasSubstr;

class ReportCli : public test::ReportCliTest {
 protected:
  std::string cornell() const {
    const auto p = test::project_scene("cornell-box.obj");
    return std::filesystem::exists(p) ? p.string() : std::string();
  }
  static constexpr const char* kSmall = " --width 40 --height 24 --ao-samples 1 --quiet";
};

TEST_F(ReportCli, ObjAndBlobInOnePage) {
  ASSERT_FALSE(cornell().empty()) << "scenes/cornell-box.obj is missing";
  const std::string blob = path("cornell.hwbvh"), html = path("report.html");
  ASSERT_EQ(hwbvh("build " + quote(cornell()) + " -o " + quote(blob) + " --quiet --target rtip20").code, 0);
  const test::Outcome r = hwbvh("report " + quote(cornell()) + " " + quote(blob) + " -o " + quote(html) + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("wrote " + html + " (2 inputs)"));
  const std::string page = test::slurp(html);
  EXPECT_THAT(page, HasSubstr("<section id=\"scene-1-cornell-box-obj\">"));
  EXPECT_THAT(page, HasSubstr("<section id=\"scene-2-cornell-hwbvh\">"));
  EXPECT_THAT(page, HasSubstr("<td>rtip20</td>"));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("Comparison across targets")));  // only with --compare
  EXPECT_THAT(page, ::testing::Not(HasSubstr("http")));
  EXPECT_EQ(dir_.files().size(), 2u);  // the blob and the report, no temporary left

  // The same inputs give the same bytes.
  const std::string again = path("again.html");
  ASSERT_EQ(
      hwbvh("report " + quote(cornell()) + " " + quote(blob) + " -o " + quote(again) + kSmall + " --threads 1").code,
      0);
  EXPECT_EQ(test::slurp(again), page);
}

TEST_F(ReportCli, CompareAndMachineAddTheirSections) {
  ASSERT_FALSE(cornell().empty()) << "scenes/cornell-box.obj is missing";
  const std::string html = path("report.html");
  const test::Outcome r = hwbvh("report " + quote(cornell()) + " -o " + quote(html) + kSmall +
                                " --rays primary,random --random-rays 256 --compare --machine rdna4");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = test::slurp(html);
  for (const char* text : {"Comparison across targets", "rtip20 BVH4", "rtip31 BVH4x2", "rtip31 BVH8 + OBB",
                           "machine-model cycles", "<h3>Machine model</h3>", "data-ray-type=\"random\""})
    EXPECT_THAT(page, HasSubstr(text));
  EXPECT_THAT(page, ::testing::Not(HasSubstr("<th>any-hit invocations</th>")));  // no alpha-tested triangles
}

// An alpha-tested scene: the build rows of `hwbvh build`, and an any-hit column in the comparison (as in
// `hwbvh compare`'s table).
TEST_F(ReportCli, AlphaTestedSceneShowsOpacityAndAnyHitColumn) {
  const auto cards = test::project_scene("alpha-cards.obj");
  ASSERT_TRUE(std::filesystem::exists(cards)) << cards;
  const std::string html = path("report.html");
  const test::Outcome r =
      hwbvh("report " + quote(cards.string()) + " -o " + quote(html) + kSmall + " --rays primary,shadow --compare");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = test::slurp(html);
  for (const char* text : {"<td>alpha-tested triangles</td>", "<td>STOC</td>", "<td>opacity bake</td>",
                           "<th>any-hit invocations</th><th>oracle agreement</th>", "Alpha-tested scene"})
    EXPECT_THAT(page, HasSubstr(text));
}

TEST_F(ReportCli, BadUsageAndBadInputExitTwoWithoutOutput) {
  const std::string html = path("report.html");
  const std::string garbage = path("garbage.hwbvh");
  std::ofstream(garbage) << "not a blob";
  const std::string missing = path("missing.obj");
  const std::string scene = cornell().empty() ? garbage : cornell();
  const std::pair<std::string, std::string> cases[] = {
      {"report " + quote(missing) + " -o " + quote(html), missing},
      {"report " + quote(garbage) + " -o " + quote(html), garbage},
      {"report " + quote(scene) + " " + quote(garbage) + " -o " + quote(html) + kSmall, garbage},
      {"report " + quote(scene) + " -o " + quote(html) + " --rays primary,sideways", "sideways"},
      {"report " + quote(scene) + " -o " + quote(html) + " --machine no-such-preset", "no-such-preset"},
      {"report " + quote(garbage) + " -o " + quote(garbage), garbage},  // would overwrite its input
  };
  for (const auto& [args, named] : cases) {
    const test::Outcome r = hwbvh(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(named)) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(html)) << args;
  }
  EXPECT_EQ(test::slurp(garbage), "not a blob");
  EXPECT_EQ(hwbvh("report -o " + quote(html)).code, 2);  // no input
  EXPECT_EQ(hwbvh("report " + quote(scene)).code, 2);    // no -o
  EXPECT_EQ(hwbvh("report " + quote(scene) + " -o x --width 0").code, 2);
  EXPECT_FALSE(std::filesystem::exists(html));
}

TEST_F(ReportCli, WriteFailureExitsOneAndLeavesNothing) {
  ASSERT_FALSE(cornell().empty()) << "scenes/cornell-box.obj is missing";
  const std::string html = path("no-such-dir/report.html");
  const test::Outcome r = hwbvh("report " + quote(cornell()) + " -o " + quote(html) + kSmall);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(html));
  EXPECT_TRUE(dir_.files().empty());
}

}  // namespace
}  // namespace hwbvh
