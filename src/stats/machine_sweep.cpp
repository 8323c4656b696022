#include "hwbvh/stats/machine_sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/json_text.h"
#include "stats/html_escape.h"
#include "stats/svg_plot.h"

namespace hwbvh::stats {
namespace {

std::optional<double> as_number(const std::string& text) {
  double v = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

uint32_t stack_entries(const std::string& value) {
  const std::optional<double> v = as_number(value);
  if (!v || *v != std::floor(*v) || *v < 2 || *v > emu::kMaxStackSize) {
    throw Error(ErrorKind::BadInput, "", "sweep parameter stack_size: '" + value + "' is not a whole number in 2.." +
                                             std::to_string(emu::kMaxStackSize));
  }
  return static_cast<uint32_t>(*v);
}

SweepPoint summarize_point(std::string preset, std::string value, const StatsReport& stats,
                           const emu::MachineConfig& config) {
  SweepPoint p;
  p.preset = std::move(preset);
  p.value = std::move(value);
  p.config = config;
  uint64_t cycles = 0, boxes = 0, triangles = 0;
  for (const KindStats& k : stats.kinds) {
    const emu::MachineResult& m = *k.machine;
    p.runs.emplace_back(k.kind, m);
    if (m.status != emu::MachineStatus::Completed && p.status == emu::MachineStatus::Completed) p.status = m.status;
    cycles += m.cycles;
    boxes += m.box_tests;
    triangles += m.triangle_tests;
  }
  if (p.status != emu::MachineStatus::Completed || cycles == 0) return p;
  p.cycles = cycles;
  // Per CU, as MachineResult's utilizations: the simulated CUs' tests over their count.
  const auto cu_cycles = static_cast<double>(cycles) * config.gpu.simulated_cus();
  p.box_utilization = static_cast<double>(boxes) / (cu_cycles * config.ray_accelerator.box_tests_per_clock);
  p.triangle_utilization = static_cast<double>(triangles) / (cu_cycles * config.ray_accelerator.triangle_tests_per_clock);
  return p;
}

std::string kinds_text(const std::vector<RayKind>& kinds) {
  std::string out;
  for (RayKind k : kinds) out += (out.empty() ? "" : ",") + std::string(ray_kind_name(k));
  return out;
}

std::string percent(double share) { return fmt::format("{:.1f}%", 100.0 * share); }

// The plot's frame in SVG user units; a colour per preset, a dash pattern per figure.
constexpr double kWidth = 720, kHeight = 440, kLeft = 84, kRight = 78, kTop = 80, kBottom = 58;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
constexpr const char* kBoxDash = "7 4";
using svg::kColours;
using svg::kTicks;

// x positions: proportional to the values when all are numbers (and not all equal), else evenly spaced.
std::vector<double> x_positions(const std::vector<std::string>& values) {
  std::vector<double> numbers;
  for (const std::string& v : values) {
    if (const std::optional<double> n = as_number(v)) numbers.push_back(*n);
  }
  const auto [lo, hi] = std::minmax_element(numbers.begin(), numbers.end());
  const bool numeric = numbers.size() == values.size() && !numbers.empty() && *hi > *lo;
  std::vector<double> x;
  const double n = static_cast<double>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double share = numeric ? 0.04 + 0.92 * (numbers[i] - *lo) / (*hi - *lo) : (static_cast<double>(i) + 0.5) / n;
    x.push_back(kLeft + kPlotW * share);
  }
  return x;
}

struct PlotPoint {
  double x, y;
  std::string tip;  // escaped
};

std::string polyline(const char* colour, const char* dash, const std::vector<PlotPoint>& points) {
  std::string coords;
  for (const PlotPoint& p : points) coords += fmt::format("{}{:.1f},{:.1f}", coords.empty() ? "" : " ", p.x, p.y);
  std::string out = fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n", colour,
                                *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "", coords);
  for (const PlotPoint& p : points) {
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n", p.x,
                       p.y, colour, p.tip);
  }
  return out;
}

}  // namespace

SweepPoint run_machine_point(const emu::LoadedBvh& bvh, const StatsOptions& stats, const std::string& preset,
                             const std::string& value, const emu::MachineConfig& config,
                             const ProgressCallback& progress) {
  StatsOptions so = stats;
  so.oracle = false;
  so.keep_results = false;
  so.machine = config;
  SweepPoint point = summarize_point(preset, value, run_stats(bvh, so, nullptr, progress), config);
  point.hypothetical = emu::hypothetical_note(config, blob::target_name(bvh.target));
  return point;
}

