#include "hwbvh/stats/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/json_text.h"
#include "stats/html_escape.h"
#include "stats/svg_plot.h"

namespace hwbvh::stats {
namespace {

std::string tag_of(const std::string& source) {
  if (source.find("[UNCERTAIN]") != std::string::npos) return "[UNCERTAIN]";
  if (source.find("[assumption]") != std::string::npos) return "[assumption]";
  return {};
}

std::optional<long long> whole_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The words a documented unit lists as "a (...) | b (...)": the first word of each alternative.
std::vector<std::string> listed_words(const std::string& unit) {
  std::vector<std::string> words;
  for (std::size_t begin = 0; begin <= unit.size();) {
    const std::size_t end = std::min(unit.find('|', begin), unit.size());
    std::string part = unit.substr(begin, end - begin);
    part.erase(0, part.find_first_not_of(' '));
    part = part.substr(0, part.find_first_of(" ("));
    if (!part.empty()) words.push_back(part);
    begin = end + 1;
  }
  return words.size() > 1 ? words : std::vector<std::string>{};
}

std::string factor_label(double factor) { return fmt::format("x{:g}", factor); }

SensitivityVariant variant(std::string label, std::string value, std::string note = {}) {
  SensitivityVariant v;
  v.label = std::move(label);
  v.value = std::move(value);
  v.note = std::move(note);
  return v;
}

// The variants of one parameter, before any is run.
std::vector<SensitivityVariant> variants_of(const emu::MachinePresetParameter& p, double low, double high) {
  std::vector<SensitivityVariant> out;
  if (p.value == "true" || p.value == "false") {
    out.push_back(variant("other value", p.value == "true" ? "false" : "true"));
  } else if (const std::optional<long long> n = whole_number(p.value)) {
    for (const double f : {low, high}) {
      const long long changed = std::llround(static_cast<double>(*n) * f);
      out.push_back(variant(factor_label(f), std::to_string(changed),
                            changed == *n ? "rounds to the preset's value" : ""));
    }
  } else {
    for (const std::string& word : listed_words(p.unit)) {
      if (word != p.value && out.size() < 2) out.push_back(variant("other value", word));
    }
    if (out.empty()) out.push_back(variant("other value", "", "no other value is listed in its unit"));
  }
  return out;
}

// The whole GPU's rates over all ray types: each run's tests on the whole GPU (its MachineResult::gpu rates times its
// time at the preset's clock) over the runs' summed time.
SensitivityFigures figures_of(const SweepPoint& p, uint32_t clock_mhz) {
  double boxes = 0.0, triangles = 0.0;
  for (const auto& [kind, m] : p.runs) {
    const double seconds = static_cast<double>(m.cycles) / (clock_mhz * 1e6);
    boxes += m.gpu.box_tests_per_second * seconds;
    triangles += m.gpu.triangle_tests_per_second * seconds;
  }
  SensitivityFigures f;
  f.cycles = *p.cycles;
  const double seconds = static_cast<double>(f.cycles) / (clock_mhz * 1e6);
  f.box_tests_per_second = boxes / seconds;
  f.triangle_tests_per_second = triangles / seconds;
  return f;
}

double change(double now, double base) { return base > 0.0 ? now / base - 1.0 : 0.0; }

std::string signed_percent(double share) { return fmt::format("{:+.1f}%", 100.0 * share); }

std::string per_second(double value) { return fmt::format("{:.2f} G", value / 1e9); }

std::string kinds_text(const std::vector<RayKind>& kinds) {
  std::string out;
  for (RayKind k : kinds) out += (out.empty() ? "" : ",") + std::string(ray_kind_name(k));
  return out;
}

std::string variant_cell(const SensitivityVariant& v) {
  if (!v.note.empty()) return fmt::format("{} {}: not run ({})", v.label, v.value, v.note);
  if (!v.figures) return fmt::format("{} {}: {}", v.label, v.value, emu::to_string(v.status));
  return fmt::format("{} {}: cycles {}, box/s {}, tri/s {}", v.label, v.value, signed_percent(v.cycles_change),
                     signed_percent(v.box_rate_change), signed_percent(v.triangle_rate_change));
}

}  // namespace

SensitivityResult run_sensitivity(const emu::LoadedBvh& bvh, const SensitivityOptions& o,
                                  const ProgressCallback& progress) {
  if (!(o.factor_low > 0.0 && o.factor_low < 1.0) || !(o.factor_high > 1.0 && std::isfinite(o.factor_high))) {
    throw Error(ErrorKind::BadInput, "", fmt::format("sensitivity: the factors must be in (0, 1) and above 1, not {:g} "
                                                     "and {:g}", o.factor_low, o.factor_high));
  }
  const emu::MachineConfig config = emu::load_machine_preset(o.preset);
  if (config.gpu.clock_mhz == 0) {
    throw_bad_input(o.preset, "sensitivity: the preset has no gpu.clock_mhz to turn cycles into tests per second");
  }
  SensitivityResult r;
  r.file = bvh.file;
  r.target = blob::target_name(bvh.target);
  r.preset = o.preset;
  r.hypothetical = emu::hypothetical_note(config, r.target);
  r.kinds = o.stats.kinds;
  r.factor_low = o.factor_low;
  r.factor_high = o.factor_high;
  r.clock_mhz = config.gpu.clock_mhz;

  // Every variant's preset is loaded (or refused) before any ray is traced.
  std::vector<std::pair<SensitivityParameter, std::vector<std::optional<emu::MachineConfig>>>> plan;
  for (const emu::MachinePresetParameter& p : emu::machine_preset_parameters(o.preset)) {
    SensitivityParameter s;
    s.tag = tag_of(p.source);
    if (s.tag.empty()) continue;
    s.key = p.key;
    s.value = p.value;
    s.unit = p.unit;
    s.source = p.source;
    s.variants = variants_of(p, o.factor_low, o.factor_high);
    std::vector<std::optional<emu::MachineConfig>> configs;
    for (SensitivityVariant& v : s.variants) {
      configs.emplace_back();
      if (!v.note.empty()) continue;
      try {
        configs.back() = emu::load_machine_preset(o.preset, p.key, v.value);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::BadInput) throw;
        v.note = e.what();
      }
    }
    plan.emplace_back(std::move(s), std::move(configs));
  }

