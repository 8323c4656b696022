// `machine reproduce rt-throughput`'s sample (docs/machine-model.md, "Sampling"): the tiles the preset's simulated
// CUs run stand for the whole frame.
#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/paths.h"
#include "hwbvh/scene/scene.h"
#include "hwbvh/stats/rt_throughput.h"

namespace hwbvh::stats {
namespace {

// The Cornell box at 640 x 480: 80 tiles a row, a multiple of rdna2's 80 CUs, so that dispatch slot s runs the
// tiles of one column of the frame in every row. rdna2's sample, one shader array (10 CUs: slots 0, 8, .., 72), runs
// every eighth column, spread over the frame, and so does rdna4's (7 CUs: slots 0, 8, .., 48 of 56, which divides
// into 8); were they slots 0..7 they would run only its left 64 pixels (the left wall: 47.19 G box tests a second
// against the whole GPU's 128.86 G on rdna2, and no triangle test at all). Every GPU's sampled rates stay within 5 %
// of its whole GPU's (every CU simulated, every tile traced; +1.9 % and +1.9 % on rdna4, +3.1 % and +2.9 % on rdna2):
// the sampled arrays see the L1 traffic they see on the whole GPU, and what remains is the sampled columns against
// the frame's average and the lines the other arrays would bring into the L2.
TEST(RtThroughput, SampledTilesSpreadOverTheFrameAndGiveTheWholeGpusRates) {
  const AnyScene scene = load_obj(test::project_scene("cornell-box.obj"));
  RtThroughputOptions options;
  options.width = 640;
  options.height = 480;
  const RtThroughputReport sampled = reproduce_rt_throughput(scene, "cornell-box.obj", options);
  options.every_cu = true;
  const RtThroughputReport full = reproduce_rt_throughput(scene, "cornell-box.obj", options);
  ASSERT_EQ(sampled.records.size(), full.records.size());
  for (size_t i = 0; i < full.records.size(); ++i) {
    const emu::GpuFigures& s = sampled.records[i].machine.gpu;
    const emu::GpuFigures& f = full.records[i].machine.gpu;
    SCOPED_TRACE(f.name);
    EXPECT_EQ(s.simulated_shader_arrays, 1u);
    ASSERT_LT(s.simulated_cus, f.simulated_cus);
    EXPECT_EQ(f.simulated_cus, f.compute_units);
    EXPECT_NEAR(s.box_tests_per_second / f.box_tests_per_second, 1.0, 0.05);
    EXPECT_NEAR(s.triangle_tests_per_second / f.triangle_tests_per_second, 1.0, 0.05);
  }
}

}  // namespace
}  // namespace hwbvh::stats
