// Progress of the machine model (core/progress.h through emu::run_machine_model, run_stats, the sweep and the
// sensitivity study): a run counts the waves it completes, from 0 up to the waves dealt to the simulated CUs, with
// reports in between, and its result is the same with and without a listener.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures/paths.h"
#include "fixtures/progress_log.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/stats/machine_sweep.h"
#include "hwbvh/stats/sensitivity.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

using test::ProgressLog;

// A 128 x 96 frame of primary and shadow rays (384 waves of each), without the oracle.
StatsOptions frame_options() {
  StatsOptions o = test::small_stats_options();
  o.kinds = {RayKind::Primary, RayKind::Shadow};
  o.width = 128;
  o.height = 96;
  o.oracle = false;
  return o;
}

// rdna4 with every CU but one left out: the one CU runs all 384 waves of a ray type.
emu::MachineConfig one_cu_gpu() {
  emu::MachineConfig c = emu::load_machine_preset("rdna4");
  c.gpu.shader_engines = c.gpu.shader_arrays_per_engine = c.gpu.cus_per_shader_array = c.gpu.simulated_shader_arrays = 1;
  c.validate();
  return c;
}

TEST(MachineProgress, ARunCountsItsWavesUpToTheSimulatedOnesAndChangesNothing) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  const emu::MachineConfig sampled = emu::load_machine_preset("rdna4");
  ASSERT_LT(sampled.gpu.simulated_cus(), sampled.gpu.compute_units());  // a sample of the GPU's CUs
  for (const emu::MachineConfig& config : {sampled, one_cu_gpu()}) {
    SCOPED_TRACE(config.gpu.simulated_cus());
    StatsOptions o = frame_options();
    o.machine = config;
    ProgressLog log;
    const StatsReport heard = run_stats(bvh, o, nullptr, log.callback());
    const StatsReport unheard = run_stats(bvh, o);
    ASSERT_EQ(heard.kinds.size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) {
      const std::string phase = std::string(ray_kind_name(o.kinds[k])) + ": machine model";
      log.expect_counted(phase);
      const emu::MachineResult& model = *heard.kinds[k].machine;
      ASSERT_EQ(model.status, emu::MachineStatus::Completed) << model.message;
      EXPECT_EQ(log.reports.at(phase).back().second, model.waves);
      EXPECT_GT(log.reports.at(phase).size(), 3u);  // counted while the model runs, not only at its ends
      EXPECT_EQ(emu::to_json(model, config), emu::to_json(*unheard.kinds[k].machine, config));
    }
    if (config.gpu.simulated_cus() == 1) {
      EXPECT_EQ(heard.kinds[0].machine->waves, 384u);
    }
  }
}

TEST(MachineProgress, SweepPointsAndSensitivityRunsReportTheirModelRunsByNumber) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  SweepOptions sweep;
  sweep.presets = {"rdna4"};
  sweep.parameter = "memory.levels[L0].bytes";
  sweep.values = {"2048", "65536"};
  sweep.stats = frame_options();
  sweep.stats.kinds = {RayKind::Primary};
  ProgressLog log;
  (void)run_machine_sweep(bvh, sweep, log.callback());
  EXPECT_THAT(log.phases, ::testing::ElementsAre("point 1 of 2: tracing primary", "point 1 of 2: primary: machine model",
                                                 "point 2 of 2: tracing primary", "point 2 of 2: primary: machine model"));
  log.expect_counted("point 1 of 2: primary: machine model");
  log.expect_counted("point 2 of 2: primary: machine model");

  SensitivityOptions sensitivity;
  sensitivity.preset = "rdna4";
  sensitivity.stats = sweep.stats;
  sensitivity.stats.width = sensitivity.stats.height = 32;  // a run per variant: a small frame
  ProgressLog runs;
  const SensitivityResult r = run_sensitivity(bvh, sensitivity, runs.callback());
  std::size_t variants_run = 0;
  for (const SensitivityParameter& p : r.parameters)
    for (const SensitivityVariant& v : p.variants) variants_run += v.note.empty() ? 1 : 0;  // run unless it says why not
  const std::string last = "run " + std::to_string(variants_run + 1) + " of " + std::to_string(variants_run + 1) +
                           ": primary: machine model";
  EXPECT_EQ(runs.phases.front(), "run 1 of " + std::to_string(variants_run + 1) + ": tracing primary");
  EXPECT_EQ(runs.phases.back(), last);
  runs.expect_counted(last);
}

}  // namespace
}  // namespace hwbvh::stats
