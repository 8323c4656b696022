// `hwbvh report`, data side: load or build each input, trace it, draw its images. The HTML is written by
// report_html.cpp.
#include "hwbvh/stats/report.h"

#include <algorithm>
#include <cstdio>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/render/render.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::stats {
namespace {

std::string section_text(const blob::Blob& b, blob::SectionType type, const std::string& file) {
  const blob::Section& s = b.require(type, file);
  return {reinterpret_cast<const char*>(s.data.data()), s.data.size()};
}

// The primary rays' results laid out as render's Frame, so the heatmaps show exactly the rays the statistics
// counted (through the blob's own target emulator).
render::Frame primary_frame(const emu::LoadedBvh& bvh, const StatsReport& stats, const KindStats& primary,
                            const std::string& label, const Executor& executor) {
  render::Frame f;
  f.label = label;
  f.width = stats.width;
  f.height = stats.height;
  f.camera = stats.camera;
  const RayBatch batch = primary_rays(stats.camera, stats.width, stats.height, executor);
  const std::size_t pixels = std::size_t{f.width} * f.height;
  f.results.resize(pixels);
  f.directions.resize(pixels);
  f.normals.resize(pixels, Vec3{0.0f});
  for (std::size_t i = 0; i < primary.results.size(); ++i) {
    const std::size_t p = primary.pixel[i];
    const emu::RayResult& r = primary.results[i];
    f.results[p] = r;
    f.directions[p] = batch.rays[i].direction;
    if (r.hit) f.normals[p] = bvh.hit_normal(r);  // world space, also through an instance
  }
  return f;
}

std::vector<ReportImage> draw_images(const render::Frame& frame, blob::Target target, bool any_hit_shader) {
  std::vector<render::Mode> modes{render::Mode::Shaded, render::Mode::Steps, render::Mode::BoxTests,
                                  render::Mode::TriTests};
  if (target == blob::Target::Rtip31) modes.push_back(render::Mode::Obb);  // the only target with OBBs
  if (any_hit_shader) modes.push_back(render::Mode::AnyHit);
  std::vector<ReportImage> images;
  for (const render::Mode m : modes) {
    const std::string caption = render::is_heatmap(m)
                                    ? render::mode_caption(m)
                                    : std::string(render::mode_name(m)) + " (" + render::mode_caption(m) + ")";
    images.push_back({render::mode_name(m), caption, render::render(frame, m)});
  }
  return images;
}

CompareOptions compare_options(const ReportOptions& o) {
  CompareOptions c;
  c.kinds.clear();
  for (RayKind k : o.kinds)
    if (k != RayKind::File) c.kinds.push_back(k);
  c.width = o.width;
  c.height = o.height;
  c.camera = o.camera;
  c.ao_samples = o.ao_samples;
  c.ao_distance = o.ao_distance;
  c.random_rays = o.random_rays;
  c.seed = o.seed;
  c.trace = o.trace;
  c.machine = o.machine;
  c.threads = o.threads;
  return c;
}

}  // namespace

SceneReport report_scene(const std::filesystem::path& input, const ReportOptions& options,
                         const ProgressCallback& progress) {
  SceneReport s;
  s.file = input.string();
  s.name = input.filename().string();
  s.from_scene = is_scene_file(input);
  std::optional<AnyScene> scene;
  emu::LoadedBvh bvh;
  announce(progress, "loading");
  if (s.from_scene) {
    scene = load_any_scene(input, {.flatten = options.flatten}, options.warn, progress);
    pipeline::BuildBlobOptions build;
    build.build.threads = options.threads;
    build.encode.threads = options.threads;
    pipeline::BuildBlobResult built = pipeline::build_any_blob(*scene, build, progress);
    s.build = std::move(built.report);
    bvh = emu::load_bvh(built.blob, s.file);
  } else {
    const blob::Blob b = blob::read_file(input);
    s.build = pipeline::report_from_json(section_text(b, blob::SectionType::BuildMeta, s.file), s.file);
    bvh = emu::load_bvh(b, s.file);
  }
  s.build.run.reset();  // wall-clock figures would make the page differ between runs
  if (options.check_input) options.check_input(bvh);

  StatsOptions so;
  so.kinds = options.kinds;
  if (std::find(so.kinds.begin(), so.kinds.end(), RayKind::Primary) == so.kinds.end())
    so.kinds.insert(so.kinds.begin(), RayKind::Primary);
  so.width = options.width;
  so.height = options.height;
  so.camera = options.camera;
  so.ao_samples = options.ao_samples;
  so.ao_distance = options.ao_distance;
  so.random_rays = options.random_rays;
  so.seed = options.seed;
  so.rays_file = options.rays_file;
  so.trace = options.trace;
  so.threads = options.threads;
  so.machine = options.machine;
  if (options.machine && !options.sweep_parameter.empty()) {
    // First, so that a bad parameter or value is refused before the longer work.
    s.sweep =
        run_machine_sweep(bvh, {{options.machine->name}, options.sweep_parameter, options.sweep_values, so}, progress);
  }
  if (options.machine && options.sensitivity) {
    SensitivityOptions sensitivity;
    sensitivity.preset = options.machine->name;
    sensitivity.stats = so;
    s.sensitivity = run_sensitivity(bvh, sensitivity, progress);
  }
  so.keep_results = true;
  s.stats = run_stats(bvh, so, nullptr, progress);

  const Executor executor(options.threads);
  for (const KindStats& k : s.stats.kinds) {
    if (k.kind == RayKind::Primary)
      s.images = draw_images(primary_frame(bvh, s.stats, k, s.name, executor), bvh.target, s.stats.any_hit_shader);
  }
  for (KindStats& k : s.stats.kinds) {
    k.results = {};
    k.rays_traced = {};
    k.pixel = {};
  }
  if (s.from_scene && options.compare)
    s.compare = compare_targets(*scene, compare_options(options), prefixed(progress, "compare: "));
  return s;
}

Report make_report(const std::vector<std::filesystem::path>& inputs, const ReportOptions& options,
                   const ProgressCallback& progress) {
  if (inputs.empty()) throw Error(ErrorKind::BadInput, "", "no scenes or blobs given");
  Report r;
  for (const auto& input : inputs)
    r.scenes.push_back(report_scene(input, options, prefixed(progress, input.filename().string() + ": ")));
  for (const KindStats& k : r.scenes.front().stats.kinds) r.kinds.push_back(k.kind);
  if (options.machine) r.machine = options.machine->name;
  return r;
}

void write_report(const std::filesystem::path& path, std::string_view html) {
  write_file_atomically(path, std::as_bytes(std::span<const char>(html)));
}

}  // namespace hwbvh::stats
