#include "hwbvh/core/json_text.h"
#include "hwbvh/stats/compare.h"

#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::stats {
namespace {

using TraceFn = std::function<emu::TraceOutput(std::span<const Ray>, std::span<const uint32_t>, const emu::TraceOptions&)>;

struct Variant {
  std::string name;
  pipeline::BuildReport build;
  TraceFn trace;  ///< owns (shares) the variant's loaded blob and runs its any-hit shader
  /// The target whose hardware runs the variant, and what it needs of it when that is not the blob's nodes (for
  /// emu::hypothetical_note).
  std::string hardware, needs;
};

// A target's blob as `hwbvh build` writes it, without an opacity bake (no xe3 STOC bits, no rtip31 Stoc sideband),
// loaded as `hwbvh stats` loads a blob file, so that it is traced with the blob's any-hit shader (its alpha test)
// exactly as stats does.
struct LoadedVariant {
  pipeline::BuildReport build;
  emu::LoadedBvh bvh;
  std::optional<emu::AnyHitShader> shader;  ///< views bvh; empty without alpha-tested triangles
};

std::shared_ptr<const LoadedVariant> build_variant(const AnyScene& scene, blob::Target target, bool obb,
                                                   const CompareOptions& o, const ProgressCallback& progress) {
  pipeline::BuildBlobOptions b;
  b.target = target;
  b.build.quality = o.quality;
  b.build.threads = o.threads;
  b.encode.obb = obb;
  b.encode.threads = o.threads;
  b.xe3_stoc_level = 0;
  b.rtip31_stoc_level = 0;
  const std::string label = std::string(blob::target_name(target)) + (obb ? " + OBB" : "");
  pipeline::BuildBlobResult built = pipeline::build_any_blob(scene, b, prefixed(progress, "building " + label + ": "));
  auto v = std::make_shared<LoadedVariant>();  // allocated once: the shader points into it
  v->build = std::move(built.report);
  v->bvh = emu::load_bvh(built.blob, std::visit([](const auto& s) { return s.source; }, scene));
  v->shader = emu::AnyHitShader::of(v->bvh);
  return v;
}

// A row traced by its blob's own target emulator (LoadedBvh::trace).
Variant target_variant(std::string name, std::shared_ptr<const LoadedVariant> loaded, const Executor& executor) {
  Variant v{std::move(name), loaded->build, {}, blob::target_name(loaded->bvh.target), ""};
  v.trace = [&executor, loaded](std::span<const Ray> rays, std::span<const uint32_t> waves, const emu::TraceOptions& t) {
    return loaded->bvh.trace(rays, waves, emu::with_shader(t, loaded->shader), executor);
  };
  return v;
}

// RDNA 4's dual intersect on the rtip20 blob's 4-wide tree (through its top level for a two-level one).
Variant bvh4x2_variant(std::shared_ptr<const LoadedVariant> loaded, const Executor& executor) {
  const auto section = std::make_shared<const emu::Bvh4Section>(loaded->bvh.bvh4_section());
  // IMAGE_BVH_DUAL_INTERSECT_RAY is RT IP 3.1's: hardware that reads only rtip20 nodes has no such instruction.
  Variant v{"rtip31 BVH4x2", loaded->build, {}, "rtip31", "with rtip31's dual intersect (BVH4x2)"};
  v.trace = [&executor, loaded, section](std::span<const Ray> rays, std::span<const uint32_t> waves,
                                         const emu::TraceOptions& t) {
    return emu::trace_rays_bvh4x2(*section, rays, waves, emu::with_shader(t, loaded->shader), executor);
  };
  return v;
}

VariantRow run_variant(const Variant& v, const std::vector<std::pair<RayKind, RayBatch>>& batches,
                       const emu::Oracle& oracle, const CompareOptions& o, const Executor& executor,
                       ProgressCounter& progress) {
  VariantRow row;
  row.name = v.name;
  row.bytes = v.build.node_bytes;
  row.bytes_per_triangle = v.build.bytes_per_triangle;
  if (o.machine) row.hypothetical = emu::hypothetical_note(*o.machine, v.hardware, v.needs);
  emu::RayCounters& total = row.totals;
  for (const auto& [kind, batch] : batches) {
    emu::TraceOptions t = o.trace;
    t.any_hit = is_occlusion(kind);
    t.record_node_sequence = o.machine.has_value();
    const emu::TraceOutput out = v.trace(batch.rays, batch.wave_begin, t);
    total += out.total_counters();
    row.rays += out.rays.size();
    std::vector<emu::Disagreement> outcome(out.rays.size());
    const auto& rays = batch.rays;  // named: clang before 16 cannot capture a structured binding
    executor.for_each(0, out.rays.size(), [&](std::size_t i) {
      const auto& r = out.rays[i];
      outcome[i] = t.any_hit ? emu::compare(r.hit, oracle.occluded(rays[i], t.instance_mask))
                             : emu::compare(emu::OracleHit{r.hit, r.t, r.geometry_id, r.primitive_id, {}, {},
                                                           r.instance_index},
                                            oracle.trace_closest(rays[i], t.instance_mask));
    }, 256);
    for (emu::Disagreement d : outcome) ++row.agreement.by_cause[static_cast<std::size_t>(d)];
    if (o.machine) row.machine.emplace_back(kind, emu::run_machine_model(*o.machine, out.node_sequences, batch.wave_begin));
    progress.add(batch.rays.size());
  }
  row.steps = row.per_ray(total.steps);
  row.box_tests = row.per_ray(total.box_tests);
  row.triangle_tests = row.per_ray(total.triangle_tests);
  row.stack_ops = row.per_ray(total.stack_pushes + total.stack_pops);
  row.any_hit_invocations = row.per_ray(total.any_hit_invocations);
  return row;
}

}  // namespace

