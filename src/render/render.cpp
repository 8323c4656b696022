#include "hwbvh/render/render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <span>

#include <glm/geometric.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/render/colormap.h"
#include "hwbvh/render/font.h"
#include "hwbvh/render/legend.h"
#include "hwbvh/scene/ray_gen.h"
#include "render/style.h"

namespace hwbvh::render {
namespace {

struct ModeInfo {
  Mode mode;
  const char* name;
  const char* caption;
};
constexpr ModeInfo kModes[] = {
    {Mode::Shaded, "shaded", "head-light diffuse"},
    {Mode::Normals, "normals", "geometric normal"},
    {Mode::Depth, "depth", "hit distance"},
    {Mode::PrimitiveId, "primitive-id", "geometry and primitive id"},
    {Mode::Instance, "instance", "instance index"},
    {Mode::Steps, "steps", "steps per ray"},
    {Mode::BoxTests, "box-tests", "box tests per ray"},
    {Mode::TriTests, "tri-tests", "triangle tests per ray"},
    {Mode::StackDepth, "stack-depth", "max stack depth"},
    {Mode::Overflows, "overflows", "stack entries lost"},
    {Mode::Obb, "obb", "OBB steps per ray"},
    {Mode::AnyHit, "any-hit", "any-hit invocations per ray"},
    {Mode::InstanceTransitions, "instance-transitions", "instance transitions per ray"},
};
constexpr Mode kModeList[] = {Mode::Shaded,    Mode::Normals,  Mode::Depth,    Mode::PrimitiveId,
                              Mode::Instance,  Mode::Steps,    Mode::BoxTests, Mode::TriTests,
                              Mode::StackDepth, Mode::Overflows, Mode::Obb,    Mode::AnyHit,
                              Mode::InstanceTransitions};

const ModeInfo& info(Mode mode) { return kModes[static_cast<std::size_t>(mode)]; }

bool faulted(const emu::RayResult& r) { return r.fault != emu::NodeFault::None; }

// ---- scales -------------------------------------------------------------------------------------------------

/// Where the top of a scale comes from; the legend says which.
enum class ScaleSource : uint8_t {
  Image,   ///< the largest value in the image
  Shared,  ///< the largest value in both compared images
  User,    ///< given by the user (--max)
};

const char* source_text(ScaleSource s) {
  switch (s) {
    case ScaleSource::Image: return "(image)";
    case ScaleSource::Shared: return "(shared)";
    case ScaleSource::User: return "(--max)";
  }
  return "";
}

struct HeatScale {
  double max = 0.0;
  ScaleSource source = ScaleSource::Image;
};

struct DepthRange {
  double near = 0.0;
  double far = 1.0;
  ScaleSource source = ScaleSource::Image;
};

/// One side of an image: a frame shown in one mode.
struct Side {
  const Frame* frame;
  Mode mode;
};

struct Scales {
  HeatScale heat;
  DepthRange depth;
};

// Heatmap sides share one scale, and so do depth sides, so that equal values get equal colours.
Scales scales_for(std::span<const Side> sides, std::optional<double> max) {
  Scales s;
  int heat_sides = 0, depth_sides = 0;
  double near = std::numeric_limits<double>::infinity(), far = -near;
  for (const Side& side : sides) {
    if (is_heatmap(side.mode)) {
      ++heat_sides;
      for (const emu::RayResult& r : side.frame->results)
        s.heat.max = std::max(s.heat.max, static_cast<double>(counter_value(side.mode, r)));
    } else if (side.mode == Mode::Depth) {
      ++depth_sides;
      for (const emu::RayResult& r : side.frame->results) {
        if (!r.hit || faulted(r)) continue;
        near = std::min(near, static_cast<double>(r.t));
        far = std::max(far, static_cast<double>(r.t));
      }
    }
  }
  const auto source = [&](int count) {
    return max ? ScaleSource::User : count > 1 ? ScaleSource::Shared : ScaleSource::Image;
  };
  s.heat.source = source(heat_sides);
  s.depth.source = source(depth_sides);
  if (max) {
    s.heat.max = *max;
    s.depth = {0.0, *max, ScaleSource::User};
  } else if (near <= far) {
    s.depth.near = near;
    s.depth.far = far > near ? far : near + 1.0;  // a flat image still needs a non-empty range
  }
  return s;
}

void check_max(std::optional<double> max) {
  if (max && !(std::isfinite(*max) && *max > 0.0)) {
    throw Error(ErrorKind::BadInput, "", "--max must be a positive finite number, not " + format_number(*max));
  }
}

// ---- pixel colours ------------------------------------------------------------------------------------------

uint8_t srgb_byte(float linear) {
  return static_cast<uint8_t>(std::lround(std::pow(std::clamp(linear, 0.0f, 1.0f), 1.0f / 2.2f) * 255.0f));
}

// A zero or non-finite normal means the hit's ids name no triangle of the Geometry section: shown like a fault.
bool usable(Vec3 n) { return std::isfinite(n.x) && std::isfinite(n.y) && std::isfinite(n.z) && glm::dot(n, n) > 0.0f; }

Rgb shaded_color(Vec3 normal, Vec3 direction) {
  if (!usable(normal)) return style::kFault;
  const float facing = std::abs(glm::dot(glm::normalize(normal), direction));
  const float light = 0.1f + 0.9f * facing;  // head-light: the light sits at the eye
  return {srgb_byte(0.80f * light), srgb_byte(0.78f * light), srgb_byte(0.74f * light)};
}

Rgb normal_color(Vec3 normal) {
  if (!usable(normal)) return style::kFault;
  const Vec3 n = glm::normalize(normal) * 0.5f + 0.5f;
  const auto byte = [](float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  return {byte(n.x), byte(n.y), byte(n.z)};
}

// Integer finalizer (Wellons' "lowbias32"): neighbouring ids get unrelated colours.
uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

Rgb hsv(float h, float s, float v) {
  const float f = h * 6.0f - std::floor(h * 6.0f);
  const float p = v * (1.0f - s), q = v * (1.0f - s * f), t = v * (1.0f - s * (1.0f - f));
  const auto b = [](float x) { return static_cast<uint8_t>(std::lround(std::clamp(x, 0.0f, 1.0f) * 255.0f)); };
  switch (static_cast<int>(std::floor(h * 6.0f)) % 6) {
    case 0: return {b(v), b(t), b(p)};
    case 1: return {b(q), b(v), b(p)};
    case 2: return {b(p), b(v), b(t)};
    case 3: return {b(p), b(q), b(v)};
    case 4: return {b(t), b(p), b(v)};
    default: return {b(v), b(p), b(q)};
  }
}

// A colour from 32 hashed bits: hue, a saturation and a value kept away from grey and black.
Rgb hashed_color(uint32_t h) {
  return hsv(static_cast<float>(h & 0xFFFFu) / 65536.0f, 0.45f + 0.4f * static_cast<float>(h >> 16 & 0xFFu) / 255.0f,
             0.7f + 0.3f * static_cast<float>(h >> 24) / 255.0f);
}

Rgb id_color(uint32_t geometry, uint32_t primitive) {
  return hashed_color(hash32(hash32(geometry) ^ (primitive * 0x9e3779b9u)));
}

// ---- panels -------------------------------------------------------------------------------------------------

struct Panel {
  Image pixels;
  std::optional<Legend> legend;
  std::string title;
};

std::optional<CaptionLine> fault_note(const Frame& f) {
  const uint64_t n = f.faulted_rays();
  if (n == 0) return std::nullopt;
  return CaptionLine{std::to_string(n) + (n == 1 ? " ray" : " rays") + " faulted", style::kFault};
}

Image per_pixel(const Frame& f, const std::function<Rgb(std::size_t)>& color) {
  Image img(f.width, f.height);
  for (uint32_t y = 0; y < f.height; ++y)
    for (uint32_t x = 0; x < f.width; ++x) {
      const std::size_t p = std::size_t{y} * f.width + x;
      img.set(x, y, faulted(f.results[p]) ? style::kFault : color(p));
    }
  return img;
}

Panel heat_panel(const Frame& f, Mode mode, const HeatScale& scale) {
  const double top = scale.max > 0.0 ? scale.max : 1.0;  // an all-zero image still gets a scale
  const auto color = [top](double v) { return viridis(static_cast<float>(v / top)); };
  Panel panel;
  panel.pixels = per_pixel(f, [&](std::size_t p) { return color(static_cast<double>(counter_value(mode, f.results[p]))); });
  Legend legend;
  legend.bar = ColorBar{0.0, top, true, color};
  legend.caption = {{mode_caption(mode)}, {"max " + format_number(scale.max) + " " + source_text(scale.source)}};
  if (auto note = fault_note(f)) legend.caption.push_back(*note);
  panel.legend = std::move(legend);
  return panel;
}

Panel depth_panel(const Frame& f, const DepthRange& range) {
  const auto color = [range](double t) { return depth_grey(static_cast<float>((t - range.near) / (range.far - range.near))); };
  Panel panel;
  panel.pixels = per_pixel(f, [&](std::size_t p) {
    const emu::RayResult& r = f.results[p];
    return r.hit ? color(static_cast<double>(r.t)) : style::kMiss;
  });
  Legend legend;
  legend.bar = ColorBar{range.near, range.far, false, color};
  const std::string scale = range.source == ScaleSource::User
                                ? "far " + format_number(range.far)
                                : "t " + format_number(range.near) + " to " + format_number(range.far);
  legend.caption = {{mode_caption(Mode::Depth)}, {scale + " " + source_text(range.source)}};
  if (auto note = fault_note(f)) legend.caption.push_back(*note);
  panel.legend = std::move(legend);
  return panel;
}

Panel colour_panel(const Frame& f, Mode mode) {
  Panel panel;
  panel.pixels = per_pixel(f, [&](std::size_t p) {
    const emu::RayResult& r = f.results[p];
    if (!r.hit) return style::kMiss;
    switch (mode) {
      case Mode::Shaded: return shaded_color(f.normals[p], f.directions[p]);
      case Mode::Normals: return normal_color(f.normals[p]);
      case Mode::Instance: return instance_color(r.instance_index);
      default: return id_color(r.geometry_id, r.primitive_id);
    }
  });
  return panel;
}

Panel make_panel(const Side& side, const Scales& scales) {
  if (is_heatmap(side.mode)) return heat_panel(*side.frame, side.mode, scales.heat);
  if (side.mode == Mode::Depth) return depth_panel(*side.frame, scales.depth);
  return colour_panel(*side.frame, side.mode);
}

Panel heat_difference_panel(const Side& a, const Side& b) {
  std::vector<double> diff(a.frame->results.size());
  double largest = 0.0;
  for (std::size_t p = 0; p < diff.size(); ++p) {
    diff[p] = static_cast<double>(counter_value(b.mode, b.frame->results[p])) -
              static_cast<double>(counter_value(a.mode, a.frame->results[p]));
    largest = std::max(largest, std::abs(diff[p]));
  }
  const double top = largest > 0.0 ? largest : 1.0;
  const auto color = [top](double v) { return diverging(static_cast<float>(v / top)); };
  Panel panel;
  panel.title = "B - A";
  panel.pixels = per_pixel(*a.frame, [&](std::size_t p) {
    return faulted(b.frame->results[p]) ? style::kFault : color(diff[p]);
  });
  Legend legend;
  legend.bar = ColorBar{-top, top, true, color};
  legend.caption = {{"red: B higher, blue: B lower"}, {"max |B - A| " + format_number(largest)}};
  panel.legend = std::move(legend);
  return panel;
}

bool same_hit(const emu::RayResult& a, const emu::RayResult& b) {
  if (a.hit != b.hit || faulted(a) != faulted(b)) return false;
  return !a.hit || (a.geometry_id == b.geometry_id && a.primitive_id == b.primitive_id);
}

// The pixels whose hits differ in red over a dimmed grey copy of panel A, so the viewer can place them.
Panel hit_difference_panel(const Frame& a, const Frame& b, const Image& a_pixels) {
  Panel panel;
  panel.title = "hits A vs B";
  panel.pixels = Image(a.width, a.height);
  uint64_t differing = 0;
  for (uint32_t y = 0; y < a.height; ++y)
    for (uint32_t x = 0; x < a.width; ++x) {
      const std::size_t p = std::size_t{y} * a.width + x;
      if (!same_hit(a.results[p], b.results[p])) {
        ++differing;
        panel.pixels.set(x, y, style::kDifferent);
        continue;
      }
      const Rgb c = a_pixels.at(x, y);
      const auto grey = static_cast<uint8_t>(32 + ((c.r * 77 + c.g * 150 + c.b * 29) >> 9));  // 32 + luma / 2
      panel.pixels.set(x, y, {grey, grey, grey});
    }
  Legend legend;
  if (differing == 0) {
    legend.caption = {{"all hits equal"}};
  } else {
    legend.caption = {{std::to_string(differing) + " of " + std::to_string(a.results.size()) + " pixels differ",
                       style::kDifferent}};
  }
  panel.legend = std::move(legend);
  return panel;
}

// Panels side by side: titles (if any panel has one) above, legends below, on the background colour.
// The panels side by side, titles above; legends below unless `legend` is false.
Image compose(std::vector<Panel> panels, bool legend) {
  if (!legend)
    for (Panel& p : panels) p.legend.reset();
  const uint32_t w = panels.front().pixels.width(), h = panels.front().pixels.height();
  const int scale = style::text_scale(w);
  const bool titled = std::any_of(panels.begin(), panels.end(), [](const Panel& p) { return !p.title.empty(); });
  const int title_h = titled ? (kLineHeight + 2 * style::kTitlePad) * scale : 0;
  int legend_h = 0;
  for (const Panel& p : panels)
    if (p.legend) legend_h = std::max(legend_h, legend_height(*p.legend, static_cast<int>(w), scale));
  const auto n = static_cast<uint32_t>(panels.size());
  Image out(n * w + (n - 1) * style::kPanelGap, h + static_cast<uint32_t>(title_h + legend_h), style::kBackground);
  for (uint32_t i = 0; i < n; ++i) {
    const Panel& p = panels[i];
    const int64_t x = int64_t{i} * (w + style::kPanelGap);
    const int pad = kLegendPad * scale;
    draw_text(out, x + pad, style::kTitlePad * scale, fit_text(p.title, static_cast<int>(w) - 2 * pad, scale),
              style::kText, scale);
    out.blit(p.pixels, x, title_h);
    if (p.legend) draw_legend(out, x, title_h + int64_t{h}, static_cast<int>(w), *p.legend, style::kBackground, scale);
  }
  return out;
}

}  // namespace

// ---- public API ---------------------------------------------------------------------------------------------

Rgb instance_color(uint32_t instance_index) { return hashed_color(hash32(instance_index)); }

std::span<const Mode> all_modes() { return kModeList; }

const char* mode_name(Mode mode) { return info(mode).name; }

Mode parse_mode(std::string_view name) {
  std::string valid;
  for (const ModeInfo& m : kModes) {
    if (name == m.name) return m.mode;
    valid += valid.empty() ? m.name : std::string(", ") + m.name;
  }
  throw Error(ErrorKind::BadInput, "", "unknown render mode '" + std::string(name) + "' (valid: " + valid + ")");
}

bool is_heatmap(Mode mode) { return mode >= Mode::Steps; }

const char* mode_caption(Mode mode) { return info(mode).caption; }

uint64_t counter_value(Mode mode, const emu::RayResult& ray) {
  const emu::RayCounters& c = ray.counters;
  switch (mode) {
    case Mode::Steps: return c.steps;
    case Mode::BoxTests: return c.box_tests;
    case Mode::TriTests: return c.triangle_tests;
    case Mode::StackDepth: return c.max_stack_depth;
    case Mode::Overflows: return c.stack_lost;
    case Mode::Obb: return c.obb_steps;
    case Mode::AnyHit: return c.any_hit_invocations;
    case Mode::InstanceTransitions: return c.instance_transitions;
    default: return 0;
  }
}

void ViewOptions::validate() const {
  for (const uint32_t side : {width, height}) {
    if (side == 0 || side > kMaxImageSide) {
      throw Error(ErrorKind::BadInput, "", "image width and height must be 1.." + std::to_string(kMaxImageSide) +
                                               ", not " + std::to_string(side));
    }
  }
  if (camera) validate_camera(*camera);
  trace.validate();
}

Camera view_camera(const emu::LoadedBvh& bvh, const ViewOptions& options) {
  if (options.camera) return *options.camera;
  return auto_frame(bvh.bounds, static_cast<float>(options.width) / static_cast<float>(options.height));
}

uint64_t Frame::faulted_rays() const {
  return static_cast<uint64_t>(std::count_if(results.begin(), results.end(), faulted));
}

Frame trace_frame(const emu::LoadedBvh& bvh, const ViewOptions& options, const ProgressCallback& progress) {
  options.validate();
  const Executor executor(options.threads);
  Frame f;
  f.label = std::filesystem::path(bvh.file).filename().string();
  f.width = options.width;
  f.height = options.height;
  f.camera = view_camera(bvh, options);
  const RayBatch batch = primary_rays(f.camera, f.width, f.height, executor);
  // The blob's any-hit shader (its alpha test), as `hwbvh stats` runs it.
  const std::optional<emu::AnyHitShader> shader = emu::AnyHitShader::of(bvh);
  emu::TraceOptions trace = emu::with_shader(options.trace, shader);
  trace.any_hit = false;  // images show closest hits
  trace.record_node_sequence = false;

  const std::size_t pixels = std::size_t{f.width} * f.height;
  f.directions.resize(pixels);
  f.results.resize(pixels);
  f.normals.resize(pixels, Vec3{0.0f});
  // Whole waves at a time (a ray's result depends on its wave only), so that progress can be told.
  constexpr std::size_t kSliceWaves = 2048;
  ProgressCounter traced(progress, "tracing", batch.rays.size());
  for (std::size_t w = 0; w < batch.wave_count(); w += kSliceWaves) {
    const std::size_t end_wave = std::min(w + kSliceWaves, batch.wave_count());
    const std::size_t first = batch.wave_begin[w];
    const std::size_t end = end_wave < batch.wave_count() ? batch.wave_begin[end_wave] : batch.rays.size();
    std::vector<uint32_t> waves(batch.wave_begin.begin() + static_cast<std::ptrdiff_t>(w),
                                batch.wave_begin.begin() + static_cast<std::ptrdiff_t>(end_wave));
    for (uint32_t& begin : waves) begin -= static_cast<uint32_t>(first);
    const emu::TraceOutput out =
        bvh.trace(std::span(batch.rays).subspan(first, end - first), waves, trace, executor);
    for (std::size_t i = 0; i < out.rays.size(); ++i) {
      const std::size_t p = batch.pixel[first + i];
      f.directions[p] = batch.rays[first + i].direction;
      f.results[p] = out.rays[i];
      if (out.rays[i].hit) f.normals[p] = bvh.hit_normal(out.rays[i]);
    }
    traced.add(end - first);
  }
  traced.finish();
  return f;
}

Image render(const Frame& frame, Mode mode, std::optional<double> max, bool legend) {
  check_max(max);
  const Side side{&frame, mode};
  return compose({make_panel(side, scales_for({&side, 1}, max))}, legend);
}

std::optional<std::string> scene_difference(const emu::LoadedBvh& a, const emu::LoadedBvh& b) {
  const auto bounds = [](const emu::LoadedBvh& bvh) {
    Aabb box;
    for (const Vec3& p : bvh.world_positions()) box.grow(p);
    return box;
  };
  const Aabb box_a = bounds(a), box_b = bounds(b);
  const float diagonal = std::max(vector_length(box_a.extent()), vector_length(box_b.extent()));
  const float apart = std::max(max_abs(box_a.min - box_b.min), max_abs(box_a.max - box_b.max));
  if (apart <= 1e-4f * diagonal) return std::nullopt;
  const auto text = [](const Aabb& box) {
    char buf[160];
    const auto d = [](float v) { return static_cast<double>(v); };
    std::snprintf(buf, sizeof buf, "(%g, %g, %g)..(%g, %g, %g)", d(box.min.x), d(box.min.y), d(box.min.z), d(box.max.x),
                  d(box.max.y), d(box.max.z));
    return std::string(buf);
  };
  return a.file + " and " + b.file + " look like different scenes: their bounds are " + text(box_a) + " and " +
         text(box_b);
}

Image render_comparison(const Frame& a, Mode mode_a, const Frame& b, Mode mode_b, std::optional<double> max,
                        bool legend) {
  check_max(max);
  if (a.width != b.width || a.height != b.height) {
    throw Error(ErrorKind::BadInput, "", "cannot compare images of different sizes");
  }
  const Side sides[] = {{&a, mode_a}, {&b, mode_b}};
  const Scales scales = scales_for(sides, max);
  std::vector<Panel> panels;
  for (const Side& side : sides) panels.push_back(make_panel(side, scales));
  // Titles name what differs between the two sides: the files, the modes, or both.
  const bool two_files = &a != &b;
  for (std::size_t i = 0; i < 2; ++i) {
    std::string what = two_files ? sides[i].frame->label : std::string();
    if (mode_a != mode_b || !two_files) what += std::string(what.empty() ? "" : " ") + mode_name(sides[i].mode);
    panels[i].title = (i == 0 ? "A: " : "B: ") + what;
  }
  if (is_heatmap(mode_a) && is_heatmap(mode_b)) {
    panels.push_back(heat_difference_panel(sides[0], sides[1]));
  } else if (two_files) {
    panels.push_back(hit_difference_panel(a, b, panels[0].pixels));
  }
  return compose(std::move(panels), legend);
}

}  // namespace hwbvh::render
