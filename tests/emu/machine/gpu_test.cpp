// The machine model as a whole GPU (docs/machine-model.md, "A whole GPU"): CUs that share a level contend for its
// port, workgroups are dealt over the CUs, the warm-up fills the caches, and a sample of whole shader arrays with the
// GPU-wide levels scaled to it gives the full GPU's figures.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "emu/machine/memory.h"
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

// `preset`'s CU and memory on a GPU of `engines` x `arrays` x `cus` CUs, every CU of `simulated` arrays simulated.
MachineConfig gpu(uint32_t engines, uint32_t arrays, uint32_t cus, uint32_t simulated,
                  const std::string& preset = "rdna4") {
  MachineConfig c = load_machine_preset(preset);
  c.gpu.shader_engines = engines;
  c.gpu.shader_arrays_per_engine = arrays;
  c.gpu.cus_per_shader_array = cus;
  c.gpu.simulated_shader_arrays = simulated;
  c.validate();
  return c;
}

// A frame of `waves` waves of 32 rays, lane `lane` of wave `wave` fetching walk(wave, lane); only the waves the
// config's simulated CUs run are filled in (the others' rays need not be traced).
template <typename Walk>
Sequences sampled_frame(const MachineConfig& c, uint32_t waves, const Walk& walk) {
  const std::vector<bool> simulated = simulated_waves(c, waves);
  Sequences s(size_t{waves} * 32);
  for (uint32_t wave = 0; wave < waves; ++wave) {
    if (!simulated[wave]) continue;
    for (uint32_t lane = 0; lane < 32; ++lane) s[wave * 32 + lane] = walk(wave, lane);
  }
  return s;
}

// `frame` (a function of the config, as sampled_frame) run on the full GPU and on its sample; both complete.
template <typename Frame>
std::pair<MachineResult, MachineResult> full_and_sample(const MachineConfig& full, const MachineConfig& sample,
                                                        const Frame& frame) {
  std::pair<MachineResult, MachineResult> r{run_machine_model(full, frame(full)),
                                            run_machine_model(sample, frame(sample))};
  EXPECT_EQ(r.first.status, MachineStatus::Completed) << r.first.message;
  EXPECT_EQ(r.second.status, MachineStatus::Completed) << r.second.message;
  return r;
}

// Two CUs, one wave each, one box node each, both held in the shared L2 after the warm-up (rdna4's L0 made a
// buffer without storage, so that the node comes from the L2), whose port moves 16 bytes a clock. Ray generation
// 0..40, the intersect issued 40..41; the two 64-byte L0 lines of a node are one 128-byte L1 line (the second merges
// with the first in the L1 buffer), an L2 hit: CU 0's line starts on the L2 port at 41 (busy for 128 / 16 = 8
// cycles) and is back at 41 + 250 = 291; CU 1's line waits for the port: 49 + 250 = 299. From its data a wave needs
// 263 cycles (tested 1, results 8, write-back 1, stack op issued 1, LDS 40, loop 12, shading 200): CU 0's ends at
// 554, CU 1's at 562. With an L2 per CU (no contention) both end at 554.
TEST(MachineGpu, TwoCusContendForTheL2Port) {
  MachineConfig c = gpu(1, 1, 2, 1);
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
// slots 0..3 are the 4 arrays' first CUs and slots 4..7 their second ones, so a sample of 2 arrays, those of slots 0
// and 2 (spread over the 4), runs slots 0, 2, 4 and 6, workgroups 0, 2, 4, .. and no other.
TEST(MachineGpu, WorkgroupsAreDealtOverTheEnginesThenTheArrays) {
  const MachineConfig c = gpu(2, 2, 2, 2);
  const std::vector<bool> simulated = simulated_waves(c, 20);
  std::vector<bool> expected(20);
  for (size_t wave = 0; wave < 20; wave += 2) expected[wave] = true;
  EXPECT_EQ(simulated, expected);
  // Only the simulated CUs' rays run: the others' sequences may be empty.
  const Sequences s = sampled_frame(c, 20, [](uint32_t wave, uint32_t) { return std::vector<NodeFetch>{box(wave)}; });
  const MachineResult r = run_machine_model(c, s);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.rays, 10u * 32);
  EXPECT_EQ(r.rays_completed, 10u * 32);
  EXPECT_EQ(r.box_tests, 10u * 32 * 8);
}

