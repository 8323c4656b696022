#include "hwbvh/api/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/core/json_text.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/scene/camera.h"

namespace hwbvh::api {
namespace {

using Json = nlohmann::ordered_json;

// `value` among `names` (the command line's IsMember check), else Error(BadInput) naming `option`.
template <std::size_t N>
std::size_t choice(const std::string& value, const std::array<const char*, N>& names, const char* option) {
  for (std::size_t i = 0; i < N; ++i)
    if (value == names[i]) return i;
  std::string valid;
  for (const char* n : names) valid += (valid.empty() ? "" : ", ") + std::string(n);
  throw Error(ErrorKind::BadInput, "", fmt::format("{}: '{}' is not one of {}", option, value, valid));
}

// The command line's Range check: Error(BadInput) naming `option` when `value` is outside [low, high].
template <class T>
void check_range(T value, T low, T high, const char* option) {
  if (value >= low && value <= high) return;
  throw Error(ErrorKind::BadInput, "", fmt::format("{}: {} is not in [{} - {}]", option, value, low, high));
}

std::string section_text(const blob::Blob& b, blob::SectionType type, const std::string& file) {
  const blob::Section& s = b.require(type, file);
  return {reinterpret_cast<const char*>(s.data.data()), s.data.size()};
}

// The ray-history dispatches of a .rra file (docs/rra.md §6): size, rays and token bytes of each.
Json history_json(const rra::File& file) {
  Json dispatches = Json::array();
  std::size_t i = 0;
  for (const rra::Chunk& c : file.chunks) {
    if (c.name != rra::kHistoryTokensChunk) continue;
    const rra::HistoryDispatch& d = file.ray_history[i++];
    dispatches.push_back({{"width", d.width},
                          {"height", d.height},
                          {"rays", d.rays.size()},
                          {"token_bytes", c.compression != 0 ? c.uncompressed_size : c.data_size}});
  }
  return dispatches;
}

// A .rra file without hwbvh's sections (a driver's capture): what its chunks and its tree tell, no build report.
Json capture_info(const std::string& name, const rra::File& file, std::size_t file_size) {
  // A top level's instances must each name a BLAS chunk of the file, as `stats` needs them to.
  if (std::any_of(file.accel_structs.begin(), file.accel_structs.end(),
                  [](const rra::ReadAccelStruct& as) { return !as.bottom_level; }))
    (void)rra::to_blob(file, name);
  Json structs = Json::array();
  for (const rra::ReadAccelStruct& as : file.accel_structs) {
    structs.push_back({{"level", as.bottom_level ? "bottom" : "top"},
                       {"rt_ip_level", "3.1"},
                       {"node_bytes", as.nodes.size()},
                       {"box_nodes", as.box_nodes},
                       {"primitive_nodes", as.primitive_nodes},
                       {"depth", as.depth},
                       {"primitives", as.primitives},
                       {"active_primitives", as.active_primitives},
                       {"geometries", as.geometries},
                       {"instances", as.bottom_level ? 0u : as.primitives}});
  }
  Json chunks = Json::array();
  for (const rra::Chunk& c : file.chunks)
    chunks.push_back({{"name", c.name}, {"version", c.version}, {"compression", c.compression}, {"size", c.data_size}});
  return {{"file", name},
          {"file_size", file_size},
          {"format", "rra"},
          {"chunks", std::move(chunks)},
          {"acceleration_structures", std::move(structs)},
          {"ray_history", history_json(file)}};
}

}  // namespace

void refuse_unless(bool given, const std::string& option, std::initializer_list<blob::Target> applies_to,
                   blob::Target target, const std::string& subject) {
  if (!given || std::find(applies_to.begin(), applies_to.end(), target) != applies_to.end()) return;
  std::string targets;
  for (const blob::Target t : applies_to) targets += (targets.empty() ? "" : " and ") + std::string(blob::target_name(t));
  throw Error(ErrorKind::BadInput, "",
              fmt::format("{} applies to target{} {} only ({} targets {})", option, applies_to.size() > 1 ? "s" : "",
                          targets, subject, blob::target_name(target)));
}

void refuse_instance_mask(bool given, const std::string& subject) {
  if (!given) return;
  throw Error(ErrorKind::BadInput, "",
              fmt::format("--instance-mask applies to two-level blobs only ({} has no instances)", subject));
}

pipeline::BuildBlobOptions build_options(const BuildSettings& s) {
  using blob::Target;
  constexpr std::array<const char*, 3> kTargets{"rtip31", "rtip20", "xe3"};
  constexpr std::array<Target, 3> kTargetValues{Target::Rtip31, Target::Rtip20, Target::Xe3};
  constexpr std::array<const char*, 3> kQualities{"low", "medium", "high"};
  constexpr std::array<bvh_build::BuildQuality, 3> kQualityValues{
      bvh_build::BuildQuality::Low, bvh_build::BuildQuality::Medium, bvh_build::BuildQuality::High};
  pipeline::BuildBlobOptions options;
  options.target = kTargetValues[choice(s.target, kTargets, "--target")];
  options.build.quality = kQualityValues[choice(s.quality, kQualities, "--quality")];
  // RT IP 2.0 stores no sub-triangle opacity, and only RT IP 3.1 box nodes have OBBs.
  refuse_unless(s.stoc_level.has_value(), "--stoc-level", {Target::Rtip31, Target::Xe3}, options.target, "this build");
  refuse_unless(s.stoc_order.has_value(), "--stoc-order", {Target::Rtip31, Target::Xe3}, options.target, "this build");
  refuse_unless(s.opacity_level.has_value(), "--opacity-level", {Target::Rtip31, Target::Xe3}, options.target,
                "this build");
  refuse_unless(s.obb.has_value(), "--obb", {Target::Rtip31}, options.target, "this build");
  refuse_unless(s.obb_ratio.has_value(), "--obb-ratio", {Target::Rtip31}, options.target, "this build");
  if (s.stoc_level) {
    check_range(*s.stoc_level, 0u, 12u, "--stoc-level");
    if (options.target == Target::Xe3 && *s.stoc_level != 0 && *s.stoc_level != 1 && *s.stoc_level != 3)
      throw Error(ErrorKind::BadInput, "", "--stoc-level: xe3 takes 0, 1 or 3");
    options.xe3_stoc_level = *s.stoc_level;
    options.rtip31_stoc_level = *s.stoc_level;
  }
  if (s.stoc_order)
    options.stoc_order = choice(*s.stoc_order, std::array{"bird", "row"}, "--stoc-order") == 1 ? xe3::SubTriangleOrder::Row
                                                                                                : xe3::SubTriangleOrder::Bird;
  if (s.opacity_level) {
    check_range(*s.opacity_level, 0u, 12u, "--opacity-level");
    options.opacity_level = *s.opacity_level;
  }
  if (s.alpha_cutoff) check_range(*s.alpha_cutoff, 0.0f, 1.0f, "--alpha-cutoff");
  options.alpha_cutoff = s.alpha_cutoff;
  if (s.obb) options.encode.obb = choice(*s.obb, std::array{"on", "off"}, "--obb") == 0;
  if (s.obb_ratio) {
    check_range(*s.obb_ratio, 0.0f, 1.0f, "--obb-ratio");
    options.encode.obb_accept_ratio = *s.obb_ratio;
  }
  check_range(s.threads, 0, 4096, "--threads");
  options.build.threads = s.threads;
  options.encode.threads = s.threads;
  return options;
}

stats::StatsOptions stats_options(const StatsSettings& s) {
  stats::StatsOptions options;
  options.kinds = stats::parse_ray_kinds(s.rays);
  if (!s.rays_file.empty() &&
      std::find(options.kinds.begin(), options.kinds.end(), stats::RayKind::File) == options.kinds.end())
    options.kinds.push_back(stats::RayKind::File);
  check_range(s.width, 1u, 16384u, "--width");
  check_range(s.height, 1u, 16384u, "--height");
  options.width = s.width;
  options.height = s.height;
  if (!s.camera.empty()) options.camera = parse_camera(s.camera);
  check_range(s.ao_samples, 1u, 1024u, "--ao-samples");
  options.ao_samples = s.ao_samples;
  if (s.ao_distance != 0.0f) {
    if (!(s.ao_distance > 0.0f)) throw Error(ErrorKind::BadInput, "", "--ao-distance: must be positive");
    options.ao_distance = s.ao_distance;
  }
  check_range(s.random_rays, 1u, 100000000u, "--random-rays");
  options.random_rays = s.random_rays;
  options.seed = s.seed;
  options.rays_file = s.rays_file;
  const TraceSettings& t = s.trace;
  if (t.stack_size) {
    check_range(*t.stack_size, 2u, 64u, "--stack-size");
    options.trace.stack.size = *t.stack_size;
  }
  if (t.instance_mask) {
    check_range(*t.instance_mask, 0u, 255u, "--instance-mask");
    options.trace.instance_mask = *t.instance_mask;
  }
  if (t.heuristic) {
    check_range(*t.heuristic, 0u, 3u, "--heuristic");
    options.trace.intersect.heuristic = static_cast<emu::SortHeuristic>(*t.heuristic);
  }
  if (!t.triangle_test.empty()) options.trace.intersect.triangle_test = emu::parse_triangle_test(t.triangle_test);
  check_range(t.step_limit, 1u, 1000000000u, "--step-limit");
  options.trace.step_limit = t.step_limit;
  if (t.stoc) options.trace.stoc = choice(*t.stoc, std::array{"on", "off"}, "--stoc") == 0;
  options.trace.no_duplicate_any_hit = t.no_duplicate_any_hit;
  check_range(t.ray_flags, 0u, 1023u, "ray_flags");
  if (t.ray_flags != 0 && t.oracle)
    throw Error(ErrorKind::BadInput, "", "ray_flags: the Embree oracle does not model ray flags; trace with oracle off");
  options.trace.flags = emu::PointerFlags::from_bits(t.ray_flags);
  check_range(t.threads, 0, 4096, "--threads");
  options.threads = t.threads;
  options.oracle = t.oracle;
  return options;
}

GivenTraceOptions given_options(const TraceSettings& s) {
  return {.stack_size = s.stack_size.has_value(),
          .heuristic = s.heuristic.has_value(),
          .stoc = s.stoc.has_value(),
          .instance_mask = s.instance_mask.has_value()};
}

void refuse_unused(const GivenTraceOptions& given, const emu::LoadedBvh& bvh) {
  using blob::Target;
  refuse_unless(given.stack_size, "--stack-size", {Target::Rtip31, Target::Rtip20}, bvh.target, bvh.file);
  refuse_unless(given.heuristic, "--heuristic", {Target::Rtip31, Target::Rtip20}, bvh.target, bvh.file);
  refuse_unless(given.stoc, "--stoc", {Target::Rtip31, Target::Xe3}, bvh.target, bvh.file);
  if (!bvh.two_level()) refuse_instance_mask(given.instance_mask, bvh.file);
}

stats::StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsSettings& settings, bool keep_results) {
  stats::StatsOptions options = stats_options(settings);
  options.keep_results = keep_results;
  refuse_unused(given_options(settings.trace), bvh);
  return stats::run_stats(bvh, options);
}