CompareReport compare_targets(const AnyScene& scene, const CompareOptions& o, const ProgressCallback& progress) {
  const Executor executor(o.threads);
  const auto bvh4 = build_variant(scene, blob::Target::Rtip20, false, o, progress);
  const auto bvh8_obb = build_variant(scene, blob::Target::Rtip31, true, o, progress);
  std::vector<Variant> variants;
  variants.push_back(target_variant("rtip20 BVH4", bvh4, executor));
  variants.push_back(bvh4x2_variant(bvh4, executor));
  variants.push_back(target_variant("rtip31 BVH8", build_variant(scene, blob::Target::Rtip31, false, o, progress), executor));
  variants.push_back(target_variant("rtip31 BVH8 + OBB", bvh8_obb, executor));
  const std::size_t seed_row = variants.size() - 1;  // its primary hits seed the secondary rays
  variants.push_back(target_variant("xe3 QBVH6", build_variant(scene, blob::Target::Xe3, false, o, progress), executor));

  const emu::LoadedBvh& bvh = bvh8_obb->bvh;
  CompareReport report;
  report.scene = bvh.file;
  report.triangles = bvh8_obb->build.triangles;
  report.levels = bvh8_obb->build.levels;
  report.kinds = o.kinds;
  report.machine = o.machine;
  report.any_hit_shader = bvh8_obb->shader.has_value();

  // Rays: generated once, from the scene bounds and the BVH8 + OBB variant's primary hits, then shared.
  const Aabb bounds = bvh.bounds;
  const Camera camera = o.camera ? *o.camera : auto_frame(bvh.bounds, static_cast<float>(o.width) / static_cast<float>(o.height));
  const RayBatch primary = primary_rays(camera, o.width, o.height, executor);
  std::vector<std::pair<RayKind, RayBatch>> batches;
  std::vector<SurfaceHit> hits;
  const bool secondary = std::any_of(o.kinds.begin(), o.kinds.end(), from_primary_hits);
  if (secondary) {
    announce(progress, "tracing the primary rays for the secondary rays");
    emu::TraceOptions t = o.trace;
    const emu::TraceOutput out = variants[seed_row].trace(primary.rays, primary.wave_begin, t);
    hits.resize(out.rays.size());
    for (std::size_t i = 0; i < out.rays.size(); ++i) {
      const auto& r = out.rays[i];
      if (!r.hit) continue;
      hits[i] = {primary.rays[i].origin + primary.rays[i].direction * r.t, bvh.hit_normal(r), true};  // world space
    }
  }
  for (RayKind kind : o.kinds) {
    switch (kind) {
      case RayKind::Primary: batches.emplace_back(kind, primary); break;
      case RayKind::AmbientOcclusion: {
        AoOptions ao;
        ao.samples = o.ao_samples;
        ao.max_distance = o.ao_distance ? *o.ao_distance : 0.1f * vector_length(bounds.extent());
        ao.seed = o.seed;
        batches.emplace_back(kind, make_batch(ao_rays(primary, hits, ao, executor).rays));
        break;
      }
      case RayKind::Shadow:
        batches.emplace_back(kind, make_batch(shadow_rays(primary, hits, default_light(bounds), 1e-4f, executor).rays));
        break;
      case RayKind::Reflection:
        batches.emplace_back(kind, make_batch(reflection_rays(primary, hits, 1e-4f, executor).rays));
        break;
      case RayKind::Random: batches.emplace_back(kind, random_rays(bounds, o.random_rays, o.seed, executor)); break;
      case RayKind::File: throw Error(ErrorKind::BadInput, "", "compare does not take a rays file");
    }
  }

  // The oracle's Embree filter runs the same alpha test as the variants' any-hit shader, and its instances are the
  // scene's, as in `hwbvh stats`.
  const emu::Oracle oracle = emu::Oracle::of(bvh, o.threads, progress);
  uint64_t rays = 0;
  for (const auto& [kind, batch] : batches) rays += batch.rays.size();
  ProgressCounter tracing(progress, "tracing", rays * variants.size());
  for (const Variant& v : variants) report.rows.push_back(run_variant(v, batches, oracle, o, executor, tracing));
  tracing.finish();
  return report;
}

