// End-to-end tests of `hwbvh render` (binary path in HWBVH_CLI): every mode writes a PNG that decodes at the
// requested size, comparisons, the camera shared with `hwbvh stats`, and bad usage or input -> exit 2 with no
// output file.
#include <sys/wait.h>

#include <fstream>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "hwbvh/render/png.h"
#include "hwbvh/render/render.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

class RenderCli : public ::testing::Test {
 protected:
  RenderCli() : dir_(std::string("e2e-render-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  static std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Runs `hwbvh ARGS` with stdout and stderr captured (their files live outside the scratch directory).
  Outcome hwbvh(const std::string& args) {
    const auto out = dir_.path().string() + ".out", err = dir_.path().string() + ".err";
    const int status = std::system((quote(HWBVH_CLI) + " " + args + " >" + quote(out) + " 2>" + quote(err)).c_str());
    Outcome r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Builds a project scene into the scratch directory; empty if the scene is absent.
  std::string blob(const std::string& scene, const std::string& extra = "") {
    const auto obj = test::project_scene(scene);
    if (!std::filesystem::exists(obj)) return {};
    const std::string out = path(obj.stem().string() + (extra.empty() ? "" : "-x") + ".hwbvh");
    const Outcome r = hwbvh("build " + quote(obj.string()) + " -o " + quote(out) + " --quiet " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }

  test::ScratchDir dir_;
};

TEST_F(RenderCli, EveryModeWritesADecodablePngOfTheRequestedSize) {
  const std::string b = blob("cornell-box.obj");
  ASSERT_FALSE(b.empty()) << "scenes/cornell-box.obj is missing";
  for (const render::Mode m : render::all_modes()) {
    const std::string mode = render::mode_name(m), png = path(mode + ".png");
    const Outcome r = hwbvh("render " + quote(b) + " -o " + quote(png) + " --mode " + mode + " --width 40 --height 24");
    ASSERT_EQ(r.code, 0) << mode << ": " << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_THAT(r.out, HasSubstr("output"));
    EXPECT_THAT(r.out, HasSubstr("camera"));
    const render::Image img = render::read_png(png);
    EXPECT_EQ(img.width(), 40u) << mode;
    if (render::is_heatmap(m) || m == render::Mode::Depth) {
      EXPECT_GT(img.height(), 24u) << mode;  // the legend strip below the render
    } else {
      EXPECT_EQ(img.height(), 24u) << mode;
    }
    EXPECT_THAT(r.out, HasSubstr(std::to_string(img.width()) + " x " + std::to_string(img.height()) + " px"));
  }
  for (const std::string& f : dir_.files()) EXPECT_THAT(f, ::testing::Not(HasSubstr(".tmp"))) << f;
}

TEST_F(RenderCli, CameraAndCountersMatchStats) {
  const std::string b = blob("cornell-box.obj");
  ASSERT_FALSE(b.empty()) << "scenes/cornell-box.obj is missing";
  const Outcome render = hwbvh("render " + quote(b) + " -o " + quote(path("s.png")) + " --mode steps --width 64 --height 32");
  ASSERT_EQ(render.code, 0) << render.err;
  const Outcome stats = hwbvh("stats " + quote(b) + " --rays primary --no-oracle --width 64 --height 32 --json");
  ASSERT_EQ(stats.code, 0) << stats.err;
  const auto json = nlohmann::json::parse(stats.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << stats.out;
  // The camera line of render is the camera stats reports, in the same syntax.
  const std::string camera = json.value("camera", std::string());
  EXPECT_FALSE(camera.empty()) << stats.out;
  EXPECT_THAT(render.out, HasSubstr(camera));
  // Same primary rays: the largest per-ray step count agrees.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(render.out, m, std::regex("max steps +([0-9]+)"))) << render.out;
  bool found = false;
  for (const auto& kind : json["ray_types"]) {
    if (kind.value("ray_type", "") != "primary") continue;
    EXPECT_EQ(kind["steps"]["max"].get<double>(), std::stod(m[1])) << kind.dump();
    found = true;
  }
  EXPECT_TRUE(found) << stats.out.substr(0, 400);
}

TEST_F(RenderCli, ComparisonsPutPanelsSideBySide) {
  const std::string a = blob("cornell-box.obj"), b = blob("cornell-box.obj", "--obb off");
  ASSERT_FALSE(a.empty()) << "scenes/cornell-box.obj is missing";
  Outcome r = hwbvh("render " + quote(a) + " --compare " + quote(b) + " -o " + quote(path("c.png")) +
                " --mode steps --width 48 --height 32 --max 10");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("B max steps"));
  EXPECT_EQ(render::read_png(path("c.png")).width(), 3u * 48u + 8u);
  r = hwbvh("render " + quote(a) + " --compare-mode normals -o " + quote(path("m.png")) +
            " --mode shaded --width 48 --height 32 --threads 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("shaded | normals"));
  const render::Image two = render::read_png(path("m.png"));
  EXPECT_EQ(two.width(), 2u * 48u + 4u);
  // An explicit camera is used as given.
  r = hwbvh("render " + quote(a) + " -o " + quote(path("cam.png")) +
            " --mode depth --camera '278,273,-800,278,273,0,0,1,0,38' --width 16 --height 16");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("278,273,-800,278,273,0,0,1,0,38"));
}

TEST_F(RenderCli, BadUsageAndBadInputExitTwoWithoutOutput) {
  const std::string b = blob("cornell-box.obj");
  ASSERT_FALSE(b.empty()) << "scenes/cornell-box.obj is missing";
  const std::string out = path("out.png");
  const std::string base = "render " + quote(b) + " -o " + quote(out);
  const char* bad_usage[] = {
      "",  // --mode missing
      " --mode heat",
      " --mode steps --compare-mode shaded --compare x.hwbvh",
      " --mode steps --compare-mode bogus",
      " --mode steps --max 0",
      " --mode steps --max -3",
      " --mode steps --max abc",
      " --mode steps --max inf",
      " --mode steps --width 0",
      " --mode steps --height 99999",
      " --mode steps --stack-size 1",
      " --mode steps --heuristic 4",
      " --mode steps --threads -1",
      " --mode steps --camera 1,2,3",
      " --mode steps --camera 0,0,0,0,0,0,0,1,0,45",
      " --mode steps --bogus",
  };
  for (const char* args : bad_usage) {
    const Outcome r = hwbvh(base + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  EXPECT_EQ(hwbvh("render -o " + quote(out) + " --mode steps").code, 2);  // no input file

  // Bad input files: one message naming the file.
  const auto expect_bad_file = [&](const std::string& args, const std::string& file) {
    const Outcome r = hwbvh(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("hwbvh: error: "));
    EXPECT_THAT(r.err, HasSubstr(file));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  expect_bad_file("render " + quote(path("absent.hwbvh")) + " -o " + quote(out) + " --mode steps", "absent.hwbvh");
  const std::string bytes = slurp(b);
  std::ofstream(path("cut.hwbvh"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_bad_file("render " + quote(path("cut.hwbvh")) + " -o " + quote(out) + " --mode shaded", "cut.hwbvh");
  expect_bad_file(base + " --mode steps --compare " + quote(path("cut.hwbvh")), "cut.hwbvh");
  std::ofstream(path("empty.obj")) << "v 0 0 0\n";  // a scene input is built first: one without triangles fails
  expect_bad_file("render " + quote(path("empty.obj")) + " -o " + quote(out) + " --mode steps", "empty.obj");
  expect_bad_file("render " + quote(b) + " -o " + quote(b) + " --mode steps", "cornell-box.hwbvh");
  EXPECT_EQ(slurp(b), bytes);  // the input was not overwritten
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(RenderCli, WriteFailureExitsOneAndLeavesNothing) {
  const std::string b = blob("cornell-box.obj");
  ASSERT_FALSE(b.empty()) << "scenes/cornell-box.obj is missing";
  const Outcome r = hwbvh("render " + quote(b) + " -o " + quote(path("no-such-dir/out.png")) + " --mode steps --width 8 --height 8");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("out.png"));
  EXPECT_EQ(dir_.files(), std::vector<std::string>{"cornell-box.hwbvh"});
}

}  // namespace
}  // namespace hwbvh