stats::StatsReport trace_rays(const emu::LoadedBvh& bvh, std::vector<Ray> rays, bool any_hit,
                              const TraceSettings& settings) {
  StatsSettings s;
  s.trace = settings;
  stats::StatsOptions options = stats_options(s);
  options.keep_results = true;
  refuse_unused(given_options(settings), bvh);
  return stats::run_stats_on_rays(bvh, std::move(rays), any_hit, options);
}

std::string info_json(const std::filesystem::path& path) {
  const std::string file = path.string();
  const std::vector<std::byte> bytes = read_file_bytes(path);
  const bool rra_file = rra::has_rdf_magic(bytes);
  Json history = Json::array();
  if (rra_file) {
    const rra::File parsed = rra::parse(bytes, file);
    if (parsed.hwbvh_sections.empty()) return json_text(capture_info(file, parsed, bytes.size()), 2);
    history = history_json(parsed);
  }
  blob::FileLayout layout;
  const blob::Blob b = rra::read_blob_or_rra(path, layout);
  const pipeline::BuildReport report =
      pipeline::report_from_json(section_text(b, blob::SectionType::BuildMeta, file), file);
  const Json scene = Json::parse(section_text(b, blob::SectionType::SceneMeta, file), nullptr, false);
  if (!scene.is_object()) throw Error(ErrorKind::BadInput, file, "scene-meta section is not a JSON object");
  Json sections = Json::array();
  for (const blob::SectionEntry& s : layout.sections) {
    sections.push_back({{"type", blob::section_type_name(s.type)},
                        {"offset", s.offset},
                        {"size", s.size},
                        {"alignment", s.alignment},
                        {"checksum", fmt::format("{:#x}", s.checksum)}});
  }
  Json out = {{"file", file},
              {"file_size", layout.file_size},
              {"format_version", layout.version},
              {"target", blob::target_name(b.target)},
              {"sections", std::move(sections)},
              {"report", Json::parse(pipeline::report_to_json(report))},
              {"scene", scene}};
  if (rra_file) out["ray_history"] = std::move(history);
  return json_text(out, 2);
}

}  // namespace hwbvh::api
