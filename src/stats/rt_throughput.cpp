#include "hwbvh/stats/rt_throughput.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/core/json_text.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/scene/ray_gen.h"
#include "hwbvh/stats/machine_output.h"

namespace hwbvh::stats {
namespace {

constexpr const char* kChipsAndCheese =
    "Chips and Cheese, \"RDNA 4's Raytracing Improvements\" (2025): RRA/RGP counters on a frame of 3DMark's DXR "
    "feature test";
constexpr float kOffsetEpsilon = 1e-4f;  // as stats' secondary rays (ray_gen.h)

// The sampled tiles of a frame: the primary rays of the tiles the simulated CUs run, one wave per tile, and where
// each pixel's primary ray is among them.
struct SampledFrame {
  RayBatch primary;
  std::vector<uint32_t> slot;           // per sampled tile, its dispatch slot
  std::vector<uint32_t> ray_of_pixel;   // pixel -> index into primary.rays; UINT32_MAX outside the sample
};

SampledFrame sample_frame(const RayBatch& full, const emu::MachineConfig& config) {
  if (uint64_t{config.kernel.rays_per_lane} * config.kernel.workgroup_waves != 1) {
    throw_bad_input(config.name, "machine reproduce deals one tile (wave) per workgroup: the preset needs "
                                 "kernel.rays_per_lane = kernel.workgroup_waves = 1");
  }
  SampledFrame f;
  f.primary.width = full.width;
  f.primary.height = full.height;
  f.ray_of_pixel.assign(size_t{full.width} * full.height, UINT32_MAX);
  const std::vector<bool> simulated = emu::simulated_waves(config, full.wave_count());
  for (size_t tile = 0; tile < full.wave_count(); ++tile) {
    if (!simulated[tile]) continue;
    f.primary.wave_begin.push_back(static_cast<uint32_t>(f.primary.rays.size()));
    f.slot.push_back(static_cast<uint32_t>(tile % config.gpu.compute_units()));
    const auto [begin, end] = full.wave_range(tile);
    for (size_t r = begin; r < end; ++r) {
      f.ray_of_pixel[full.pixel[r]] = static_cast<uint32_t>(f.primary.rays.size());
      f.primary.rays.push_back(full.rays[r]);
      f.primary.pixel.push_back(full.pixel[r]);
    }
  }
  return f;
}

class FrameTracer {
 public:
  FrameTracer(const emu::LoadedBvh& bvh, const std::optional<emu::AnyHitShader>& shader, const SampledFrame& frame,
              const Executor& executor)
      : bvh_(bvh), shader_(shader), frame_(frame), executor_(executor) {}

  // Traces `batch` (rays of the frame's pixels) and files each ray's node fetches under its pixel's lane in a pass
  // of the frame's tiles; lanes whose pixel has no ray keep an empty sequence. Returns the hits.
  std::vector<SurfaceHit> pass(const RayBatch& batch, bool any_hit) {
    emu::TraceOptions options;
    options.any_hit = any_hit;
    options.record_node_sequence = true;
    const auto start = std::chrono::steady_clock::now();
    emu::TraceOutput out = bvh_.trace(batch.rays, batch.wave_begin, emu::with_shader(options, shader_), executor_);
    emulation_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rays_traced += batch.rays.size();
    const size_t base = sequences.size();
    sequences.resize(base + frame_.primary.rays.size());
    for (size_t i = 0; i < batch.rays.size(); ++i) {
      sequences[base + frame_.ray_of_pixel[batch.pixel[i]]] = std::move(out.node_sequences[i]);
    }
    for (const uint32_t begin : frame_.primary.wave_begin) wave_begin.push_back(static_cast<uint32_t>(base + begin));
    slots.insert(slots.end(), frame_.slot.begin(), frame_.slot.end());
    return any_hit ? std::vector<SurfaceHit>{} : bvh_.surface_hits(batch.rays, out.rays);
  }

  std::vector<std::vector<emu::NodeFetch>> sequences;  // the passes' lanes, pass after pass
  std::vector<uint32_t> wave_begin;
  std::vector<uint32_t> slots;
  uint64_t rays_traced = 0;
  double emulation_seconds = 0.0;

