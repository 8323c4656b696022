#include "hwbvh/stats/traversal_stats.h"

#include <algorithm>
#include <chrono>
#include <iterator>
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
                               {RayKind::Reflection, "reflection"},
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

// One ray kind's running totals while its batches are traced.
struct KindRun {
  KindStats stats;
  std::optional<std::size_t> report_index;  ///< its place in the report; none for primary rays traced only as a source
  bool any_hit = false;
  ValueCounts steps, box_tests, triangle_tests, any_hit_invocations;
  // The machine model's input, held to the end: every ray's node sequence and the waves.
  std::vector<std::vector<emu::NodeFetch>> node_sequences;
  std::vector<uint32_t> wave_begin;
};

// Traces batches of rays, counts them, checks them against the oracle and hands them to the sink.
class BatchTracer {
 public:
  BatchTracer(const emu::LoadedBvh& bvh, const StatsOptions& options, const emu::Oracle* oracle,
              const Executor& executor, RaySink* sink)
      : bvh_(bvh), options_(options), oracle_(oracle), executor_(executor), sink_(sink) {}

  // Traces `batch` as the next rays of `run`; the results stay valid until the next call.
  const std::vector<emu::RayResult>& trace(KindRun& run, const RayBatch& batch) {
    KindStats& ks = run.stats;
    const bool reported = run.report_index.has_value();
    emu::TraceOptions trace = options_.trace;
    trace.any_hit = run.any_hit;
    trace.record_node_sequence = options_.machine.has_value() && reported;

    const auto start = std::chrono::steady_clock::now();
    out_ = bvh_.trace(batch.rays, batch.wave_begin, trace, executor_);
    ks.emulation_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const uint64_t first_ray = ks.rays;
    ks.rays += out_.rays.size();
    if (!reported) return out_.rays;  // primary rays traced only for their hits

    for (const emu::RayResult& r : out_.rays) {
      ks.totals += r.counters;
      if (r.hit) {
        ++ks.hits;
        ks.hit_totals += r.counters;
      }
      if (r.fault != emu::NodeFault::None && ks.faulted_rays++ == 0) {  // batches come in ray order
        ks.first_fault = r.fault;
        ks.first_fault_node = r.fault_node;
      }
      run.steps.add(r.counters.steps);
      run.box_tests.add(r.counters.box_tests);
      run.triangle_tests.add(r.counters.triangle_tests);
      run.any_hit_invocations.add(r.counters.any_hit_invocations);
    }
    ks.waves += out_.total_waves();
    if (options_.machine) {
      for (uint32_t w : batch.wave_begin) run.wave_begin.push_back(static_cast<uint32_t>(first_ray) + w);
      std::move(out_.node_sequences.begin(), out_.node_sequences.end(), std::back_inserter(run.node_sequences));
    }
    verdicts_.clear();
    if (oracle_) check(ks, batch, trace);
    if (options_.keep_results) {
      ks.results.insert(ks.results.end(), out_.rays.begin(), out_.rays.end());
      ks.rays_traced.insert(ks.rays_traced.end(), batch.rays.begin(), batch.rays.end());
      ks.pixel.insert(ks.pixel.end(), batch.pixel.begin(), batch.pixel.end());
      ks.verdicts.insert(ks.verdicts.end(), verdicts_.begin(), verdicts_.end());
    }
    if (sink_) {
      sink_->add(TracedBatch{.kind_index = *run.report_index,
                             .kind = ks.kind,
                             .first_ray = first_ray,
                             .rays = batch.rays,
                             .pixel = batch.pixel,
                             .results = out_.rays,
                             .verdicts = verdicts_});
    }
    return out_.rays;
  }

 private:
  // Per-ray outcomes go to per-ray slots, then are summed in ray order: identical at any thread count.
  void check(KindStats& ks, const RayBatch& batch, const emu::TraceOptions& trace) {
    verdicts_.assign(out_.rays.size(), emu::Disagreement::None);
    t_error_.assign(out_.rays.size(), 0.0);
    executor_.for_each(0, out_.rays.size(), [&](std::size_t i) {
      const Ray& ray = batch.rays[i];
      emu::AgreementStats one;
      if (trace.any_hit) {
        verdicts_[i] = one.add(out_.rays[i].hit, oracle_->occluded(ray, trace.instance_mask));
      } else {
        verdicts_[i] = one.add(as_oracle_hit(out_.rays[i]), oracle_->trace_closest(ray, trace.instance_mask));
      }
      t_error_[i] = one.worst_relative_t_error;
    }, 256);
    for (std::size_t i = 0; i < verdicts_.size(); ++i) {
      ++ks.agreement.by_cause[static_cast<std::size_t>(verdicts_[i])];
      ks.agreement.worst_relative_t_error = std::max(ks.agreement.worst_relative_t_error, t_error_[i]);
    }
  }

