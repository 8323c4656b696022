// hwbvh compare and every target through hwbvh stats: all variants find the same hits as Embree, with the alpha
// test on alpha-tested scenes and in two levels on instanced ones.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/paths.h"
#include "hwbvh/stats/compare.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

// Every row traced rays and agrees with Embree on at least 99.99% of them.
void expect_every_row_agrees(const CompareReport& report) {
  for (const VariantRow& row : report.rows) {
    SCOPED_TRACE(row.name);
    ASSERT_GT(row.rays, 0u);
    ASSERT_GT(row.agreement.rays(), 0u);
    EXPECT_GE(static_cast<double>(row.agreement.agreeing()) / static_cast<double>(row.agreement.rays()), 0.9999)
        << compare_to_text(report);
  }
}

CompareOptions options(uint32_t width, uint32_t height, uint32_t random_rays, std::vector<RayKind> kinds) {
  CompareOptions o;
  o.width = width;
  o.height = height;
  o.random_rays = random_rays;
  o.kinds = std::move(kinds);
  return o;
}

TEST(Compare, EveryVariantAgreesWithEmbreeAndBvh8NeedsFewerSteps) {
  const Scene scene = load_obj(test::project_scene("rotated-objects.obj"));
  CompareOptions o = options(64, 48, 2048, {RayKind::Primary, RayKind::Shadow, RayKind::Random});
  o.machine = emu::load_machine_preset("rdna4");
  const CompareReport report = compare_targets(scene, o);
  ASSERT_EQ(report.rows.size(), 5u);
  expect_every_row_agrees(report);
  for (const VariantRow& row : report.rows) EXPECT_GT(row.machine_cycles().value_or(0), 0u) << row.name;
  const VariantRow& bvh4 = report.rows[0];
  const VariantRow& bvh8 = report.rows[2];
  const VariantRow& bvh8_obb = report.rows[3];
  EXPECT_LT(bvh8.steps, bvh4.steps);              // 8-wide nodes: fewer steps
  EXPECT_GT(bvh8.box_tests / bvh8.steps, bvh4.box_tests / bvh4.steps);  // more box tests per step
  EXPECT_LT(bvh8_obb.steps, bvh8.steps);          // this scene rewards OBBs
  EXPECT_LT(bvh8.bytes, bvh4.bytes);              // compressed primitive nodes
  EXPECT_EQ(report.rows[4].name, "xe3 QBVH6");
}

// Every ray type's machine run is kept; a run that stopped at the cycle limit is shown with its status and never
// summed into the cycles as if it were a cost.
TEST(Compare, MachineRunsAreKeptPerRayTypeAndUnfinishedRunsAreNotSummed) {
  const Scene scene = load_obj(test::project_scene("cornell-box.obj"));
  CompareOptions o = options(32, 16, 256, {RayKind::Primary, RayKind::Random});
  o.machine = emu::load_machine_preset("rdna4");
  const CompareReport finished = compare_targets(scene, o);
  for (const VariantRow& row : finished.rows) {
    SCOPED_TRACE(row.name);
    ASSERT_EQ(row.machine.size(), 2u);
    EXPECT_EQ(row.machine[0].first, RayKind::Primary);
    EXPECT_EQ(row.machine[1].first, RayKind::Random);
    EXPECT_EQ(row.machine_cycles(), row.machine[0].second.cycles + row.machine[1].second.cycles);
    // rdna4 runs every variant but xe3's, whose cell says it is hypothetical.
    EXPECT_EQ(row.hypothetical.empty(), row.name != "xe3 QBVH6");
    EXPECT_EQ(row.machine_cell(), std::to_string(*row.machine_cycles()) + (row.hypothetical.empty() ? "" : " (hypothetical)"));
  }
  o.machine->max_cycles = 200;  // far too few for 512 rays
  const CompareReport stopped = compare_targets(scene, o);
  for (const VariantRow& row : stopped.rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.machine[0].second.status, emu::MachineStatus::CycleLimit);
    EXPECT_FALSE(row.machine_cycles().has_value());
    EXPECT_EQ(row.machine_cell(), "cycle_limit (primary)" + std::string(row.hypothetical.empty() ? "" : " (hypothetical)"));
  }
  EXPECT_THAT(compare_to_text(stopped), testing::HasSubstr("cycle_limit (primary)"));
  const auto json = nlohmann::json::parse(compare_to_json(stopped));
  EXPECT_TRUE(json["variants"][0]["machine_model_cycles"].is_null());
  EXPECT_EQ(json["variants"][0]["machine_model_runs"][1]["ray_type"], "random");
  EXPECT_EQ(json["variants"][0]["machine_model_runs"][0]["status"], "cycle_limit");
}

