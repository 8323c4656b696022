// The machine model as a whole GPU (docs/machine-model.md, "A whole GPU"): CUs that share a level contend for its
// port, workgroups are dealt over the CUs, the warm-up fills the caches, and a sample of CUs with the shared levels
// scaled to it gives the full GPU's figures.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/formats/rdna4/encode.h"

namespace hwbvh::emu {
namespace {

using Sequences = std::vector<std::vector<NodeFetch>>;

NodeFetch box(uint32_t index) {
  std::vector<NodeFetch> recorded;
  RayTraversal::record_fetches(
      StepInfo{rdna4::make_node_pointer(uint64_t{index} * 128, rdna4::kTypeBox), rdna4::NodeKind::Box}, recorded, 0);
  return recorded.at(0);
}

// rdna4's CU and memory on a GPU of `engines` x `arrays` x `cus` CUs, `simulated` of them simulated.
MachineConfig gpu(uint32_t engines, uint32_t arrays, uint32_t cus, uint32_t simulated) {
  MachineConfig c = load_machine_preset("rdna4");
  c.gpu.shader_engines = engines;
  c.gpu.shader_arrays_per_engine = arrays;
  c.gpu.cus_per_shader_array = cus;
  c.gpu.simulated_cus = simulated;
  c.validate();
  return c;
}

// Two CUs, one wave each, one box node each, both held in the shared L2 after the warm-up (rdna4's L0 made a
// buffer without storage, so that the node comes from the L2), whose port moves 16 bytes a clock. Ray generation
// 0..40, the intersect issued 40..41; the two 64-byte L0 lines of a node are one 128-byte L1 line (the second merges
// with the first in the L1 buffer), an L2 hit: CU 0's line starts on the L2 port at 41 (busy for 128 / 16 = 8
// cycles) and is back at 41 + 250 = 291; CU 1's line waits for the port: 49 + 250 = 299. From its data a wave needs
// 263 cycles (tested 1, results 8, write-back 1, stack op issued 1, LDS 40, loop 12, shading 200): CU 0's ends at
// 554, CU 1's at 562. With an L2 per CU (no contention) both end at 554.
TEST(MachineGpu, TwoCusContendForTheL2Port) {
  MachineConfig c = gpu(1, 1, 2, 2);
  c.memory.levels[0].bytes = 0;  // L0: a merge buffer
  c.memory.levels[2].bytes_per_clock = 16;
  c.validate();
  const Sequences two{{box(1)}, {box(2)}};
  const std::vector<uint32_t> waves{0, 1};
  MachineResult r = run_machine_model(c, two, waves);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.cycles, 562u);
  EXPECT_EQ(r.memory_levels[2].hits, 2u);  // both from the warm L2
  EXPECT_EQ(r.memory_levels[2].misses, 0u);

  // One CU alone: 554.
  r = run_machine_model(c, Sequences{{box(1)}});
  EXPECT_EQ(r.cycles, 554u);
  // Each CU with its own L2 (and L1): no contention, 554.
  for (size_t k = 1; k < 3; ++k) c.memory.levels[k].shared_by = SharedBy::ComputeUnit;
  r = run_machine_model(c, two, waves);
  EXPECT_EQ(r.cycles, 554u);
}

// Workgroup i goes to dispatch slot i mod CUs (engines first, then arrays, then CUs): on 2 engines x 2 arrays x 2 CUs
// a simulated sample of 4 CUs runs slots 0, 2, 4 and 6 (spread over the 8), so workgroups 0, 2, 4, .. and no other.
TEST(MachineGpu, WorkgroupsAreDealtOverTheEnginesThenTheArrays) {
  const MachineConfig c = gpu(2, 2, 2, 4);
  const std::vector<bool> simulated = simulated_waves(c, 20);
  std::vector<bool> expected(20);
  for (size_t wave = 0; wave < 20; wave += 2) expected[wave] = true;
  EXPECT_EQ(simulated, expected);
  // Only the simulated CUs' rays run: the others' sequences may be empty.
  Sequences s(20 * 32);
  for (size_t wave = 0; wave < 20; ++wave) {
    if (!simulated[wave]) continue;
    for (size_t lane = 0; lane < 32; ++lane) s[wave * 32 + lane] = {box(static_cast<uint32_t>(wave))};
  }
  const MachineResult r = run_machine_model(c, s);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.rays, 10u * 32);
  EXPECT_EQ(r.rays_completed, 10u * 32);
  EXPECT_EQ(r.box_tests, 10u * 32 * 8);
}

