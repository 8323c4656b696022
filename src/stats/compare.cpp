#include "hwbvh/core/json_text.h"
#include "hwbvh/stats/compare.h"

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <glm/geometric.hpp>
#include <nlohmann/json.hpp>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/blob/opacity_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/formats/xe3/encode.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::stats {
namespace {

using TraceFn = std::function<emu::TraceOutput(std::span<const Ray>, std::span<const uint32_t>, const emu::TraceOptions&)>;

struct Variant {
  std::string name;
  uint64_t bytes = 0;
  TraceFn trace;  ///< owns (shares) the variant's loaded blob and runs its any-hit shader
};

// The sections every variant's blob shares: the scene's Geometry and, for alpha-tested scenes, its AlphaTest.
struct SceneSections {
  std::string source;
  std::vector<std::byte> geometry;
  std::optional<AlphaTest> alpha;     ///< the scene's alpha test (default cutoff); empty: nothing alpha-tested
  std::vector<std::byte> alpha_test;  ///< its AlphaTest section
};

SceneSections scene_sections(const Scene& scene) {
  SceneSections s;
  s.source = scene.source;
  s.geometry = blob::encode_geometry(scene);
  AlphaTest alpha = make_alpha_test(scene);
  if (!alpha.any_tested()) return s;
  s.alpha_test = blob::encode_alpha_test(alpha);
  s.alpha = std::move(alpha);
  return s;
}

// A variant's node section in the blob its target's build writes (without an opacity bake), loaded as `hwbvh stats`
// loads a blob file, so that it is traced with the blob's any-hit shader (its alpha test) exactly as stats does.
struct LoadedVariant {
  emu::LoadedBvh bvh;
  std::optional<emu::AnyHitShader> shader;  ///< views bvh; empty without alpha-tested triangles
};

std::shared_ptr<const LoadedVariant> load_variant(blob::Target target, std::span<const uint32_t> dwords,
                                                  const SceneSections& s) {
  blob::Blob b;
  b.target = target;
  b.sections.push_back({blob::SectionType::Nodes, blob::kNodesAlignment, blob::dwords_to_bytes(dwords)});
  b.sections.push_back({blob::SectionType::Geometry, 16, s.geometry});
  if (!s.alpha_test.empty()) b.sections.push_back({blob::SectionType::AlphaTest, 16, s.alpha_test});
  auto v = std::make_shared<LoadedVariant>();  // allocated once: the shader points into it
  v->bvh = emu::load_bvh(b, s.source);
  v->shader = emu::AnyHitShader::of(v->bvh);
  return v;
}

Variant rtip31_variant(const Scene& scene, const SceneSections& s, const CompareOptions& o, bool obb,
                       const Executor& executor) {
  build::BuildOptions bo;
  bo.quality = o.quality;
  bo.threads = o.threads;
  rdna4::adapt_build_options(bo);
  rdna4::EncodeOptions eo;
  eo.obb = obb;
  eo.threads = o.threads;
  Variant v;
  v.name = obb ? "rtip31 BVH8 + OBB" : "rtip31 BVH8";
  const auto encoded = rdna4::encode(scene, build::build_wide_bvh(scene, bo).bvh, eo);
  v.bytes = encoded.stats.node_bytes;
  const auto loaded = load_variant(blob::Target::Rtip31, encoded.dwords, s);
  v.trace = [&executor, loaded](std::span<const Ray> rays, std::span<const uint32_t> waves, const emu::TraceOptions& t) {
    return loaded->bvh.trace(rays, waves, emu::with_shader(t, loaded->shader), executor);
  };
  return v;
}

// Intel Xe3 QBVH6 with 64-byte QuadLeafs; no STOC bits, since compare builds without an opacity bake.
Variant xe3_variant(const Scene& scene, const SceneSections& s, const CompareOptions& o, const Executor& executor) {
  constexpr uint32_t kStocLevel = 1;
  build::BuildOptions bo;
  bo.quality = o.quality;
  bo.threads = o.threads;
  xe3::configure_build(bo, kStocLevel);
  xe3::Xe3EncodeOptions eo;
  eo.threads = o.threads;
  eo.stoc_level = kStocLevel;
  const auto encoded = xe3::encode(scene, build::build_wide_bvh6(scene, bo).bvh, eo);
  Variant v;
  v.name = "xe3 QBVH6";
  v.bytes = encoded.stats.node_bytes;
  const auto loaded = load_variant(blob::Target::Xe3, encoded.dwords, s);
  const auto section = std::make_shared<const emu::Xe3Section>(emu::Xe3Section::from(loaded->bvh.nodes, s.source));
  v.trace = [&executor, loaded, section](std::span<const Ray> rays, std::span<const uint32_t> waves,
                                         const emu::TraceOptions& t) {
    return emu::trace_rays_xe3(*section, rays, waves, emu::with_shader(t, loaded->shader), executor);
  };
  return v;
}

// The 4-wide tree serves two rows: RT IP 2.0 and RDNA 4's dual intersect (BVH4x2) on the same section.
std::pair<Variant, Variant> bvh4_variants(const Scene& scene, const SceneSections& s, const CompareOptions& o,
                                          const Executor& executor) {
  build::BuildOptions bo;
  bo.quality = o.quality;
  bo.threads = o.threads;
  rdna3::configure_build(bo);
  rdna3::EncodeOptions eo;
  eo.threads = o.threads;
  const auto encoded = rdna3::encode(scene, build::build_wide_bvh4(scene, bo).bvh, eo);
  const auto loaded = load_variant(blob::Target::Rtip20, encoded.dwords, s);
  const auto section = std::make_shared<const emu::Bvh4Section>(emu::Bvh4Section::from(loaded->bvh.nodes, s.source));
  Variant bvh4{"rtip20 BVH4", encoded.stats.node_bytes, {}};
  Variant bvh4x2{"rtip31 BVH4x2", encoded.stats.node_bytes, {}};
  bvh4.trace = [&executor, loaded, section](std::span<const Ray> rays, std::span<const uint32_t> waves,
                                            const emu::TraceOptions& t) {
    return emu::trace_rays_rtip20(*section, rays, waves, emu::with_shader(t, loaded->shader), executor);
  };
  bvh4x2.trace = [&executor, loaded, section](std::span<const Ray> rays, std::span<const uint32_t> waves,
                                              const emu::TraceOptions& t) {
    return emu::trace_rays_bvh4x2(*section, rays, waves, emu::with_shader(t, loaded->shader), executor);
  };
  return {std::move(bvh4), std::move(bvh4x2)};
}

VariantRow run_variant(const Variant& v, const std::vector<std::pair<RayKind, RayBatch>>& batches, const Scene& scene,
                       const emu::Oracle& oracle, const CompareOptions& o, const Executor& executor) {
  VariantRow row;
  row.name = v.name;
  row.bytes = v.bytes;
  row.bytes_per_triangle = static_cast<double>(v.bytes) / static_cast<double>(scene.triangles.size() - scene.degenerate_count());
  emu::RayCounters total;
  for (const auto& [kind, batch] : batches) {
    emu::TraceOptions t = o.trace;
    t.any_hit = is_occlusion(kind);
    t.record_node_sequence = o.machine.has_value();
    const emu::TraceOutput out = v.trace(batch.rays, batch.wave_begin, t);
    total += out.total_counters();
    row.rays += out.rays.size();
    std::vector<emu::Disagreement> outcome(out.rays.size());
    executor.for_each(0, out.rays.size(), [&](std::size_t i) {
      const auto& r = out.rays[i];
      outcome[i] = t.any_hit ? emu::compare(r.hit, oracle.occluded(batch.rays[i], t.instance_mask))
                             : emu::compare(emu::OracleHit{r.hit, r.t, r.geometry_id, r.primitive_id, {}, {},
                                                           r.instance_index},
                                            oracle.trace_closest(batch.rays[i], t.instance_mask));
    }, 256);
    for (emu::Disagreement d : outcome) ++row.agreement.by_cause[static_cast<std::size_t>(d)];
    if (o.machine) row.machine.emplace_back(kind, emu::run_machine_model(*o.machine, out.node_sequences, batch.wave_begin));
  }
  const auto per_ray = [&](uint64_t x) { return row.rays ? static_cast<double>(x) / static_cast<double>(row.rays) : 0.0; };
  row.steps = per_ray(total.steps);
  row.box_tests = per_ray(total.box_tests);
  row.triangle_tests = per_ray(total.triangle_tests);
  row.stack_ops = per_ray(total.stack_pushes + total.stack_pops);
  row.any_hit_invocations = per_ray(total.any_hit_invocations);
  return row;
}

}  // namespace

