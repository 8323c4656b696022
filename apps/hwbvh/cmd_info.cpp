// hwbvh info FILE: the build report stored in a blob (its BuildMeta section, with its opacity figures for
// alpha-tested scenes), the file size and the sections.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "commands.h"
#include "hwbvh/api/api.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/error.h"
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

void add_history_rows(Table& t, const Json& dispatches) {
  for (std::size_t i = 0; i < dispatches.size(); ++i) {
    const Json& d = dispatches[i];
    t.row(fmt::format("ray history dispatch {}", i),
          fmt::format("{} x {}, {} rays, {} token bytes", d["width"].get<uint32_t>(), d["height"].get<uint32_t>(),
                      d["rays"].get<std::size_t>(), d["token_bytes"].get<uint64_t>()));
  }
}

// A .rra file without hwbvh's sections (a driver's capture): what its chunks and its tree tell, no build report.
void print_capture_info(const Json& info) {
  Table t;
  t.row("file", info["file"].get<std::string>());
  t.row("file size", fmt::format("{} bytes", info["file_size"].get<uint64_t>()));
  t.row("format", "RRA capture (no hwbvh sections: no build report)");
  for (const Json& as : info["acceleration_structures"]) {
    const bool bottom = as["level"] == "bottom";
    t.blank();
    t.row("acceleration structure", fmt::format("{} level, RT IP 3.1", as["level"].get<std::string>()));
    t.row("node bytes", fmt::format("{}", as["node_bytes"].get<uint64_t>()));
    t.row("box nodes", fmt::format("{}", as["box_nodes"].get<uint64_t>()));
    if (bottom) t.row("primitive nodes", fmt::format("{}", as["primitive_nodes"].get<uint64_t>()));
    else t.row("instance nodes", fmt::format("{}", as["primitives"].get<uint64_t>()));
    t.row("tree depth", fmt::format("{}", as["depth"].get<uint64_t>()));
    if (!bottom) continue;
    t.row("primitives", fmt::format("{} ({} in the tree)", as["primitives"].get<uint64_t>(),
                                    as["active_primitives"].get<uint64_t>()));
    t.row("geometries", fmt::format("{}", as["geometries"].get<uint64_t>()));
  }
  t.blank();
  add_history_rows(t, info["ray_history"]);
  for (const Json& c : info["chunks"])
    t.row(fmt::format("chunk {}", c["name"].get<std::string>()),
          fmt::format("version {:<#9x}  size {:>10}{}", c["version"].get<uint32_t>(), c["size"].get<uint64_t>(),
                      c["compression"].get<uint32_t>() != 0 ? "  zstd" : ""));
  t.print();
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
  const std::string text = api::info_json(a.file);
  if (a.json) {
    fmt::print("{}\n", text);
    return 0;
  }
  const Json info = Json::parse(text);
  if (info.contains("format")) {
    print_capture_info(info);
    return 0;
  }
  const pipeline::BuildReport report = pipeline::report_from_json(info["report"].dump(), a.file);
  const Json& scene = info["scene"];
  const auto count = [&](const char* key) { return scene.contains(key) ? scene[key].size() : std::size_t{0}; };
  Table t;
  t.row("file", a.file);
  t.row("file size", fmt::format("{} bytes", info["file_size"].get<uint64_t>()));
  t.row("format version", fmt::format("{}", info["format_version"].get<uint32_t>()));
  t.row("geometries", fmt::format("{}", count("geometries")));
  t.row("materials", fmt::format("{}", count("materials")));
  add_report_rows(t, report);
  if (report.opacity) {
    t.blank();
    for (auto& [label, value] : pipeline::opacity_rows(*report.opacity)) t.row(std::move(label), std::move(value));
  }
  if (scene.contains("blases")) add_level_rows(t, scene, rra::read_blob_or_rra(a.file), a.file);
  t.blank();
  add_history_rows(t, info.value("ray_history", Json::array()));
  for (const Json& s : info["sections"]) {
    t.row(fmt::format("section {}", s["type"].get<std::string>()),
          fmt::format("offset {:>10}  size {:>10}  align {:>4}  checksum {:#018x}", s["offset"].get<uint64_t>(),
                      s["size"].get<uint64_t>(), s["alignment"].get<uint64_t>(),
                      parse_unsigned(s["checksum"].get<std::string>(), "checksum")));
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