std::optional<uint64_t> VariantRow::machine_cycles() const {
  uint64_t sum = 0;
  for (const auto& [kind, m] : machine) {
    if (m.status != emu::MachineStatus::Completed) return std::nullopt;
    sum += m.cycles;
  }
  return sum;
}

std::string VariantRow::label() const { return name + std::string(emu::hypothetical_mark(hypothetical)); }

std::string VariantRow::machine_cell() const {
  const std::string_view mark = emu::hypothetical_mark(hypothetical);
  if (const std::optional<uint64_t> cycles = machine_cycles()) return fmt::format("{}{}", *cycles, mark);
  for (const auto& [kind, m] : machine) {
    if (m.status != emu::MachineStatus::Completed)
      return fmt::format("{} ({}){}", emu::to_string(m.status), ray_kind_name(kind), mark);
  }
  return {};
}

double VariantRow::per_ray(uint64_t total) const {
  return rays ? static_cast<double>(total) / static_cast<double>(rays) : 0.0;
}

std::vector<MachineRun> machine_runs(const CompareReport& r) {
  std::vector<MachineRun> runs;
  for (const VariantRow& v : r.rows) {
    for (const auto& [kind, m] : v.machine) {
      runs.push_back({v.label(), kind, machine_figures(m, *r.machine, MachineFigureSet::Throughput)});
    }
  }
  return runs;
}

std::vector<std::string> hypothetical_notes(const CompareReport& r) {
  std::vector<std::string> notes;
  for (const VariantRow& v : r.rows) {
    if (!v.hypothetical.empty()) notes.push_back(v.name + ": " + v.hypothetical);
  }
  return notes;
}

namespace {

// One line per variant and ray type, a column per figure, each as wide as its widest cell.
std::string machine_runs_text(const CompareReport& r) {
  const std::vector<MachineRun> runs = machine_runs(r);
  if (runs.empty()) return {};
  std::vector<std::size_t> width;
  std::size_t variant_width = 20;
  for (const MachineFigure& f : runs.front().figures) width.push_back(f.column.size());
  for (const MachineRun& run : runs) {
    variant_width = std::max(variant_width, run.variant.size() + 1);
    for (std::size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], run.figures[i].value.size());
  }
  std::string out = fmt::format("\nmachine model per run ({}; outputs of a model{}):\n{:<{}}{:<8}", r.machine->name,
                                ", GPU figures: the simulated CUs' x CUs / simulated CUs",
                                "variant", variant_width, "rays");
  for (std::size_t i = 0; i < width.size(); ++i) out += fmt::format("  {:>{}}", runs.front().figures[i].column, width[i]);
  out += "\n";
  for (const MachineRun& run : runs) {
    out += fmt::format("{:<{}}{:<8}", run.variant, variant_width, ray_kind_name(run.kind));
    for (std::size_t i = 0; i < width.size(); ++i) out += fmt::format("  {:>{}}", run.figures[i].value, width[i]);
    out += "\n";
  }
  return out;
}

// Two-level scenes: one line per variant, a column per level counter (kLevelCounters) per ray.
std::string level_counters_text(const CompareReport& r) {
  if (!r.levels) return {};
  std::string out = fmt::format("\nper level, per ray:\n{:<20}", "variant");
  for (const LevelCounter& c : kLevelCounters) out += fmt::format("  {:>12}", c.label);
  out += "\n";
  for (const VariantRow& v : r.rows) {
    out += fmt::format("{:<20}", v.name);
    for (const LevelCounter& c : kLevelCounters)
      out += fmt::format("  {:>{}.2f}", v.per_ray(v.totals.*c.member), std::max<std::size_t>(12, std::strlen(c.label)));
    out += "\n";
  }
  return out;
}

}  // namespace

