// hwbvh machine sensitivity's library side: exactly the preset's [assumption] and [UNCERTAIN] parameters are
// changed, each variant is the machine model run with that one value (rounded, flipped or refused as documented),
// the ranking follows the measured effects, the plot holds zero, and a run on hardware that does not read the
// blob's nodes is labelled hypothetical.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "fixtures/paths.h"
#include "hwbvh/core/error.h"
#include "hwbvh/stats/sensitivity.h"
#include "stats/html_escape.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

SensitivityOptions options(const std::string& preset) {
  SensitivityOptions o;
  o.preset = preset;
  o.stats = test::small_stats_options();
  o.stats.kinds = {RayKind::Primary};
  return o;
}

const SensitivityParameter& find(const SensitivityResult& r, const std::string& key) {
  const auto it = std::find_if(r.parameters.begin(), r.parameters.end(),
                               [&](const SensitivityParameter& p) { return p.key == key; });
  if (it == r.parameters.end()) throw std::runtime_error("no parameter " + key);
  return *it;
}

TEST(MachineSensitivity, EveryUnsourcedParameterIsChangedAloneAndRanked) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const SensitivityOptions o = options("rdna4");
  const SensitivityResult r = run_sensitivity(bvh, o);
  EXPECT_TRUE(r.hypothetical.empty()) << r.hypothetical;  // rdna4 reads rtip31 nodes

  // Exactly the tagged parameters, each once.
  std::vector<std::string> tagged;
  for (const emu::MachinePresetParameter& p : emu::machine_preset_parameters("rdna4")) {
    if (p.source.find("[assumption]") != std::string::npos || p.source.find("[UNCERTAIN]") != std::string::npos) {
      tagged.push_back(p.key);
    }
  }
  std::vector<std::string> keys;
  for (const SensitivityParameter& p : r.parameters) keys.push_back(p.key);
  std::sort(tagged.begin(), tagged.end());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, tagged);
  EXPECT_GT(keys.size(), 10u);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "compute_unit.simds"), 0);  // sourced: never changed

  // The base is the preset's own run; a variant is the model with that one value.
  const emu::MachineConfig config = emu::load_machine_preset("rdna4");
  const SweepPoint base = run_machine_point(bvh, o.stats, "rdna4", "", config);
  EXPECT_EQ(r.base.cycles, *base.cycles);
  const SensitivityParameter& l0_port = find(r, "memory.levels[L0].bytes_per_clock");
  ASSERT_EQ(l0_port.variants.size(), 2u);
  EXPECT_EQ(l0_port.variants[0].label, "x0.5");
  EXPECT_EQ(l0_port.variants[0].value, "64");
  EXPECT_EQ(l0_port.variants[1].value, "256");
  const SweepPoint narrow = run_machine_point(bvh, o.stats, "rdna4", "64",
                                              emu::load_machine_preset("rdna4", l0_port.key, "64"));
  ASSERT_TRUE(l0_port.variants[0].figures.has_value());
  EXPECT_EQ(l0_port.variants[0].figures->cycles, *narrow.cycles);
  EXPECT_DOUBLE_EQ(l0_port.variants[0].cycles_change,
                   static_cast<double>(*narrow.cycles) / static_cast<double>(*base.cycles) - 1.0);
  // The tests are the same rays' tests, so the rate moves as 1 / cycles.
  EXPECT_NEAR(l0_port.variants[0].box_rate_change, 1.0 / (1.0 + l0_port.variants[0].cycles_change) - 1.0, 1e-12);

  // Whole numbers round; a value that rounds back to the preset's is not run.
  const SensitivityParameter& transform = find(r, "ray_accelerator.instance_transform_clocks");  // 1
  EXPECT_EQ(transform.variants[0].value, "1");
  EXPECT_EQ(transform.variants[0].note, "rounds to the preset's value");
  EXPECT_FALSE(transform.variants[0].figures.has_value());
  EXPECT_EQ(transform.variants[1].value, "2");
  // A value the preset refuses is not run: the MALL's latency halved is below the L2's.
  const SensitivityVariant& mall = find(r, "memory.levels[MALL].hit_latency").variants[0];
  EXPECT_EQ(mall.value, "188");
  EXPECT_NE(mall.note.find("must be in"), std::string::npos) << mall.note;
  EXPECT_FALSE(mall.figures.has_value());

  // Ranked by the largest change in cycles; rate ranks are a permutation.
  std::vector<std::size_t> rate_ranks;
  for (std::size_t i = 0; i < r.parameters.size(); ++i) {
    rate_ranks.push_back(r.parameters[i].rate_rank);
    if (i > 0) {
      EXPECT_GE(r.parameters[i - 1].cycles_effect, r.parameters[i].cycles_effect) << r.parameters[i].key;
    }
    double largest = 0.0;
    for (const SensitivityVariant& v : r.parameters[i].variants) {
      if (v.figures) largest = std::max(largest, std::abs(v.cycles_change));
    }
    EXPECT_EQ(r.parameters[i].cycles_effect, largest) << r.parameters[i].key;
  }
  std::sort(rate_ranks.begin(), rate_ranks.end());
  for (std::size_t i = 0; i < rate_ranks.size(); ++i) EXPECT_EQ(rate_ranks[i], i + 1);
  EXPECT_GT(r.parameters.front().cycles_effect, 0.0);

  // The same at another thread count, byte for byte.
  SensitivityOptions one_thread = o;
  one_thread.stats.threads = 1;
  EXPECT_EQ(sensitivity_to_json(run_sensitivity(bvh, one_thread)), sensitivity_to_json(r));
}

