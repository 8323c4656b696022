// End-to-end tests of the inputs of the commands that read a BVH: stats and render build a scene on the fly (as
// report and compare do) and read .rra files; info, dump and export refuse a scene with the command that builds it.
#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include "report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;
using ::testing::HasSubstr;

class SceneInput : public test::ReportCliTest {
 protected:
  std::string cornell() const { return quote(test::project_scene("cornell-box.obj").string()); }
  // `stats ... --json` with the wall-clock figures removed: what must be equal between two inputs.
  nlohmann::json stats_json(const std::string& input, const std::string& extra = "") {
    const test::Outcome r = hwbvh("stats " + input + " --rays primary,shadow --width 24 --height 16 --json" + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    if (r.code != 0) return {};
    nlohmann::json j = nlohmann::json::parse(r.out);
    j.erase("file");
    for (auto& kind : j["ray_types"]) kind.erase("wall_clock");
    return j;
  }
};

TEST_F(SceneInput, StatsBuildsAScene) {
  const std::string blob = path("cornell.hwbvh");
  ASSERT_EQ(hwbvh("build " + cornell() + " -o " + quote(blob) + " --quiet").code, 0);
  const nlohmann::json from_scene = stats_json(cornell());
  EXPECT_EQ(from_scene, stats_json(quote(blob)));  // the blob `hwbvh build` writes by default
  EXPECT_EQ(from_scene["target"], "rtip31");
  EXPECT_EQ(dir_.files().size(), 1u);  // nothing written beside the blob
}

TEST_F(SceneInput, GltfScenesAreTwoLevelUnlessFlattened) {
  const std::string garden = quote(test::project_scene("instanced-garden.gltf").string());
  EXPECT_EQ(stats_json(garden)["two_level"], true);
  EXPECT_EQ(stats_json(garden, " --flatten")["two_level"], false);
  const std::string blob = path("cornell.hwbvh");
  ASSERT_EQ(hwbvh("build " + cornell() + " -o " + quote(blob) + " --quiet").code, 0);
  const test::Outcome r = hwbvh("stats " + quote(blob) + " --flatten");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--flatten applies to scene inputs"));
}

TEST_F(SceneInput, RenderReadsScenesAndRraFiles) {
  const std::string blob = path("cornell.hwbvh"), rra = path("cornell.rra");
  ASSERT_EQ(hwbvh("build " + cornell() + " -o " + quote(blob) + " --quiet").code, 0);
  ASSERT_EQ(hwbvh("export " + quote(blob) + " -o " + quote(rra)).code, 0);
  const auto render = [&](const std::string& input, const std::string& png) {
    const test::Outcome r = hwbvh("render " + input + " -o " + quote(path(png)) + " --mode steps --width 32 --height 24");
    EXPECT_EQ(r.code, 0) << r.err;
    return test::slurp(path(png));
  };
  const std::string from_blob = render(quote(blob), "blob.png");
  EXPECT_FALSE(from_blob.empty());
  EXPECT_EQ(render(quote(rra), "rra.png"), from_blob);
  EXPECT_EQ(render(cornell(), "scene.png"), from_blob);
}

TEST_F(SceneInput, InfoDumpAndExportSayToBuildFirst) {
  for (const char* command : {"info", "dump", "export"}) {
    const std::string extra = std::string(command) == "export" ? " -o " + quote(path("x.rra")) : "";
    const test::Outcome r = hwbvh(std::string(command) + " " + cornell() + extra);
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_THAT(r.err, HasSubstr("a scene, not a blob")) << command;
    EXPECT_THAT(r.err, HasSubstr("hwbvh build ")) << command;
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("bad magic"))) << command;
  }
  EXPECT_TRUE(dir_.files().empty());
}

}  // namespace
}  // namespace hwbvh