SweepResult run_machine_sweep(const emu::LoadedBvh& bvh, const SweepOptions& o, const ProgressCallback& progress) {
  if (o.presets.empty()) throw Error(ErrorKind::BadInput, "", "sweep: no machine preset given");
  if (o.values.empty()) throw Error(ErrorKind::BadInput, "", "sweep: no values given");
  const bool stack = o.parameter == kStackSizeParameter;
  if (stack && bvh.target == blob::Target::Xe3) {
    throw_bad_input(bvh.file, "sweep parameter stack_size: an xe3 BVH is traced with its fixed short stack");
  }
  SweepResult r;
  r.file = bvh.file;
  r.target = blob::target_name(bvh.target);
  r.presets = o.presets;
  r.parameter = o.parameter;
  r.values = o.values;
  r.kinds = o.stats.kinds;
  // Every point's preset first: a bad value is refused before the work.
  std::vector<emu::MachineConfig> configs;
  for (const std::string& preset : o.presets) {
    for (const std::string& v : o.values) {
      if (stack) (void)stack_entries(v);
      configs.push_back(stack ? emu::load_machine_preset(preset) : emu::load_machine_preset(preset, o.parameter, v));
    }
  }
  r.unit = stack ? "entries" : emu::machine_parameter_unit(o.presets.front(), o.parameter);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const std::string& value = o.values[i % o.values.size()];
    StatsOptions so = o.stats;
    if (stack) so.trace.stack.size = stack_entries(value);
    r.points.push_back(run_machine_point(bvh, so, o.presets[i / o.values.size()], value, configs[i],
                                         prefixed(progress, fmt::format("point {} of {}: ", i + 1, configs.size()))));
  }
  return r;
}

std::vector<std::string> sweep_header(const SweepResult& r) {
  return {"preset", r.parameter, "cycles", "RA box util.", "RA tri util.", "status"};
}

std::vector<std::vector<std::string>> sweep_rows(const SweepResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const SweepPoint& p : r.points) {
    const bool done = p.cycles.has_value();
    rows.push_back({p.preset + std::string(emu::hypothetical_mark(p.hypothetical)), p.value,
                    done ? fmt::format("{}", *p.cycles) : "-", done ? percent(p.box_utilization) : "-",
                    done ? percent(p.triangle_utilization) : "-", emu::to_string(p.status)});
  }
  return rows;
}

std::vector<std::string> sweep_hypothetical_notes(const SweepResult& r) {
  std::vector<std::string> notes;
  for (const SweepPoint& p : r.points) {
    if (!p.hypothetical.empty() && std::find(notes.begin(), notes.end(), p.hypothetical) == notes.end())
      notes.push_back(p.hypothetical);
  }
  return notes;
}