// On alpha-tested cards every row runs the scene's alpha test as its any-hit shader and agrees with Embree running
// the same test in its filter; the BVH8 + OBB row counts exactly what `hwbvh stats` counts on an rtip31 blob of
// the scene without a STOC sideband (the compare build has no opacity bake).
TEST(Compare, AlphaTestedSceneRunsTheAnyHitShaderOnEveryVariant) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  CompareOptions o = options(48, 32, 1024, {RayKind::Primary, RayKind::Shadow, RayKind::Random});
  const CompareReport report = compare_targets(scene, o);
  EXPECT_TRUE(report.any_hit_shader);
  ASSERT_EQ(report.rows.size(), 5u);
  expect_every_row_agrees(report);
  for (const VariantRow& row : report.rows) EXPECT_GT(row.any_hit_invocations, 0.0) << row.name;
  EXPECT_THAT(compare_to_text(report), testing::HasSubstr("any-hit"));
  EXPECT_THAT(compare_to_text(report), testing::HasSubstr("No opacity bake"));

  o.kinds = {RayKind::Primary};
  const VariantRow bvh8_obb = compare_targets(scene, o).rows[3];
  pipeline::BuildBlobOptions build;
  build.rtip31_stoc_level = 0;
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_blob(scene, build).blob, "alpha-cards.obj");
  StatsOptions so;
  so.kinds = {RayKind::Primary};
  so.width = o.width;
  so.height = o.height;
  const KindStats primary = run_stats(bvh, so).kinds[0];
  EXPECT_EQ(bvh8_obb.rays, primary.rays);
  EXPECT_DOUBLE_EQ(bvh8_obb.steps, primary.steps.mean);
  EXPECT_DOUBLE_EQ(bvh8_obb.any_hit_invocations, primary.any_hit_invocations.mean);
  EXPECT_EQ(bvh8_obb.agreement.agreeing(), primary.agreement.agreeing());
}

// A glTF scene compares in two levels: every row is its target's TLAS over BLASes, agrees with Embree tracing the same
// instances (instance ids counted) on every ray type, runs the machine model and shows the per-level counters; its
// BVH8 + OBB row counts what `hwbvh stats` counts on the two-level rtip31 blob. The flattened scene (--flatten) gives
// the one-level table, without them.
TEST(Compare, InstancedSceneComparesEveryTargetInTwoLevels) {
  const InstancedScene scene = load_gltf_instanced(test::project_scene("instanced-garden.gltf"));
  CompareOptions o =
      options(32, 32, 1024, {RayKind::Primary, RayKind::AmbientOcclusion, RayKind::Shadow, RayKind::Random});
  o.ao_samples = 1;
  o.machine = emu::load_machine_preset("rdna4");
  const CompareReport report = compare_targets(scene, o);
  ASSERT_TRUE(report.levels.has_value());
  EXPECT_EQ(report.levels->instances, scene.instances.size());
  EXPECT_EQ(report.levels->blases, scene.meshes.size());
  ASSERT_EQ(report.rows.size(), 5u);
  expect_every_row_agrees(report);
  const nlohmann::json j = nlohmann::json::parse(compare_to_json(report));
  EXPECT_EQ(j["two_level"], true);
  EXPECT_EQ(j["instances"], scene.instances.size());
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const VariantRow& row = report.rows[i];
    SCOPED_TRACE(row.name);
    const emu::RayCounters& t = row.totals;
    EXPECT_EQ(t.tlas_steps + t.blas_steps, t.steps);  // docs/counters.md
    EXPECT_GT(t.tlas_steps, 0u);
    EXPECT_GT(t.blas_steps, 0u);
    EXPECT_GT(t.instance_transitions, 0u);
    EXPECT_LE(t.instance_transitions, t.instance_node_steps);
    EXPECT_GT(row.any_hit_invocations, 0.0);  // the plant's alpha-tested cards
    EXPECT_GT(row.machine_cycles().value_or(0), 0u);
    for (const LevelCounter& c : kLevelCounters) {
      EXPECT_DOUBLE_EQ(j["variants"][i][std::string(c.key) + "_per_ray"].get<double>(), row.per_ray(t.*c.member));
    }
  }
  const std::string text = compare_to_text(report);
  EXPECT_THAT(text, testing::HasSubstr(fmt::format("in {} BLASes, {} instances", scene.meshes.size(),
                                                   scene.instances.size())));
  EXPECT_THAT(text, testing::HasSubstr("per level, per ray:"));
  EXPECT_THAT(text, testing::HasSubstr("instance transitions"));

  o.kinds = {RayKind::Primary};
  o.machine.reset();
  const VariantRow bvh8_obb = compare_targets(scene, o).rows[3];
  pipeline::BuildBlobOptions build;
  build.rtip31_stoc_level = 0;
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_instanced_blob(scene, build).blob, scene.source);
  StatsOptions so;
  so.kinds = {RayKind::Primary};
  so.width = o.width;
  so.height = o.height;
  const KindStats primary = run_stats(bvh, so).kinds[0];
  EXPECT_EQ(bvh8_obb.totals.steps, primary.totals.steps);
  EXPECT_EQ(bvh8_obb.totals.instance_transitions, primary.totals.instance_transitions);
  EXPECT_EQ(bvh8_obb.agreement.agreeing(), primary.agreement.agreeing());

  const CompareReport flat = compare_targets(flatten(scene), o);
  EXPECT_FALSE(flat.levels.has_value());
  ASSERT_EQ(flat.rows.size(), 5u);
  expect_every_row_agrees(flat);
  for (const VariantRow& row : flat.rows) EXPECT_EQ(row.totals.tlas_steps, 0u) << row.name;
  EXPECT_THAT(compare_to_text(flat), testing::Not(testing::HasSubstr("per level")));
  const nlohmann::json flat_json = nlohmann::json::parse(compare_to_json(flat));
  EXPECT_EQ(flat_json["two_level"], false);
  EXPECT_FALSE(flat_json["variants"][0].contains("tlas_steps_per_ray"));
}