CompareReport compare_targets(const Scene& scene, const CompareOptions& o) {
  const Executor executor(o.threads);
  CompareReport report;
  report.scene = scene.source;
  report.triangles = scene.triangles.size();
  report.kinds = o.kinds;
  report.machine = o.machine;
  report.gpu_scale = o.gpu_scale;

  const SceneSections sections = scene_sections(scene);
  report.any_hit_shader = sections.alpha.has_value();
  std::vector<Variant> variants;
  auto [bvh4, bvh4x2] = bvh4_variants(scene, sections, o, executor);
  variants.push_back(std::move(bvh4));
  variants.push_back(std::move(bvh4x2));
  variants.push_back(rtip31_variant(scene, sections, o, false, executor));
  variants.push_back(rtip31_variant(scene, sections, o, true, executor));
  const std::size_t bvh8_obb = variants.size() - 1;  // its primary hits seed the secondary rays
  variants.push_back(xe3_variant(scene, sections, o, executor));

  // Rays: generated once, from the scene bounds and the BVH8 + OBB variant's primary hits, then shared.
  const Aabb bounds = scene.bounds();
  const Camera camera = o.camera ? *o.camera : auto_frame(scene.positions, static_cast<float>(o.width) / static_cast<float>(o.height));
  const RayBatch primary = primary_rays(camera, o.width, o.height, executor);
  std::vector<std::pair<RayKind, RayBatch>> batches;
  std::vector<SurfaceHit> hits;
  const bool secondary = std::any_of(o.kinds.begin(), o.kinds.end(), is_occlusion);
  if (secondary) {
    emu::TraceOptions t = o.trace;
    const emu::TraceOutput out = variants[bvh8_obb].trace(primary.rays, primary.wave_begin, t);
    hits.resize(out.rays.size());
    for (std::size_t i = 0; i < out.rays.size(); ++i) {
      const auto& r = out.rays[i];
      if (!r.hit) continue;
      const Triangle& tri = scene.triangles[scene.geometries[r.geometry_id].first_triangle + r.primitive_id];
      const Vec3 a = scene.positions[tri.v[0]], b = scene.positions[tri.v[1]], c = scene.positions[tri.v[2]];
      hits[i] = {primary.rays[i].origin + primary.rays[i].direction * r.t, triangle_normal(a, b, c), true};
    }
  }
  for (RayKind kind : o.kinds) {
    switch (kind) {
      case RayKind::Primary: batches.emplace_back(kind, primary); break;
      case RayKind::AmbientOcclusion: {
        AoOptions ao;
        ao.samples = o.ao_samples;
        ao.max_distance = 0.1f * vector_length(bounds.extent());
        ao.seed = o.seed;
        batches.emplace_back(kind, make_batch(ao_rays(primary, hits, ao, executor).rays));
        break;
      }
      case RayKind::Shadow:
        batches.emplace_back(kind, make_batch(shadow_rays(primary, hits, default_light(bounds), 1e-4f, executor).rays));
        break;
      case RayKind::Random: batches.emplace_back(kind, random_rays(bounds, o.random_rays, o.seed, executor)); break;
      case RayKind::File: throw Error(ErrorKind::BadInput, "", "compare does not take a rays file");
    }
  }

  // The oracle's Embree filter runs the same alpha test as the variants' any-hit shader, as in `hwbvh stats`.
  const emu::Oracle oracle(blob::decode_geometry(sections.geometry, scene.source), scene.source, o.threads,
                           sections.alpha ? &*sections.alpha : nullptr);
  for (const Variant& v : variants) report.rows.push_back(run_variant(v, batches, scene, oracle, o, executor));
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

std::string VariantRow::machine_cell() const {
  if (const std::optional<uint64_t> cycles = machine_cycles()) return fmt::format("{}", *cycles);
  for (const auto& [kind, m] : machine) {
    if (m.status != emu::MachineStatus::Completed) return fmt::format("{} ({})", emu::to_string(m.status), ray_kind_name(kind));
  }
  return {};
}

std::vector<MachineRun> machine_runs(const CompareReport& r) {
  std::vector<MachineRun> runs;
  for (const VariantRow& v : r.rows) {
    for (const auto& [kind, m] : v.machine) {
      runs.push_back({v.name, kind, machine_figures(m, *r.machine, r.gpu_scale, MachineFigureSet::Throughput)});
    }
  }
  return runs;
}

namespace {

// One line per variant and ray type, a column per figure, each as wide as its widest cell.
std::string machine_runs_text(const CompareReport& r) {
  const std::vector<MachineRun> runs = machine_runs(r);
  if (runs.empty()) return {};
  std::vector<std::size_t> width;
  for (const MachineFigure& f : runs.front().figures) width.push_back(f.column.size());
  for (const MachineRun& run : runs) {
    for (std::size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], run.figures[i].value.size());
  }
  std::string out = fmt::format("\nmachine model per run ({}; outputs of a model{}):\n{:<20}{:<8}", r.machine->name,
                                r.gpu_scale ? ", GPU figures: one CU's x the CU count, no contention between CUs" : "",
                                "variant", "rays");
  for (std::size_t i = 0; i < width.size(); ++i) out += fmt::format("  {:>{}}", runs.front().figures[i].column, width[i]);
  out += "\n";
  for (const MachineRun& run : runs) {
    out += fmt::format("{:<20}{:<8}", run.variant, ray_kind_name(run.kind));
    for (std::size_t i = 0; i < width.size(); ++i) out += fmt::format("  {:>{}}", run.figures[i].value, width[i]);
    out += "\n";
  }
  return out;
}

}  // namespace

