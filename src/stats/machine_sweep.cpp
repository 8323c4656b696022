#include "hwbvh/stats/machine_sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/json_text.h"
#include "stats/html_escape.h"

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

SweepPoint summarize_point(std::string value, const StatsReport& stats, const emu::MachineConfig& config) {
  SweepPoint p;
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
  const auto c = static_cast<double>(cycles);
  p.box_utilization = static_cast<double>(boxes) / (c * config.ray_accelerator.box_tests_per_clock);
  p.triangle_utilization = static_cast<double>(triangles) / (c * config.ray_accelerator.triangle_tests_per_clock);
  return p;
}

std::string kinds_text(const std::vector<RayKind>& kinds) {
  std::string out;
  for (RayKind k : kinds) out += (out.empty() ? "" : ",") + std::string(ray_kind_name(k));
  return out;
}

std::string percent(double share) { return fmt::format("{:.1f}%", 100.0 * share); }

// The plot's frame (SVG user units) and its series.
constexpr double kWidth = 720, kHeight = 420, kLeft = 84, kRight = 78, kTop = 64, kBottom = 58;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
constexpr int kCycleTicks = 5;

struct Series {
  const char* name;
  const char* colour;
  const char* dash;  // stroke-dasharray, "" for solid
};
constexpr Series kCycles{"cycles (left axis)", "#1f4e9a", ""};
constexpr Series kBox{"RA box-test utilisation (right axis)", "#c0392b", "7 4"};
constexpr Series kTriangle{"RA triangle-test utilisation (right axis)", "#2e8b57", "2 3"};

// The smallest 1, 2 or 5 times a power of ten that is at least `x`.
double nice_step(double x) {
  const double power = std::pow(10.0, std::floor(std::log10(x)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= x) return m * power;
  return 10.0 * power;
}

// x positions: proportional to the values when all are numbers (and not all equal), else evenly spaced.
std::vector<double> x_positions(const SweepResult& r) {
  std::vector<double> numbers;
  for (const SweepPoint& p : r.points) {
    if (const std::optional<double> v = as_number(p.value)) numbers.push_back(*v);
  }
  const auto [lo, hi] = std::minmax_element(numbers.begin(), numbers.end());
  const bool numeric = numbers.size() == r.points.size() && !numbers.empty() && *hi > *lo;
  std::vector<double> x;
  const double n = static_cast<double>(r.points.size());
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const double share = numeric ? (numbers[i] - *lo) / (*hi - *lo) : (static_cast<double>(i) + 0.5) / n;
    x.push_back(kLeft + kPlotW * (numeric ? 0.04 + 0.92 * share : share));
  }
  return x;
}

struct PlotPoint {
  double x, y;
  std::string tip;  // escaped
};

std::string polyline(const Series& s, const std::vector<PlotPoint>& points) {
  std::string coords;
  for (const PlotPoint& p : points) coords += fmt::format("{}{:.1f},{:.1f}", coords.empty() ? "" : " ", p.x, p.y);
  std::string out = fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                                s.colour, *s.dash ? fmt::format(" stroke-dasharray=\"{}\"", s.dash) : "", coords);
  for (const PlotPoint& p : points) {
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n", p.x,
                       p.y, s.colour, p.tip);
  }
  return out;
}

}  // namespace

SweepResult run_machine_sweep(const emu::LoadedBvh& bvh, const SweepOptions& o) {
  if (o.values.empty()) throw Error(ErrorKind::BadInput, "", "sweep: no values given");
  const bool stack = o.parameter == kStackSizeParameter;
  if (stack && bvh.target == blob::Target::Xe3) {
    throw_bad_input(bvh.file, "sweep parameter stack_size: an xe3 BVH is traced with its fixed short stack");
  }
  SweepResult r;
  r.file = bvh.file;
  r.target = blob::target_name(bvh.target);
  r.preset = o.preset;
  r.parameter = o.parameter;
  r.kinds = o.stats.kinds;
  r.unit = stack ? "entries" : emu::machine_parameter_unit(o.preset, o.parameter);
  // Every point's preset first: a bad value is refused before the work.
  std::vector<emu::MachineConfig> configs;
  for (const std::string& v : o.values) {
    if (stack) (void)stack_entries(v);
    configs.push_back(stack ? emu::load_machine_preset(o.preset) : emu::load_machine_preset(o.preset, o.parameter, v));
  }
  for (std::size_t i = 0; i < o.values.size(); ++i) {
    StatsOptions so = o.stats;
    so.oracle = false;
    so.keep_results = false;
    so.machine = configs[i];
    if (stack) so.trace.stack.size = stack_entries(o.values[i]);
    r.points.push_back(summarize_point(o.values[i], run_stats(bvh, so), configs[i]));
  }
  return r;
}

std::vector<std::string> sweep_header(const SweepResult& r) {
  return {r.parameter, "cycles", "RA box util.", "RA tri util.", "status"};
}

std::vector<std::vector<std::string>> sweep_rows(const SweepResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const SweepPoint& p : r.points) {
    const bool done = p.cycles.has_value();
    rows.push_back({p.value, done ? fmt::format("{}", *p.cycles) : "-", done ? percent(p.box_utilization) : "-",
                    done ? percent(p.triangle_utilization) : "-", emu::to_string(p.status)});
  }
  return rows;
}

