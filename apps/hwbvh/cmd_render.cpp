// hwbvh render FILE -o OUT.png --mode MODE: a debug image of the emulated primary rays (shading, normals, depth,
// ids, or a per-ray counter heatmap with a legend), optionally beside a second blob or a second mode.
#include <fmt/format.h>

#include <algorithm>
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
  int threads = 0;
};

// Loads a blob, a .rra file or a scene (built on the fly) and refuses the options its target has no use for.
emu::LoadedBvh load_checked(const std::string& file, const RenderArgs& a, const WarningFn& warn) {
  emu::LoadedBvh bvh = emu::load_bvh(read_traced_input(file, a.flatten_option, a.flatten, a.threads, warn), file);
  a.rays.target_options.refuse_unused(bvh);
  return bvh;
}

uint64_t largest_counter(const render::Frame& frame, render::Mode mode) {
  uint64_t m = 0;
  for (const emu::RayResult& r : frame.results) m = std::max(m, render::counter_value(mode, r));
  return m;
}

void add_frame_rows(Table& t, const std::string& name, const render::Frame& frame, render::Mode mode) {
  const std::string prefix = name.empty() ? name : name + " ";
  t.row(prefix + "rays", fmt::format("{} ({} faulted)", frame.results.size(), frame.faulted_rays()));
  if (render::is_heatmap(mode)) t.row(prefix + "max " + render::mode_name(mode), fmt::format("{}", largest_counter(frame, mode)));
}

int run_render(const RenderArgs& a) {
  check_output_is_not_input(a.output, {a.file, a.compare});
  const render::Mode mode = render::parse_mode(a.mode);
  render::ViewOptions view;
  view.width = a.rays.width;
  view.height = a.rays.height;
  view.camera = a.rays.parsed_camera();
  view.trace = a.rays.trace();
  view.threads = a.threads;
  view.validate();

  Warnings warnings;
  const render::Frame frame = render::trace_frame(load_checked(a.file, a, warnings.collector()), view);
  Table t;
  t.row("output", a.output);
  render::Image image;
  if (!a.compare.empty()) {
    render::ViewOptions same = view;
    same.camera = frame.camera;  // B is seen through A's camera, so the pixels correspond
    const render::Frame other = render::trace_frame(load_checked(a.compare, a, warnings.collector()), same);
    image = render::render_comparison(frame, mode, other, mode, a.max);
    t.row("mode", render::mode_name(mode));
    add_frame_rows(t, "A", frame, mode);
    add_frame_rows(t, "B", other, mode);
  } else if (!a.compare_mode.empty()) {
    const render::Mode second = render::parse_mode(a.compare_mode);
    image = render::render_comparison(frame, mode, frame, second, a.max);
    t.row("modes", fmt::format("{} | {}", render::mode_name(mode), render::mode_name(second)));
    add_frame_rows(t, "A", frame, mode);
    if (render::is_heatmap(second)) t.row(fmt::format("B max {}", render::mode_name(second)),
                                          fmt::format("{}", largest_counter(frame, second)));
  } else {
    image = render::render(frame, mode, a.max);
    t.row("mode", render::mode_name(mode));
    add_frame_rows(t, "", frame, mode);
  }
  warnings.print(false);
  render::write_png(a.output, image);
  t.row("image", fmt::format("{} x {} px", image.width(), image.height()));
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
  sub->add_option("-o,--output", args->output, "PNG file to write")->required();
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
  return {sub, [args, max] {
            if (max->count() > 0) args->max = args->max_value;
            return run_render(*args);
          }};
}

}  // namespace hwbvh::cli
