#include "hwbvh/stats/traversal_stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include <glm/geometric.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/scene/ray_gen.h"
#include "hwbvh/scene/rays_file.h"

namespace hwbvh::stats {
namespace {

constexpr uint32_t kHistogramBins = 32;

struct KindInfo {
  RayKind kind;
  const char* name;
};
constexpr KindInfo kKinds[] = {{RayKind::Primary, "primary"},
                               {RayKind::AmbientOcclusion, "ao"},
                               {RayKind::Shadow, "shadow"},
                               {RayKind::Random, "random"},
                               {RayKind::File, "file"}};

emu::OracleHit as_oracle_hit(const emu::RayResult& r) {
  emu::OracleHit h;
  h.hit = r.hit;
  h.t = r.t;
  h.instance = r.instance_index;
  h.geometry = r.geometry_id;
  h.primitive = r.primitive_id;
  return h;
}

// Traces `batch` as rays of `kind`, in any-hit mode when `any_hit` (is_occlusion(kind) for generated rays).
KindStats trace_kind(const emu::LoadedBvh& bvh, RayKind kind, bool any_hit, const RayBatch& batch,
                     const StatsOptions& options, const emu::Oracle* oracle, const Executor& executor) {
  KindStats ks;
  ks.kind = kind;
  ks.rays = batch.rays.size();
  emu::TraceOptions trace = options.trace;
  trace.any_hit = any_hit;
  trace.record_node_sequence = options.machine.has_value();

  const auto start = std::chrono::steady_clock::now();
  emu::TraceOutput out = bvh.trace(batch.rays, batch.wave_begin, trace, executor);
  ks.emulation_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<uint64_t> steps(out.rays.size()), boxes(out.rays.size()), tris(out.rays.size()),
      any_hits(out.rays.size());
  for (std::size_t i = 0; i < out.rays.size(); ++i) {
    const emu::RayResult& r = out.rays[i];
    ks.totals += r.counters;
    if (r.hit) {
      ++ks.hits;
      ks.hit_totals += r.counters;
    }
    if (r.fault != emu::NodeFault::None && ks.faulted_rays++ == 0) {
      ks.first_fault = r.fault;
      ks.first_fault_node = r.fault_node;
    }
    steps[i] = r.counters.steps;
    boxes[i] = r.counters.box_tests;
    tris[i] = r.counters.triangle_tests;
    any_hits[i] = r.counters.any_hit_invocations;
  }
  ks.steps = summarize(std::move(steps));
  ks.box_tests = summarize(std::move(boxes));
  ks.triangle_tests = summarize(std::move(tris));
  ks.any_hit_invocations = summarize(std::move(any_hits));
  ks.waves = out.total_waves();
  if (options.machine) ks.machine = emu::run_machine_model(*options.machine, out.node_sequences, batch.wave_begin);

  if (oracle) {
    // Per-ray outcomes go to per-ray slots, then are summed in ray order: identical at any thread count.
    std::vector<emu::Disagreement> outcome(out.rays.size());
    std::vector<double> t_error(out.rays.size(), 0.0);
    executor.for_each(0, out.rays.size(), [&](std::size_t i) {
      const Ray& ray = batch.rays[i];
      emu::AgreementStats one;
      if (trace.any_hit) {
        outcome[i] = one.add(out.rays[i].hit, oracle->occluded(ray, trace.instance_mask));
      } else {
        outcome[i] = one.add(as_oracle_hit(out.rays[i]), oracle->trace_closest(ray, trace.instance_mask));
      }
      t_error[i] = one.worst_relative_t_error;
    }, 256);
    for (std::size_t i = 0; i < outcome.size(); ++i) {
      ++ks.agreement.by_cause[static_cast<std::size_t>(outcome[i])];
      ks.agreement.worst_relative_t_error = std::max(ks.agreement.worst_relative_t_error, t_error[i]);
    }
    if (options.keep_results) ks.verdicts = std::move(outcome);
  }
  if (options.keep_results) {
    ks.results = std::move(out.rays);
    ks.rays_traced = batch.rays;
    ks.pixel = batch.pixel;
  }
  return ks;
}

}  // namespace

std::string StatsReport::stack_text() const {
  return (short_stack ? "short stack " : "stack ") + std::to_string(stack_size) + " entries";
}

const char* ray_kind_name(RayKind kind) {
  for (const KindInfo& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

RayKind parse_ray_kind(std::string_view name) {
  for (const KindInfo& k : kKinds)
    if (name == k.name) return k.kind;
  throw Error(ErrorKind::BadInput, "", "unknown ray type '" + std::string(name) +
                                           "' (valid: primary, ao, shadow, random, file)");
}

std::vector<RayKind> parse_ray_kinds(std::string_view list) {
  std::vector<RayKind> kinds;
  std::stringstream in{std::string(list)};
  for (std::string name; std::getline(in, name, ',');) {
    const RayKind k = parse_ray_kind(name);
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  }
  if (kinds.empty()) throw Error(ErrorKind::BadInput, "", "no ray types requested");
  return kinds;
}

bool is_occlusion(RayKind kind) { return kind == RayKind::AmbientOcclusion || kind == RayKind::Shadow; }

Distribution summarize(std::vector<uint64_t> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  double sum = 0.0;
  for (uint64_t v : values) sum += static_cast<double>(v);
  d.mean = sum / static_cast<double>(n);
  // Nearest rank: the smallest value with at least p of the rays at or below it.
  auto rank = [&](double p) {
    const auto r = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    return static_cast<double>(values[std::clamp<std::size_t>(r, 1, n) - 1]);
  };
  d.median = rank(0.5);
  d.p95 = rank(0.95);
  d.max = static_cast<double>(values.back());
  d.bin_width = std::max<uint64_t>(1, (values.back() + kHistogramBins) / kHistogramBins);
  d.histogram.assign(values.back() / d.bin_width + 1, 0);
  for (uint64_t v : values) ++d.histogram[v / d.bin_width];
  return d;
}

namespace {

// The report's description of the run, before any ray is traced.
StatsReport report_header(const emu::LoadedBvh& bvh, const StatsOptions& options, bool any_hit_shader,
                          const Executor& executor) {
  StatsReport report;
  report.file = bvh.file;
  report.target = blob::target_name(bvh.target);
  report.width = options.width;
  report.height = options.height;
  // Xe3's short stack has a fixed size (the CLI refuses --stack-size for it).
  report.short_stack = bvh.target == blob::Target::Xe3;
  report.stack_size = report.short_stack ? emu::kXe3ShortStackEntries : options.trace.stack.size;
  report.threads = executor.threads();
  report.machine = options.machine;
  report.any_hit_shader = any_hit_shader;
  report.stoc = options.trace.stoc;
  report.two_level = bvh.two_level();
  report.camera = options.camera ? *options.camera
                                 : auto_frame(bvh.bounds, static_cast<float>(options.width) / static_cast<float>(options.height));
  return report;
}

}  // namespace

StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsOptions& requested) {
  if (requested.kinds.empty()) throw Error(ErrorKind::BadInput, "", "no ray types requested");
  requested.trace.validate();
  // The blob's any-hit shader (its alpha test) runs in the emulator, and the same test in the oracle's filter.
  const std::optional<emu::AnyHitShader> shader = emu::AnyHitShader::of(bvh);
  StatsOptions options = requested;
  options.trace = emu::with_shader(requested.trace, shader);
  const Executor executor(options.threads);
  StatsReport report = report_header(bvh, options, shader.has_value(), executor);

  std::optional<emu::Oracle> oracle;
  if (options.oracle) oracle.emplace(emu::Oracle::of(bvh, options.threads));
  const emu::Oracle* oracle_ptr = oracle ? &*oracle : nullptr;

  // Secondary rays need the primary hits, so primary rays are traced whenever a secondary kind is requested.
  const bool want_primary = std::find(options.kinds.begin(), options.kinds.end(), RayKind::Primary) != options.kinds.end();
  const bool want_secondary = std::any_of(options.kinds.begin(), options.kinds.end(), is_occlusion);
  std::optional<RayBatch> primary;
  std::optional<KindStats> primary_stats;
  if (want_primary || want_secondary) {
    primary = primary_rays(report.camera, options.width, options.height, executor);
    StatsOptions keep = options;
    keep.keep_results = true;
    primary_stats = trace_kind(bvh, RayKind::Primary, false, *primary, keep, oracle_ptr, executor);
  }
  std::vector<SurfaceHit> hits;
  if (want_secondary) hits = bvh.surface_hits(primary->rays, primary_stats->results);

  for (RayKind kind : options.kinds) {
    switch (kind) {
      case RayKind::Primary: {
        KindStats ks = *primary_stats;
        if (!options.keep_results) {
          ks.results.clear();
          ks.rays_traced.clear();
          ks.pixel.clear();
          ks.verdicts.clear();
        }
        report.kinds.push_back(std::move(ks));
        break;
      }
      case RayKind::AmbientOcclusion: {
        AoOptions ao;
        ao.samples = options.ao_samples;
        ao.max_distance = options.ao_distance ? *options.ao_distance : 0.1f * vector_length(bvh.bounds.extent());
        ao.seed = options.seed;
        report.kinds.push_back(trace_kind(bvh, kind, is_occlusion(kind), ao_rays(*primary, hits, ao, executor), options, oracle_ptr, executor));
        break;
      }
      case RayKind::Shadow:
        report.kinds.push_back(trace_kind(bvh, kind, is_occlusion(kind), shadow_rays(*primary, hits, default_light(bvh.bounds), 1e-4f, executor),
                                          options, oracle_ptr, executor));
        break;
      case RayKind::Random:
        report.kinds.push_back(trace_kind(bvh, kind, is_occlusion(kind), random_rays(bvh.bounds, options.random_rays, options.seed, executor),
                                          options, oracle_ptr, executor));
        break;
      case RayKind::File: {
        if (options.rays_file.empty()) throw Error(ErrorKind::BadInput, "", "ray type 'file' needs --rays-file FILE");
        report.kinds.push_back(trace_kind(bvh, kind, is_occlusion(kind), make_batch(read_rays_file(options.rays_file)), options, oracle_ptr, executor));
        break;
      }
    }
  }
  return report;
}

StatsReport run_stats_on_rays(const emu::LoadedBvh& bvh, std::vector<Ray> rays, bool any_hit,
                              const StatsOptions& requested) {
  requested.trace.validate();
  for (std::size_t i = 0; i < rays.size(); ++i) validate_ray(rays[i], "rays", "ray " + std::to_string(i));
  const std::optional<emu::AnyHitShader> shader = emu::AnyHitShader::of(bvh);
  StatsOptions options = requested;
  options.trace = emu::with_shader(requested.trace, shader);
  options.kinds = {RayKind::File};
  const Executor executor(options.threads);
  StatsReport report = report_header(bvh, options, shader.has_value(), executor);
  std::optional<emu::Oracle> oracle;
  if (options.oracle) oracle.emplace(emu::Oracle::of(bvh, options.threads));
  report.kinds.push_back(
      trace_kind(bvh, RayKind::File, any_hit, make_batch(std::move(rays)), options, oracle ? &*oracle : nullptr, executor));
  return report;
}

}  // namespace hwbvh::stats