  uint64_t runs = 1;  // the preset's own, then each variant's whose preset loaded
  for (const auto& [s, configs] : plan)
    for (const auto& c : configs) runs += c ? 1 : 0;
  uint64_t started = 0;
  const auto run_progress = [&] { return prefixed(progress, fmt::format("run {} of {}: ", ++started, runs)); };
  const SweepPoint base = run_machine_point(bvh, o.stats, o.preset, "", config, run_progress());
  if (!base.cycles) {
    throw_bad_input(o.preset, std::string("sensitivity: the preset's own run did not complete (") +
                                  emu::to_string(base.status) + ")");
  }
  r.base = figures_of(base, r.clock_mhz);
  for (auto& [s, configs] : plan) {
    for (std::size_t i = 0; i < s.variants.size(); ++i) {
      SensitivityVariant& v = s.variants[i];
      if (!configs[i]) continue;
      const SweepPoint p = run_machine_point(bvh, o.stats, o.preset, v.value, *configs[i], run_progress());
      v.status = p.status;
      if (!p.cycles) continue;
      v.figures = figures_of(p, r.clock_mhz);
      v.cycles_change = change(static_cast<double>(v.figures->cycles), static_cast<double>(r.base.cycles));
      v.box_rate_change = change(v.figures->box_tests_per_second, r.base.box_tests_per_second);
      v.triangle_rate_change = change(v.figures->triangle_tests_per_second, r.base.triangle_tests_per_second);
      s.cycles_effect = std::max(s.cycles_effect, std::abs(v.cycles_change));
      s.rate_effect = std::max({s.rate_effect, std::abs(v.box_rate_change), std::abs(v.triangle_rate_change)});
    }
    r.parameters.push_back(std::move(s));
  }
  const auto ran = [](const SensitivityParameter& s) {
    return std::any_of(s.variants.begin(), s.variants.end(), [](const SensitivityVariant& v) { return v.figures.has_value(); });
  };
  const auto ranked_by = [&](double SensitivityParameter::*effect) {
    return [&ran, effect](const SensitivityParameter& a, const SensitivityParameter& b) {
      if (ran(a) != ran(b)) return ran(a);
      if (a.*effect != b.*effect) return a.*effect > b.*effect;
      return a.key < b.key;
    };
  };
  std::sort(r.parameters.begin(), r.parameters.end(), ranked_by(&SensitivityParameter::rate_effect));
  for (std::size_t i = 0; i < r.parameters.size(); ++i) r.parameters[i].rate_rank = i + 1;
  std::sort(r.parameters.begin(), r.parameters.end(), ranked_by(&SensitivityParameter::cycles_effect));
  return r;
}