TEST(Compare, SceneWithoutAlphaHasNoAnyHitColumn) {
  const Scene scene = load_obj(test::project_scene("cornell-box.obj"));
  CompareOptions o;
  o.width = 16;
  o.height = 16;
  o.random_rays = 256;
  const CompareReport report = compare_targets(scene, o);
  EXPECT_FALSE(report.any_hit_shader);
  for (const VariantRow& row : report.rows) EXPECT_EQ(row.any_hit_invocations, 0.0) << row.name;
  EXPECT_THAT(compare_to_text(report), testing::Not(testing::HasSubstr("any-hit")));
}

class Targets : public testing::TestWithParam<blob::Target> {};

TEST_P(Targets, StatsAgreeWithEmbreeOnProjectScenes) {
  for (const char* name : {"cornell-box.obj", "alpha-cards.obj", "overflow-fan.obj"}) {
    SCOPED_TRACE(name);
    pipeline::BuildBlobOptions options;
    options.target = GetParam();
    const Scene scene = load_obj(test::project_scene(name));
    const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_blob(scene, options).blob, name);
    const StatsReport report = run_stats(bvh, test::small_stats_options());
    EXPECT_EQ(report.target, blob::target_name(GetParam()));
    for (const KindStats& k : report.kinds) {
      SCOPED_TRACE(ray_kind_name(k.kind));
      EXPECT_GE(static_cast<double>(k.agreement.agreeing()) / static_cast<double>(k.rays), 0.9999);
      EXPECT_EQ(k.faulted_rays, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stats, Targets, testing::Values(blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3),
                         [](const testing::TestParamInfo<blob::Target>& info) {
                           return std::string(blob::target_name(info.param));
                         });

// Per variant and ray type, compare shows the run's throughput figures (machine_output.h), and its JSON the whole run.
TEST(Compare, MachineFiguresOfEveryRun) {
  const Scene scene = load_obj(test::project_scene("cornell-box.obj"));
  CompareOptions o = options(32, 32, 256, {RayKind::Primary, RayKind::Random});
  o.machine = emu::load_machine_preset("rdna4");
  const CompareReport report = compare_targets(scene, o);
  const std::vector<MachineRun> runs = machine_runs(report);
  ASSERT_EQ(runs.size(), 2 * report.rows.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const emu::MachineResult& m = report.rows[i / 2].machine[i % 2].second;
    EXPECT_EQ(runs[i].variant, report.rows[i / 2].label());
    EXPECT_EQ(runs[i].figures[1].value, std::to_string(m.cycles));
    EXPECT_EQ(runs[i].figures.back().column, "GPU RA busy");
  }
  const std::string text = compare_to_text(report);
  EXPECT_NE(text.find("machine model per run (rdna4"), std::string::npos) << text;
  EXPECT_NE(text.find("DRAM B/clk"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(compare_to_json(report));
  const auto& run = j["variants"][4]["machine_model_runs"][1];
  EXPECT_EQ(run["ray_type"], "random");
  EXPECT_EQ(run["cycles"], report.rows[4].machine[1].second.cycles);
  EXPECT_EQ(run["memory_levels"][0]["requests"], report.rows[4].machine[1].second.memory_levels[0].requests);
  EXPECT_GT(run["gpu"]["box_tests_per_second"].get<double>(), 0.0);
}

}  // namespace
}  // namespace hwbvh::stats