 private:
  const emu::LoadedBvh& bvh_;
  const std::optional<emu::AnyHitShader>& shader_;
  const SampledFrame& frame_;
  const Executor& executor_;
};

// The GPU's record before any work: its preset with the overrides that apply to it, loaded (and so validated).
RtThroughputRecord configured_gpu(const RtThroughputGpu& gpu, const RtThroughputOptions& options) {
  RtThroughputRecord record;
  record.gpu = gpu;
  for (const RtThroughputOverride& o : options.overrides) {
    if (o.preset.empty() || o.preset == gpu.preset) record.overrides.push_back(o.parameter);
  }
  record.config = emu::load_machine_preset(gpu.preset, record.overrides);
  if (options.every_cu) record.config.gpu.simulated_shader_arrays = record.config.gpu.shader_arrays();
  return record;
}

void run_gpu(const AnyScene& scene, const std::string& scene_name, RtThroughputRecord& record,
             const RtThroughputOptions& options, const Executor& executor, const ProgressCallback& progress) {
  const RtThroughputGpu& gpu = record.gpu;

  pipeline::BuildBlobOptions b;
  b.target = gpu.target;
  b.build.threads = options.threads;
  b.encode.obb = gpu.obb;
  b.encode.threads = options.threads;
  b.xe3_stoc_level = 0;
  b.rtip31_stoc_level = 0;
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_any_blob(scene, b, progress).blob, scene_name);
  const std::optional<emu::AnyHitShader> shader = emu::AnyHitShader::of(bvh);

  const Camera camera = options.camera ? *options.camera
                                       : auto_frame(bvh.bounds, static_cast<float>(options.width) /
                                                                    static_cast<float>(options.height));
  const SampledFrame frame = sample_frame(primary_rays(camera, options.width, options.height, executor), record.config);
  const Vec3 light = default_light(bvh.bounds);
  FrameTracer tracer(bvh, shader, frame, executor);
  ProgressCounter passes(progress, "tracing", 4);
  const std::vector<SurfaceHit> primary_hits = tracer.pass(frame.primary, false);
  passes.add(1);
  const RayBatch reflections = reflection_rays(frame.primary, primary_hits, kOffsetEpsilon, executor);
  const std::vector<SurfaceHit> reflection_hits = tracer.pass(reflections, false);
  passes.add(1);
  tracer.pass(shadow_rays(frame.primary, primary_hits, light, kOffsetEpsilon, executor), true);
  passes.add(1);
  tracer.pass(shadow_rays(reflections, reflection_hits, light, kOffsetEpsilon, executor), true);
  passes.finish();
  record.rays_traced = tracer.rays_traced;
  record.emulation_seconds = tracer.emulation_seconds;

