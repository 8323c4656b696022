// hwbvh render FILE -o OUT.png --mode MODE: a debug image of the emulated primary rays (shading, normals, depth,
// ids, or a per-ray counter heatmap with a legend), optionally beside a second blob or a second mode.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "commands.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/render/png.h"
#include "hwbvh/render/render.h"
#include "option_checks.h"
#include "inputs.h"
#include "output.h"
#include "progress.h"
#include "ray_options.h"

namespace hwbvh::cli {
namespace {

struct RenderArgs {
  std::string file;
  std::string output;
  std::string mode;
  std::string compare;
  std::string compare_mode;
  RayArgs rays;
  bool flatten = false;
  CLI::Option* flatten_option = nullptr;
  double max_value = 0.0;
  std::optional<double> max;  ///< --max, when given
  bool no_legend = false;
  int threads = 0;
  bool json = false;
  bool quiet = false;
};

// Loads a blob, a .rra file or a scene (built on the fly) and refuses the options its target has no use for.
emu::LoadedBvh load_checked(const std::string& file, const RenderArgs& a, const WarningFn& warn,
                            const ProgressCallback& progress) {
  emu::LoadedBvh bvh =
      emu::load_bvh(read_traced_input(file, a.flatten_option, a.flatten, a.threads, warn, progress), file);
  a.rays.target_options.refuse_unused(bvh);
  return bvh;
}

uint64_t largest_counter(const render::Frame& frame, render::Mode mode) {
  uint64_t m = 0;
  for (const emu::RayResult& r : frame.results) m = std::max(m, render::counter_value(mode, r));
  return m;
}

// One traced frame as JSON: its label (A, B) and file, rays, faulted rays and the largest counter of each heatmap
// mode shown.
Json frame_json(const std::string& label, const std::string& file, const render::Frame& frame,
                std::initializer_list<render::Mode> modes) {
  Json j{{"label", label}, {"file", file}, {"rays", frame.results.size()}, {"faulted_rays", frame.faulted_rays()}};
  for (const render::Mode m : modes)
    if (render::is_heatmap(m)) j["max"][render::mode_name(m)] = largest_counter(frame, m);
  return j;
}

// The JSON's rows as text: `prefix`rays, `prefix`max MODE.
void add_frame_rows(Table& t, const Json& frame, bool prefixed) {
  const std::string prefix = prefixed ? frame["label"].get<std::string>() + " " : "";
  t.row(prefix + "rays", fmt::format("{} ({} faulted)", frame["rays"].get<uint64_t>(),
                                     frame["faulted_rays"].get<uint64_t>()));
  if (!frame.contains("max")) return;
  for (const auto& [mode, value] : frame["max"].items()) t.row(prefix + "max " + mode, fmt::format("{}", value.get<uint64_t>()));
}

int run_render(const RenderArgs& a) {
  check_output_is_not_input(a.output, {a.file, a.compare});
  (void)render::image_format(a.output);  // an extension other than .png, .jpg, .jpeg is refused before the work
  const render::Mode mode = render::parse_mode(a.mode);
  render::ViewOptions view;
  view.width = a.rays.width;
  view.height = a.rays.height;
  view.camera = a.rays.parsed_camera();
  view.trace = a.rays.trace();
  view.threads = a.threads;
  view.validate();

  Warnings warnings;
  Json out{{"output", a.output}};
  Json frames = Json::array();
  render::Image image;
  render::Frame frame;
  {
    Progress progress("hwbvh render", !a.quiet);
    progress.phase("loading");
    const emu::LoadedBvh bvh = load_checked(a.file, a, warnings.collector(), progress.callback());
    frame = render::trace_frame(bvh, view, progress.callback());
    if (!a.compare.empty()) {
      progress.phase("loading " + std::filesystem::path(a.compare).filename().string());
      const emu::LoadedBvh other_bvh = load_checked(a.compare, a, warnings.collector(), progress.callback());
      if (const auto difference = render::scene_difference(bvh, other_bvh))
        warnings.collector()(*difference + "; the difference panel compares unrelated hits");
      render::ViewOptions same = view;
      same.camera = frame.camera;  // B is seen through A's camera, so the pixels correspond
      const render::Frame other = render::trace_frame(other_bvh, same, prefixed(progress.callback(), "B: "));
      image = render::render_comparison(frame, mode, other, mode, a.max, !a.no_legend);
      out["mode"] = render::mode_name(mode);
      frames.push_back(frame_json("A", a.file, frame, {mode}));
      frames.push_back(frame_json("B", a.compare, other, {mode}));
    } else if (!a.compare_mode.empty()) {
      const render::Mode second = render::parse_mode(a.compare_mode);
      image = render::render_comparison(frame, mode, frame, second, a.max, !a.no_legend);
      out["modes"] = {render::mode_name(mode), render::mode_name(second)};
      frames.push_back(frame_json("A", a.file, frame, {mode, second}));
    } else {
      image = render::render(frame, mode, a.max, !a.no_legend);
      out["mode"] = render::mode_name(mode);
      frames.push_back(frame_json("", a.file, frame, {mode}));
    }
  }
  warnings.print(a.quiet);
  render::write_image(a.output, image);
  const uint32_t legend_rows = image.height() - frame.height;  // the legend strip and any titles
  out["frames"] = frames;
  out["image"] = {{"width", image.width()}, {"height", image.height()}, {"render_width", frame.width},
                  {"render_height", frame.height}, {"format", render::image_format(a.output) == render::ImageFormat::Png ? "png" : "jpeg"}};
  out["camera"] = format_camera(frame.camera);
  if (a.json) {
    print_json(out);
    return 0;
  }
  Table t;
  t.row("output", a.output);
  if (out.contains("modes")) t.row("modes", fmt::format("{} | {}", out["modes"][0].get<std::string>(), out["modes"][1].get<std::string>()));
  else t.row("mode", out["mode"].get<std::string>());
  for (const Json& f : frames) add_frame_rows(t, f, frames.size() > 1 || !a.compare_mode.empty());
  t.row("image", fmt::format("{} x {} px{}", image.width(), image.height(),
                             legend_rows == 0 ? std::string()
                                              : fmt::format(" (renders of {} x {} and {} rows of titles and legend; "
                                                            "--no-legend leaves the legend out)",
                                                            frame.width, frame.height, legend_rows)));
  t.row("camera", format_camera(frame.camera));
  t.print();
  return 0;
}

}  // namespace

Command add_render_command(CLI::App& app) {
  auto args = std::make_shared<RenderArgs>();
  std::vector<std::string> modes;
  for (const render::Mode m : render::all_modes()) modes.emplace_back(render::mode_name(m));
  CLI::App* sub = app.add_subcommand("render", "Render a debug image (shading or a traversal-counter heatmap) of the "
                                               "emulated primary rays of a blob");
  sub->add_option("file", args->file,
                  "blob file (.hwbvh), .rra file, or a scene (.obj, .gltf, .glb) built on the fly as `hwbvh build` "
                  "does by default")
      ->required();
  args->flatten_option = add_flatten_flag(*sub, args->flatten);
  sub->add_option("-o,--output", args->output, "image file to write: .png, or .jpg / .jpeg (lossy)")->required();
  sub->add_option("--mode", args->mode, "what each pixel shows")->required()->check(CLI::IsMember(modes));
  CLI::Option* compare =
      sub->add_option("--compare", args->compare, "a second blob, .rra file or scene: A | B | difference, shared scale");
  CLI::Option* compare_mode =
      sub->add_option("--compare-mode", args->compare_mode, "a second mode of the same blob, side by side")
          ->check(CLI::IsMember(modes));
  compare->excludes(compare_mode);
  add_ray_options(*sub, args->rays, kImageRays | kTrace | kStoc);
  CLI::Option* max = sub->add_option("--max", args->max_value, "top of the heatmap scale (depth: far distance); default: the image maximum")
      ->check(positive_number());
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (images are identical at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_flag("--no-legend", args->no_legend, "leave the legend strip out: the image is exactly W x H");
  sub->add_flag("--json", args->json, "print one JSON object");
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args, max] {
            if (max->count() > 0) args->max = args->max_value;
            return run_render(*args);
          }};
}

}  // namespace hwbvh::cli
