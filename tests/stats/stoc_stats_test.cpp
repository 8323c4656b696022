// `hwbvh stats --stoc on|off` on alpha-tested blobs: the report carries the any-hit counters, STOC on and off give
// the same hits and traversal counters with fewer any-hit invocations, and the oracle (Embree with the alpha test in
// its filter function) agrees.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixtures/paths.h"
#include "hwbvh/stats/stats_output.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

emu::LoadedBvh alpha_cards(blob::Target target) {
  pipeline::BuildBlobOptions options;
  options.target = target;
  return emu::load_bvh(pipeline::build_blob(load_obj(test::project_scene("alpha-cards.obj")), options).blob,
                       "alpha-cards.obj");
}

class StocStats : public testing::TestWithParam<blob::Target> {};

TEST_P(StocStats, OnAndOffGiveTheSameHitsAndStepsWithFewerAnyHitInvocations) {
  const emu::LoadedBvh bvh = alpha_cards(GetParam());
  auto options = test::small_stats_options();
  const StatsReport on = run_stats(bvh, options);
  options.trace.stoc = false;
  const StatsReport off = run_stats(bvh, options);
  EXPECT_TRUE(on.any_hit_shader);
  EXPECT_TRUE(on.stoc);
  EXPECT_FALSE(off.stoc);
  ASSERT_EQ(on.kinds.size(), off.kinds.size());
  for (std::size_t i = 0; i < on.kinds.size(); ++i) {
    const KindStats &a = on.kinds[i], &b = off.kinds[i];
    SCOPED_TRACE(ray_kind_name(a.kind));
    EXPECT_EQ(a.agreement.disagreeing(), 0u) << stats_to_text(on);
    EXPECT_EQ(b.agreement.disagreeing(), 0u) << stats_to_text(off);
    EXPECT_EQ(a.hits, b.hits);
    EXPECT_EQ(a.totals.steps, b.totals.steps);
    EXPECT_EQ(a.totals.triangle_tests, b.totals.triangle_tests);
    const emu::RayCounters &t = a.totals, &u = b.totals;
    EXPECT_GT(u.any_hit_invocations, 0u);
    EXPECT_EQ(u.stoc_skipped_transparent + u.stoc_accepted_opaque, 0u);
    EXPECT_EQ(t.any_hit_invocations + t.stoc_skipped_transparent + t.stoc_accepted_opaque, u.any_hit_invocations);
    if (GetParam() == blob::Target::Rtip20) {
      EXPECT_EQ(t.any_hit_invocations, u.any_hit_invocations);  // no STOC data on this target
    } else {
      EXPECT_LT(t.any_hit_invocations, u.any_hit_invocations);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, StocStats,
                         testing::Values(blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3),
                         [](const testing::TestParamInfo<blob::Target>& info) {
                           return std::string(blob::target_name(info.param));
                         });

TEST(StocStatsOutput, TextAndJsonShowTheAnyHitCounters) {
  const emu::LoadedBvh bvh = alpha_cards(blob::Target::Xe3);
  auto options = test::small_stats_options();
  options.kinds = {RayKind::Primary, RayKind::Shadow};
  options.oracle = false;
  const StatsReport report = run_stats(bvh, options);
  const std::string text = stats_to_text(report);
  EXPECT_NE(text.find("any-hit shader: the blob's alpha test, STOC on"), std::string::npos) << text;
  EXPECT_NE(text.find("any-hit invocations"), std::string::npos);
  EXPECT_NE(text.find("STOC skipped transparent"), std::string::npos);
  EXPECT_NE(text.find("STOC accepted opaque"), std::string::npos);
  const auto json = nlohmann::json::parse(stats_to_json(report));
  EXPECT_EQ(json["any_hit_shader"], true);
  EXPECT_EQ(json["stoc"], true);
  for (const auto& kind : json["ray_types"]) {
    EXPECT_GT(kind["totals"]["any_hit_invocations"].get<uint64_t>(), 0u);
    EXPECT_TRUE(kind["per_ray"].contains("stoc_skipped_transparent"));
    EXPECT_TRUE(kind["per_ray"].contains("stoc_accepted_opaque"));
    EXPECT_TRUE(kind["any_hit_invocations"].contains("mean"));
  }
}

TEST(StocStatsOutput, OpaqueScenesPrintNoAnyHitRows) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  auto options = test::small_stats_options();
  options.kinds = {RayKind::Primary};
  options.oracle = false;
  const StatsReport report = run_stats(bvh, options);
  EXPECT_FALSE(report.any_hit_shader);
  EXPECT_EQ(stats_to_text(report).find("any-hit"), std::string::npos);
}

}  // namespace
}  // namespace hwbvh::stats
