// Every option that some target has no use for, on every target (docs/cli.md "Options by target"): where it
// applies, giving it changes the output (the blob, or every ray's hit and counters from `stats --per-ray`); where it
// does not, the command exits 2 naming the option and the target, and writes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "e2e/report_fixture.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;

class TargetOptions : public test::ReportCliTest {
 protected:
  // alpha-cards has alpha-tested triangles, so the opacity and STOC options have work to do on it.
  std::string blob(const std::string& target) {
    const std::string out = path("cards-" + target + ".hwbvh");
    if (!std::filesystem::exists(out)) {
      const std::string scene = test::project_scene("alpha-cards.obj").string();
      EXPECT_EQ(hwbvh("build " + test::quote(scene) + " -o " + test::quote(out) + " --quiet --target " + target).code,
                0);
    }
    return out;
  }

  // Every ray's hit and counters (`stats --per-ray` CSV) of `target`'s blob with `options`.
  std::string per_ray(const std::string& target, const std::string& options) {
    const std::string csv = path("rays.csv");
    const test::Outcome r = hwbvh("stats " + test::quote(blob(target)) + " --quiet --no-oracle --rays primary,shadow,random"
                                  " --width 32 --height 24 --random-rays 256 --per-ray " + test::quote(csv) + " " + options);
    EXPECT_EQ(r.code, 0) << options << ": " << r.err;
    return test::slurp(csv);
  }

  // Exit 2, one message naming the option and the target, and no output file.
  void expect_refused(const test::Outcome& r, const std::string& option, const std::string& target,
                      const std::string& output) {
    EXPECT_EQ(r.code, 2) << option << " on " << target << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("hwbvh: error: " + option + " applies to target"));
    EXPECT_THAT(r.err, HasSubstr("targets " + target + ")"));
    EXPECT_FALSE(std::filesystem::exists(output)) << output;
  }
};

TEST_F(TargetOptions, BuildOptionsChangeTheBlobOrAreRefused) {
  const std::string scene = test::quote(test::project_scene("alpha-cards.obj").string());
  // option -> its value on each target it applies to (not the target's default, so that it must change the blob)
  const std::map<std::string, std::map<std::string, std::string>> options = {
      {"--stoc-level", {{"rtip31", "1"}, {"xe3", "3"}}},
      {"--stoc-order", {{"rtip31", "row"}, {"xe3", "row"}}},
      {"--opacity-level", {{"rtip31", "6"}, {"xe3", "6"}}},
      {"--obb", {{"rtip31", "off"}}},
      {"--obb-ratio", {{"rtip31", "0.5"}}}};
  for (const std::string target : {"rtip31", "rtip20", "xe3"}) {
    const std::string plain = test::slurp(blob(target));
    for (const auto& [option, values] : options) {
      const std::string out = path("with-option.hwbvh");
      std::filesystem::remove(out);
      const auto value = values.find(target);
      // Refused: a value another target takes, so that only the target is wrong.
      const std::string given = option + " " + (value != values.end() ? value : values.begin())->second;
      const test::Outcome r = hwbvh("build " + scene + " -o " + test::quote(out) + " --quiet --target " + target + " " + given);
      if (value != values.end()) {
        ASSERT_EQ(r.code, 0) << given << " on " << target << ": " << r.err;
        EXPECT_TRUE(test::slurp(out) != plain) << given << " changes nothing on " << target;
      } else {
        expect_refused(r, option, target, out);
      }
    }
  }
  // --obb on rtip31 on a scene with rotated objects, where OBBs are chosen.
  const std::string rotated = test::quote(test::project_scene("rotated-objects.obj").string());
  ASSERT_EQ(hwbvh("build " + rotated + " -o " + test::quote(path("a.hwbvh")) + " --quiet").code, 0);
  ASSERT_EQ(hwbvh("build " + rotated + " -o " + test::quote(path("b.hwbvh")) + " --quiet --obb off").code, 0);
  EXPECT_TRUE(test::slurp(path("a.hwbvh")) != test::slurp(path("b.hwbvh")));
}

TEST_F(TargetOptions, TraceOptionsChangeEveryTargetsRaysOrAreRefused) {
  // option -> the targets it applies to; --triangle-test is implemented for all, its value the non-default one.
  const std::map<std::string, std::map<std::string, std::string>> options = {
      {"--stack-size", {{"rtip31", "2"}, {"rtip20", "2"}}},
      {"--heuristic", {{"rtip31", "3"}, {"rtip20", "3"}}},
      {"--stoc", {{"rtip31", "off"}, {"xe3", "off"}}},
      {"--triangle-test", {{"rtip31", "gpurt"}, {"rtip20", "watertight"}, {"xe3", "gpurt"}}}};
  for (const std::string target : {"rtip31", "rtip20", "xe3"}) {
    const std::string plain = per_ray(target, "");
    ASSERT_FALSE(plain.empty());
    for (const auto& [option, values] : options) {
      const auto value = values.find(target);
      if (value != values.end()) {
        EXPECT_TRUE(per_ray(target, option + " " + value->second) != plain) << option << " changes nothing on " << target;
        continue;
      }
      const std::string given = option + (option == "--stoc" ? " off" : " 3");
      const std::string png = path("refused.png"), html = path("refused.html"), csv = path("refused.csv");
      expect_refused(hwbvh("stats " + test::quote(blob(target)) + " --quiet --per-ray " + test::quote(csv) + " " + given),
                     option, target, csv);
      expect_refused(hwbvh("render " + test::quote(blob(target)) + " --mode steps -o " + test::quote(png) + " " + given),
                     option, target, png);
      if (option == "--stack-size") {  // report's only target-dependent option
        expect_refused(hwbvh("report " + test::quote(blob(target)) + " --quiet -o " + test::quote(html) + " " + given),
                       option, target, html);
      }
    }
  }
}

TEST_F(TargetOptions, OptionsLeftAtTheirDefaultsAreNeverRefusedAndXe3ShowsItsShortStack) {
  for (const std::string target : {"rtip31", "rtip20", "xe3"}) {
    const test::Outcome r = hwbvh("stats " + test::quote(blob(target)) + " --quiet --no-oracle --rays primary --width 8 --height 8");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(target == "xe3" ? "  short stack 4 entries  " : "  stack 16 entries  "));
  }
}

TEST_F(TargetOptions, PerRayRefusesOtherExtensionsBeforeTracing) {
  const std::string txt = path("rays.txt");
  const test::Outcome r = hwbvh("stats " + test::quote(blob("rtip31")) + " --quiet --per-ray " + test::quote(txt));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("rays.txt: --per-ray: the file name must end in .csv or .npy"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(std::filesystem::exists(txt));
  const std::string csv = path("rays.csv");
  ASSERT_EQ(hwbvh("stats " + test::quote(blob("xe3")) + " --quiet --rays random --random-rays 64 --per-ray " + test::quote(csv)).code, 0);
  const std::string rows = test::slurp(csv);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 65);  // the header and 64 random rays
}

}  // namespace
}  // namespace hwbvh