std::string sweep_to_text(const SweepResult& r) {
  std::string out = fmt::format("{} ({}): machine model {}, sweep of {}{}; rays: {} (outputs of a model)\n", r.file,
                                r.target, r.preset, r.parameter, r.unit.empty() ? "" : " (" + r.unit + ")",
                                kinds_text(r.kinds));
  const std::vector<std::string> header = sweep_header(r);
  const std::vector<std::vector<std::string>> rows = sweep_rows(r);
  std::size_t width = header[0].size();
  for (const auto& row : rows) width = std::max(width, row[0].size());
  const auto line = [&](const std::vector<std::string>& cells) {
    return fmt::format("{:<{}}{:>14}{:>14}{:>14}  {}\n", cells[0], width, cells[1], cells[2], cells[3], cells[4]);
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
    points.push_back({{"value", p.value},
                      {"status", emu::to_string(p.status)},
                      {"cycles", p.cycles ? Json(*p.cycles) : Json(nullptr)},
                      {"ra_box_utilization", p.box_utilization},
                      {"ra_triangle_utilization", p.triangle_utilization},
                      {"runs", runs}});
  }
  Json kinds = Json::array();
  for (RayKind k : r.kinds) kinds.push_back(ray_kind_name(k));
  const Json j{{"model_output", "hwbvh machine model: outputs of a model, not hardware measurements"},
               {"file", r.file},
               {"target", r.target},
               {"preset", r.preset},
               {"parameter", r.parameter},
               {"unit", r.unit},
               {"ray_types", kinds},
               {"points", points}};
  return json_text(j, 2);
}

std::string sweep_to_svg(const SweepResult& r) {
  uint64_t most = 1;
  for (const SweepPoint& p : r.points) most = std::max(most, p.cycles.value_or(0));
  const double step = nice_step(static_cast<double>(most) / kCycleTicks);
  const double top = step * std::ceil(static_cast<double>(most) / step);
  const double bottom_y = kTop + kPlotH;
  const auto cycles_y = [&](double c) { return bottom_y - kPlotH * c / top; };
  const auto share_y = [&](double s) { return bottom_y - kPlotH * s; };

  std::string kinds;
  for (RayKind k : r.kinds) kinds += (kinds.empty() ? "" : ", ") + std::string(ray_kind_name(k));
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"11\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
      kWidth, kHeight);
  out += fmt::format(
      "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}: machine model {}, sweep of {}</text>\n"
      "<text x=\"{}\" y=\"33\" fill=\"#555555\">Rays: {}. One compute unit; outputs of a model, not hardware "
      "measurements.</text>\n",
      kLeft, escape(std::filesystem::path(r.file).filename().string()), escape(r.preset), escape(r.parameter), kLeft,
      escape(kinds));
  double legend_x = kLeft;
  for (const Series* s : {&kCycles, &kBox, &kTriangle}) {
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"47\" x2=\"{1:.1f}\" y2=\"47\" stroke=\"{2}\" stroke-width=\"2\"{3}/>"
                       "<text x=\"{4:.1f}\" y=\"51\">{5}</text>\n",
                       legend_x, legend_x + 22, s->colour,
                       *s->dash ? fmt::format(" stroke-dasharray=\"{}\"", s->dash) : "", legend_x + 26, s->name);
    legend_x += 32 + 6.2 * static_cast<double>(std::string_view(s->name).size());
  }

  // Grid, axes and tick labels: cycles on the left, utilisation on the right.
  for (int t = 0; t <= kCycleTicks; ++t) {
    const double value = top * t / kCycleTicks;
    const double y = cycles_y(value);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>\n"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.0f}</text>\n"
                       "<text x=\"{6}\" y=\"{4:.1f}\">{7:.0f}%</text>\n",
                       kLeft, y, kLeft + kPlotW, kLeft - 5, y + 4, value, kLeft + kPlotW + 5,
                       100.0 * t / kCycleTicks);
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444444\"/>\n", kLeft,
                     kTop, kPlotW, kPlotH);
  const std::vector<double> xs = x_positions(r);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#444444\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                       xs[i], bottom_y, bottom_y + 4, bottom_y + 16, escape(p.value));
    if (!p.cycles) {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#a01010\">{}</text>\n", xs[i],
                         bottom_y - 8, emu::to_string(p.status));
    }
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", kLeft + kPlotW / 2,
                     kHeight - 14, escape(r.parameter), r.unit.empty() ? "" : " (" + escape(r.unit) + ")");
  out += fmt::format("<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\">cycles (shader clocks, "
                     "one CU)</text>\n",
                     18, kTop + kPlotH / 2);
  out += fmt::format("<text transform=\"translate({},{}) rotate(90)\" text-anchor=\"middle\">ray-accelerator "
                     "utilisation (% of peak)</text>\n",
                     kWidth - 16, kTop + kPlotH / 2);

  std::vector<PlotPoint> cycles, box, triangle;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    if (!p.cycles) continue;
    const std::string at = escape(r.parameter + " = " + p.value);
    cycles.push_back({xs[i], cycles_y(static_cast<double>(*p.cycles)), fmt::format("{}: {} cycles", at, *p.cycles)});
    box.push_back({xs[i], share_y(p.box_utilization), fmt::format("{}: box {}", at, percent(p.box_utilization))});
    triangle.push_back(
        {xs[i], share_y(p.triangle_utilization), fmt::format("{}: triangle {}", at, percent(p.triangle_utilization))});
  }
  out += polyline(kCycles, cycles);
  out += polyline(kBox, box);
  out += polyline(kTriangle, triangle);
  return out + "</svg>\n";
}

}  // namespace hwbvh::stats
