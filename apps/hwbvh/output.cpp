#include "output.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <cstdio>

#include <fmt/format.h>

#include "hwbvh/core/error.h"
#include "hwbvh/core/json_text.h"

namespace hwbvh::cli {

void Table::print() const {
  std::size_t width = 0;
  for (const auto& [label, value] : rows_) width = std::max(width, label.size());
  std::string out;
  for (const auto& [label, value] : rows_) {
    if (label.empty()) {
      out += '\n';
    } else {
      out += fmt::format("{:<{}}  {}\n", label, width, value);
    }
  }
  fmt::print("{}", out);
}

void Warnings::print(bool quiet) const {
  if (quiet) return;
  for (const std::string& line : lines_) fmt::print(stderr, "hwbvh: warning: {}\n", line);
}

void add_report_rows(Table& t, const pipeline::BuildReport& r) {
  t.row("scene", r.source);
  t.row("target", r.target);
  t.row("triangles", fmt::format("{} ({} degenerate, skipped)", r.triangles, r.degenerate_triangles));
  t.row("box nodes", fmt::format("{}", r.box_nodes));
  t.row("primitive nodes", fmt::format("{}", r.primitive_nodes));
  t.row("node bytes", fmt::format("{}", r.node_bytes));
  t.row("bytes per triangle", fmt::format("{:.2f}", r.bytes_per_triangle));
  t.row("triangles per primitive node", fmt::format("{:.2f}", r.triangles_per_primitive_node));
  t.row("triangle pairs", fmt::format("{}", r.pairs));
  t.row("box nodes with an OBB", fmt::format("{:.1f} %", 100.0 * r.obb_box_share));
  t.row("SAH cost", fmt::format("{:.3f}", r.sah_cost));
  t.row("spatial-split references", fmt::format("{}", r.spatial_split_references));
  t.row("quality", r.quality);
  t.row("obb", r.obb ? fmt::format("on (accept ratio {})", r.obb_ratio) : std::string("off"));
  if (r.levels) {
    const pipeline::LevelsReport& l = *r.levels;
    t.row("instances", fmt::format("{} over {} BLASes (each built once; counts above sum all levels)", l.instances,
                                   l.blases));
    t.row("top level", fmt::format("{} bytes: {} box nodes, {} instance nodes", l.top_bytes, l.top_box_nodes,
                                   l.instances));
    t.row("instance sideband", fmt::format("{} bytes", l.sideband_bytes));
  }
  if (r.tree) {
    t.row("tree", fmt::format("{} ({} tree of {} nodes{}; leaves of several triangles split: {})", r.tree->source,
                              r.tree->kind, r.tree->nodes,
                              r.tree->kind == "binary" ? ", collapsed as hwbvh's own" : ", taken as given",
                              r.tree->split_leaves));
  }
  if (!r.run) return;
  t.row("threads", fmt::format("{}", r.run->threads));
  const pipeline::PhaseSeconds& s = r.run->seconds;
  const std::pair<const char*, double> phases[] = {{"load", s.load},     {"bvh", s.bvh},       {"collapse", s.collapse},
                                                   {"obb", s.obb},       {"encode", s.encode}, {"write", s.write},
                                                   {"total", s.total()}};
  for (const auto& [name, seconds] : phases) t.row(fmt::format("seconds {}", name), fmt::format("{:.3f}", seconds));
}

Json report_json(const pipeline::BuildReport& report) { return Json::parse(pipeline::report_to_json(report)); }

void print_json(const Json& json) { fmt::print("{}\n", json_text(json, 2)); }

void check_output_is_not_input(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!input.empty() && std::filesystem::equivalent(input, output, ec))
      throw Error(ErrorKind::BadInput, output, "the output would overwrite the input " + input);
  }
}

std::string hex(uint64_t value) { return fmt::format("{:#x}", value); }

uint64_t parse_unsigned(const std::string& text, const std::string& option) {
  const bool is_hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* begin = text.data() + (is_hex ? 2 : 0);
  const char* end = text.data() + text.size();
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value, is_hex ? 16 : 10);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw Error(ErrorKind::BadInput, "", fmt::format("{}: '{}' is not a decimal or 0x-prefixed number", option, text));
  return value;
}

std::vector<std::string> split_values(const std::string& list, const std::string& option) {
  std::vector<std::string> values;
  std::string::size_type begin = 0;
  for (;;) {
    const std::string::size_type comma = list.find(',', begin);
    values.push_back(list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (values.back().empty()) throw Error(ErrorKind::BadInput, "", option + ": an empty value in '" + list + "'");
    if (comma == std::string::npos) return values;
    begin = comma + 1;
  }
}

}  // namespace hwbvh::cli