std::string sweep_to_text(const SweepResult& r) {
  std::string out = fmt::format("{} ({}): machine model, sweep of {}{}; rays: {} (outputs of a model)\n", r.file,
                                r.target, r.parameter, r.unit.empty() ? "" : " (" + r.unit + ")", kinds_text(r.kinds));
  for (const std::string& note : sweep_hypothetical_notes(r)) out += note + "\n";
  const std::vector<std::string> header = sweep_header(r);
  const std::vector<std::vector<std::string>> rows = sweep_rows(r);
  std::size_t preset_width = header[0].size(), value_width = header[1].size();
  for (const auto& row : rows) {
    preset_width = std::max(preset_width, row[0].size());
    value_width = std::max(value_width, row[1].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    return fmt::format("{:<{}}  {:<{}}{:>14}{:>14}{:>14}  {}\n", cells[0], preset_width, cells[1], value_width,
                       cells[2], cells[3], cells[4], cells[5]);
  };
  out += line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string sweep_to_json(const SweepResult& r) {
  using Json = nlohmann::ordered_json;
  Json points = Json::array();
  for (const SweepPoint& p : r.points) {
    Json runs = Json::array();
    for (const auto& [kind, m] : p.runs) {
      Json run{{"ray_type", ray_kind_name(kind)}};
      run.update(Json::parse(emu::to_json(m, p.config)));
      runs.push_back(run);
    }
    Json point{{"preset", p.preset},
               {"value", p.value},
               {"status", emu::to_string(p.status)},
               {"cycles", p.cycles ? Json(*p.cycles) : Json(nullptr)},
               {"ra_box_utilization", p.box_utilization},
               {"ra_triangle_utilization", p.triangle_utilization}};
    if (!p.hypothetical.empty()) point["hypothetical"] = p.hypothetical;
    point["runs"] = runs;
    points.push_back(point);
  }
  Json kinds = Json::array();
  for (RayKind k : r.kinds) kinds.push_back(ray_kind_name(k));
  const Json j{{"model_output", "hwbvh machine model: outputs of a model, not hardware measurements"},
               {"file", r.file},
               {"target", r.target},
               {"presets", r.presets},
               {"parameter", r.parameter},
               {"unit", r.unit},
               {"ray_types", kinds},
               {"points", points}};
  return json_text(j, 2);
}

std::string sweep_to_svg(const SweepResult& r) {
  // Both axes start at zero, so a line's slope reads as the size of the effect.
  double hi_cycles = 0.0, hi_share = 0.0;
  for (const SweepPoint& p : r.points) {
    if (!p.cycles) continue;
    hi_cycles = std::max(hi_cycles, static_cast<double>(*p.cycles));
    hi_share = std::max(hi_share, p.box_utilization);
  }
  if (hi_cycles == 0.0) hi_share = 1.0;  // nothing completed: empty axes
  const svg::AxisRange cycles_axis = svg::axis_range(0.0, hi_cycles);
  const svg::AxisRange share_axis = svg::axis_range(0.0, 100.0 * hi_share);
  const double bottom_y = kTop + kPlotH;
  const auto y_of = [&](const svg::AxisRange& a, double v) { return bottom_y - kPlotH * (v - a.start) / (a.end() - a.start); };

  // The hypothetical notes go under the plot, a line each.
  const std::vector<std::string> notes = sweep_hypothetical_notes(r);
  std::string out = svg::open(kWidth, kHeight + 16.0 * static_cast<double>(notes.size()));
  out += fmt::format(
      "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}: machine-model sweep of {}</text>\n"
      "<text x=\"{}\" y=\"33\" fill=\"#555555\">Rays: {} (cycles and tests summed). Outputs of a model, "
      "not hardware measurements.</text>\n"
      "<text x=\"{}\" y=\"63\" text-anchor=\"end\" font-weight=\"bold\">Both y axes start at zero.</text>\n",
      kLeft, escape(std::filesystem::path(r.file).filename().string()), escape(r.parameter), kLeft,
      escape(kinds_text(r.kinds)), kLeft + kPlotW);
  double x = kLeft;
  for (std::size_t i = 0; i < r.presets.size(); ++i) {
    const auto series = std::span(r.points).subspan(i * r.values.size(), r.values.size());
    const auto hypothetical = std::count_if(series.begin(), series.end(),
                                            [](const SweepPoint& p) { return !p.hypothetical.empty(); });
    const std::string mark = hypothetical == 0                                          ? ""
                             : static_cast<std::size_t>(hypothetical) == series.size() ? " (hypothetical)"
                                                                                        : " (hypothetical at some values)";
    x = svg::legend_entry(out, x, 47, kColours[i % std::size(kColours)], "", r.presets[i] + mark);
  }
  for (std::size_t i = 0; i < notes.size(); ++i) {
    out += fmt::format("<text x=\"{}\" y=\"{:.0f}\" fill=\"#c0392b\">{}</text>\n", kLeft,
                       kHeight + 4 + 16.0 * static_cast<double>(i), escape(notes[i]));
  }
  x = svg::legend_entry(out, kLeft, 63, "#333333", "", "cycles (left axis)");
  svg::legend_entry(out, x, 63, "#333333", kBoxDash, "RA box-test utilisation (right axis)");

  // Grid and tick labels: cycles on the left, utilisation on the right; a tick per value on the x axis.
  for (int t = 0; t <= kTicks; ++t) {
    const double y = bottom_y - kPlotH * t / kTicks;
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.0f}</text>\n"
                       "<text x=\"{6}\" y=\"{4:.1f}\">{7:.{8}f}%</text>\n",
                       kLeft, y, kLeft + kPlotW, kLeft - 5, y + 4, cycles_axis.start + t * cycles_axis.step,
                       kLeft + kPlotW + 5, share_axis.start + t * share_axis.step, share_axis.step < 1.0 ? 1 : 0);
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444444\"/>\n", kLeft,
                     kTop, kPlotW, kPlotH);
  const std::vector<double> xs = x_positions(r.values);
  for (std::size_t v = 0; v < r.values.size(); ++v) {
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#444444\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       xs[v], bottom_y, bottom_y + 4, bottom_y + 16, escape(r.values[v]));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", kLeft + kPlotW / 2,
                     kHeight - 14, escape(r.parameter), r.unit.empty() ? "" : " (" + escape(r.unit) + ")");
  out += fmt::format("<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">cycles (shader clocks, "
                     "simulated GPU)</text>\n",
                     18, kTop + kPlotH / 2);
  out += fmt::format("<text transform=\"translate({},{}) rotate(90)\" text-anchor=\"middle\">RA box-test "
                     "utilisation (% of peak)</text>\n",
                     kWidth - 16, kTop + kPlotH / 2);

  // Per preset: its cycles and utilisation lines over the points that completed; the others marked by status.
  for (std::size_t s = 0; s < r.presets.size(); ++s) {
    const char* colour = kColours[s % std::size(kColours)];
    std::vector<PlotPoint> cycles, box;
    for (std::size_t v = 0; v < r.values.size(); ++v) {
      const SweepPoint& p = r.points[s * r.values.size() + v];
      const std::string at = escape(p.preset + ", " + r.parameter + " = " + p.value);
      if (!p.cycles) {
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n", xs[v],
                           bottom_y - 8 - 13.0 * static_cast<double>(s), colour, emu::to_string(p.status));
        continue;
      }
      cycles.push_back({xs[v], y_of(cycles_axis, static_cast<double>(*p.cycles)),
                        fmt::format("{}: {} cycles", at, *p.cycles)});
      box.push_back({xs[v], y_of(share_axis, 100.0 * p.box_utilization),
                     fmt::format("{}: box tests {}", at, percent(p.box_utilization))});
    }
    out += polyline(colour, "", cycles);
    out += polyline(colour, kBoxDash, box);
  }
  return out + "</svg>\n";
}

}  // namespace hwbvh::stats