std::string compare_to_text(const CompareReport& r) {
  std::string kinds;
  for (RayKind k : r.kinds) kinds += (kinds.empty() ? "" : ",") + std::string(ray_kind_name(k));
  const std::string levels =
      r.levels ? fmt::format(" in {} BLASes, {} instances", r.levels->blases, r.levels->instances) : "";
  std::string out = fmt::format("{}: {} triangles{}; rays: {}{}\n", r.scene, r.triangles, levels, kinds,
                                r.machine ? "; machine model: " + r.machine->name + " (model output, not a measurement)" : "");
  out += fmt::format("{:<20}{:>11}{:>10}{:>10}{:>10}{:>10}{:>10}", "variant", "bytes", "bytes/tri", "steps",
                     "box tests", "tri tests", "stack ops");
  out += r.any_hit_shader ? fmt::format("{:>10}", "any-hit") : "";
  out += fmt::format("{:>11}", "agreement");
  std::size_t cycles_width = 12;
  for (const VariantRow& v : r.rows) cycles_width = std::max(cycles_width, v.machine_cell().size() + 2);
  out += r.machine ? fmt::format("{:>{}}\n", "cycles", cycles_width) : "\n";
  for (const VariantRow& v : r.rows) {
    out += fmt::format("{:<20}{:>11}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}", v.name, v.bytes,
                       v.bytes_per_triangle, v.steps, v.box_tests, v.triangle_tests, v.stack_ops);
    out += r.any_hit_shader ? fmt::format("{:>10.2f}", v.any_hit_invocations) : "";
    out += fmt::format("{:>11}", v.agreement.percent_text());
    out += r.machine ? fmt::format("{:>{}}\n", v.machine_cell(), cycles_width) : "\n";
  }
  out += "(per ray: steps, tests and stack pushes + pops, averaged over all rays)\n";
  for (const std::string& note : hypothetical_notes(r)) out += note + "\n";
  for (const VariantRow& v : r.rows) {
    if (v.agreement.disagreeing() == 0) continue;
    out += fmt::format("{}: {} of {} rays disagree with Embree: {}\n", v.name, v.agreement.disagreeing(),
                       v.agreement.rays(), v.agreement.causes_text());
  }
  if (r.any_hit_shader) {
    out += "(alpha-tested scene: any-hit = alpha-test shader invocations per ray; the oracle runs the same alpha "
           "test.\n No opacity bake: no xe3 STOC bits, no rtip31 sideband, so every candidate on an alpha-tested "
           "triangle runs the shader)\n";
  }
  out += level_counters_text(r);
  if (r.machine) out += machine_runs_text(r);
  return out;
}

std::string compare_to_json(const CompareReport& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const VariantRow& v : r.rows) {
    nlohmann::ordered_json row{{"variant", v.name}, {"bytes", v.bytes}, {"bytes_per_triangle", v.bytes_per_triangle},
                               {"rays", v.rays}, {"steps_per_ray", v.steps}, {"box_tests_per_ray", v.box_tests},
                               {"triangle_tests_per_ray", v.triangle_tests}, {"stack_ops_per_ray", v.stack_ops},
                               {"any_hit_invocations_per_ray", v.any_hit_invocations},
                               {"oracle_agreeing", v.agreement.agreeing()}, {"oracle_rays", v.agreement.rays()},
                               {"oracle_disagreeing", v.agreement.disagreeing()}};
    if (r.levels) {
      for (const LevelCounter& c : kLevelCounters) row[std::string(c.key) + "_per_ray"] = v.per_ray(v.totals.*c.member);
    }
    if (r.machine) {
      const std::optional<uint64_t> cycles = v.machine_cycles();
      row["machine_model_cycles"] = cycles ? nlohmann::ordered_json(*cycles) : nlohmann::ordered_json(nullptr);
      nlohmann::ordered_json runs = nlohmann::ordered_json::array();
      for (const auto& [kind, m] : v.machine) {
        nlohmann::ordered_json run{{"ray_type", ray_kind_name(kind)}};
        run.update(nlohmann::ordered_json::parse(emu::to_json(m, *r.machine)));
        runs.push_back(run);
      }
      row["machine_model_runs"] = runs;
      if (!v.hypothetical.empty()) row["machine_model_hypothetical"] = v.hypothetical;
    }
    rows.push_back(row);
  }
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  for (RayKind k : r.kinds) kinds.push_back(ray_kind_name(k));
  nlohmann::ordered_json j{{"scene", r.scene},      {"triangles", r.triangles},
                           {"ray_types", kinds},    {"any_hit_shader", r.any_hit_shader},
                           {"two_level", r.levels.has_value()}, {"variants", rows}};
  if (r.levels) {
    j["blases"] = r.levels->blases;
    j["instances"] = r.levels->instances;
  }
  if (r.machine) j["machine_model"] = {{"preset", r.machine->name}, {"note", "outputs of a model, not hardware measurements"}};
  return json_text(j, 2);
}

}  // namespace hwbvh::stats