  const emu::LoadedBvh& bvh_;
  const StatsOptions& options_;
  const emu::Oracle* oracle_;
  const Executor& executor_;
  RaySink* sink_;
  emu::TraceOutput out_;
  std::vector<emu::Disagreement> verdicts_;
  std::vector<double> t_error_;
};

// The kind's statistics once all its rays are traced; `progress` hears the machine model's run.
KindStats finish(KindRun& run, const StatsOptions& options, const ProgressCallback& progress) {
  KindStats ks = std::move(run.stats);
  ks.steps = run.steps.summary();
  ks.box_tests = run.box_tests.summary();
  ks.triangle_tests = run.triangle_tests.summary();
  ks.any_hit_invocations = run.any_hit_invocations.summary();
  if (options.machine) {
    ks.machine = emu::run_machine_model(*options.machine, run.node_sequences, run.wave_begin,
                                        prefixed(progress, std::string(ray_kind_name(ks.kind)) + ": "));
    run.node_sequences = {};
  }
  return ks;
}

// Rays per batch: a whole number of waves, at least one.
uint32_t batch_waves(const StatsOptions& options) { return std::max<uint32_t>(1, options.batch_rays / kTileRays); }

// `rays` (a rays file, the caller's rays) traced batch by batch, in waves of 32 consecutive rays.
void trace_given_rays(BatchTracer& tracer, KindRun& run, const std::vector<Ray>& rays, const StatsOptions& options,
                      const ProgressCallback& progress, const std::string& phase) {
  const std::size_t step = std::size_t{batch_waves(options)} * kTileRays;
  for (std::size_t first = 0; first < rays.size(); first += step) {
    RayBatch batch = make_batch({rays.begin() + static_cast<std::ptrdiff_t>(first),
                                 rays.begin() + static_cast<std::ptrdiff_t>(std::min(rays.size(), first + step))});
    batch.first_ray = static_cast<uint32_t>(first);
    (void)tracer.trace(run, batch);
    if (progress) progress(phase, first + batch.rays.size(), rays.size());
  }
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
                                           "' (valid: primary, ao, shadow, reflection, random, file)");
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

bool from_primary_hits(RayKind kind) { return is_occlusion(kind) || kind == RayKind::Reflection; }

void ValueCounts::add(uint64_t value) {
  if (value < kDenseValues) {
    if (value >= dense_.size()) dense_.resize(value + 1, 0);
    ++dense_[value];
  } else {
    ++sparse_[value];
  }
  ++count_;
  sum_ += value;
}

Distribution ValueCounts::summary() const {
  Distribution d;
  if (count_ == 0) return d;
  // Values in ascending order with their counts.
  const auto for_each_value = [&](auto&& f) {
    for (uint64_t v = 0; v < dense_.size(); ++v)
      if (dense_[v] != 0) f(v, dense_[v]);
    for (const auto& [v, n] : sparse_) f(v, n);
  };
  // Integer sums are exact in a double up to 2^53, so this is the mean of the values summed one by one.
  d.mean = static_cast<double>(sum_) / static_cast<double>(count_);
  // Nearest rank: the smallest value with at least p of the rays at or below it.
  const auto rank = [&](double p) {
    const uint64_t r = std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(p * static_cast<double>(count_))), 1, count_);
    uint64_t seen = 0, value = 0;
    bool found = false;
    for_each_value([&](uint64_t v, uint64_t n) {
      if (found) return;
      seen += n;
      if (seen >= r) {
        value = v;
        found = true;
      }
    });
    return static_cast<double>(value);
  };
  d.median = rank(0.5);
  d.p95 = rank(0.95);
  const uint64_t max = sparse_.empty() ? dense_.size() - 1 : sparse_.rbegin()->first;
  d.max = static_cast<double>(max);
  d.bin_width = std::max<uint64_t>(1, (max + kHistogramBins) / kHistogramBins);
  d.histogram.assign(max / d.bin_width + 1, 0);
  for_each_value([&](uint64_t v, uint64_t n) { d.histogram[v / d.bin_width] += n; });
  return d;
}

