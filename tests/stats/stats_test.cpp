// Traversal statistics end to end: the emulator agrees with Embree on every scene, counters are deterministic
// at any thread count, small stacks overflow and walk back without changing hits, OBBs do not change hits.
#include <variant>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/paths.h"
#include "hwbvh/stats/stats_output.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

constexpr double kRequiredAgreement = 0.9999;

void expect_agreement(const StatsReport& report) {
  for (const KindStats& k : report.kinds) {
    SCOPED_TRACE(ray_kind_name(k.kind));
    ASSERT_GT(k.rays, 0u);
    EXPECT_EQ(k.agreement.rays(), k.rays);
    EXPECT_GE(static_cast<double>(k.agreement.agreeing()) / static_cast<double>(k.rays), kRequiredAgreement)
        << stats_to_text(report);
    EXPECT_EQ(k.faulted_rays, 0u);
    EXPECT_EQ(k.totals.step_limit_hits, 0u);
  }
}

class ProjectScenes : public testing::TestWithParam<const char*> {};

TEST_P(ProjectScenes, AgreesWithEmbreeForEveryRayType) {
  const auto bvh = test::load_scene_bvh(test::project_scene(GetParam()));
  expect_agreement(run_stats(bvh, test::small_stats_options()));
}

TEST_P(ProjectScenes, CountersIdenticalAtOneAndTwoThreads) {
  const auto bvh = test::load_scene_bvh(test::project_scene(GetParam()));
  auto options = test::small_stats_options();
  options.oracle = false;
  options.threads = 1;
  const StatsReport a = run_stats(bvh, options);
  options.threads = 2;
  const StatsReport b = run_stats(bvh, options);
  ASSERT_EQ(a.kinds.size(), b.kinds.size());
  for (std::size_t i = 0; i < a.kinds.size(); ++i) {
    EXPECT_EQ(a.kinds[i].totals, b.kinds[i].totals);
    EXPECT_EQ(a.kinds[i].waves, b.kinds[i].waves);
    EXPECT_EQ(a.kinds[i].steps, b.kinds[i].steps);
  }
}

TEST_P(ProjectScenes, StackOfEightFindsTheSameHitsAsSixteen) {
  const auto bvh = test::load_scene_bvh(test::project_scene(GetParam()));
  auto options = test::small_stats_options();
  options.oracle = false;
  options.keep_results = true;
  const StatsReport sixteen = run_stats(bvh, options);
  options.trace.stack.size = 8;
  const StatsReport eight = run_stats(bvh, options);
  for (std::size_t i = 0; i < sixteen.kinds.size(); ++i) {
    const auto& a = sixteen.kinds[i].results;
    const auto& b = eight.kinds[i].results;
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t r = 0; r < a.size(); ++r) {
      ASSERT_EQ(a[r].hit, b[r].hit) << ray_kind_name(sixteen.kinds[i].kind) << " ray " << r;
      if (a[r].hit && !is_occlusion(sixteen.kinds[i].kind)) {
        ASSERT_EQ(a[r].t, b[r].t) << ray_kind_name(sixteen.kinds[i].kind) << " ray " << r;
      }
    }
  }
}

