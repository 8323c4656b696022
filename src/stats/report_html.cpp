// `hwbvh report`, page side: the Report as one self-contained HTML document (docs/report.md). Every piece of
// text from outside (file names, preset names) is escaped; images are PNG data URIs and histograms inline SVG,
// so the page references no URL.
#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/render/png.h"
#include "hwbvh/stats/report.h"
#include "stats/html_escape.h"

namespace hwbvh::stats {
namespace {

constexpr const char* kStyle = R"css(
body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #1b1b1b; background: #ffffff; max-width: 1380px;
       margin: 0 auto; padding: 12px 20px 40px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #c8c8c8; padding-bottom: 3px; margin-top: 1.8em; }
h3 { margin: 1.2em 0 0.4em; font-size: 1.1em; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 0.88em; }
th, td { border: 1px solid #d0d0d0; padding: 3px 9px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #eef0f4; white-space: normal; vertical-align: bottom; }
tbody tr:nth-child(even) { background: #f8f8fa; }
.note { color: #555555; font-size: 0.88em; }
.warning { color: #a01010; font-weight: bold; }
.figures { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
figure { margin: 0; }
figcaption { font-size: 0.85em; color: #444444; text-align: center; margin-top: 3px; }
img { display: block; image-rendering: pixelated; border: 1px solid #c8c8c8; }
svg { background: #fbfbfb; border: 1px solid #d8d8d8; }
svg .bar { fill: #3b528b; }
svg .axis { stroke: #444444; stroke-width: 1; }
svg .mean { stroke: #d62728; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg.histogram text { font-size: 10px; fill: #333333; }
svg .title { font-size: 11px; font-weight: bold; }
nav ul { margin: 4px 0; }
)css";

// Anchor ids: "scene-<n>-<file name reduced to [a-z0-9-]>", unique through the index.
std::string anchor(std::size_t index, std::string_view name) {
  std::string id = fmt::format("scene-{}-", index + 1);
  for (const char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    id += keep ? c : (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : '-';
  }
  return id;
}

std::string fixed(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

std::string percent(double share) { return fixed(100.0 * share, 3) + "%"; }

// The agreement rounded down, with the count of disagreeing rays when there are any: never "100%" over a miss.
std::string agreement_cell(const emu::AgreementStats& a) {
  return a.percent_text() + (a.disagreeing() ? fmt::format(" ({} disagree)", a.disagreeing()) : "");
}

constexpr const char* kGpuNote =
    " The model runs the preset's whole GPU (docs/machine-model.md, \"A whole GPU\"): per-clock figures are per CU, "
    "per-second figures the whole GPU's at the preset's clock.";

/// Cells are HTML already (escape text before passing it).
using Row = std::vector<std::string>;

/// An empty header gives a label / value table without a header row.
std::string table(const Row& header, const std::vector<Row>& rows) {
  std::string out = "<table>\n";
  if (!header.empty()) {
    out += "<thead><tr>";
    for (const std::string& h : header) out += "<th>" + h + "</th>";
    out += "</tr></thead>\n";
  }
  out += "<tbody>\n";
  for (const Row& row : rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += "<td>" + cell + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

const KindStats* find_kind(const StatsReport& stats, RayKind kind) {
  for (const KindStats& k : stats.kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

emu::AgreementStats all_agreement(const StatsReport& stats) {
  emu::AgreementStats a;
  for (const KindStats& k : stats.kinds) a += k.agreement;
  return a;
}

std::string summary(const Report& report) {
  Row header{"scene", "input", "target", "triangles", "node bytes", "bytes / triangle"};
  for (RayKind k : report.kinds) header.push_back(fmt::format("steps / ray ({})", ray_kind_name(k)));
  header.insert(header.end(), {"oracle agreement", "faulted rays"});
  std::vector<Row> rows;
  for (std::size_t i = 0; i < report.scenes.size(); ++i) {
    const SceneReport& s = report.scenes[i];
    Row row{fmt::format("<a href=\"#{}\">{}</a>", anchor(i, s.name), escape(s.name)),
            s.from_scene ? "scene" : "blob",
            escape(s.build.target),
            fmt::format("{}", s.build.triangles),
            fmt::format("{}", s.build.node_bytes),
            fixed(s.build.bytes_per_triangle, 2)};
    uint64_t faulted = 0;
    for (const KindStats& k : s.stats.kinds) faulted += k.faulted_rays;
    for (RayKind kind : report.kinds) {
      const KindStats* k = find_kind(s.stats, kind);
      row.push_back(k ? fixed(k->steps.mean, 2) : "-");
    }
    row.push_back(agreement_cell(all_agreement(s.stats)));
    row.push_back(fmt::format("{}", faulted));
    rows.push_back(std::move(row));
  }
  return table(header, rows);
}

std::string build_section(const SceneReport& s) {
  const pipeline::BuildReport& b = s.build;
  std::vector<Row> rows{
      {"source", escape(b.source)},
      {"target", escape(b.target)},
      {"triangles", fmt::format("{} ({} degenerate, kept out of the BVH)", b.triangles, b.degenerate_triangles)},
      {"box nodes", fmt::format("{}", b.box_nodes)},
      {"primitive nodes", fmt::format("{}", b.primitive_nodes)},
      {"node bytes", fmt::format("{} ({} bytes per triangle)", b.node_bytes, fixed(b.bytes_per_triangle, 2))},
      {"triangles per primitive node", fixed(b.triangles_per_primitive_node, 2)},
      {"triangle pairs", fmt::format("{}", b.pairs)},
      {"box nodes with an OBB", percent(b.obb_box_share)},
      {"SAH cost", fixed(b.sah_cost, 3)},
      {"spatial-split references", fmt::format("{}", b.spatial_split_references)},
      {"options", escape(fmt::format("quality {}, OBB {}{}", b.quality, b.obb ? "on" : "off",
                                     b.obb ? fmt::format(" (accept ratio {})", b.obb_ratio) : ""))},
  };
  if (b.opacity) {  // the rows `hwbvh build` and `hwbvh info` print
    for (const auto& [label, value] : pipeline::opacity_rows(*b.opacity))
      rows.push_back({escape(label), escape(value)});
  }
  return "<h3>Build</h3>\n" + table({}, rows);
}

std::string dist_cells(const Distribution& d, double hit_mean) {
  return fmt::format("{} / {} / {} / {} / {}", fixed(d.mean, 2), fixed(hit_mean, 2), fixed(d.median, 0),
                     fixed(d.p95, 0), fixed(d.max, 0));
}

// A counter's mean over all rays and over the rays that hit.
std::string mean_cells(const KindStats& k, uint64_t emu::RayCounters::*counter, int precision) {
  return fixed(k.per_ray(k.totals.*counter), precision) + " / " + fixed(k.per_hit(k.hit_totals.*counter), precision);
}

std::string traversal_section(const StatsReport& st) {
  Row header{"per ray"};
  for (const KindStats& k : st.kinds) header.push_back(ray_kind_name(k.kind));
  using Cell = std::string (*)(const KindStats&);
  const std::pair<const char*, Cell> metrics[] = {
      {"rays", [](const KindStats& k) { return fmt::format("{}", k.rays); }},
      {"hits (occluded for ao, shadow)", [](const KindStats& k) { return fmt::format("{}", k.hits); }},
      {"steps: mean / hit mean / median / p95 / max",
       [](const KindStats& k) { return dist_cells(k.steps, k.per_hit(k.hit_totals.steps)); }},
      {"box tests: mean / hit mean / median / p95 / max",
       [](const KindStats& k) { return dist_cells(k.box_tests, k.per_hit(k.hit_totals.box_tests)); }},
      {"triangle tests: mean / hit mean / median / p95 / max",
       [](const KindStats& k) { return dist_cells(k.triangle_tests, k.per_hit(k.hit_totals.triangle_tests)); }},
      {"box-node steps: mean / hit mean", [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::box_node_steps, 2); }},
      {"primitive-node steps: mean / hit mean",
       [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::primitive_node_steps, 2); }},
      {"steps on OBB nodes: mean / hit mean", [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::obb_steps, 2); }},
      {"stack pushes: mean / hit mean", [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::stack_pushes, 2); }},
      {"stack pops: mean / hit mean", [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::stack_pops, 2); }},
      {"stack overflows: mean / hit mean", [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::stack_lost, 4); }},
      {"max stack depth (all rays)", [](const KindStats& k) { return fmt::format("{}", k.totals.max_stack_depth); }},
      {"walk-back steps: mean / hit mean", [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::walk_back_steps, 4); }},
      {"SIMD efficiency", [](const KindStats& k) { return percent(k.waves.simd_efficiency()); }},
      {"step-limit hits", [](const KindStats& k) { return fmt::format("{}", k.totals.step_limit_hits); }},
      {"faulted rays", [](const KindStats& k) { return fmt::format("{}", k.faulted_rays); }},
  };
  // Alpha-tested scenes only (the counters are zero otherwise).
  const std::pair<const char*, Cell> any_hit_metrics[] = {
      {"any-hit invocations: mean / hit mean",
       [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::any_hit_invocations, 4); }},
      {"STOC: transparent, skipped: mean / hit mean",
       [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::stoc_skipped_transparent, 4); }},
      {"STOC: opaque, accepted: mean / hit mean",
       [](const KindStats& k) { return mean_cells(k, &emu::RayCounters::stoc_accepted_opaque, 4); }},
  };
  std::vector<Row> rows;
  const auto add_rows = [&](std::span<const std::pair<const char*, Cell>> list) {
    for (const auto& [label, cell] : list) {
      Row row{label};
      for (const KindStats& k : st.kinds) row.push_back(cell(k));
      rows.push_back(std::move(row));
    }
  };
  add_rows(metrics);
  if (st.any_hit_shader) add_rows(any_hit_metrics);
  if (st.two_level) {
    for (const LevelCounter& c : kLevelCounters) {
      Row row{std::string(c.label) + ": mean / hit mean"};
      for (const KindStats& k : st.kinds) row.push_back(mean_cells(k, c.member, 2));
      rows.push_back(std::move(row));
    }
  }
  std::string out = "<h3>Traversal</h3>\n" + table(header, rows);
  for (const KindStats& k : st.kinds) {
    if (k.faulted_rays == 0 && k.totals.step_limit_hits == 0) continue;
    out += fmt::format("<p class=\"warning\">{} rays: {} hit the step limit, {} stopped on a malformed node",
                       ray_kind_name(k.kind), k.totals.step_limit_hits, k.faulted_rays);
    if (k.faulted_rays)
      out += fmt::format(" (the first: {}, node pointer {:#x})", emu::fault_name(k.first_fault), k.first_fault_node);
    out += ".</p>\n";
  }
  return out;
}

// One bar per histogram bin, each carrying its ray count in data-count (so the bars sum to the ray count).
std::string histogram_svg(const KindStats& k) {
  constexpr double kWidth = 380, kHeight = 180, kLeft = 48, kRight = 10, kTop = 24, kBottom = 32;
  constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
  const Distribution& d = k.steps;
  const std::size_t bins = std::max<std::size_t>(d.histogram.size(), 1);
  const uint64_t top =
      std::max<uint64_t>(1, d.histogram.empty() ? 1 : *std::max_element(d.histogram.begin(), d.histogram.end()));
  const double span = static_cast<double>(bins * d.bin_width);  // steps covered by the x axis
  const std::string name = ray_kind_name(k.kind);
  std::string out = fmt::format(
      "<svg class=\"histogram\" data-ray-type=\"{0}\" data-rays=\"{1}\" width=\"{2}\" height=\"{3}\" "
      "viewBox=\"0 0 {2} {3}\" role=\"img\" aria-label=\"{0} rays: histogram of steps per ray\">\n",
      name, k.rays, kWidth, kHeight);
  out += fmt::format("<text class=\"title\" x=\"{}\" y=\"15\">{} rays: steps per ray ({} rays, mean {})</text>\n",
                     kLeft, name, k.rays, fixed(d.mean, 2));
  const double bar_w = kPlotW / static_cast<double>(bins);
  for (std::size_t i = 0; i < d.histogram.size(); ++i) {
    const uint64_t count = d.histogram[i];
    const double h = kPlotH * static_cast<double>(count) / static_cast<double>(top);
    out += fmt::format(
        "<rect class=\"bar\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" data-count=\"{}\">"
        "<title>{} to {} steps: {} rays</title></rect>\n",
        kLeft + bar_w * static_cast<double>(i), kTop + kPlotH - h, std::max(bar_w - 1.0, 0.5), h, count,
        i * d.bin_width, (i + 1) * d.bin_width - 1, count);
  }
  const double mean_x = kLeft + kPlotW * std::min(d.mean / span, 1.0);
  out += fmt::format(
      "<line class=\"mean\" x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\"><title>mean {3}</title></line>\n",
      mean_x, kTop, kTop + kPlotH, fixed(d.mean, 2));
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", kLeft, kTop + kPlotH,
                     kLeft + kPlotW);
  out +=
      fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", kLeft, kTop, kTop + kPlotH);
  // Axis labels: ray counts at the bottom and top of the y axis, steps at the ends and middle of the x axis.
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 4, kTop + 4, top);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>\n", kLeft - 4, kTop + kPlotH);
  for (int t = 0; t <= 2; ++t) {
    const double value = span * t / 2.0;
    out += fmt::format("<text x=\"{:.2f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + kPlotW * t / 2.0,
                       kTop + kPlotH + 13, fixed(value, 0));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">steps per ray (bin width {})</text>\n",
                     kLeft + kPlotW / 2, kHeight - 4, d.bin_width);
  return out + "</svg>\n";
}

std::string histogram_section(const StatsReport& st) {
  std::string out = "<h3>Steps per ray</h3>\n<div class=\"figures\">\n";
  for (const KindStats& k : st.kinds) out += histogram_svg(k);
  return out +
         "</div>\n<p class=\"note\">Bars: rays per bin of steps; dashed line: the mean. Hover a bar for its "
         "count.</p>\n";
}

std::string image_section(const SceneReport& s) {
  if (s.images.empty()) return {};
  std::string out = fmt::format(
      "<h3>Images</h3>\n<p class=\"note\">Primary rays, {} x {}, camera {}; each heatmap is scaled to its own maximum "
      "(see its legend). What is drawn is what the emulator counted.</p>\n<div class=\"figures\">\n",
      s.stats.width, s.stats.height, escape(format_camera(s.stats.camera)));
  for (const ReportImage& img : s.images) {
    out += fmt::format(
        "<figure data-image=\"{}\"><img src=\"{}\" width=\"{}\" height=\"{}\" "
        "alt=\"{}\"><figcaption>{}</figcaption></figure>\n",
        escape(img.name), render::png_data_uri(img.image), img.image.width(), img.image.height(), escape(img.caption),
        escape(img.caption));
  }
  return out + "</div>\n";
}

std::string oracle_section(const StatsReport& st) {
  std::vector<Row> rows;
  for (const KindStats& k : st.kinds) {
    const std::string causes = k.agreement.causes_text();
    rows.push_back({ray_kind_name(k.kind), fmt::format("{}", k.agreement.rays()),
                    fmt::format("{}", k.agreement.agreeing()), agreement_cell(k.agreement),
                    causes.empty() ? "none" : causes, fmt::format("{:.3g}", k.agreement.worst_relative_t_error)});
  }
  return "<h3>Oracle agreement</h3>\n<p class=\"note\">Every ray is checked against Embree (closest hit or "
         "occlusion).</p>\n" +
         table({"ray type", "rays", "agreeing", "agreement", "disagreements by cause", "worst relative t error"}, rows);
}

// The label of a run on hardware that does not read the blob's nodes (emu::hypothetical_note), or "".
std::string hypothetical_paragraph(const std::string& note) {
  return note.empty() ? "" : "<p class=\"note hypothetical\"><strong>" + escape(note) + "</strong></p>\n";
}

std::string machine_section(const StatsReport& st) {
  if (!st.machine) return {};
  Row header{"machine model"};
  std::vector<Row> rows;
  for (const KindStats& k : st.kinds) {
    if (!k.machine) continue;
    header.push_back(ray_kind_name(k.kind));
    const std::vector<MachineFigure> figures = machine_figures(*k.machine, *st.machine, MachineFigureSet::All);
    rows.resize(figures.size());
    for (std::size_t i = 0; i < figures.size(); ++i) {
      if (rows[i].empty()) rows[i].push_back(escape(figures[i].label));
      rows[i].push_back(escape(figures[i].value));
    }
  }
  return fmt::format(
             "<h3>Machine model</h3>\n<p class=\"note\">Preset {}: outputs of a simplified model of an RDNA "
             "GPU (docs/machine-model.md), not hardware measurements.{}</p>\n{}",
             escape(st.machine->name), kGpuNote, hypothetical_paragraph(emu::hypothetical_note(*st.machine, st.target))) +
         table(header, rows);
}

// A table of plain-text cells (a library's text table), escaped.
std::string plain_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& cells) {
  std::vector<Row> rows;
  for (const std::vector<std::string>& row : cells) {
    rows.emplace_back();
    for (const std::string& cell : row) rows.back().push_back(escape(cell));
  }
  Row escaped_header;
  for (const std::string& h : header) escaped_header.push_back(escape(h));
  return table(escaped_header, rows);
}

std::string sensitivity_section(const SceneReport& s) {
  if (!s.sensitivity) return {};
  const SensitivityResult& r = *s.sensitivity;
  return fmt::format("<h3>Machine-model sensitivity of {}</h3>\n<p class=\"note\">Each [assumption] and "
                     "[UNCERTAIN] parameter of the preset changed alone (whole numbers x{:g} and x{:g}, rounded; "
                     "true/false flipped), as <code>hwbvh machine sensitivity</code>, ranked by the largest change "
                     "in cycles (rank by tests per second in brackets). The preset as it is: {} cycles. Outputs of "
                     "a model, not hardware measurements.</p>\n{}<div class=\"sweep\">\n",
                     escape(r.preset), r.factor_low, r.factor_high, r.base.cycles, hypothetical_paragraph(r.hypothetical)) +
         sensitivity_to_svg(r) + "</div>\n" + plain_table(sensitivity_header(), sensitivity_rows(r));
}

std::string sweep_section(const SceneReport& s) {
  if (!s.sweep) return {};
  const SweepResult& r = *s.sweep;
  std::string notes;
  for (const std::string& note : sweep_hypothetical_notes(r)) notes += hypothetical_paragraph(note);
  return fmt::format("<h3>Machine-model sweep of {}</h3>\n<p class=\"note\">The machine model on these rays for "
                     "each value of {}{} (as <code>hwbvh machine sweep</code>); cycles and tests summed over the ray "
                     "types. Outputs of a model, not hardware measurements.</p>\n<div class=\"sweep\">\n",
                     escape(r.parameter), escape(r.parameter), r.unit.empty() ? "" : " (" + escape(r.unit) + ")") +
         sweep_to_svg(r) + "</div>\n" + notes + plain_table(sweep_header(r), sweep_rows(r));
}

// One row per variant and ray type: what `hwbvh compare` prints under its table.
std::string machine_runs_table(const CompareReport& c) {
  const std::vector<MachineRun> runs = machine_runs(c);
  if (runs.empty()) return {};
  Row header{"variant", "rays"};
  for (const MachineFigure& f : runs.front().figures) header.push_back(escape(f.column));
  std::vector<Row> rows;
  for (const MachineRun& run : runs) {
    Row row{escape(run.variant), ray_kind_name(run.kind)};
    for (const MachineFigure& f : run.figures) row.push_back(escape(f.value));
    rows.push_back(std::move(row));
  }
  return table(header, rows);
}

std::string compare_section(const CompareReport& c) {
  std::string kinds;
  for (RayKind k : c.kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(ray_kind_name(k));
  Row header{"variant", "node bytes", "bytes / triangle", "steps", "box tests", "triangle tests", "stack ops"};
  if (c.levels) {
    for (const LevelCounter& l : kLevelCounters) header.push_back(l.label);
  }
  if (c.any_hit_shader) header.push_back("any-hit invocations");
  header.push_back("oracle agreement");
  if (c.machine) header.push_back("machine-model cycles");
  std::vector<Row> rows;
  for (const VariantRow& v : c.rows) {
    Row row{escape(v.name),        fmt::format("{}", v.bytes),   fixed(v.bytes_per_triangle, 2), fixed(v.steps, 2),
            fixed(v.box_tests, 2), fixed(v.triangle_tests, 2), fixed(v.stack_ops, 2)};
    if (c.levels) {
      for (const LevelCounter& l : kLevelCounters) row.push_back(fixed(v.per_ray(v.totals.*l.member), 2));
    }
    if (c.any_hit_shader) row.push_back(fixed(v.any_hit_invocations, 2));
    row.push_back(agreement_cell(v.agreement));
    if (c.machine) row.push_back(escape(v.machine_cell()));
    rows.push_back(std::move(row));
  }
  std::string hypothetical_paragraphs;
  for (const std::string& note : hypothetical_notes(c)) hypothetical_paragraphs += hypothetical_paragraph(note);
  return fmt::format(
             "<h3>Comparison across targets</h3>\n<p class=\"note\">The scene built for each target, the same "
             "rays ({}) through each; per ray, averaged over all rays (as <code>hwbvh compare</code>).{}{}{}{}</p>\n",
             escape(kinds),
             c.levels ? fmt::format(" Two levels: {} instances of {} BLASes, built for each target; the oracle traces "
                                    "the same instances.", c.levels->instances, c.levels->blases)
                      : "",
             c.any_hit_shader ? " Alpha-tested scene: any-hit invocations are the alpha-test shader's runs per ray, "
                                "and the oracle runs the same test. Nothing is baked for this table (no xe3 STOC "
                                "bits, no rtip31 Stoc sideband), so every candidate hit on an alpha-tested triangle "
                                "runs the shader."
                              : "",
             c.machine ? " Cycles are outputs of the machine model, not measurements." : "",
             c.machine ? kGpuNote : "") +
         table(header, rows) + hypothetical_paragraphs + machine_runs_table(c);
}

std::string scene_section(const SceneReport& s, std::size_t index) {
  std::string out = fmt::format(
      "<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"note\">{} {}; target {}; {}. "
      "<a href=\"#summary\">Back to the summary</a></p>\n",
      anchor(index, s.name), escape(s.name),
      s.from_scene ? "scene, built with the default options:" : "blob:", escape(s.file), escape(s.build.target),
      s.stats.stack_text());
  out += build_section(s);
  out += traversal_section(s.stats);
  out += histogram_section(s.stats);
  out += image_section(s);
  out += oracle_section(s.stats);
  out += machine_section(s.stats);
  out += sweep_section(s);
  out += sensitivity_section(s);
  if (s.compare) out += compare_section(*s.compare);
  return out + "</section>\n";
}

}  // namespace

std::string report_to_html(const Report& report) {
  std::string kinds;
  for (RayKind k : report.kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(ray_kind_name(k));
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>hwbvh report</title>\n";
  out += std::string("<style>") + kStyle + "</style>\n</head>\n<body>\n<h1>hwbvh report</h1>\n";
  out += fmt::format(
      "<p class=\"note\">{} {}; ray types: {}{}. Traversal emulated on the encoded bytes, every ray "
      "checked against Embree (docs/counters.md).</p>\n",
      report.scenes.size(), report.scenes.size() == 1 ? "input" : "inputs", escape(kinds),
      report.machine ? "; machine model: " + escape(*report.machine) : "");
  out += "<nav><ul>\n";
  for (std::size_t i = 0; i < report.scenes.size(); ++i)
    out += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", anchor(i, report.scenes[i].name),
                       escape(report.scenes[i].name));
  out += "</ul></nav>\n<h2 id=\"summary\">Summary</h2>\n" + summary(report);
  for (std::size_t i = 0; i < report.scenes.size(); ++i) out += scene_section(report.scenes[i], i);
  return out + "</body>\n</html>\n";
}

}  // namespace hwbvh::stats