// The dispatch slots a sample of m of A shader arrays simulates: every CU of the arrays of slots floor(i x A / m),
// i = 0..m-1 (an array's CUs are the slots A apart), so they come back every A slots, spread evenly over the
// dispatch order (and so over a frame's tiles, whose rows are often a multiple of the CUs' count in tiles). With every
// array simulated, every slot.
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
  // rdna2: 80 CUs in 8 arrays of 10; one array: slots 0, 8, .., 72, in each of the 3 rounds.
  const std::vector<uint32_t> rdna2 = slots(load_machine_preset("rdna2"));
  ASSERT_EQ(rdna2.size(), 30u);
  for (uint32_t i = 0; i < rdna2.size(); ++i) EXPECT_EQ(rdna2[i], 8 * i);
  const std::vector<uint32_t> rdna4 = slots(load_machine_preset("rdna4"));  // 56 CUs in 8 arrays of 7
  ASSERT_EQ(rdna4.size(), 21u);
  for (uint32_t i = 0; i < rdna4.size(); ++i) EXPECT_EQ(rdna4[i], 8 * i);
  // 4 engines x 2 arrays x 2 CUs, 3 of the 8 arrays: those of slots 0, 2 and 5 (8 / 3 apart), and their second CUs
  // 8 slots later.
  const MachineConfig three = gpu(4, 2, 2, 3);
  EXPECT_EQ(slots(three), (std::vector<uint32_t>{0, 2, 5, 8, 10, 13, 16, 18, 21, 24, 26, 29, 32, 34, 37, 40, 42, 45}));
  // Simulated CU j is the j-th sampled slot; slot 0 is engine 0's array 0 (array 0), slot 2 engine 2's (array 4),
  // slot 5 engine 1's array 1 (array 3); slots 8, 10 and 13 the same arrays' second CUs.
  const std::vector<uint32_t> cu_slots{0, 2, 5, 8, 10, 13};
  const std::vector<uint32_t> arrays{0, 4, 3, 0, 4, 3};
  for (uint32_t cu = 0; cu < 6; ++cu) {
    EXPECT_EQ(machine::slot_of_simulated_cu(three.gpu, cu), cu_slots[cu]);
    EXPECT_EQ(machine::simulated_cu_of_slot(three.gpu, cu_slots[cu]), cu);
    EXPECT_EQ(machine::shader_array_of_slot(three.gpu, cu_slots[cu]), arrays[cu]);
  }
  EXPECT_FALSE(machine::simulated_cu_of_slot(three.gpu, 1).has_value());
  MachineConfig every = load_machine_preset("rdna2");
  every.gpu.simulated_shader_arrays = every.gpu.shader_arrays();
  EXPECT_EQ(slots(every).size(), 240u);
  for (uint32_t slot = 0; slot < 80; ++slot) EXPECT_EQ(machine::simulated_cu_of_slot(every.gpu, slot), slot);
}