  const auto start = std::chrono::steady_clock::now();
  record.machine = emu::run_machine_model(record.config, tracer.sequences, tracer.wave_begin, tracer.slots, progress);
  record.model_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string target_text(const RtThroughputGpu& g) {
  return std::string(blob::target_name(g.target)) + (g.obb ? " with OBBs" : "");
}

std::string giga(double per_second) { return fmt::format("{:.2f} G", per_second / 1e9); }

double ratio(double a, double b) { return b > 0.0 ? a / b : 0.0; }

// A GPU's mix of work, box tests per triangle test (the frame's and the node format's: no timing parameter changes
// it), and its rates over the published ones.
struct Mix {
  double box_per_triangle = 0.0, published_box_per_triangle = 0.0;
  double box_factor = 0.0, triangle_factor = 0.0;  // model / published
};

Mix mix(const RtThroughputRecord& r) {
  const PublishedRtThroughput& p = r.gpu.published;
  return {ratio(static_cast<double>(r.machine.box_tests), static_cast<double>(r.machine.triangle_tests)),
          ratio(p.box_tests_per_second, p.triangle_tests_per_second),
          ratio(r.machine.gpu.box_tests_per_second, p.box_tests_per_second),
          ratio(r.machine.gpu.triangle_tests_per_second, p.triangle_tests_per_second)};
}

// The first GPU's rates over the second's, model and published.
struct Ratios {
  double box = 0.0, triangle = 0.0, published_box = 0.0, published_triangle = 0.0;
};

Ratios ratios(const RtThroughputRecord& a, const RtThroughputRecord& b) {
  return {ratio(a.machine.gpu.box_tests_per_second, b.machine.gpu.box_tests_per_second),
          ratio(a.machine.gpu.triangle_tests_per_second, b.machine.gpu.triangle_tests_per_second),
          ratio(a.gpu.published.box_tests_per_second, b.gpu.published.box_tests_per_second),
          ratio(a.gpu.published.triangle_tests_per_second, b.gpu.published.triangle_tests_per_second)};
}

}  // namespace

std::vector<RtThroughputGpu> rt_throughput_gpus() {
  return {
      {"rdna4", blob::Target::Rtip31, true, {"AMD Radeon RX 9070", 111.76e9, 19.61e9, 0.24, kChipsAndCheese}},
      {"rdna2", blob::Target::Rtip20, false, {"AMD Radeon RX 6900 XT", 38.8e9, 10.76e9, 0.1023, kChipsAndCheese}},
  };
}

RtThroughputReport reproduce_rt_throughput(const AnyScene& scene, const std::string& scene_name,
                                           const RtThroughputOptions& options, const ProgressCallback& progress) {
  if (options.width == 0 || options.height == 0) throw_bad_input(scene_name, "rt-throughput needs a non-empty image");
  const Executor executor(options.threads);
  const std::vector<RtThroughputGpu> gpus = rt_throughput_gpus();
  for (const RtThroughputOverride& o : options.overrides) {
    if (o.preset.empty() || std::ranges::any_of(gpus, [&](const RtThroughputGpu& g) { return g.preset == o.preset; })) {
      continue;
    }
    std::string presets;
    for (const RtThroughputGpu& g : gpus) presets += (presets.empty() ? "" : ", ") + g.preset;
    throw_bad_input(o.preset, "no GPU of rt-throughput runs this preset (it runs " + presets + "), so " +
                                  o.parameter.key + " = " + o.parameter.value + " would change nothing");
  }
  RtThroughputReport report;
  report.scene = scene_name;
  report.width = options.width;
  report.height = options.height;
  for (const RtThroughputGpu& gpu : gpus) report.records.push_back(configured_gpu(gpu, options));
  for (RtThroughputRecord& record : report.records) {
    run_gpu(scene, scene_name, record, options, executor, prefixed(progress, record.gpu.preset + ": "));
  }
  return report;
}

std::string rt_throughput_text(const RtThroughputReport& report) {
  std::string out = fmt::format(
      "rt-throughput on {} at {}x{}: primary rays, a reflection per primary hit and a shadow ray per hit (model "
      "outputs, not measurements)\n{:<24}{:<8}{:<18}{:>14}{:>14}{:>10}   {:>14}{:>14}{:>10}\n",
      report.scene, report.width, report.height, "GPU (model)", "preset", "blob", "box tests/s", "tri tests/s",
      "RA util", "published box", "published tri", "util");
  for (const RtThroughputRecord& r : report.records) {
    const emu::GpuFigures& g = r.machine.gpu;
    const PublishedRtThroughput& p = r.gpu.published;
    out += fmt::format("{:<24}{:<8}{:<18}{:>14}{:>14}{:>9.1f}%   {:>14}{:>14}{:>9.2f}%  ({})\n", g.name, r.gpu.preset,
                       target_text(r.gpu), giga(g.box_tests_per_second), giga(g.triangle_tests_per_second),
                       100.0 * g.ra_utilization, giga(p.box_tests_per_second), giga(p.triangle_tests_per_second),
                       100.0 * p.utilization, p.card);
    const Mix m = mix(r);
    out += fmt::format("  model / published: box tests {:.2f}x, triangle tests {:.2f}x; box tests per triangle test "
                       "{:.2f} (published {:.2f}: the frame's mix, {:.2f}x)\n",
                       m.box_factor, m.triangle_factor, m.box_per_triangle, m.published_box_per_triangle,
                       ratio(m.box_per_triangle, m.published_box_per_triangle));
    out += fmt::format("  {} of {} CUs simulated ({}), {} cycles at {} MHz, {} rays traced ({:.1f} s emulation, "
                       "{:.1f} s model), {}\n",
                       g.simulated_cus, g.compute_units, simulated_arrays_text(g), r.machine.cycles, g.clock_mhz,
                       r.rays_traced, r.emulation_seconds, r.model_seconds, emu::to_string(r.machine.status));
    for (const emu::ParameterOverride& o : r.overrides) {
      out += fmt::format("  what-if: {} = {} (not the preset's value)\n", o.key, o.value);
    }
  }
  if (report.records.size() >= 2) {
    const Ratios q = ratios(report.records[0], report.records[1]);
    out += fmt::format("ratio {} / {}: box tests {:.2f}x (published {:.2f}x), triangle tests {:.2f}x (published "
                       "{:.2f}x)\n",
                       report.records[0].gpu.preset, report.records[1].gpu.preset, q.box, q.published_box, q.triangle,
                       q.published_triangle);
    out += fmt::format("box ratio / triangle ratio {:.2f} (published {:.2f}): the quotient of the GPUs' box tests per "
                       "triangle test, set by the frame and the node formats, not by timing\n",
                       ratio(q.box, q.triangle), ratio(q.published_box, q.published_triangle));
  }
  out += std::string("published: ") + kChipsAndCheese + "\n";
  return out;
}

std::string rt_throughput_json(const RtThroughputReport& report) {
  using Json = nlohmann::ordered_json;
  Json gpus = Json::array();
  for (const RtThroughputRecord& r : report.records) {
    const emu::GpuFigures& g = r.machine.gpu;
    const PublishedRtThroughput& p = r.gpu.published;
    const Mix m = mix(r);
    Json overrides = Json::array();
    for (const emu::ParameterOverride& o : r.overrides) overrides.push_back({{"key", o.key}, {"value", o.value}});
    gpus.push_back({{"gpu", g.name},
                    {"preset", r.gpu.preset},
                    {"target", blob::target_name(r.gpu.target)},
                    {"obb", r.gpu.obb},
                    {"overrides", overrides},
                    {"box_tests_per_second", g.box_tests_per_second},
                    {"triangle_tests_per_second", g.triangle_tests_per_second},
                    {"utilization", g.ra_utilization},
                    {"box_per_triangle_test", m.box_per_triangle},
                    {"published",
                     {{"card", p.card},
                      {"box_tests_per_second", p.box_tests_per_second},
                      {"triangle_tests_per_second", p.triangle_tests_per_second},
                      {"utilization", p.utilization},
                      {"box_per_triangle_test", m.published_box_per_triangle},
                      {"source", p.source}}},
                    {"model_over_published",
                     {{"box_tests_per_second", m.box_factor},
                      {"triangle_tests_per_second", m.triangle_factor},
                      {"utilization", ratio(g.ra_utilization, p.utilization)},
                      {"box_per_triangle_test", ratio(m.box_per_triangle, m.published_box_per_triangle)}}},
                    {"rays_traced", r.rays_traced},
                    {"machine_model", Json::parse(emu::to_json(r.machine, r.config))}});
  }
  Json j = {{"model_output", "hwbvh machine model: outputs of a model, not hardware measurements"},
            {"reproduce", "rt-throughput"},
            {"scene", report.scene},
            {"width", report.width},
            {"height", report.height},
            {"gpus", gpus}};
  if (report.records.size() >= 2) {
    const Ratios q = ratios(report.records[0], report.records[1]);
    j["ratios"] = {{"box_tests", q.box},
                   {"triangle_tests", q.triangle},
                   {"published_box_tests", q.published_box},
                   {"published_triangle_tests", q.published_triangle},
                   {"box_over_triangle", ratio(q.box, q.triangle)},
                   {"published_box_over_triangle", ratio(q.published_box, q.published_triangle)}};
  }
  return json_text(j);
}

}  // namespace hwbvh::stats
