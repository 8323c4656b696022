// Rendering emulated rays: modes, scales and legends, comparisons, the frame's agreement with the rays
// `hwbvh stats` traces, and golden images of the project's small scenes.
//
// Golden images live in tests/render/golden/. After an intended change to the images, regenerate them with
//   HWBVH_UPDATE_GOLDEN=1 build/bin/test_render --gtest_filter='Golden*'
// look at the new PNGs, and commit them. A mismatching image is written to <build>/render-actual/NAME.png.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <variant>

#include <gtest/gtest.h>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/render/colormap.h"
#include "hwbvh/render/font.h"
#include "hwbvh/render/legend.h"
#include "hwbvh/render/png.h"
#include "hwbvh/render/render.h"
#include "hwbvh/scene/ray_gen.h"
#include "render/style.h"

namespace hwbvh::render {
namespace {

constexpr uint32_t kW = 96;
constexpr uint32_t kH = 64;

// The BVH of a project scene, built once per test run. `obb` false gives the axis-aligned variant, named
// "aabb.hwbvh" (and the default "obb.hwbvh") so that comparison titles stay short.
const emu::LoadedBvh& scene_bvh(const std::string& scene, bool obb = true) {
  static std::map<std::pair<std::string, bool>, emu::LoadedBvh> cache;
  const auto key = std::make_pair(scene, obb);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  pipeline::BuildBlobOptions options;
  options.encode.obb = obb;
  const pipeline::BuildBlobResult built = pipeline::build_blob(load_obj(test::project_scene(scene)), options);
  return cache.emplace(key, emu::load_bvh(built.blob, obb ? "obb.hwbvh" : "aabb.hwbvh")).first->second;
}

ViewOptions small_view() {
  ViewOptions v;
  v.width = kW;
  v.height = kH;
  v.threads = 2;
  return v;
}

// The classic view into the open side of the box (scenes/README.md).
ViewOptions cornell_view() {
  ViewOptions v = small_view();
  v.camera = parse_camera("278,273,-800, 278,273,0, 0,1,0, 38");
  return v;
}

// Looks down the fan's axis, where every box node is entered (scenes/README.md).
ViewOptions fan_view() {
  ViewOptions v = small_view();
  v.camera = parse_camera("0,0,-1, 0,0,12, 0,1,0, 30");
  v.trace.stack.size = 8;
  return v;
}

// True if `text`, drawn in `color` with the built-in font, appears anywhere in `image`: every ink pixel of the
// glyphs has that colour and no other pixel of the text box has it.
bool contains_text(const Image& image, const std::string& text, Rgb color = style::kText) {
  const int w = text_width(text), h = kGlyphHeight;
  Image stamp(static_cast<uint32_t>(w), static_cast<uint32_t>(h), {0, 0, 0});
  draw_text(stamp, 0, 0, text, {255, 255, 255});
  for (int64_t y = 0; y + h <= image.height(); ++y) {
    for (int64_t x = 0; x + w <= image.width(); ++x) {
      bool match = true;
      for (int sy = 0; sy < h && match; ++sy)
        for (int sx = 0; sx < w && match; ++sx) {
          const bool ink = stamp.at(static_cast<uint32_t>(sx), static_cast<uint32_t>(sy)).r == 255;
          match = (image.at(static_cast<uint32_t>(x + sx), static_cast<uint32_t>(y + sy)) == color) == ink;
        }
      if (match) return true;
    }
  }
  return false;
}

// Same, for a legend caption line, which the legend wraps to the panel width.
bool contains_caption(const Image& image, const std::string& text, Rgb color = style::kText) {
  for (const std::string& line : wrap_text(text, static_cast<int>(kW) - 2 * kLegendPad))
    if (!contains_text(image, line, color)) return false;
  return true;
}

Image crop(const Image& image, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h) {
  Image out(w, h);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) out.set(x, y, image.at(x0 + x, y0 + y));
  return out;
}

uint64_t count_color(const Image& image, Rgb color) {
  uint64_t n = 0;
  for (uint32_t y = 0; y < image.height(); ++y)
    for (uint32_t x = 0; x < image.width(); ++x) n += image.at(x, y) == color;
  return n;
}

uint64_t max_counter(const Frame& f, Mode mode) {
  uint64_t m = 0;
  for (const emu::RayResult& r : f.results) m = std::max(m, counter_value(mode, r));
  return m;
}

template <typename F>
void expect_bad_input(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected hwbvh::Error(BadInput) mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// ---- modes, options -----------------------------------------------------------------------------------------

TEST(Modes, NamesRoundTripAndUnknownNamesAreRejected) {
  EXPECT_EQ(all_modes().size(), 13u);
  for (const Mode m : all_modes()) {
    EXPECT_EQ(parse_mode(mode_name(m)), m);
    EXPECT_NE(std::string(mode_caption(m)), "");
  }
  EXPECT_FALSE(is_heatmap(Mode::Depth));
  EXPECT_TRUE(is_heatmap(Mode::Steps));
  EXPECT_TRUE(is_heatmap(Mode::Obb));
  expect_bad_input([] { (void)parse_mode("heat"); }, "valid: shaded, normals");
  emu::RayResult r;
  r.counters.steps = 1;
  r.counters.box_tests = 2;
  r.counters.triangle_tests = 3;
  r.counters.max_stack_depth = 4;
  r.counters.stack_lost = 5;
  r.counters.obb_steps = 6;
  r.counters.any_hit_invocations = 7;
  r.counters.instance_transitions = 8;
  const Mode heat[] = {Mode::Steps,     Mode::BoxTests, Mode::TriTests, Mode::StackDepth,
                       Mode::Overflows, Mode::Obb,      Mode::AnyHit,   Mode::InstanceTransitions};
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(counter_value(heat[i], r), i + 1);
  EXPECT_FALSE(is_heatmap(Mode::Instance));
  EXPECT_EQ(parse_mode("instance-transitions"), Mode::InstanceTransitions);
}

TEST(Modes, ViewOptionsAreValidated) {
  ViewOptions v = small_view();
  EXPECT_NO_THROW(v.validate());
  v.width = 0;
  expect_bad_input([&] { v.validate(); }, "width and height");
  v = small_view();
  v.height = kMaxImageSide + 1;
  expect_bad_input([&] { v.validate(); }, "width and height");
  v = small_view();
  v.camera = Camera{{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 45};
  expect_bad_input([&] { v.validate(); }, "camera");
  v = small_view();
  v.trace.stack.size = 1;
  EXPECT_THROW(v.validate(), Error);
}

// ---- frames ---------------------------------------------------------------------------------------------------

TEST(Frame, PixelsHoldTheRaysHwbvhStatsTraces) {
  const emu::LoadedBvh& bvh = scene_bvh("cornell-box.obj");
  const Frame f = trace_frame(bvh, small_view());
  const Camera camera = auto_frame(bvh.bounds, static_cast<float>(kW) / static_cast<float>(kH));
  EXPECT_EQ(format_camera(f.camera), format_camera(camera));
  EXPECT_EQ(f.label, "obb.hwbvh");
  ASSERT_EQ(f.results.size(), std::size_t{kW} * kH);

  // The same rays, in the same 8x4 tiles, through the emulator directly.
  const RayBatch batch = primary_rays(camera, kW, kH);
  const emu::TraceOutput out =
      emu::trace_rays(bvh.memory(), bvh.root, batch.rays, batch.wave_begin, emu::TraceOptions{}, Executor(1));
  uint64_t hits = 0;
  for (std::size_t i = 0; i < batch.rays.size(); ++i) {
    const std::size_t p = batch.pixel[i];
    EXPECT_EQ(f.results[p], out.rays[i]) << "pixel " << p;
    EXPECT_EQ(f.directions[p], batch.rays[i].direction);
    if (out.rays[i].hit) {
      ++hits;
      EXPECT_EQ(f.normals[p], bvh.triangle_normal(out.rays[i].geometry_id, out.rays[i].primitive_id));
    } else {
      EXPECT_EQ(f.normals[p], Vec3(0.0f));
    }
  }
  EXPECT_GT(hits, batch.rays.size() / 4);  // the auto-framed box fills much of the view
  EXPECT_EQ(f.faulted_rays(), 0u);
}

TEST(Frame, ImagesAreIdenticalAtAnyThreadCount) {
  ViewOptions one = small_view(), two = small_view();
  one.threads = 1;
  two.threads = 2;
  const emu::LoadedBvh& bvh = scene_bvh("cornell-box.obj");
  const Frame a = trace_frame(bvh, one), b = trace_frame(bvh, two);
  for (const Mode m : all_modes()) EXPECT_EQ(render(a, m), render(b, m)) << mode_name(m);
}

TEST(Frame, StackSizeReachesTheEmulator) {
  const emu::LoadedBvh& bvh = scene_bvh("overflow-fan.obj");
  ViewOptions big = fan_view();
  big.trace.stack.size = 64;
  const Frame small = trace_frame(bvh, fan_view()), large = trace_frame(bvh, big);
  EXPECT_GT(max_counter(small, Mode::Overflows), 0u);
  EXPECT_EQ(max_counter(large, Mode::Overflows), 0u);
  EXPECT_LE(max_counter(small, Mode::StackDepth), 8u);
  EXPECT_GT(max_counter(large, Mode::StackDepth), 8u);
}

// ---- single images --------------------------------------------------------------------------------------------

TEST(Render, ScalarModesGetALegendOthersAreExactlyTheRequestedSize) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  for (const Mode m : all_modes()) {
    const Image img = render(f, m);
    EXPECT_EQ(img.width(), kW) << mode_name(m);
    if (is_heatmap(m) || m == Mode::Depth) {
      EXPECT_GT(img.height(), kH + 30) << mode_name(m);
      EXPECT_TRUE(contains_caption(img, mode_caption(m))) << mode_name(m);
    } else {
      EXPECT_EQ(img.height(), kH) << mode_name(m);
    }
  }
}

TEST(Render, WithoutTheLegendEveryModeIsExactlyTheRequestedSize) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  for (const Mode m : all_modes()) {
    const Image img = render(f, m, std::nullopt, false);
    EXPECT_EQ(img.width(), kW) << mode_name(m);
    EXPECT_EQ(img.height(), kH) << mode_name(m);
    // The render itself is the same as above the legend strip.
    const Image with = render(f, m);
    for (uint32_t y = 0; y < kH; ++y)
      for (uint32_t x = 0; x < kW; ++x) ASSERT_EQ(img.at(x, y), with.at(x, y)) << mode_name(m);
  }
  const Image cmp = render_comparison(f, Mode::Steps, f, Mode::BoxTests, std::nullopt, false);
  EXPECT_LT(cmp.height(), render_comparison(f, Mode::Steps, f, Mode::BoxTests).height());
}

TEST(Render, ImagesAreWrittenAsPngOrJpegByTheirExtension) {
  test::ScratchDir dir("render-formats");
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  const Image img = render(f, Mode::Shaded);
  EXPECT_EQ(image_format("a.png"), ImageFormat::Png);
  EXPECT_EQ(image_format("a.JPG"), ImageFormat::Jpeg);
  EXPECT_EQ(image_format("a.jpeg"), ImageFormat::Jpeg);
  EXPECT_THROW((void)image_format("a.bmp"), Error);
  EXPECT_THROW((void)image_format("a"), Error);
  write_image(dir / "a.jpg", img);
  const std::string bytes = [&] {
    std::ifstream in(dir / "a.jpg", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_GE(bytes.size(), 3u);
  EXPECT_EQ(bytes.substr(0, 3), std::string("\xFF\xD8\xFF"));  // a JPEG's SOI marker, not a PNG signature
  const Image back = read_png(dir / "a.jpg");  // stb_image reads JPEG as well
  EXPECT_EQ(back.width(), img.width());
  EXPECT_EQ(back.height(), img.height());
  write_image(dir / "a.png", img);
  EXPECT_EQ(read_png(dir / "a.png"), img);  // PNG stays lossless
}

TEST(Render, EveryWrittenPngDecodesAtTheRequestedSize) {
  test::ScratchDir dir("render-modes");
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  for (const Mode m : all_modes()) {
    const Image img = render(f, m);
    const auto path = dir / (std::string(mode_name(m)) + ".png");
    write_png(path, img);
    const Image back = read_png(path);  // stb_image
    EXPECT_EQ(back.width(), kW) << mode_name(m);
    EXPECT_EQ(back.height(), img.height()) << mode_name(m);
    if (!is_heatmap(m) && m != Mode::Depth) {
      EXPECT_EQ(back.height(), kH) << mode_name(m);
    }
    EXPECT_EQ(back, img) << mode_name(m);
  }
  const Image cmp = render_comparison(f, Mode::Steps, f, Mode::BoxTests);
  write_png(dir / "compare.png", cmp);
  const Image back = read_png(dir / "compare.png");
  EXPECT_EQ(back.width(), 3 * kW + 2 * style::kPanelGap);
  EXPECT_EQ(back, cmp);
}

TEST(Render, HeatmapScaleIsTheImageMaximumOrMax) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  const uint64_t top = max_counter(f, Mode::Steps);
  ASSERT_GT(top, 0u);
  const Image own = render(f, Mode::Steps);
  EXPECT_TRUE(contains_caption(own, "max " + std::to_string(top) + " (image)"));
  EXPECT_GT(count_color(crop(own, 0, 0, kW, kH), viridis(1.0f)), 0u);  // the busiest pixel is at the top colour
  EXPECT_EQ(count_color(crop(own, 0, 0, kW, kH), style::kFault), 0u);

  // --max equal to the image maximum: the same pixels, a different legend.
  const Image same = render(f, Mode::Steps, static_cast<double>(top));
  EXPECT_EQ(crop(same, 0, 0, kW, kH), crop(own, 0, 0, kW, kH));
  EXPECT_TRUE(contains_caption(same, "max " + std::to_string(top) + " (--max)"));
  EXPECT_FALSE(contains_text(same, "(image)"));

  // Twice the maximum: no pixel reaches the top colour; the value top maps to the middle of the map.
  const Image doubled = render(f, Mode::Steps, 2.0 * static_cast<double>(top));
  EXPECT_EQ(count_color(crop(doubled, 0, 0, kW, kH), viridis(1.0f)), 0u);
  EXPECT_GT(count_color(crop(doubled, 0, 0, kW, kH), viridis(0.5f)), 0u);
  EXPECT_TRUE(contains_caption(doubled, "max " + std::to_string(2 * top) + " (--max)"));

  for (const double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
    expect_bad_input([&] { (void)render(f, Mode::Steps, bad); }, "--max");
}

TEST(Render, AllZeroHeatmapStillHasAScale) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  ASSERT_EQ(max_counter(f, Mode::Overflows), 0u);
  const Image img = render(f, Mode::Overflows);
  EXPECT_EQ(count_color(crop(img, 0, 0, kW, kH), viridis(0.0f)), std::size_t{kW} * kH);
  EXPECT_TRUE(contains_caption(img, "max 0 (image)"));
}

TEST(Render, DepthIsLightNearAndDarkFar) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  const Image img = render(f, Mode::Depth);
  std::size_t nearest = 0, farthest = 0;
  for (std::size_t p = 0; p < f.results.size(); ++p) {
    if (!f.results[p].hit) continue;
    if (!f.results[nearest].hit || f.results[p].t < f.results[nearest].t) nearest = p;
    if (!f.results[farthest].hit || f.results[p].t > f.results[farthest].t) farthest = p;
  }
  const auto at = [&](std::size_t p) { return img.at(static_cast<uint32_t>(p % kW), static_cast<uint32_t>(p / kW)); };
  EXPECT_EQ(at(nearest), depth_grey(0.0f));
  EXPECT_EQ(at(farthest), depth_grey(1.0f));
  EXPECT_TRUE(contains_text(img, "(image)"));
  EXPECT_TRUE(contains_caption(render(f, Mode::Depth, 5000.0), "far 5000 (--max)"));
}

TEST(Render, FaultedRaysAreMagentaAndCounted) {
  emu::LoadedBvh bvh =
      emu::load_bvh(pipeline::build_blob(load_obj(test::project_scene("cornell-box.obj")), {}).blob, "obb.hwbvh");
  bvh.nodes[32] = 0x0FFFFFF0u;  // the root's child base now points far past the section: box children fault
  const Frame f = trace_frame(bvh, small_view());
  const uint64_t faulted = f.faulted_rays();
  ASSERT_GT(faulted, 0u);
  for (const Mode m : {Mode::Shaded, Mode::PrimitiveId, Mode::Steps, Mode::Depth}) {
    const Image img = render(f, m);
    EXPECT_EQ(count_color(crop(img, 0, 0, kW, kH), style::kFault), faulted) << mode_name(m);
  }
  EXPECT_TRUE(contains_caption(render(f, Mode::Steps), std::to_string(faulted) + " rays faulted", style::kFault));
}

// A check that does not come from the code: one 2 x 2 quad seen head-on. Its two triangles share an edge and their
// boxes are both the whole quad, so the cheapest tree is a root box node over one leaf holding them as one pair (one
// pair step where two one-triangle leaves would take two), and by docs/counters.md a pixel whose ray misses the quad
// takes 1 step (the root) and one that hits it 2 (the root, then the pair, with its 2 triangle tests).
// docs/render.md maps 0 .. max linearly onto viridis: with the image's maximum (2), or --max 2, a hit is the top
// colour; with --max 2 a miss sits at the middle. The colours are matplotlib's published #fde725 and #21918c.
TEST(Render, HeadOnQuadHasTheStepsAndColoursWorkedOutByHand) {
  const pipeline::BuildBlobResult built = pipeline::build_blob(test::quad_grid(1, 2.0f), {});
  const emu::LoadedBvh bvh = emu::load_bvh(built.blob, "quad.hwbvh");
  ViewOptions v;
  v.width = v.height = kW;  // square, and as wide as contains_caption expects
  v.camera = parse_camera("1,1,-5, 1,1,0, 0,1,0, 40");
  const Frame f = trace_frame(bvh, v);
  const auto near_rgb = [](Rgb a, Rgb b) {
    return std::abs(a.r - b.r) <= 1 && std::abs(a.g - b.g) <= 1 && std::abs(a.b - b.b) <= 1;
  };
  constexpr Rgb kTop{253, 231, 37}, kMiddle{33, 145, 140};
  const Image own = render(f, Mode::Steps), two = render(f, Mode::Steps, 2.0);
  // The quad's edges lie at |ndc| = tan(atan(1/5)) / tan(20 deg) = 0.55 of the half-image. Pixel centres within
  // 0.45 of the centre see it; those beyond 0.65 on both axes cannot (nor can the box around it, which
  // quantization grows by far less).
  const auto ndc = [](uint32_t i) { return std::abs((i + 0.5) / kW * 2.0 - 1.0); };
  uint64_t checked = 0;
  for (uint32_t y = 0; y < kW; ++y) {
    for (uint32_t x = 0; x < kW; ++x) {
      const bool inside = ndc(x) <= 0.45 && ndc(y) <= 0.45, outside = ndc(x) >= 0.65 && ndc(y) >= 0.65;
      if (!inside && !outside) continue;
      SCOPED_TRACE(testing::Message() << "pixel " << x << ", " << y);
      const emu::RayResult& r = f.results[y * kW + x];
      EXPECT_EQ(r.hit, inside);
      EXPECT_EQ(r.counters.box_node_steps, 1u);
      EXPECT_EQ(r.counters.primitive_node_steps, inside ? 1u : 0u);
      EXPECT_EQ(r.counters.box_tests, 8u);
      EXPECT_EQ(r.counters.triangle_tests, inside ? 2u : 0u);
      EXPECT_TRUE(inside ? near_rgb(own.at(x, y), kTop) && near_rgb(two.at(x, y), kTop)
                         : near_rgb(two.at(x, y), kMiddle));
      ++checked;
    }
  }
  EXPECT_GT(checked, kW * kW / 4);
  // The legend's range is the counters' maximum, the 2 steps of a hit.
  EXPECT_EQ(max_counter(f, Mode::Steps), 2u);
  EXPECT_TRUE(contains_caption(own, "max 2 (image)"));
  EXPECT_TRUE(contains_caption(render(f, Mode::TriTests), "max 2 (image)"));
  EXPECT_TRUE(contains_caption(render(f, Mode::BoxTests), "max 8 (image)"));
}

// ---- two-level blobs -----------------------------------------------------------------------------------------------

const emu::LoadedBvh& garden_bvh() {
  static const emu::LoadedBvh bvh = emu::load_bvh(
      pipeline::build_instanced_blob(
          std::get<InstancedScene>(load_any_scene(test::project_scene("instanced-garden.gltf"), {})), {})
          .blob,
      "garden.hwbvh");
  return bvh;
}

// Instance mode: every hit pixel has its instance's hashed colour, misses the background; a one-level blob has
// one instance, so one colour.
TEST(Render, InstanceModeColoursEachHitByItsInstanceIndex) {
  const Frame f = trace_frame(garden_bvh(), small_view());
  const Image img = render(f, Mode::Instance);
  ASSERT_EQ(img.width(), kW);
  ASSERT_EQ(img.height(), kH);
  std::set<uint32_t> instances;
  for (uint32_t y = 0; y < kH; ++y) {
    for (uint32_t x = 0; x < kW; ++x) {
      const emu::RayResult& r = f.results[y * kW + x];
      EXPECT_EQ(img.at(x, y), r.hit ? instance_color(r.instance_index) : style::kMiss) << x << ", " << y;
      if (r.hit) instances.insert(r.instance_index);
    }
  }
  EXPECT_GT(instances.size(), 10u);
  EXPECT_NE(instance_color(0), instance_color(1));

  const Frame one = trace_frame(scene_bvh("cornell-box.obj"), small_view());
  const Image flat = render(one, Mode::Instance);
  const uint64_t hits = static_cast<uint64_t>(
      std::count_if(one.results.begin(), one.results.end(), [](const emu::RayResult& r) { return r.hit; }));
  ASSERT_GT(hits, 0u);
  EXPECT_EQ(count_color(flat, instance_color(0)), hits);
  EXPECT_EQ(count_color(flat, instance_color(0)) + count_color(flat, style::kMiss), std::size_t{kW} * kH);
}

// Instance-transitions mode: a heatmap of the BLASes each primary ray entered, scaled to the image's maximum.
TEST(Render, InstanceTransitionsModeIsAHeatmapOfTheTransitions) {
  const Frame f = trace_frame(garden_bvh(), small_view());
  const uint64_t top = max_counter(f, Mode::InstanceTransitions);
  ASSERT_GT(top, 1u);
  const Image img = render(f, Mode::InstanceTransitions);
  EXPECT_GT(img.height(), kH);  // the legend strip
  EXPECT_TRUE(contains_caption(img, "max " + std::to_string(top) + " (image)"));
  for (uint32_t y = 0; y < kH; ++y) {
    for (uint32_t x = 0; x < kW; ++x) {
      const uint64_t v = f.results[y * kW + x].counters.instance_transitions;
      EXPECT_EQ(img.at(x, y), viridis(static_cast<float>(static_cast<double>(v) / static_cast<double>(top))))
          << x << ", " << y;
    }
  }
  // A one-level blob never enters an instance: all zero, still with a scale.
  const Image flat = render(trace_frame(scene_bvh("cornell-box.obj"), small_view()), Mode::InstanceTransitions);
  EXPECT_EQ(count_color(crop(flat, 0, 0, kW, kH), viridis(0.0f)), std::size_t{kW} * kH);
}

// ---- comparisons ------------------------------------------------------------------------------------------------

TEST(Compare, HeatmapsShareOneScaleAndTheDifferenceIsBMinusA) {
  const Frame a = trace_frame(scene_bvh("cornell-box.obj", true), small_view());
  const Frame b = trace_frame(scene_bvh("cornell-box.obj", false), small_view());
  const Image cmp = render_comparison(a, Mode::Steps, b, Mode::Steps);
  ASSERT_EQ(cmp.width(), 3 * kW + 2 * style::kPanelGap);
  const uint64_t shared = std::max(max_counter(a, Mode::Steps), max_counter(b, Mode::Steps));
  EXPECT_TRUE(contains_caption(cmp, "max " + std::to_string(shared) + " (shared)"));
  EXPECT_TRUE(contains_text(cmp, "A: obb.hwbvh"));
  EXPECT_TRUE(contains_text(cmp, "B: aabb.hwbvh"));
  EXPECT_TRUE(contains_text(cmp, "B - A"));

  // Panel A is exactly the single image of A on the shared scale.
  const Image single = render(a, Mode::Steps, static_cast<double>(shared));
  const uint32_t title = static_cast<uint32_t>(kLineHeight + 2 * style::kTitlePad);
  EXPECT_EQ(crop(cmp, 0, title, kW, kH), crop(single, 0, 0, kW, kH));

  // The difference panel: neutral where the counts agree, red where B took more steps, blue where fewer.
  int64_t largest = 0;
  for (std::size_t p = 0; p < a.results.size(); ++p)
    largest = std::max<int64_t>(largest, std::abs(static_cast<int64_t>(b.results[p].counters.steps) -
                                                  static_cast<int64_t>(a.results[p].counters.steps)));
  for (std::size_t p = 0; p < a.results.size(); p += 7) {
    const int64_t d = static_cast<int64_t>(b.results[p].counters.steps) - static_cast<int64_t>(a.results[p].counters.steps);
    const Rgb expected = diverging(largest ? static_cast<float>(static_cast<double>(d) / static_cast<double>(largest)) : 0.0f);
    EXPECT_EQ(cmp.at(2 * (kW + style::kPanelGap) + static_cast<uint32_t>(p % kW), title + static_cast<uint32_t>(p / kW)),
              expected)
        << p;
  }
  ViewOptions wide = small_view();
  wide.width = kW + 1;
  const Frame other = trace_frame(scene_bvh("cornell-box.obj"), wide);
  expect_bad_input([&] { (void)render_comparison(a, Mode::Steps, other, Mode::Steps); }, "different sizes");
}

TEST(Compare, PanelsDependOnTheModes) {
  const Frame a = trace_frame(scene_bvh("cornell-box.obj", true), small_view());
  const Frame b = trace_frame(scene_bvh("cornell-box.obj", false), small_view());
  const uint32_t two = 2 * kW + style::kPanelGap, three = 3 * kW + 2 * style::kPanelGap;
  // Two non-heatmap modes of one frame: nothing to subtract.
  EXPECT_EQ(render_comparison(a, Mode::Shaded, a, Mode::Normals).width(), two);
  EXPECT_EQ(render_comparison(a, Mode::Shaded, a, Mode::Steps).width(), two);
  // Two frames: the hit-difference panel. The same scene built two ways hits the same triangles.
  const Image hits = render_comparison(a, Mode::Shaded, b, Mode::Shaded);
  EXPECT_EQ(hits.width(), three);
  EXPECT_TRUE(contains_caption(hits, "all hits equal"));
  EXPECT_EQ(count_color(hits, style::kDifferent), 0u);
  // Against a different scene, the differing pixels are red and counted.
  ViewOptions v = small_view();
  v.camera = a.camera;
  const Frame fan = trace_frame(scene_bvh("overflow-fan.obj"), v);
  const Image other = render_comparison(a, Mode::Normals, fan, Mode::Normals);
  const uint32_t title = static_cast<uint32_t>(kLineHeight + 2 * style::kTitlePad);
  const uint64_t red = count_color(crop(other, 2 * (kW + style::kPanelGap), title, kW, kH), style::kDifferent);
  EXPECT_GT(red, 0u);
  EXPECT_TRUE(contains_caption(other, std::to_string(red) + " of " + std::to_string(kW * kH) + " pixels differ",
                            style::kDifferent));
  // Two modes of one frame are titled by mode.
  const Image modes = render_comparison(a, Mode::Steps, a, Mode::BoxTests);
  EXPECT_TRUE(contains_text(modes, "A: steps"));
  EXPECT_TRUE(contains_text(modes, "B: box-tests"));
}

// ---- golden images --------------------------------------------------------------------------------------------

bool update_golden() {
  const char* v = std::getenv("HWBVH_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// Pixels may differ by a few units per channel (libm rounding of the shading); a handful may differ more (a
// ray grazing an edge). Anything beyond that is a real change.
constexpr int kChannelTolerance = 3;
constexpr double kMaxDifferingShare = 0.002;

void expect_golden(const Image& actual, const std::string& name) {
  const auto golden_path = test::source_dir() / "tests" / "render" / "golden" / (name + ".png");
  if (update_golden()) {
    write_png(golden_path, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden_path))
      << golden_path << " is missing; create it with HWBVH_UPDATE_GOLDEN=1 (see the top of this file)";
  const Image golden = read_png(golden_path);
  uint64_t differing = 0;
  if (golden.width() == actual.width() && golden.height() == actual.height()) {
    for (uint32_t y = 0; y < golden.height(); ++y)
      for (uint32_t x = 0; x < golden.width(); ++x) {
        const Rgb g = golden.at(x, y), a = actual.at(x, y);
        differing += std::abs(g.r - a.r) > kChannelTolerance || std::abs(g.g - a.g) > kChannelTolerance ||
                     std::abs(g.b - a.b) > kChannelTolerance;
      }
  }
  const bool same_size = golden.width() == actual.width() && golden.height() == actual.height();
  const double allowed = kMaxDifferingShare * golden.width() * golden.height();
  if (same_size && static_cast<double>(differing) <= allowed) return;
  const auto dir = std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "render-actual";
  std::filesystem::create_directories(dir);
  write_png(dir / (name + ".png"), actual);
  ADD_FAILURE() << name << ": " << (same_size ? std::to_string(differing) + " pixels differ" : "size differs")
                << " from " << golden_path << "; actual image written to " << (dir / (name + ".png"));
}

TEST(Golden, CornellBoxEveryMode) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), cornell_view());
  for (const Mode m : all_modes()) expect_golden(render(f, m), std::string("cornell-") + mode_name(m));
}

