// hwbvh info FILE: the build report stored in a blob (its BuildMeta section, with its opacity figures for
// alpha-tested scenes), the file size and the sections.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "commands.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/rra/rra.h"
#include "inputs.h"
#include "output.h"

namespace hwbvh::cli {
namespace {

struct InfoArgs {
  std::string file;
  bool json = false;
};

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

void add_history_rows(Table& t, const Json& dispatches) {
  for (std::size_t i = 0; i < dispatches.size(); ++i) {
    const Json& d = dispatches[i];
    t.row(fmt::format("ray history dispatch {}", i),
          fmt::format("{} x {}, {} rays, {} token bytes", d["width"].get<uint32_t>(), d["height"].get<uint32_t>(),
                      d["rays"].get<std::size_t>(), d["token_bytes"].get<uint64_t>()));
  }
}

// A .rra file without hwbvh's sections (a driver's capture): what its chunks and its tree tell, no build report.
int run_capture_info(const InfoArgs& a, const rra::File& file, std::size_t file_size) {
  // A top level's instances must each name a BLAS chunk of the file, as `stats` needs them to.
  if (std::any_of(file.accel_structs.begin(), file.accel_structs.end(),
                  [](const rra::ReadAccelStruct& as) { return !as.bottom_level; }))
    (void)rra::to_blob(file, a.file);
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
  if (a.json) {
    print_json({{"file", a.file},
                {"file_size", file_size},
                {"format", "rra"},
                {"chunks", std::move(chunks)},
                {"acceleration_structures", std::move(structs)},
                {"ray_history", history_json(file)}});
    return 0;
  }
  Table t;
  t.row("file", a.file);
  t.row("file size", fmt::format("{} bytes", file_size));
  t.row("format", "RRA capture (no hwbvh sections: no build report)");
  for (const rra::ReadAccelStruct& as : file.accel_structs) {
    t.blank();
    t.row("acceleration structure", fmt::format("{} level, RT IP 3.1", as.bottom_level ? "bottom" : "top"));
    t.row("node bytes", fmt::format("{}", as.nodes.size()));
    t.row("box nodes", fmt::format("{}", as.box_nodes));
    if (as.bottom_level) t.row("primitive nodes", fmt::format("{}", as.primitive_nodes));
    else t.row("instance nodes", fmt::format("{}", as.primitives));
    t.row("tree depth", fmt::format("{}", as.depth));
    if (!as.bottom_level) continue;
    t.row("primitives", fmt::format("{} ({} in the tree)", as.primitives, as.active_primitives));
    t.row("geometries", fmt::format("{}", as.geometries));
  }
  t.blank();
  add_history_rows(t, history_json(file));
  for (const rra::Chunk& c : file.chunks)
    t.row(fmt::format("chunk {}", c.name), fmt::format("version {:<#9x}  size {:>10}{}", c.version, c.data_size,
                                                       c.compression != 0 ? "  zstd" : ""));
  t.print();
  return 0;
}

// A two-level blob's BLASes (name, geometries, triangles, node bytes) and instances (name, BLAS, mask, id), from
// the scene-meta and levels sections. Long instance lists are cut; --json gives them all.
void add_level_rows(Table& t, const Json& scene, const blob::Blob& b, const std::string& file) {
  const blob::Section* levels_section = b.find(blob::SectionType::Levels);
  if (levels_section == nullptr || !scene.contains("blases") || !scene.contains("instances")) return;
  const auto& nodes = b.require(blob::SectionType::Nodes, file).data;
  const blob::Levels levels =
      blob::decode_levels(levels_section->data, file, nodes.size(), UINT32_MAX, UINT32_MAX);
  const Json& blases = scene["blases"];
  const Json& instances = scene["instances"];
  if (blases.size() != levels.blases.size()) throw Error(ErrorKind::BadInput, file, "scene-meta and levels disagree");
  t.blank();
  for (std::size_t i = 0; i < blases.size(); ++i) {
    t.row(fmt::format("BLAS {}", i), fmt::format("{}: {} geometries, {} triangles, {} node bytes at byte {}",
                                                  blases[i].value("name", ""), blases[i].value("geometries", 0),
                                                  blases[i].value("triangles", 0), levels.blases[i].bytes,
                                                  levels.blases[i].address));
  }
  constexpr std::size_t kListed = 16;
  for (std::size_t i = 0; i < instances.size() && i < kListed; ++i) {
    const Json& inst = instances[i];
    t.row(fmt::format("instance {}", i), fmt::format("{}: BLAS {}, mask {:#04x}, id {}", inst.value("name", ""),
                                                      inst.value("blas", 0), inst.value("mask", 0),
                                                      inst.value("instance_id", 0)));
  }
  if (instances.size() > kListed) {
    t.row("instances listed", fmt::format("the first {} of {} (--json lists all)", kListed, instances.size()));
  }
}

int run_info(const InfoArgs& a) {
  refuse_scene_input(a.file, "info");
  const std::vector<std::byte> bytes = read_file_bytes(a.file);
  Json history = Json::array();  // stays empty for a blob
  if (rra::has_rdf_magic(bytes)) {
    const rra::File file = rra::parse(bytes, a.file);
    if (file.hwbvh_sections.empty()) return run_capture_info(a, file, bytes.size());
    history = history_json(file);
  }
  blob::FileLayout layout;
  const blob::Blob b = rra::read_blob_or_rra(a.file, layout);
  const pipeline::BuildReport report =
      pipeline::report_from_json(section_text(b, blob::SectionType::BuildMeta, a.file), a.file);
  const Json scene = Json::parse(section_text(b, blob::SectionType::SceneMeta, a.file), nullptr, false);
  if (!scene.is_object()) throw Error(ErrorKind::BadInput, a.file, "scene-meta section is not a JSON object");
  const auto count = [&](const char* key) { return scene.contains(key) ? scene[key].size() : std::size_t{0}; };

  if (a.json) {
    Json sections = Json::array();
    for (const blob::SectionEntry& s : layout.sections) {
      sections.push_back({{"type", blob::section_type_name(s.type)},
                          {"offset", s.offset},
                          {"size", s.size},
                          {"alignment", s.alignment},
                          {"checksum", hex(s.checksum)}});
    }
    Json out = {{"file", a.file},
                {"file_size", layout.file_size},
                {"format_version", layout.version},
                {"target", blob::target_name(b.target)},
                {"sections", std::move(sections)},
                {"report", report_json(report)},
                {"scene", scene}};
    if (rra::has_rdf_magic(bytes)) out["ray_history"] = std::move(history);
    print_json(out);
    return 0;
  }
  Table t;
  t.row("file", a.file);
  t.row("file size", fmt::format("{} bytes", layout.file_size));
  t.row("format version", fmt::format("{}", layout.version));
  t.row("geometries", fmt::format("{}", count("geometries")));
  t.row("materials", fmt::format("{}", count("materials")));
  add_report_rows(t, report);
  if (report.opacity) {
    t.blank();
    for (auto& [label, value] : pipeline::opacity_rows(*report.opacity)) t.row(std::move(label), std::move(value));
  }
  add_level_rows(t, scene, b, a.file);
  t.blank();
  add_history_rows(t, history);
  for (const blob::SectionEntry& s : layout.sections) {
    t.row(fmt::format("section {}", blob::section_type_name(s.type)),
          fmt::format("offset {:>10}  size {:>10}  align {:>4}  checksum {:#018x}", s.offset, s.size, s.alignment,
                      s.checksum));
  }
  t.print();
  return 0;
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub = app.add_subcommand("info", "Show the build report, size and sections of a blob file");
  sub->add_option("file", args->file, "blob file (.hwbvh) or .rra file (hwbvh export or a driver's RT IP 3.1 capture)")->required();
  sub->add_flag("--json", args->json, "print one JSON object");
  return {sub, [args] { return run_info(*args); }};
}

}  // namespace hwbvh::cli
