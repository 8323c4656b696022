// Opens a `hwbvh report` page in headless Chromium (Debian's `chromium`, installed by scripts/install-deps.sh):
// every image must load (checked in the DOM after load), and a screenshot of the page must be neither blank nor
// missing the heatmap's colours. Skipped when /usr/bin/chromium is absent. Chromium's stderr chatter (D-Bus,
// GPU) is expected and ignored; each run is bounded by a 60 s timeout.
#include <gtest/gtest.h>

#include <set>

#include "fixtures/base64.h"
#include "fixtures/html_scan.h"
#include "hwbvh/render/png.h"
#include "report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;

constexpr const char* kChromium = "/usr/bin/chromium";

class ReportBrowser : public test::ReportCliTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(kChromium)) << kChromium << " not installed (scripts/install-deps.sh)";
    // A scene whose heatmaps have many colours, at a small size.
    const auto scene = test::project_scene("rotated-objects.obj");
    ASSERT_TRUE(std::filesystem::exists(scene)) << scene;
    html_ = path("report.html");
    const test::Outcome r = hwbvh("report " + quote(scene.string()) + " -o " + quote(html_) +
                                  " --width 160 --height 120 --ao-samples 1 --quiet");
    ASSERT_EQ(r.code, 0) << r.err;
    page_ = test::slurp(html_);
  }

  // Runs headless Chromium on a local file with a fresh profile; no network, no first-run work.
  test::Outcome chromium(const std::string& args, const std::string& file, const std::string& profile) {
    return run("timeout -k 5 60 " + std::string(kChromium) +
               " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
               " --disable-component-update --disable-sync --user-data-dir=" +
               quote(path(profile)) + " " + args + " " + quote("file://" + file));
  }

  std::string html_;
  std::string page_;
};

TEST_F(ReportBrowser, EveryImageLoads) {
  // A test-only copy with a script that records, once the page has loaded, how many images decoded.
  const std::size_t images = [&] {
    std::size_t n = 0;
    for (std::size_t p = 0; (p = page_.find("<img", p)) != std::string::npos; ++p) ++n;
    return n;
  }();
  ASSERT_EQ(images, 5u);  // shaded, steps, box tests, triangle tests, obb
  std::string copy = page_;
  const std::size_t body_end = copy.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  copy.insert(body_end,
              "<script>window.addEventListener('load', function () { var ok = 0;"
              " for (var i = 0; i < document.images.length; ++i) {"
              " var img = document.images[i]; if (img.complete && img.naturalWidth > 0) ++ok; }"
              " document.body.setAttribute('data-images-loaded', ok + '/' + document.images.length); });</script>\n");
  const std::string check = path("check.html");
  std::ofstream(check) << copy;
  const test::Outcome r =
      chromium("--run-all-compositor-stages-before-draw --virtual-time-budget=5000 --dump-dom", check, "profile-dom");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("data-images-loaded=\"5/5\""), std::string::npos) << r.out.substr(0, 300);
}

TEST_F(ReportBrowser, ScreenshotIsNotBlankAndShowsTheHeatmap) {
  const std::string shot = path("shot.png");
  const test::Outcome r = chromium("--screenshot=" + quote(shot) + " --window-size=1280,2000", html_, "profile-shot");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  ASSERT_TRUE(std::filesystem::exists(shot)) << r.out << r.err.substr(0, 2000);
  const render::Image screen = render::read_png(shot);  // stb_image
  EXPECT_EQ(screen.width(), 1280u);
  EXPECT_EQ(screen.height(), 2000u);

  const auto key = [](render::Rgb c) { return (uint32_t{c.r} << 16) | (uint32_t{c.g} << 8) | c.b; };
  std::set<uint32_t> on_screen;
  for (uint32_t y = 0; y < screen.height(); ++y)
    for (uint32_t x = 0; x < screen.width(); ++x) on_screen.insert(key(screen.at(x, y)));
  EXPECT_GT(on_screen.size(), 200u) << "the screenshot looks blank";

  // The steps heatmap's own colours (decoded from the page) must be on screen: the image was drawn.
  std::string b64;
  for (std::string_view tag : test::html_tags(page_, "img")) {
    if (test::html_attribute(tag, "alt") != "steps per ray") continue;
    const std::string_view src = test::html_attribute(tag, "src").value_or("");
    const std::string_view prefix = "data:image/png;base64,";
    ASSERT_EQ(src.substr(0, prefix.size()), prefix);
    b64 = src.substr(prefix.size());
  }
  ASSERT_FALSE(b64.empty()) << "no steps heatmap on the page";
  const render::Image heat = render::decode_png(test::from_base64(b64), "steps heatmap");
  std::set<uint32_t> heat_colours;
  for (uint32_t y = 0; y < 120; ++y)  // the render, not the legend strip below it
    for (uint32_t x = 0; x < heat.width(); ++x) heat_colours.insert(key(heat.at(x, y)));
  ASSERT_GT(heat_colours.size(), 20u);
  std::size_t shown = 0;
  for (uint32_t c : heat_colours) shown += on_screen.count(c);
  EXPECT_GE(2 * shown, heat_colours.size()) << shown << " of " << heat_colours.size() << " heatmap colours on screen";
}

}  // namespace
}  // namespace hwbvh
