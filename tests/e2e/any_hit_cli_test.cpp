// End-to-end any-hit emulation (binary path in HWBVH_CLI): `hwbvh stats --stoc on|off` on alpha-card blobs of every
// target (rtip20: no --stoc) reports the any-hit counters with the same hits, --no-duplicate-any-hit runs the shader
// once per triangle, and `hwbvh render --mode any-hit` draws them.
#include <sys/wait.h>

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "hwbvh/render/png.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;

class AnyHitCli : public ::testing::Test {
 protected:
  AnyHitCli() : dir_(std::string("e2e-any-hit-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  static std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }

  // Runs `hwbvh ARGS`; returns the exit code and fills `out` with stdout (stderr goes to a file for messages).
  int hwbvh(const std::string& args, std::string* out = nullptr) {
    const auto out_file = dir_ / "stdout.txt", err_file = dir_ / "stderr.txt";
    const int status = std::system(
        (quote(HWBVH_CLI) + " " + args + " >" + quote(out_file.string()) + " 2>" + quote(err_file.string())).c_str());
    std::ifstream in(out_file, std::ios::binary), err(err_file, std::ios::binary);
    std::stringstream s, e;
    s << in.rdbuf();
    e << err.rdbuf();
    if (out) *out = s.str();
    last_error_ = e.str();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  test::ScratchDir dir_;
  std::string last_error_;
};

TEST_F(AnyHitCli, StatsStocOnAndOffOnEveryTarget) {
  const std::string scene = quote(test::project_scene("alpha-cards.obj").string());
  for (const std::string target : {"rtip31", "rtip20", "xe3"}) {
    SCOPED_TRACE(target);
    const std::string blob = path(target + ".hwbvh");
    ASSERT_EQ(hwbvh("build " + scene + " -o " + quote(blob) + " --target " + target + " --quiet"), 0) << last_error_;
    // RT IP 2.0 blobs hold no STOC states: --stoc is refused there (TargetOptions), so both runs take the default.
    const bool has_stoc = target != "rtip20";
    std::string on_text, off_text;
    const std::string common = "stats " + quote(blob) + " --rays primary,shadow --width 48 --height 32 --quiet --json";
    ASSERT_EQ(hwbvh(common + (has_stoc ? " --stoc on" : ""), &on_text), 0) << last_error_;
    ASSERT_EQ(hwbvh(common + (has_stoc ? " --stoc off" : ""), &off_text), 0) << last_error_;
    const auto on = nlohmann::json::parse(on_text), off = nlohmann::json::parse(off_text);
    EXPECT_EQ(on["any_hit_shader"], true);
    EXPECT_EQ(on["stoc"], true);
    EXPECT_EQ(off["stoc"], !has_stoc);
    for (std::size_t k = 0; k < on["ray_types"].size(); ++k) {
      const auto &a = on["ray_types"][k], &b = off["ray_types"][k];
      EXPECT_EQ(a["hits"], b["hits"]);
      EXPECT_EQ(a["totals"]["steps"], b["totals"]["steps"]);
      EXPECT_EQ(a["oracle"]["agreement_rate"], 1.0);
      EXPECT_EQ(b["oracle"]["agreement_rate"], 1.0);
      const auto on_calls = a["totals"]["any_hit_invocations"].get<uint64_t>();
      const auto off_calls = b["totals"]["any_hit_invocations"].get<uint64_t>();
      EXPECT_GT(off_calls, 0u);
      if (has_stoc) {
        EXPECT_LT(on_calls, off_calls);
      } else {
        EXPECT_EQ(on_calls, off_calls);
      }
    }
  }
  std::string text;
  EXPECT_EQ(hwbvh("stats " + quote(path("xe3.hwbvh")) + " --stoc maybe --quiet", &text), 2);
}

// Spatial splits (--quality high) reference one alpha-tested triangle from several leaves: without the flag a ray can
// run the shader on it more than once, with --no-duplicate-any-hit never; the hits do not change.
TEST_F(AnyHitCli, NoDuplicateAnyHitRunsFewerShadersOnSpatialSplitsWithTheSameHits) {
  const std::string scene = quote(test::project_scene("alpha-cards.obj").string());
  for (const std::string target : {"rtip31", "rtip20", "xe3"}) {
    SCOPED_TRACE(target);
    const std::string blob = path(target + ".hwbvh");
    ASSERT_EQ(hwbvh("build " + scene + " -o " + quote(blob) + " --target " + target + " --quality high --quiet"), 0)
        << last_error_;
    std::string again_text, once_text;
    // --stoc off so that every non-opaque candidate runs the shader (rtip20 has no STOC: refused there, not needed).
    const std::string common = "stats " + quote(blob) + " --rays primary,ao --width 64 --height 64 --quiet --json" +
                               (target == "rtip20" ? "" : " --stoc off");
    ASSERT_EQ(hwbvh(common, &again_text), 0) << last_error_;
    ASSERT_EQ(hwbvh(common + " --no-duplicate-any-hit", &once_text), 0) << last_error_;
    const auto again = nlohmann::json::parse(again_text), once = nlohmann::json::parse(once_text);
    for (std::size_t k = 0; k < again["ray_types"].size(); ++k) {
      const auto &a = again["ray_types"][k], &b = once["ray_types"][k];
      EXPECT_EQ(a["hits"], b["hits"]);
      EXPECT_EQ(a["totals"]["steps"], b["totals"]["steps"]);
      EXPECT_EQ(b["oracle"]["agreement_rate"], 1.0);
      EXPECT_LT(b["totals"]["any_hit_invocations"].get<uint64_t>(), a["totals"]["any_hit_invocations"].get<uint64_t>());
    }
  }
}

TEST_F(AnyHitCli, RenderAnyHitHeatmap) {
  const std::string blob = path("cards.hwbvh");
  ASSERT_EQ(hwbvh("build " + quote(test::project_scene("alpha-cards.obj").string()) + " -o " + quote(blob) +
                  " --target xe3 --quiet"),
            0)
      << last_error_;
  std::string out;
  for (const std::string stoc : {"on", "off"}) {
    const std::string png = path("any-hit-" + stoc + ".png");
    ASSERT_EQ(hwbvh("render " + quote(blob) + " -o " + quote(png) + " --mode any-hit --width 64 --height 48 --stoc " +
                        stoc,
                    &out),
              0)
        << last_error_;
    EXPECT_THAT(out, HasSubstr("max any-hit"));
    const render::Image image = render::read_png(png);
    EXPECT_EQ(image.width(), 64u);
    EXPECT_GT(image.height(), 48u);  // the legend strip below
  }
}

}  // namespace
}  // namespace hwbvh