TEST(MachineSensitivity, BooleansFlipAndOtherHardwareIsHypothetical) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const SensitivityResult r = run_sensitivity(bvh, options("rdna3"));
  const SensitivityParameter& order = find(r, "memory.scalar_returns_in_order");  // [UNCERTAIN] true
  ASSERT_EQ(order.variants.size(), 1u);
  EXPECT_EQ(order.variants[0].label, "other value");
  EXPECT_EQ(order.variants[0].value, "false");
  EXPECT_EQ(r.hypothetical, emu::hypothetical_note(emu::load_machine_preset("rdna3"), "rtip31"));
  EXPECT_NE(r.hypothetical.find("hypothetical: rdna3"), std::string::npos) << r.hypothetical;
  EXPECT_NE(r.hypothetical.find("reads rtip20 nodes, not this blob's rtip31"), std::string::npos) << r.hypothetical;
  EXPECT_NE(sensitivity_to_text(r).find(r.hypothetical), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(sensitivity_to_json(r))["hypothetical"], r.hypothetical);
  EXPECT_NE(sensitivity_to_svg(r).find(">" + escape(r.hypothetical) + "</text>"), std::string::npos);
}

TEST(MachineSensitivity, TheTornadoHoldsZeroAndDrawsWhatTheTableSays) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const SensitivityResult r = run_sensitivity(bvh, options("rdna4"));
  const std::string svg = sensitivity_to_svg(r, 5);
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(svg.find(">+0%</text>"), std::string::npos);  // the preset itself, on the axis
  EXPECT_NE(svg.find("0 = the preset"), std::string::npos);
  const SensitivityParameter& top = r.parameters.front();
  for (const SensitivityVariant& v : top.variants) {
    if (!v.figures) continue;
    EXPECT_NE(svg.find("<title>" + top.key + " = " + v.value + " (" + v.label + "): " +
                       std::to_string(v.figures->cycles) + " cycles"),
              std::string::npos)
        << top.key;
  }
  std::size_t rows = 0;
  for (std::size_t at = svg.find("text-anchor=\"end\""); at != std::string::npos;
       at = svg.find("text-anchor=\"end\"", at + 1)) {
    ++rows;
  }
  const auto moved = std::count_if(r.parameters.begin(), r.parameters.end(),
                                   [](const SensitivityParameter& p) { return p.cycles_effect > 0.0; });
  EXPECT_EQ(rows, std::min<std::size_t>(5, static_cast<std::size_t>(moved)));
  const std::string text = sensitivity_to_text(r);
  EXPECT_NE(text.find("   1 "), std::string::npos);
  EXPECT_NE(text.find(top.key), std::string::npos);
}

TEST(MachineSensitivity, BadFactorsAndPresetsAreRefusedBeforeTheWork) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  SensitivityOptions o = options("rdna4");
  o.factor_low = 1.5;
  EXPECT_THROW((void)run_sensitivity(bvh, o), Error);
  o = options("no-such-preset");
  EXPECT_THROW((void)run_sensitivity(bvh, o), Error);
}

}  // namespace
}  // namespace hwbvh::stats