// The dispatch slots a sample of k of N CUs simulates: floor(i x N / k) for i = 0..k-1, spread evenly over the
// dispatch order (and so over a frame's tiles, whose rows are often a multiple of N tiles), not the first k. With
// every CU simulated, every slot.
TEST(MachineGpu, TheSampledSlotsAreSpreadEvenlyOverTheGpu) {
  const auto slots = [](const MachineConfig& c) {
    std::vector<uint32_t> out;
    const uint32_t cus = c.gpu.compute_units();
    const std::vector<bool> simulated = simulated_waves(c, size_t{3} * cus);  // one wave a workgroup on the presets
    for (uint32_t w = 0; w < simulated.size(); ++w) {
      if (simulated[w]) out.push_back(w);
    }
    return out;
  };
  const std::vector<uint32_t> rdna2{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150,
                                    160, 170, 180, 190, 200, 210, 220, 230};
  EXPECT_EQ(slots(load_machine_preset("rdna2")), rdna2);  // 80 CUs, 8 simulated
  const std::vector<uint32_t> rdna4 = slots(load_machine_preset("rdna4"));  // 56 CUs, 8 simulated
  ASSERT_EQ(rdna4.size(), 24u);
  for (uint32_t i = 0; i < rdna4.size(); ++i) EXPECT_EQ(rdna4[i], 7 * i);
  EXPECT_EQ(slots(gpu(2, 2, 2, 3)), (std::vector<uint32_t>{0, 2, 5, 8, 10, 13, 16, 18, 21}));  // 8 / 3 apart
  MachineConfig every = load_machine_preset("rdna2");
  every.gpu.simulated_cus = every.gpu.compute_units();
  EXPECT_EQ(slots(every).size(), 240u);
}

// A frame whose rays each walk 12 nodes of their own (a footprint far larger than the shrunken caches, so that the
// shared L2, MALL and DRAM carry the traffic and their bandwidth bounds the run), on a GPU of 2 engines x 1 array x 4
// CUs: the full GPU (8 CUs) and its sample of 2 CUs (one per shader array, with the shared levels' bandwidth,
// capacity and miss slots scaled to 2 / 8 and the L1s to 1 / 4). Their whole-GPU figures agree within 5%: the sample
// runs exactly the workgroups its CUs get on the full GPU, and what it cannot see is the timing of the other CUs'
// requests on the shared ports (which the full GPU interleaves cycle by cycle and the sample serves at a steady
// share) and lines they would have brought into a shared cache. Without the scaling the sample's CUs would have the
// whole DRAM to themselves and run far faster (checked below).
TEST(MachineGpu, SampleGivesTheFullGpusFigures) {
  const auto frame = [](const MachineConfig& c) {
    const uint32_t waves = 8 * 24;
    const std::vector<bool> simulated = simulated_waves(c, waves);
    Sequences s(size_t{waves} * 32);
    for (uint32_t wave = 0; wave < waves; ++wave) {
      if (!simulated[wave]) continue;
      for (uint32_t lane = 0; lane < 32; ++lane) {
        for (uint32_t step = 0; step < 12; ++step) s[wave * 32 + lane].push_back(box((wave * 32 + lane) * 12 + step));
      }
    }
    return s;
  };
  const auto shrunk = [](MachineConfig c) {
    c.kernel.warm_caches = false;
    c.memory.levels[2].bytes = 64 * 1024;       // L2
    c.memory.levels[3].bytes = 128 * 1024;      // MALL
    c.memory.levels[4].bytes_per_clock = 32;    // DRAM: the bound
    c.validate();
    return c;
  };
  const MachineConfig full = shrunk(gpu(2, 1, 4, 8));
  const MachineConfig sample = shrunk(gpu(2, 1, 4, 2));
  const MachineResult f = run_machine_model(full, frame(full));
  const MachineResult s = run_machine_model(sample, frame(sample));
  ASSERT_EQ(f.status, MachineStatus::Completed) << f.message;
  ASSERT_EQ(s.status, MachineStatus::Completed) << s.message;
  EXPECT_EQ(f.rays, 8u * 24 * 32);
  EXPECT_EQ(s.rays, 2u * 24 * 32);
  const auto near = [](double a, double b) { return std::abs(a / b - 1.0) < 0.05; };
  EXPECT_TRUE(near(s.gpu.box_tests_per_second, f.gpu.box_tests_per_second))
      << s.gpu.box_tests_per_second << " vs " << f.gpu.box_tests_per_second;
  EXPECT_TRUE(near(s.gpu.ra_utilization, f.gpu.ra_utilization)) << s.gpu.ra_utilization << " vs " << f.gpu.ra_utilization;
  EXPECT_TRUE(near(s.memory_levels[4].bytes_per_clock(s.cycles), f.memory_levels[4].bytes_per_clock(f.cycles)));
  // The DRAM is the bound: the full GPU keeps it busy most of the run.
  EXPECT_GT(f.memory_levels[4].bandwidth_use(f.cycles), 0.8);

  // The same sample with the whole DRAM port to itself (an unscaled share) is far from the full GPU's figures.
  MachineConfig unscaled = sample;
  unscaled.memory.levels[4].bytes_per_clock = 32 * 4;
  const MachineResult u = run_machine_model(unscaled, frame(unscaled));
  EXPECT_GT(u.gpu.box_tests_per_second, 1.5 * f.gpu.box_tests_per_second);
}

}  // namespace
}  // namespace hwbvh::emu