std::vector<std::string> sensitivity_header() { return {"rank", "(t/s)", "parameter", "preset", "effect", "changes"}; }

std::vector<std::vector<std::string>> sensitivity_rows(const SensitivityResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    const SensitivityParameter& s = r.parameters[i];
    std::string changes;
    for (const SensitivityVariant& v : s.variants) changes += (changes.empty() ? "" : "; ") + variant_cell(v);
    rows.push_back({std::to_string(i + 1), fmt::format("({})", s.rate_rank), s.key, s.value,
                    fmt::format("{:.1f}%", 100.0 * s.cycles_effect), changes});
  }
  return rows;
}

std::string sensitivity_to_text(const SensitivityResult& r) {
  std::string out = fmt::format(
      "{} ({}): machine-model sensitivity of {}; rays: {} (outputs of a model)\n", r.file, r.target, r.preset,
      kinds_text(r.kinds));
  if (!r.hypothetical.empty()) out += r.hypothetical + "\n";
  out += fmt::format("preset as it is: {} cycles, {} box tests/s, {} triangle tests/s (the whole GPU at {} MHz)\n",
                     r.base.cycles,
                     per_second(r.base.box_tests_per_second), per_second(r.base.triangle_tests_per_second),
                     r.clock_mhz);
  out += fmt::format("each [assumption] and [UNCERTAIN] parameter changed alone: whole numbers x{:g} and x{:g} "
                     "(rounded), true/false flipped, words to the other listed values; ranked by the largest change "
                     "in cycles (rank by tests per second in brackets)\n\n",
                     r.factor_low, r.factor_high);
  const std::vector<std::string> header = sensitivity_header();
  const std::vector<std::vector<std::string>> rows = sensitivity_rows(r);
  std::size_t key_width = header[2].size(), value_width = header[3].size();
  for (const auto& row : rows) {
    key_width = std::max(key_width, row[2].size());
    value_width = std::max(value_width, row[3].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    return fmt::format("{:>4} {:>5}  {:<{}}  {:<{}}  {:>8}  {}\n", cells[0], cells[1], cells[2], key_width, cells[3],
                       value_width, cells[4], cells[5]);
  };
  out += line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string sensitivity_to_json(const SensitivityResult& r) {
  using Json = nlohmann::ordered_json;
  const auto figures = [](const SensitivityFigures& f) {
    return Json{{"cycles", f.cycles},
                {"box_tests_per_second", f.box_tests_per_second},
                {"triangle_tests_per_second", f.triangle_tests_per_second}};
  };
  Json parameters = Json::array();
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    const SensitivityParameter& s = r.parameters[i];
    Json variants = Json::array();
    for (const SensitivityVariant& v : s.variants) {
      Json j{{"label", v.label}, {"value", v.value}};
      if (!v.note.empty()) {
        j["not_run"] = v.note;
      } else {
        j["status"] = emu::to_string(v.status);
      }
      if (v.figures) {
        j.update(figures(*v.figures));
        j["cycles_change"] = v.cycles_change;
        j["box_tests_per_second_change"] = v.box_rate_change;
        j["triangle_tests_per_second_change"] = v.triangle_rate_change;
      }
      variants.push_back(j);
    }
    parameters.push_back({{"rank", i + 1},
                          {"rank_by_tests_per_second", s.rate_rank},
                          {"key", s.key},
                          {"value", s.value},
                          {"unit", s.unit},
                          {"tag", s.tag},
                          {"source", s.source},
                          {"cycles_effect", s.cycles_effect},
                          {"tests_per_second_effect", s.rate_effect},
                          {"variants", variants}});
  }
  Json kinds = Json::array();
  for (RayKind k : r.kinds) kinds.push_back(ray_kind_name(k));
  Json j{{"model_output", "hwbvh machine model: outputs of a model, not hardware measurements"},
         {"file", r.file},
         {"target", r.target},
         {"preset", r.preset}};
  if (!r.hypothetical.empty()) j["hypothetical"] = r.hypothetical;
  j.update(Json{{"ray_types", kinds},
                {"factor_low", r.factor_low},
                {"factor_high", r.factor_high},
                {"clock_mhz", r.clock_mhz},
                {"preset_figures", figures(r.base)},
                {"parameters", parameters}});
  return json_text(j, 2);
}

std::string sensitivity_to_svg(const SensitivityResult& r, std::size_t rows) {
  std::vector<const SensitivityParameter*> shown;
  double lo = 0.0, hi = 0.0;
  for (const SensitivityParameter& s : r.parameters) {
    if (shown.size() == rows || s.cycles_effect == 0.0) break;  // ranked: the rest moved nothing or did not run
    shown.push_back(&s);
    for (const SensitivityVariant& v : s.variants) {
      if (!v.figures) continue;
      lo = std::min(lo, 100.0 * v.cycles_change);
      hi = std::max(hi, 100.0 * v.cycles_change);
    }
  }
  // The axis holds 0 (the preset's own cycles) and is symmetric about it, so bars left and right compare.
  const double reach = std::max({-lo, hi, 1.0});
  const svg::AxisRange half = svg::axis_range(0.0, reach);
  const double axis_lo = -half.end(), axis_hi = half.end();
  constexpr double kWidth = 860, kLeft = 330, kRight = 30, kTop = 84, kRow = 22, kBottom = 52;
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kRow * static_cast<double>(std::max<std::size_t>(shown.size(), 1));
  const double height = kTop + plot_h + kBottom;
  const auto x_of = [&](double percent) { return kLeft + plot_w * (percent - axis_lo) / (axis_hi - axis_lo); };
  const char* low_colour = svg::kColours[0];
  const char* high_colour = svg::kColours[1];

  std::string out = svg::open(kWidth, height);
  out += fmt::format(
      "<text x=\"12\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}: machine-model sensitivity of {}</text>\n"
      "<text x=\"12\" y=\"33\" fill=\"#555555\">Rays: {}; {} cycles as the preset is. Each [assumption] or "
      "[UNCERTAIN] parameter changed alone; outputs of a model, not hardware measurements.</text>\n",
      escape(std::filesystem::path(r.file).filename().string()), escape(r.preset), escape(kinds_text(r.kinds)),
      r.base.cycles);
  if (!r.hypothetical.empty()) {
    out += fmt::format("<text x=\"12\" y=\"47\" fill=\"#c0392b\">{}</text>\n", escape(r.hypothetical));
  }
  double x = 12;
  x = svg::legend_entry(out, x, 63, low_colour, "", factor_label(r.factor_low) + " (or the other value)");
  svg::legend_entry(out, x, 63, high_colour, "", factor_label(r.factor_high));

  for (int t = -svg::kTicks; t <= svg::kTicks; ++t) {
    const double v = t * half.step, tx = x_of(v);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\"/>"
                       "<text x=\"{0:.1f}\" y=\"{4}\" text-anchor=\"middle\">{5:+g}%</text>\n",
                       tx, kTop, kTop + plot_h, t == 0 ? "#444444" : "#e4e4e4", kTop + plot_h + 14, v);
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444444\"/>\n", kLeft,
                     kTop, plot_w, plot_h);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">change in cycles from the preset's own "
                     "(%; 0 = the preset, left = faster)</text>\n",
                     kLeft + plot_w / 2, height - 14);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const SensitivityParameter& s = *shown[i];
    const double y = kTop + kRow * static_cast<double>(i);
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{} ({})</text>\n", kLeft - 6, y + 15,
                       escape(s.key), escape(s.value));
    for (std::size_t k = 0; k < s.variants.size(); ++k) {
      const SensitivityVariant& v = s.variants[k];
      if (!v.figures) continue;
      const double a = x_of(0.0), b = x_of(100.0 * v.cycles_change);
      const bool low = k == 0;
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" "
                         "fill-opacity=\"0.8\"><title>{} = {} ({}): {} cycles ({})</title></rect>\n",
                         std::min(a, b), y + (low ? 3.0 : 11.0), std::max(std::abs(b - a), 1.0), 8,
                         low ? low_colour : high_colour, escape(s.key), escape(v.value), escape(v.label),
                         v.figures->cycles, signed_percent(v.cycles_change));
    }
  }
  return out + "</svg>\n";
}

}  // namespace hwbvh::stats
