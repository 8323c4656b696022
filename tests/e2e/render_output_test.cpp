// End-to-end tests of what the commands write and say they wrote: render's image formats, --no-legend, --json and
// the sizes it prints, the warning for a comparison of unrelated scenes; stats' "wrote" lines; dump's count of the
// nodes it left out.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include "hwbvh/render/png.h"
#include "report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;
using ::testing::HasSubstr;
using ::testing::Not;

class Outputs : public test::ReportCliTest {
 protected:
  std::string built(const std::string& scene, const std::string& name, const std::string& extra = "") {
    const std::string out = path(name);
    const test::Outcome r = hwbvh("build " + quote(test::project_scene(scene).string()) + " -o " + quote(out) +
                                  " --quiet" + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }
  static constexpr const char* kSmall = " --width 40 --height 24";
};

TEST_F(Outputs, RenderWritesPngOrJpegAndRefusesOtherExtensions) {
  const std::string blob = quote(built("cornell-box.obj", "c.hwbvh"));
  test::Outcome r = hwbvh("render " + blob + " --mode shaded -o " + quote(path("c.jpg")) + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(test::slurp(path("c.jpg")).substr(0, 3), std::string("\xFF\xD8\xFF"));  // JPEG, not PNG
  r = hwbvh("render " + blob + " --mode shaded -o " + quote(path("c.bmp")) + kSmall);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("c.bmp: the image is written as PNG or JPEG"));
  EXPECT_FALSE(std::filesystem::exists(path("c.bmp")));
}

TEST_F(Outputs, RenderSaysItsSizeAndLeavesTheLegendOutOnRequest) {
  const std::string blob = quote(built("cornell-box.obj", "c.hwbvh"));
  test::Outcome r = hwbvh("render " + blob + " --mode steps -o " + quote(path("legend.png")) + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  const render::Image with = render::read_png(path("legend.png"));
  EXPECT_GT(with.height(), 24u);
  EXPECT_THAT(r.out, HasSubstr(std::to_string(with.width()) + " x " + std::to_string(with.height()) + " px (renders of 40 x 24 and " + std::to_string(with.height() - 24) +
                               " rows of titles and legend"));
  r = hwbvh("render " + blob + " --mode steps --no-legend -o " + quote(path("bare.png")) + kSmall + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const render::Image bare = render::read_png(path("bare.png"));
  EXPECT_EQ(bare.width(), 40u);
  EXPECT_EQ(bare.height(), 24u);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["image"]["height"], 24);
  EXPECT_EQ(j["image"]["render_height"], 24);
  EXPECT_EQ(j["frames"][0]["rays"], 40 * 24);
  EXPECT_EQ(j["output"], path("bare.png"));
}

TEST_F(Outputs, RenderWarnsWhenComparingUnrelatedScenes) {
  const std::string a = quote(built("cornell-box.obj", "a.hwbvh"));
  const std::string same = quote(built("cornell-box.obj", "b.hwbvh", " --target rtip20"));
  const std::string other = quote(built("overflow-fan.obj", "fan.hwbvh"));
  test::Outcome r = hwbvh("render " + a + " --compare " + same + " --mode shaded -o " + quote(path("s.png")) + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = hwbvh("render " + a + " --compare " + other + " --mode shaded -o " + quote(path("o.png")) + kSmall);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("hwbvh: warning: "));
  EXPECT_THAT(r.err, HasSubstr("look like different scenes"));
  r = hwbvh("render " + a + " --compare " + other + " --mode shaded -o " + quote(path("q.png")) + kSmall + " --quiet");
  EXPECT_EQ(r.err, "");
}

TEST_F(Outputs, StatsSaysWhatItWrote) {
  const std::string blob = quote(built("cornell-box.obj", "c.hwbvh"));
  test::Outcome r = hwbvh("stats " + blob + " --rays primary" + kSmall + " --per-ray " + quote(path("r.csv")) +
                          " --export-rra " + quote(path("r.rra")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote " + path("r.csv") + " (960 rays, one row each)"));
  EXPECT_THAT(r.out, HasSubstr("wrote " + path("r.rra") + " (the BVH and 960 rays in 1 ray-history dispatch)"));
  r = hwbvh("stats " + blob + " --rays primary" + kSmall + " --per-ray " + quote(path("r.npy")) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["wrote"].size(), 1u);
  EXPECT_EQ(j["wrote"][0]["file"], path("r.npy"));
  EXPECT_TRUE(std::filesystem::exists(path("r.npy")));
}

TEST_F(Outputs, DumpCountsEveryNodeItLeftOut) {
  const std::string blob = quote(built("rotated-objects.obj", "rot.hwbvh"));
  const test::Outcome info = hwbvh("info " + blob + " --json");
  ASSERT_EQ(info.code, 0) << info.err;
  const nlohmann::json report = nlohmann::json::parse(info.out)["report"];
  const uint64_t nodes = report["box_nodes"].get<uint64_t>() + report["primitive_nodes"].get<uint64_t>();
  ASSERT_GT(nodes, 100u);
  const test::Outcome r = hwbvh("dump " + blob + " --max-nodes 4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("... " + std::to_string(nodes - 4) + " more nodes not shown"));
  const test::Outcome j = hwbvh("dump " + blob + " --max-nodes 4 --json");
  EXPECT_EQ(nlohmann::json::parse(j.out)["not_shown"], nodes - 4);
}

}  // namespace
}  // namespace hwbvh