// A frame whose rays each walk 12 nodes of their own (a footprint far larger than the shrunken caches, so that the
// shared L2, MALL and DRAM carry the traffic and their bandwidth bounds the run), on a GPU of 2 engines x 2 arrays x 2
// CUs: the full GPU (8 CUs) and its sample of one shader array (2 CUs, with the GPU-wide levels' bandwidth, capacity
// and miss slots scaled to 2 / 8). Their whole-GPU figures agree within 5%: the sample runs exactly the workgroups its
// CUs get on the full GPU, and what it cannot see is the timing of the other CUs' requests on the GPU-wide ports
// (which the full GPU interleaves cycle by cycle and the sample serves at a steady share) and lines they would have
// brought into a GPU-wide cache. Without the scaling the sample's CUs would have the whole DRAM to themselves and
// run far faster (checked below).
TEST(MachineGpu, SampleGivesTheFullGpusFigures) {
  const auto frame = [](const MachineConfig& c) {
    return sampled_frame(c, 8 * 24, [](uint32_t wave, uint32_t lane) {
      std::vector<NodeFetch> walk;
      for (uint32_t step = 0; step < 12; ++step) walk.push_back(box((wave * 32 + lane) * 12 + step));
      return walk;
    });
  };
  const auto shrunk = [](MachineConfig c) {
    c.kernel.warm_caches = false;
    c.memory.levels[2].bytes = 64 * 1024;       // L2
    c.memory.levels[3].bytes = 128 * 1024;      // MALL
    c.memory.levels[4].bytes_per_clock = 32;    // DRAM: the bound
    c.validate();
    return c;
  };
  const MachineConfig sample = shrunk(gpu(2, 2, 2, 1));
  const auto [f, s] = full_and_sample(shrunk(gpu(2, 2, 2, 4)), sample, frame);
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

// Neighbouring tiles fetch the same nodes, and a shader array's CUs find each other's lines in its L1. Here every
// wave's 32 rays walk the same 448 nodes (lane l nodes 14 l .. 14 l + 13), then 2 nodes of their own each (a wave's
// 64 own nodes lie with those of the other waves of its array), on rdna2's CU and memory as 2 engines x 2 arrays x 4
// CUs (16 CUs, 48 waves, an L1 of 128 KiB an array, warm caches). On the full GPU an array's L1 serves 80 % of the
// L0's misses, the shared nodes its four CUs keep there together. A sample of one whole array (4 CUs) gives that
// array exactly the workgroups and the L1 it has on the full GPU: the L1 serves the same fraction (asserted within
// 0.5 points; it is equal in this case) and the box rate is within 1 % (0.3 % here): what differs is only when the
// L1's misses, which go to the warm L2, get the L2's port, which the full GPU's other three arrays share cycle by
// cycle and the sample has a steady quarter of. Sampling one CU an array, as the model once did, left each CU a
// quarter of its array's L1 and none of the sharing: the L1 cut to a quarter (below) serves about half and runs
// about a third slower.
TEST(MachineGpu, ArraySampleSharesItsL1AsTheWholeGpu) {
  const auto frame = [](const MachineConfig& c) {
    return sampled_frame(c, 16 * 3, [](uint32_t wave, uint32_t lane) {
      std::vector<NodeFetch> walk;
      for (uint32_t step = 0; step < 14; ++step) walk.push_back(box(lane * 14 + step));
      const uint32_t own = 4096 + ((wave % 4) * 12 + wave / 4) * 64 + lane * 2;
      for (uint32_t step = 0; step < 2; ++step) walk.push_back(box(own + step));
      return walk;
    });
  };
  const MachineConfig sample = gpu(2, 2, 4, 1, "rdna2");
  const auto [f, s] = full_and_sample(gpu(2, 2, 4, 4, "rdna2"), sample, frame);
  EXPECT_EQ(f.rays, 16u * 3 * 32);
  EXPECT_EQ(s.rays, 4u * 3 * 32);
  const MemoryLevelResult& full_l1 = f.memory_levels[1];
  const MemoryLevelResult& sample_l1 = s.memory_levels[1];
  EXPECT_GT(full_l1.served_fraction(), 0.75);  // the L1 shares the nodes
  EXPECT_NEAR(sample_l1.served_fraction(), full_l1.served_fraction(), 0.005);
  EXPECT_NEAR(s.gpu.box_tests_per_second / f.gpu.box_tests_per_second, 1.0, 0.01);
  EXPECT_NEAR(s.gpu.ra_utilization / f.gpu.ra_utilization, 1.0, 0.01);

  // The sample with its L1 cut to a quarter, the share one CU an array had.
  MachineConfig quarter = sample;
  quarter.memory.levels[1].bytes /= 4;
  quarter.validate();
  const MachineResult q = run_machine_model(quarter, frame(quarter));
  EXPECT_LT(q.memory_levels[1].served_fraction(), full_l1.served_fraction() - 0.2);
  EXPECT_LT(q.gpu.box_tests_per_second, 0.8 * f.gpu.box_tests_per_second);
}

}  // namespace
}  // namespace hwbvh::emu