TEST(Golden, CornellBoxObbOnVersusOff) {
  const Frame a = trace_frame(scene_bvh("cornell-box.obj", true), cornell_view());
  const Frame b = trace_frame(scene_bvh("cornell-box.obj", false), cornell_view());
  expect_golden(render_comparison(a, Mode::Steps, b, Mode::Steps), "cornell-compare-obb-steps");
  expect_golden(render_comparison(a, Mode::Shaded, b, Mode::Shaded), "cornell-compare-obb-shaded");
}

TEST(Golden, CornellBoxTwoModes) {
  const Frame f = trace_frame(scene_bvh("cornell-box.obj"), cornell_view());
  expect_golden(render_comparison(f, Mode::Steps, f, Mode::TriTests), "cornell-compare-mode-steps-tri-tests");
}

TEST(Golden, OverflowFanAlongItsAxis) {
  const Frame f = trace_frame(scene_bvh("overflow-fan.obj"), fan_view());
  expect_golden(render(f, Mode::Overflows), "fan-overflows");
  expect_golden(render(f, Mode::StackDepth), "fan-stack-depth");
}

TEST(Golden, RotatedObjectsObbOnVersusOff) {
  const Frame a = trace_frame(scene_bvh("rotated-objects.obj", true), small_view());
  const Frame b = trace_frame(scene_bvh("rotated-objects.obj", false), small_view());
  expect_golden(render_comparison(a, Mode::Steps, b, Mode::Steps), "rotated-compare-obb-steps");
}

}  // namespace
}  // namespace hwbvh::render