TEST_P(ProjectScenes, ObbOnAndOffGiveIdenticalHits) {
  const auto with = test::load_scene_bvh(test::project_scene(GetParam()), true);
  const auto without = test::load_scene_bvh(test::project_scene(GetParam()), false);
  auto options = test::small_stats_options();
  options.oracle = false;
  options.keep_results = true;
  const StatsReport a = run_stats(with, options);
  const StatsReport b = run_stats(without, options);
  for (std::size_t i = 0; i < a.kinds.size(); ++i) {
    ASSERT_EQ(a.kinds[i].results.size(), b.kinds[i].results.size());
    for (std::size_t r = 0; r < a.kinds[i].results.size(); ++r) {
      const auto& x = a.kinds[i].results[r];
      const auto& y = b.kinds[i].results[r];
      ASSERT_EQ(x.hit, y.hit) << ray_kind_name(a.kinds[i].kind) << " ray " << r;
      if (x.hit && !is_occlusion(a.kinds[i].kind)) {
        EXPECT_EQ(x.t, y.t);
        EXPECT_EQ(x.primitive_id, y.primitive_id);
        EXPECT_EQ(x.geometry_id, y.geometry_id);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stats, ProjectScenes,
                         testing::Values("cornell-box.obj", "rotated-objects.obj", "alpha-cards.obj", "overflow-fan.obj"));

TEST(Stats, OverflowFanOverflowsAnEightEntryRingAndWalksBack) {
  const auto bvh = test::load_scene_bvh(test::project_scene("overflow-fan.obj"));
  auto options = test::small_stats_options();
  options.kinds = {RayKind::Primary, RayKind::Random};
  options.trace.stack.size = 8;
  const StatsReport report = run_stats(bvh, options);
  uint64_t lost = 0, walk_back = 0;
  for (const KindStats& k : report.kinds) {
    lost += k.totals.stack_lost;
    walk_back += k.totals.walk_back_steps;
  }
  EXPECT_GT(lost, 0u);
  EXPECT_GT(walk_back, 0u);
  expect_agreement(report);
}

// The "hit mean" figures are sums over exactly the rays that hit, divided by their number, in every output.
TEST(Stats, HitMeansAreOverTheRaysThatHit) {
  const auto bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  auto options = test::small_stats_options();
  options.kinds = {RayKind::Primary, RayKind::Shadow};
  options.keep_results = true;
  options.oracle = false;
  const StatsReport report = run_stats(bvh, options);
  const std::string text = stats_to_text(report);
  const auto json = nlohmann::json::parse(stats_to_json(report));
  for (std::size_t i = 0; i < report.kinds.size(); ++i) {
    const KindStats& k = report.kinds[i];
    uint64_t hits = 0, steps = 0, pushes = 0;
    for (const emu::RayResult& r : k.results) {
      if (!r.hit) continue;
      ++hits;
      steps += r.counters.steps;
      pushes += r.counters.stack_pushes;
    }
    ASSERT_GT(hits, 0u);
    ASSERT_LT(hits, k.rays);  // some rays miss, so the two means differ
    EXPECT_EQ(k.hits, hits);
    EXPECT_EQ(k.hit_totals.steps, steps);
    const double steps_mean = static_cast<double>(steps) / static_cast<double>(hits);
    EXPECT_NE(steps_mean, k.steps.mean);
    EXPECT_DOUBLE_EQ(json["ray_types"][i]["steps"]["mean_over_hits"].get<double>(), steps_mean);
    EXPECT_DOUBLE_EQ(json["ray_types"][i]["per_hit"]["stack_pushes"].get<double>(),
                     static_cast<double>(pushes) / static_cast<double>(hits));
    EXPECT_NE(text.find(fmt::format("{:>10.2f}{:>10.2f}", k.steps.mean, steps_mean)), std::string::npos) << text;
  }
}

TEST(Stats, SummarizeUsesNearestRank) {
  const Distribution d = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 100});
  EXPECT_DOUBLE_EQ(d.mean, 14.5);
  EXPECT_DOUBLE_EQ(d.median, 5);
  EXPECT_DOUBLE_EQ(d.p95, 100);
  EXPECT_DOUBLE_EQ(d.max, 100);
  uint64_t total = 0;
  for (uint64_t c : d.histogram) total += c;
  EXPECT_EQ(total, 10u);
}

class SharedScenes : public testing::TestWithParam<const char*> {};

TEST_P(SharedScenes, AgreesWithEmbree) {
  const auto path = test::shared_scene(GetParam());
  if (path.empty()) GTEST_SKIP() << "../shared/scenes not present";
  auto options = test::small_stats_options();
  options.random_rays = 4096;
  expect_agreement(run_stats(test::load_scene_bvh(path), options));
}

INSTANTIATE_TEST_SUITE_P(Stats, SharedScenes,
                         testing::Values("stanford-bunny.obj", "ogre.obj", "nefertiti.obj", "teapot.obj", "spot.obj",
                                         "fandisk.obj", "rocker-arm.obj", "beast.obj", "smallpine/smallpine.obj"));

}  // namespace
}  // namespace hwbvh::stats

namespace hwbvh::stats {
namespace {

// Two-level blobs show the per-level counters (text and JSON), summed from the rays; one-level blobs do not.
TEST(Stats, TwoLevelBlobsShowThePerLevelCounters) {
  const InstancedScene scene =
      std::get<InstancedScene>(load_any_scene(test::project_scene("instanced-garden.gltf"), {}));
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_instanced_blob(scene, {}).blob, "garden");
  StatsOptions o = test::small_stats_options();
  o.keep_results = true;
  const StatsReport report = run_stats(bvh, o);
  ASSERT_TRUE(report.two_level);
  expect_agreement(report);
  const auto json = nlohmann::json::parse(stats_to_json(report));
  EXPECT_EQ(json["two_level"], true);
  for (std::size_t k = 0; k < report.kinds.size(); ++k) {
    const KindStats& ks = report.kinds[k];
    SCOPED_TRACE(ray_kind_name(ks.kind));
    emu::RayCounters sum;
    for (const emu::RayResult& r : ks.results) sum += r.counters;
    EXPECT_GT(sum.tlas_steps, 0u);
    EXPECT_GT(sum.instance_transitions, 0u);
    EXPECT_EQ(sum.tlas_steps + sum.blas_steps, sum.steps);  // every step is in one level
    EXPECT_EQ(sum.box_node_steps + sum.primitive_node_steps + sum.instance_node_steps, sum.steps);
    EXPECT_EQ(8 * sum.box_node_steps + 4 * sum.instance_node_steps, sum.box_tests);
    EXPECT_LE(sum.instance_transitions, sum.instance_node_steps);
    const auto& totals = json["ray_types"][k]["totals"];
    EXPECT_EQ(totals["tlas_steps"], sum.tlas_steps);
    EXPECT_EQ(totals["blas_steps"], sum.blas_steps);
    EXPECT_EQ(totals["instance_node_steps"], sum.instance_node_steps);
    EXPECT_EQ(totals["instance_transitions"], sum.instance_transitions);
    EXPECT_DOUBLE_EQ(json["ray_types"][k]["per_ray"]["instance_transitions"].get<double>(),
                     static_cast<double>(sum.instance_transitions) / static_cast<double>(ks.rays));
  }
  const std::string text = stats_to_text(report);
  for (const char* row : {"TLAS steps", "BLAS steps", "instance-node steps", "instance transitions"}) {
    EXPECT_NE(text.find(row), std::string::npos) << row;
  }

  const StatsReport one_level = run_stats(test::load_scene_bvh(test::project_scene("cornell-box.obj")), o);
  EXPECT_FALSE(one_level.two_level);
  EXPECT_EQ(stats_to_text(one_level).find("TLAS steps"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(stats_to_json(one_level))["ray_types"][0]["totals"].contains("tlas_steps"));
}

}  // namespace
}  // namespace hwbvh::stats