Distribution summarize(const std::vector<uint64_t>& values) {
  ValueCounts counts;
  for (uint64_t v : values) counts.add(v);
  return counts.summary();
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

namespace {

// The oracle, when the options ask for it, with its scene's build reported as a phase.
std::optional<emu::Oracle> make_oracle(const emu::LoadedBvh& bvh, const StatsOptions& options,
                                       const ProgressCallback& progress) {
  if (!options.oracle) return std::nullopt;
  return emu::Oracle::of(bvh, options.threads, progress);
}

bool is_camera_kind(RayKind kind) { return kind == RayKind::Primary || from_primary_hits(kind); }

// "tracing primary, shadow": the kinds a phase traces, in report order.
std::string tracing_phase(const std::vector<RayKind>& kinds) {
  std::string names;
  for (RayKind k : kinds) names += (names.empty() ? "" : ", ") + std::string(ray_kind_name(k));
  return "tracing " + names;
}

}  // namespace

StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsOptions& requested, RaySink* sink,
                      const ProgressCallback& progress) {
  if (requested.kinds.empty()) throw Error(ErrorKind::BadInput, "", "no ray types requested");
  requested.trace.validate();
  // The blob's any-hit shader (its alpha test) runs in the emulator, and the same test in the oracle's filter.
  const std::optional<emu::AnyHitShader> shader = emu::AnyHitShader::of(bvh);
  StatsOptions options = requested;
  options.trace = emu::with_shader(requested.trace, shader);
  const Executor executor(options.threads);
  StatsReport report = report_header(bvh, options, shader.has_value(), executor);

  const std::optional<emu::Oracle> oracle = make_oracle(bvh, options, progress);
  BatchTracer tracer(bvh, options, oracle ? &*oracle : nullptr, executor, sink);
  std::vector<KindRun> runs(options.kinds.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    runs[k].stats.kind = options.kinds[k];
    runs[k].report_index = k;
    runs[k].any_hit = is_occlusion(options.kinds[k]);
  }

  // Camera rays, batch by batch of the image: the primary rays of some tiles, then the secondary rays of their hits.
  // Primary rays are traced whenever a secondary kind is requested, as the secondary rays start from their hits.
  std::vector<RayKind> camera_kinds;
  for (RayKind k : options.kinds)
    if (is_camera_kind(k)) camera_kinds.push_back(k);
  if (!camera_kinds.empty()) {
    const auto at = [&](RayKind kind) -> KindRun* {
      const auto it = std::find(options.kinds.begin(), options.kinds.end(), kind);
      return it == options.kinds.end() ? nullptr : &runs[static_cast<std::size_t>(it - options.kinds.begin())];
    };
    KindRun source;  // primary rays that are not reported
    KindRun& primary = at(RayKind::Primary) ? *at(RayKind::Primary) : source;
    AoOptions ao;
    ao.samples = options.ao_samples;
    ao.max_distance = options.ao_distance ? *options.ao_distance : 0.1f * vector_length(bvh.bounds.extent());
    ao.seed = options.seed;
    std::optional<Vec3> light;
    if (at(RayKind::Shadow)) light = default_light(bvh.bounds);
    const bool secondary = std::any_of(camera_kinds.begin(), camera_kinds.end(), from_primary_hits);
    const std::string phase = tracing_phase(camera_kinds);
    const uint64_t tiles = primary_tile_count(options.width, options.height);
    for (uint64_t first = 0; first < tiles; first += batch_waves(options)) {
      const RayBatch rays = primary_tiles(report.camera, options.width, options.height, first,
                                          std::min<uint64_t>(batch_waves(options), tiles - first), executor);
      const std::vector<emu::RayResult>& results = tracer.trace(primary, rays);
      if (secondary) {
        const std::vector<SurfaceHit> hits = bvh.surface_hits(rays.rays, results);
        for (RayKind kind : camera_kinds) {
          if (kind == RayKind::AmbientOcclusion) (void)tracer.trace(*at(kind), ao_rays(rays, hits, ao, executor));
          if (kind == RayKind::Shadow) (void)tracer.trace(*at(kind), shadow_rays(rays, hits, *light, 1e-4f, executor));
          if (kind == RayKind::Reflection) (void)tracer.trace(*at(kind), reflection_rays(rays, hits, 1e-4f, executor));
        }
      }
      if (progress) progress(phase, first + rays.wave_count(), tiles);
    }
  }

  for (std::size_t k = 0; k < runs.size(); ++k) {
    const RayKind kind = options.kinds[k];
    if (kind == RayKind::Random) {
      const std::string phase = tracing_phase({kind});
      const uint32_t step = batch_waves(options) * kTileRays;
      for (uint32_t first = 0; first < options.random_rays; first += std::min(step, options.random_rays - first)) {
        (void)tracer.trace(runs[k], random_rays(bvh.bounds, first, std::min(step, options.random_rays - first),
                                                options.seed, executor));
        if (progress) progress(phase, first + std::min(step, options.random_rays - first), options.random_rays);
      }
    } else if (kind == RayKind::File) {
      if (options.rays_file.empty()) throw Error(ErrorKind::BadInput, "", "ray type 'file' needs --rays-file FILE");
      trace_given_rays(tracer, runs[k], read_rays_file(options.rays_file), options, progress, tracing_phase({kind}));
    }
  }
  for (KindRun& run : runs) report.kinds.push_back(finish(run, options, progress));
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
  const std::optional<emu::Oracle> oracle = make_oracle(bvh, options, {});
  BatchTracer tracer(bvh, options, oracle ? &*oracle : nullptr, executor, nullptr);
  KindRun run;
  run.stats.kind = RayKind::File;
  run.report_index = 0;
  run.any_hit = any_hit;
  trace_given_rays(tracer, run, rays, options, {}, "");
  report.kinds.push_back(finish(run, options, {}));
  return report;
}

}  // namespace hwbvh::stats