std::string compare_to_text(const CompareReport& r) {
  std::string kinds;
  for (RayKind k : r.kinds) kinds += (kinds.empty() ? "" : ",") + std::string(ray_kind_name(k));
  std::string out = fmt::format("{}: {} triangles; rays: {}{}\n", r.scene, r.triangles, kinds,
                                r.machine ? "; machine model: " + r.machine->name + " (model output, not a measurement)" : "");
  out += fmt::format("{:<20}{:>11}{:>10}{:>10}{:>10}{:>10}{:>10}", "variant", "bytes", "bytes/tri", "steps",
                     "box tests", "tri tests", "stack ops");
  out += r.any_hit_shader ? fmt::format("{:>10}", "any-hit") : "";
  out += fmt::format("{:>11}", "agreement");
  out += r.machine ? fmt::format("{:>12}\n", "cycles") : "\n";
  for (const VariantRow& v : r.rows) {
    out += fmt::format("{:<20}{:>11}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}{:>10.2f}", v.name, v.bytes,
                       v.bytes_per_triangle, v.steps, v.box_tests, v.triangle_tests, v.stack_ops);
    out += r.any_hit_shader ? fmt::format("{:>10.2f}", v.any_hit_invocations) : "";
    out += fmt::format("{:>10.3f}%", v.agreement.rays() ? 100.0 * static_cast<double>(v.agreement.agreeing()) /
                                                              static_cast<double>(v.agreement.rays())
                                                        : 100.0);
    out += r.machine ? fmt::format("{:>12}\n", v.machine_cell()) : "\n";
  }
  out += "(per ray: steps, tests and stack pushes + pops, averaged over all rays)\n";
  if (r.any_hit_shader) {
    out += "(alpha-tested scene: any-hit = alpha-test shader invocations per ray; the oracle runs the same alpha "
           "test.\n No opacity bake: no xe3 STOC bits, no rtip31 sideband, so every candidate on an alpha-tested "
           "triangle runs the shader)\n";
  }
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
                               {"oracle_agreeing", v.agreement.agreeing()}, {"oracle_rays", v.agreement.rays()}};
    if (r.machine) {
      const std::optional<uint64_t> cycles = v.machine_cycles();
      row["machine_model_cycles"] = cycles ? nlohmann::ordered_json(*cycles) : nlohmann::ordered_json(nullptr);
      nlohmann::ordered_json runs = nlohmann::ordered_json::array();
      for (const auto& [kind, m] : v.machine) {
        nlohmann::ordered_json run{{"ray_type", ray_kind_name(kind)}};
        run.update(nlohmann::ordered_json::parse(machine_json(m, *r.machine, r.gpu_scale)));
        runs.push_back(run);
      }
      row["machine_model_runs"] = runs;
    }
    rows.push_back(row);
  }
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  for (RayKind k : r.kinds) kinds.push_back(ray_kind_name(k));
  nlohmann::ordered_json j{{"scene", r.scene},      {"triangles", r.triangles},
                           {"ray_types", kinds},    {"any_hit_shader", r.any_hit_shader},
                           {"variants", rows}};
  if (r.machine) j["machine_model"] = {{"preset", r.machine->name}, {"note", "outputs of a model, not hardware measurements"}};
  return json_text(j, 2);
}

}  // namespace hwbvh::stats
