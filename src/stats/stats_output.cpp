#include "hwbvh/core/json_text.h"
#include "hwbvh/stats/stats_output.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwbvh/stats/machine_output.h"

namespace hwbvh::stats {
namespace {

using Json = nlohmann::ordered_json;

Json distribution_json(const Distribution& d, double hit_mean) {
  return Json{{"mean", d.mean}, {"mean_over_hits", hit_mean}, {"median", d.median}, {"p95", d.p95}, {"max", d.max},
              {"histogram", {{"bin_width", d.bin_width}, {"counts", d.histogram}}}};
}

double agreement_rate(const emu::AgreementStats& a) {
  return a.rays() ? static_cast<double>(a.agreeing()) / static_cast<double>(a.rays()) : 1.0;
}

// The per-ray means of the counters that have no distribution of their own, by `mean` of their sums `t`.
template <class Mean>
Json counter_means(const emu::RayCounters& t, Mean mean) {
  return Json{{"box_node_steps", mean(t.box_node_steps)},
              {"primitive_node_steps", mean(t.primitive_node_steps)},
              {"obb_steps", mean(t.obb_steps)},
              {"stack_pushes", mean(t.stack_pushes)},
              {"stack_pops", mean(t.stack_pops)},
              {"stack_overflows", mean(t.stack_lost)},
              {"walk_back_steps", mean(t.walk_back_steps)},
              {"any_hit_invocations", mean(t.any_hit_invocations)},
              {"stoc_skipped_transparent", mean(t.stoc_skipped_transparent)},
              {"stoc_accepted_opaque", mean(t.stoc_accepted_opaque)}};
}

// Adds the per-level counters to `j`, by `value` of their sums in `t`.
template <class Value>
void add_level_counters(Json& j, const emu::RayCounters& t, Value value) {
  for (const LevelCounter& c : kLevelCounters) j[c.key] = value(t.*c.member);
}

Json kind_json(const KindStats& k, bool two_level) {
  Json causes = Json::object();
  for (std::size_t c = 1; c < emu::kDisagreementCount; ++c)
    causes[emu::disagreement_name(static_cast<emu::Disagreement>(c))] = k.agreement.by_cause[c];
  const emu::RayCounters& t = k.totals;
  Json j{
      {"ray_type", ray_kind_name(k.kind)},
      {"rays", k.rays},
      {"hits", k.hits},
      {"steps", distribution_json(k.steps, k.per_hit(k.hit_totals.steps))},
      {"box_tests", distribution_json(k.box_tests, k.per_hit(k.hit_totals.box_tests))},
      {"triangle_tests", distribution_json(k.triangle_tests, k.per_hit(k.hit_totals.triangle_tests))},
      {"any_hit_invocations", distribution_json(k.any_hit_invocations, k.per_hit(k.hit_totals.any_hit_invocations))},
      {"per_ray", counter_means(t, [&](uint64_t x) { return k.per_ray(x); })},
      {"per_hit", counter_means(k.hit_totals, [&](uint64_t x) { return k.per_hit(x); })},
      {"totals",
       {{"steps", t.steps}, {"box_node_steps", t.box_node_steps}, {"primitive_node_steps", t.primitive_node_steps},
        {"box_tests", t.box_tests}, {"triangle_tests", t.triangle_tests}, {"obb_steps", t.obb_steps},
        {"stack_pushes", t.stack_pushes}, {"stack_pops", t.stack_pops}, {"stack_overflows", t.stack_lost},
        {"walk_back_steps", t.walk_back_steps}, {"max_stack_depth", t.max_stack_depth},
        {"step_limit_hits", t.step_limit_hits}, {"faulted_rays", k.faulted_rays},
        {"any_hit_invocations", t.any_hit_invocations}, {"stoc_skipped_transparent", t.stoc_skipped_transparent},
        {"stoc_accepted_opaque", t.stoc_accepted_opaque}}},
      {"simd_efficiency", k.waves.simd_efficiency()},
      {"waves", {{"lanes", k.waves.lanes}, {"iterations", k.waves.iterations},
                 {"active_lane_steps", k.waves.active_lane_steps}, {"box_lane_steps", k.waves.box_lane_steps},
                 {"primitive_lane_steps", k.waves.primitive_lane_steps},
                 {"mixed_iterations", k.waves.mixed_iterations}}},
      {"oracle", {{"rays", k.agreement.rays()}, {"agreeing", k.agreement.agreeing()},
                  {"disagreeing", k.agreement.disagreeing()},
                  {"agreement_rate", agreement_rate(k.agreement)}, {"disagreements", causes},
                  {"worst_relative_t_error", k.agreement.worst_relative_t_error}}},
      {"wall_clock", {{"emulation_seconds", k.emulation_seconds}, {"rays_per_second", k.rays_per_second()}}},
  };
  if (two_level) {
    add_level_counters(j["per_ray"], t, [&](uint64_t x) { return k.per_ray(x); });
    add_level_counters(j["per_hit"], k.hit_totals, [&](uint64_t x) { return k.per_hit(x); });
    add_level_counters(j["totals"], t, [](uint64_t x) { return x; });
  }
  return j;
}

std::string machine_rows(const emu::MachineResult& m, const StatsReport& report) {
  std::string out = "  machine model (a simplified model of an RDNA compute unit; outputs are not hardware measurements)\n";
  for (const MachineFigure& f : machine_figures(m, *report.machine, MachineFigureSet::All))
    out += fmt::format("    {:<38}{}\n", f.label, f.value);
  return out;
}

// A distribution's row: mean over all rays, mean over the rays that hit, median, p95, max.
std::string dist_row(const char* label, const Distribution& d, double hit_mean) {
  return fmt::format("  {:<26}{:>10.2f}{:>10.2f}{:>10.0f}{:>10.0f}{:>10.0f}\n", label, d.mean, hit_mean, d.median, d.p95,
                     d.max);
}

// A counter's row: mean over all rays and over the rays that hit, with `precision` decimals.
std::string mean_row(const char* label, const KindStats& k, uint64_t emu::RayCounters::*counter, int precision) {
  return fmt::format("  {:<26}{:>10.{}f}{:>10.{}f}", label, k.per_ray(k.totals.*counter), precision,
                     k.per_hit(k.hit_totals.*counter), precision);
}

}  // namespace

std::string stats_to_json(const StatsReport& report) {
  Json kinds = Json::array();
  for (const KindStats& k : report.kinds) {
    kinds.push_back(kind_json(k, report.two_level));
    if (!k.machine) continue;
    Json& model = kinds.back()["machine_model"] = Json::parse(emu::to_json(*k.machine, *report.machine));
    if (const std::string note = emu::hypothetical_note(*report.machine, report.target); !note.empty()) {
      model["hypothetical"] = note;
    }
  }
  const Json j{{"file", report.file},
               {"target", report.target},
               {"image", {{"width", report.width}, {"height", report.height}}},
               {"camera", format_camera(report.camera)},
               {"stack_size", report.stack_size},
               {"short_stack", report.short_stack},
               {"threads", report.threads},
               {"any_hit_shader", report.any_hit_shader},
               {"stoc", report.stoc},
               {"two_level", report.two_level},
               {"ray_types", kinds}};
  return json_text(j, 2);
}

std::string stats_to_text(const StatsReport& report) {
  std::string out = fmt::format("{} ({})\n  camera {}  image {}x{}  {}  threads {}\n", report.file, report.target,
                                format_camera(report.camera), report.width, report.height, report.stack_text(),
                                report.threads);
  if (report.machine) {
    out += fmt::format("  machine model preset: {}\n", report.machine->name);
    if (const std::string note = emu::hypothetical_note(*report.machine, report.target); !note.empty()) {
      out += "  " + note + "\n";
    }
  }
  if (report.any_hit_shader) {
    out += fmt::format("  any-hit shader: the blob's alpha test, STOC {}\n", report.stoc ? "on" : "off");
  }
  for (const KindStats& k : report.kinds) {
    const emu::RayCounters& t = k.totals;
    out += fmt::format("\n{} rays: {} ({} hit{}; hit mean: the mean over those)\n", ray_kind_name(k.kind), k.rays,
                       k.hits, is_occlusion(k.kind) ? " = occluded" : "");
    out += fmt::format("  {:<26}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "per ray", "mean", "hit mean", "median", "p95", "max");
    out += dist_row("steps", k.steps, k.per_hit(k.hit_totals.steps));
    out += dist_row("box tests", k.box_tests, k.per_hit(k.hit_totals.box_tests));
    out += dist_row("triangle tests", k.triangle_tests, k.per_hit(k.hit_totals.triangle_tests));
    out += mean_row("box-node steps", k, &emu::RayCounters::box_node_steps, 2) + "\n";
    out += mean_row("primitive-node steps", k, &emu::RayCounters::primitive_node_steps, 2) + "\n";
    out += mean_row("steps on OBB nodes", k, &emu::RayCounters::obb_steps, 2) + "\n";
    out += mean_row("stack pushes", k, &emu::RayCounters::stack_pushes, 2) + "\n";
    out += mean_row("stack pops", k, &emu::RayCounters::stack_pops, 2) + "\n";
    out += mean_row("stack overflows", k, &emu::RayCounters::stack_lost, 4) +
           fmt::format("   (max stack depth {})\n", t.max_stack_depth);
    out += mean_row("walk-back steps", k, &emu::RayCounters::walk_back_steps, 4) + "\n";
    if (report.two_level) {
      for (const LevelCounter& c : kLevelCounters) out += mean_row(c.label, k, c.member, 2) + "\n";
    }
    if (report.any_hit_shader) {
      out += dist_row("any-hit invocations", k.any_hit_invocations, k.per_hit(k.hit_totals.any_hit_invocations));
      out += mean_row("STOC skipped transparent", k, &emu::RayCounters::stoc_skipped_transparent, 4) + "\n";
      out += mean_row("STOC accepted opaque", k, &emu::RayCounters::stoc_accepted_opaque, 4) + "\n";
    }
    out += fmt::format("  {:<26}{:>9.1f}%   ({} wave iterations)\n", "SIMD efficiency",
                       100.0 * k.waves.simd_efficiency(), k.waves.iterations);
    if (k.agreement.rays() > 0) {
      out += fmt::format("  {:<26}{:>10}   ({} of {} rays agree with Embree", "oracle agreement",
                         k.agreement.percent_text(), k.agreement.agreeing(), k.agreement.rays());
      if (k.agreement.disagreeing() > 0)
        out += fmt::format("; {} disagree: {}", k.agreement.disagreeing(), k.agreement.causes_text());
      out += ")\n";
    } else {
      out += fmt::format("  {:<26}{:>10}\n", "oracle agreement", "off");
    }
    if (t.step_limit_hits || k.faulted_rays) {
      out += fmt::format("  WARNING: {} rays hit the step limit, {} rays stopped on a malformed node",
                         t.step_limit_hits, k.faulted_rays);
      if (k.faulted_rays)
        out += fmt::format(" (the first: {}, node pointer {:#x})", emu::fault_name(k.first_fault), k.first_fault_node);
      out += "\n";
    }
    out += fmt::format("  {:<26}{:>10.3f} s   ({:.0f} rays/s, wall clock)\n", "emulation time", k.emulation_seconds,
                       k.rays_per_second());
    if (k.machine) out += machine_rows(*k.machine, report);
  }
  return out;
}

}  // namespace hwbvh::stats
