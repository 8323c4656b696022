// The machine model: exact timelines of tiny runs, constructed deadlocks, and static vs dynamic VGPR allocation
// and in-order vs out-of-order returns on node sequences recorded from a real encoded BVH.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/machine.h"
#include "emu/machine/one_cu.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/formats/rdna3/node_pointer.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu {
namespace {

using Sequences = std::vector<std::vector<NodeFetch>>;

// What the RT IP 3.1 emulator records for a step on the node `pointer` of `kind`.
NodeFetch rtip31_fetch(uint32_t pointer, rdna4::NodeKind kind) {
  std::vector<NodeFetch> recorded;
  RayTraversal::record_fetches(StepInfo{pointer, kind}, recorded, 0);
  return recorded.at(0);
}
NodeFetch box(uint32_t index) {
  return rtip31_fetch(rdna4::make_node_pointer(uint64_t{index} * 128, rdna4::kTypeBox), rdna4::NodeKind::Box);
}
NodeFetch pair0(uint32_t index) {
  return rtip31_fetch(rdna4::make_node_pointer(uint64_t{index} * 128, 0), rdna4::NodeKind::Primitive);
}

// A preset built on `base` with the JSON members in `overrides` (without braces).
MachineConfig preset(const std::string& base, const std::string& overrides) {
  return one_cold_cu(parse_machine_preset(R"({"base": ")" + base + R"(", "description": "test")" +
                                                      (overrides.empty() ? "" : ", " + overrides) + "}",
                                                  "test preset"));
}

// `rays` rays of `steps` box-node steps each, walking through `nodes` distinct nodes.
Sequences box_walks(uint32_t rays, uint32_t steps, uint32_t nodes = 64) {
  Sequences s(rays);
  for (uint32_t r = 0; r < rays; ++r) {
    for (uint32_t i = 0; i < steps; ++i) s[r].push_back(box(1 + (r + i) % nodes));
  }
  return s;
}

// Preset members for the exact timelines: one SIMD, and a kernel of ray generation (10 instructions), the traversal
// loop and shading (200).
constexpr const char* kOneSimdKernel = R"("compute_unit": {"simds": 1}, "kernel": {"phases": [
    {"name": "gen", "vgprs": 32, "alu_cycles": 10},
    {"name": "trav", "vgprs": 64, "traversal": true},
    {"name": "shade", "vgprs": 128, "alu_cycles": 200}]})";

// One wave on one SIMD, every cycle accounted for (rdna4: L0 hit 40, L1 buffer 80, DRAM 565 at 4 bytes per clock;
// LDS 40 busy 9, 12 loop instructions, bursts of 8; ray generation 10 instructions, shading 200).
TEST(MachineModel, ExactTimelineOfOneWave) {
  const std::string kernel = kOneSimdKernel;
  const MachineConfig c = preset("rdna4", kernel);

  // gen 0..10; intersect issued at 11: the 128-byte node is two 64-byte L0 lines, both misses; the first goes to
  // DRAM (data at 11 + 565 = 576), the second merges with that fill in the L1 coalescing buffer (max(11 + 80, 576)).
  // Tested 576..577, results leave the accelerator at 577 + 8 and are written back 585..586; stack op issued at 587,
  // result at 627; loop instructions 627..639; shading 639..839.
  const Sequences one{{box(1)}};
  MachineResult r = run_machine_model(c, one);
  EXPECT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.cycles, 839u);
  EXPECT_EQ(r.box_tests, 8u);
  EXPECT_EQ(r.triangle_tests, 0u);
  EXPECT_EQ(r.ra_busy_cycles, 1u);
  EXPECT_EQ(r.node_fetches, 1u);
  EXPECT_EQ(r.cache_hits, 0u);
  EXPECT_DOUBLE_EQ(r.mean_node_fetch_latency, 565.0);
  EXPECT_DOUBLE_EQ(r.average_active_waves_per_simd, 1.0);
  EXPECT_EQ(r.peak_active_waves_per_simd, 1u);
  EXPECT_EQ(r.wave_limit_per_simd, 10u);  // 128 VGPRs -> 144 -> 10 waves
  EXPECT_DOUBLE_EQ(r.rays_per_1000_cycles, 1000.0 / 839.0);
  ASSERT_EQ(r.memory_levels.size(), 5u);
  EXPECT_EQ(r.memory_levels[0].misses, 2u);  // two L0 lines
  EXPECT_EQ(r.memory_levels[1].merged, 1u);  // the second merged in the L1 buffer
  EXPECT_EQ(r.memory_levels[4].name, "DRAM");
  EXPECT_EQ(r.memory_levels[4].bytes, 128u);

  // A second lane on the same node merges with the first's requests in the instruction: one more cycle of testing.
  r = run_machine_model(c, Sequences{{box(1)}, {box(1)}});
  EXPECT_EQ(r.cycles, 840u);
  EXPECT_EQ(r.merged_lane_requests, 2u);
  EXPECT_EQ(r.cache_hits, 0u);
  EXPECT_DOUBLE_EQ(r.mean_node_fetch_latency, 565.0);

  // A primitive step after the box: issued at 640, data at 1205 (DRAM; its port is free again), tested to 1206,
  // results 1214, written back 1215, stack op at 1215..1256, loop to 1268, shading to 1468.
  const Sequences two_steps{{box(1), pair0(2)}};
  r = run_machine_model(c, two_steps);
  EXPECT_EQ(r.cycles, 1468u);
  EXPECT_EQ(r.triangle_tests, 2u);
  EXPECT_EQ(r.ra_busy_cycles, 2u);

  // RDNA 3 rates: a BVH8 box node takes 2 clocks at 4 box tests per clock, a pair 2 clocks at 1 triangle test.
  // Its memory has 128-byte L0 lines and a graphics L1, but the same L0 and DRAM latencies.
  r = run_machine_model(preset("rdna3", kernel), two_steps);
  EXPECT_EQ(r.cycles, 1470u);
  EXPECT_DOUBLE_EQ(r.ra_box_utilization, 8.0 / 4.0 / 1470.0);
  EXPECT_DOUBLE_EQ(r.ra_triangle_utilization, 2.0 / 1.0 / 1470.0);

  // Dynamic mode: 32 -> 64 -> 128 VGPRs are three S_ALLOC_VGPRs (1 issue + 8 cycles each; the launch block covers
  // 16, so ray generation needs one too).
  r = run_machine_model(preset("rdna4-dvgpr16", kernel), one);
  EXPECT_EQ(r.cycles, 839u + 3 * 9);
  EXPECT_EQ(r.failed_vgpr_allocations, 0u);
  EXPECT_EQ(r.wave_limit_per_simd, 16u);
}

// Each target's emulator records what its hardware reads, and the model charges it by that: a BVH4 node is 4 box
// tests (one clock at RDNA 3's 4 per clock, where an RT IP 3.1 box node takes two) and a triangle node one triangle
// test; two 64-byte Xe3 nodes share a 128-byte line; a BVH4x2 dual step reads both its nodes in one iteration.
TEST(MachineModel, EveryTargetIsChargedForWhatItFetches) {
  const std::string kernel = kOneSimdKernel;
  const MachineConfig rdna3 = preset("rdna3", kernel), rdna4 = preset("rdna4", kernel);
  const auto recorded = [](auto record, StepInfo step) {
    std::vector<NodeFetch> out;
    record(step, out);
    return out;
  };
  const auto bvh4 = [&](uint32_t pointer, rdna4::NodeKind kind) {
    const auto record = [](const StepInfo& step, std::vector<NodeFetch>& out) {
      Rtip20Traversal::record_fetches(step, out, 0);
    };
    return recorded(record, StepInfo{pointer, kind}).at(0);
  };
  const NodeFetch bvh4_box = bvh4(rdna3::make_node_pointer(128, rdna3::kTypeBoxFp32), rdna4::NodeKind::Box);
  const NodeFetch bvh4_tri = bvh4(rdna3::make_node_pointer(256, rdna3::kTypeTriangle0), rdna4::NodeKind::Primitive);
  EXPECT_EQ(bvh4_box, (NodeFetch{.node = 0x15, .offset_64 = 2, .blocks_64 = 2, .box_tests = 4}));
  EXPECT_EQ(bvh4_tri, (NodeFetch{.node = 0x20, .offset_64 = 4, .blocks_64 = 1, .triangle_tests = 1}));

  // The two-step timeline of ExactTimelineOfOneWave on rdna3 (1470 cycles for RT IP 3.1 nodes) is two clocks
  // shorter with BVH4 nodes: the box node takes one clock instead of two, the triangle node one instead of two.
  MachineResult r = run_machine_model(rdna3, Sequences{{bvh4_box, bvh4_tri}});
  EXPECT_EQ(r.cycles, 1468u);
  EXPECT_EQ(r.box_tests, 4u);
  EXPECT_EQ(r.triangle_tests, 1u);
  EXPECT_EQ(r.ra_busy_cycles, 2u);

  // Xe3 blocks 2 and 3 are bytes 128..255: one 128-byte line. On rdna3 (128-byte L0 lines) the two lanes' fetches
  // merge into one L0 request in the instruction; on rdna4 (64-byte L0 lines) they are two L0 misses, and the second
  // merges with the first's fill in the L1 buffer.
  const auto xe3 = [&](uint32_t block) {
    return recorded(Xe3Traversal::record_fetches, StepInfo{.node = block, .kind = rdna4::NodeKind::Box, .node_bytes = 64})
        .at(0);
  };
  EXPECT_EQ(xe3(3), (NodeFetch{.node = 3, .offset_64 = 3, .blocks_64 = 1, .box_tests = 6}));
  r = run_machine_model(rdna3, Sequences{{xe3(2)}, {xe3(3)}});
  EXPECT_EQ(r.merged_lane_requests, 1u);
  EXPECT_EQ(r.memory_levels[0].requests, 1u);
  EXPECT_EQ(r.cache_hits, 0u);
  EXPECT_EQ(r.box_tests, 12u);
  r = run_machine_model(rdna4, Sequences{{xe3(2)}, {xe3(3)}});
  EXPECT_EQ(r.cache_hits, 0u);
  EXPECT_EQ(r.merged_lane_requests, 0u);
  EXPECT_EQ(r.memory_levels[1].merged, 1u);
  EXPECT_EQ(r.memory_levels[4].requests, 1u);
  r = run_machine_model(rdna3, Sequences{{box(2)}, {box(3)}});  // RT IP 3.1 nodes 2 and 3: two lines
  EXPECT_EQ(r.cache_hits, 0u);
  EXPECT_EQ(r.memory_levels[4].requests, 2u);

  // A dual step: two fetches, one loop iteration, one more accelerator clock than its first node alone.
  const std::vector<NodeFetch> dual =
      recorded([](const StepInfo& step, std::vector<NodeFetch>& out) { Bvh4x2Traversal::record_fetches(step, out, 0); },
               StepInfo{.node = bvh4_tri.node, .kind = rdna4::NodeKind::Primitive, .second_node = bvh4_tri.node + 8});
  ASSERT_EQ(dual.size(), 2u);
  EXPECT_TRUE(dual[1].same_step);
  const MachineResult one = run_machine_model(rdna4, Sequences{{bvh4_tri}});
  r = run_machine_model(rdna4, Sequences{dual});
  EXPECT_EQ(r.node_fetches, 2u);
  EXPECT_EQ(r.triangle_tests, 2u);
  EXPECT_EQ(r.ra_busy_cycles, one.ra_busy_cycles + 1);
  EXPECT_EQ(r.cycles, one.cycles + 1);
}

// An RT IP 3.1 instance node is its filter node's 4 box tests and the ray's transform into the BLAS, which costs
// ray_accelerator.instance_transform_clocks (T, 1 in the presets). ExactTimelineOfOneWave's two steps (1468 cycles)
// with an instance node first and a box node second: the instance node's data arrive at 576 as the box node's did,
// its tests take 1 clock (4 boxes at 8 per clock) and the transform T more, so everything after moves by T; the box
// node second takes the 1 clock the pair took. 1468 + T.
TEST(MachineModel, InstanceNodesPayTheRayTransform) {
  const std::string kernel = kOneSimdKernel;
  const uint32_t pointer = rdna4::make_node_pointer(128, rdna4::kTypeInstance);
  const NodeFetch instance = rtip31_fetch(pointer, rdna4::NodeKind::Instance);
  EXPECT_EQ(instance, (NodeFetch{.node = pointer, .offset_64 = 2, .blocks_64 = 2, .box_tests = 4, .instance = true}));
  EXPECT_FALSE(box(1).instance);
  const Sequences walk{{instance, box(2)}};

  MachineResult r = run_machine_model(preset("rdna4", kernel), walk);
  EXPECT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.cycles, 1469u);
  EXPECT_EQ(r.box_tests, 12u);       // the transform is not a box test
  EXPECT_EQ(r.ra_busy_cycles, 3u);   // 1 + 1 (instance), 1 (box)

  r = run_machine_model(preset("rdna4", kernel + R"(, "ray_accelerator": {"instance_transform_clocks": 6})"), walk);
  EXPECT_EQ(r.cycles, 1474u);
  EXPECT_EQ(r.ra_busy_cycles, 8u);
  r = run_machine_model(preset("rdna4", kernel + R"(, "ray_accelerator": {"instance_transform_clocks": 0})"), walk);
  EXPECT_EQ(r.cycles, 1468u);

  // rdna3: the instance node's 4 box tests are 1 clock at 4 per clock, plus the transform; the box node 2 clocks.
  // ExactTimelineOfOneWave's rdna3 run (box 2 + pair 2 clocks) took 1470.
  r = run_machine_model(preset("rdna3", kernel), walk);
  EXPECT_EQ(r.cycles, 1470u);
  EXPECT_EQ(r.ra_busy_cycles, 4u);
}

// The request path, each mechanism timed by hand on rdna4 (one wave: ray generation 40 instructions, 0..40; the
// intersect issued 40..41; L0 hit 40 cycles, DRAM 565; the texture-addressing unit takes 4 lanes a clock; a box node is
// one accelerator clock; results leave the accelerator 8 cycles after the last test and are written back 4 lanes a
// clock; stack op 1 issue cycle + 40; 12 loop instructions; shading 200).
//
// Four lanes walk box node 1 twice. Their requests merge in the instruction: one request per 64-byte L0 line. With
// the L0 port cut to 16 bytes a clock, iteration 0 goes to DRAM (41 + 565 = 606; the second line merges in the L1
// buffer), tests 606..610, results at 618, written back 618..619; stack op 619..620, in the LDS 620..660; loop
// 660..672. Iteration 1 is issued 672..673: two L0 hits, the port moving the first line 673..677 and the second
// 677..681, so the lanes' data are back at 717; tests 717..721, results 729, written back 730; stack op 730..771;
// loop to 783; shading to 983. Without merging each lane would ask for both lines itself: eight 64-byte transfers,
// the last starting at 701 (data at 741), and the run would end at 1004.
TEST(MachineModel, LanesAskingForTheSameLineMergeInTheInstruction) {
  const MachineConfig c = one_cold_cu("rdna4", "memory.levels[L0].bytes_per_clock", "16");
  const Sequences lanes(4, std::vector<NodeFetch>{box(1), box(1)});
  const MachineResult r = run_machine_model(c, lanes);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.cycles, 983u);
  EXPECT_EQ(r.lane_line_requests, 16u);   // 4 lanes x 2 lines x 2 iterations
  EXPECT_EQ(r.merged_lane_requests, 12u);
  EXPECT_EQ(r.memory_levels[0].requests, 4u);
  EXPECT_EQ(r.memory_levels[0].hits, 2u);
  EXPECT_EQ(r.memory_levels[0].bytes, 128u);
  EXPECT_EQ(r.node_fetches, 8u);
  EXPECT_EQ(r.cache_hits, 4u);  // iteration 1's fetches, whole from the L0
}

// A port as wide as a node moves both of its 64-byte lines in one clock. One lane, a box node (cold, then held):
// iteration 0 as above but one lane (tested 606..607, written back 616; stack op to 657, loop to 669); iteration 1
// issued 669..670, its two L0 hits back at 670 + 40 = 710 at 128 bytes a clock (rdna4), 711 at 64 (the second line a
// clock later), 712 at 32 (the first line takes two clocks); then 1 + 8 + 1 + 41 + 12 + 200 more: 973, 974, 975.
TEST(MachineModel, TheL0PortWidthSetsHowSoonANodesLinesAreBack) {
  for (const auto& [width, end] : {std::pair{"128", 973u}, {"64", 974u}, {"32", 975u}}) {
    SCOPED_TRACE(width);
    const MachineConfig c = one_cold_cu("rdna4", "memory.levels[L0].bytes_per_clock", width);
    const MachineResult r = run_machine_model(c, Sequences{{box(1), box(1)}});
    EXPECT_EQ(r.cycles, end);
  }
}

// A full accelerator queue stalls issue. Two waves on two SIMDs each intersect one box node at 40. With room for one
// instruction, wave 1 waits until wave 0's is written back (node 1 from DRAM at 606, tested to 607, results at 615,
// written back 615..616), issues 616..617, fetches node 2 from DRAM (617 + 565 = 1182), tests to 1183, results at
// 1191, written back at 1192; stack op 1192..1233, loop to 1245, shading to 1445. With the preset's 16 both issue at
// 40..41; the texture-addressing unit takes wave 0's lane at 41 and wave 1's at 42, whose lines come from DRAM (the
// whole GPU's port, 254 bytes a clock, moves each within its cycle) at 606 and 607. Wave 1 is tested 607..608, written
// back 616..617, and its stack op, issued 617..618, waits for wave 0's in the LDS (busy 617..626): 626 + 40, loop to
// 678, shading to 878.
TEST(MachineModel, AFullAcceleratorQueueStallsIssue) {
  const Sequences two{{box(1)}, {box(2)}};
  const std::vector<uint32_t> waves{0, 1};
  MachineResult r = run_machine_model(preset("rdna4", R"("ray_accelerator": {"queue_depth": 1})"), two, waves);
  ASSERT_EQ(r.status, MachineStatus::Completed) << r.message;
  EXPECT_EQ(r.cycles, 1445u);
  r = run_machine_model(one_cold_cu("rdna4"), two, waves);
  EXPECT_EQ(r.cycles, 878u);
}

// The accelerator's pipeline latency and write-back: 32 lanes on one box node (one merged request, DRAM at 606),
// tested 606..638; results at 638 + L, written back 32 / W clocks. Ends at 638 + L + 32 / W + 1 + 40 + 12 + 200.
TEST(MachineModel, AcceleratorLatencyAndWriteBackDelayTheResults) {
  const Sequences lanes(32, std::vector<NodeFetch>{box(1)});
  for (const auto& [latency, write_back] : {std::pair{8u, 4u}, {0u, 4u}, {8u, 32u}, {20u, 1u}}) {
    const MachineConfig c = preset("rdna4", R"("ray_accelerator": {"pipeline_latency": )" + std::to_string(latency) +
                                                R"(, "result_lanes_per_clock": )" + std::to_string(write_back) + "}");
    const MachineResult r = run_machine_model(c, lanes);
    EXPECT_EQ(r.cycles, 638u + latency + 32 / write_back + 1 + 40 + 12 + 200) << latency << " " << write_back;
  }
}

TEST(MachineModel, EmptyInputAndDeterminism) {
  const MachineConfig c = one_cold_cu("rdna4");
  const MachineResult none = run_machine_model(c, Sequences{});
  EXPECT_EQ(none.status, MachineStatus::Completed);
  EXPECT_EQ(none.cycles, 0u);
  EXPECT_EQ(none.rays_per_1000_cycles, 0.0);

  const Sequences s = box_walks(300, 9);
  const std::string a = to_json(run_machine_model(c, s), c);
  EXPECT_EQ(a, to_json(run_machine_model(c, s), c));
  EXPECT_NE(a.find("\"model_output\":\"hwbvh machine model: outputs of a model, not hardware measurements\""),
            std::string::npos);
  EXPECT_NE(a.find("\"preset\":\"rdna4\""), std::string::npos);
  EXPECT_NE(a.find("\"deadlock\":false"), std::string::npos);
  EXPECT_NE(a.find("\"memory_levels\":[{\"name\":\"L0\",\"kind\":\"cache\",\"requests\":"), std::string::npos) << a;
  EXPECT_NE(a.find("{\"name\":\"DRAM\",\"kind\":\"memory\",\"requests\":64,\"bytes\":"), std::string::npos) << a;
}

TEST(MachineModel, ExplicitWavesLikeTraceRays) {
  // Partial waves (e.g. the border tiles of a camera batch) are waves of their own.
  const MachineConfig c = one_cold_cu("rdna4");
  const Sequences s = box_walks(40, 3);
  const std::vector<uint32_t> tiles{0, 8, 20};
  const MachineResult r = run_machine_model(c, s, tiles);
  EXPECT_EQ(r.waves, 3u);
  EXPECT_EQ(r.rays_completed, 40u);
  EXPECT_EQ(run_machine_model(c, s).waves, 2u);
  EXPECT_EQ(to_json(run_machine_model(c, s), c),
            to_json(run_machine_model(c, s, std::vector<uint32_t>{0, 32}), c));
  for (const std::vector<uint32_t>& bad : {std::vector<uint32_t>{0, 40}, std::vector<uint32_t>{1, 8},
                                           std::vector<uint32_t>{0, 8, 8}, std::vector<uint32_t>{}}) {
    EXPECT_THROW((void)run_machine_model(c, s, bad), Error);
  }
}

TEST(MachineModel, CycleLimitStopsARunThatIsNotDeadlocked) {
  const MachineConfig c = preset("rdna4", R"("limits": {"max_cycles": 5000})");
  const MachineResult r = run_machine_model(c, box_walks(2000, 20));
  EXPECT_EQ(r.status, MachineStatus::CycleLimit);
  EXPECT_FALSE(r.deadlock);
  EXPECT_EQ(r.cycles, 5000u);
  EXPECT_LT(r.waves_completed, r.waves);
  EXPECT_NE(r.message.find("cycle limit"), std::string::npos) << r.message;
}

// 16 waves on one SIMD with 32-VGPR blocks hold 3 blocks each in the traversal loop (96 VGPRs) and then want 8 for
// shading (256). Without avoidance the 32 pool blocks are gone once all 16 are traversing: every wave waits for
// registers only another waiting wave could free. With avoidance (25 pool blocks + 7 in reserve), the reserve lets
// one wave at a time finish, which frees registers for the next.
TEST(MachineModel, DeadlocksWithoutAvoidanceCompletesWithIt) {
  const std::string common = R"("compute_unit": {"simds": 1}, "kernel": {"phases": [
      {"name": "gen", "vgprs": 32, "alu_cycles": 40},
      {"name": "trav", "vgprs": 96, "traversal": true},
      {"name": "shade", "vgprs": 256, "alu_cycles": 200}]})";
  const Sequences work = box_walks(16 * 32 * 2, 8);  // 32 waves

  const MachineResult off =
      run_machine_model(preset("rdna4-dvgpr32", common + R"(, "vgpr_allocation": {"deadlock_avoidance": false})"),
                        work);
  EXPECT_EQ(off.status, MachineStatus::Deadlocked) << off.message;
  EXPECT_TRUE(off.deadlock);
  EXPECT_EQ(off.waves_completed, 0u);
  EXPECT_EQ(off.waves_blocked_at_end, 16u);
  EXPECT_EQ(off.waves_waited_on_vgprs, 16u);
  EXPECT_GT(off.failed_vgpr_allocations, 16u);
  EXPECT_NE(off.message.find("deadlock"), std::string::npos);
  EXPECT_NE(off.message.find("16 retrying S_ALLOC_VGPR"), std::string::npos) << off.message;
  EXPECT_LT(off.cycles, 1'000'000u);  // found when it happens, not at the cycle limit

  const MachineResult on = run_machine_model(preset("rdna4-dvgpr32", common), work);
  EXPECT_EQ(on.status, MachineStatus::Completed) << on.message;
  EXPECT_FALSE(on.deadlock);
  EXPECT_EQ(on.waves_completed, 32u);
  EXPECT_GT(on.waves_waited_on_vgprs, 0u);
  EXPECT_GT(on.vgpr_wait_cycles, 0u);
  EXPECT_GT(on.failed_vgpr_allocations, 0u);
}

// Avoidance guarantees one wave the maximum, not two: waves that wait for each other at a barrier after allocating
// their shading registers deadlock anyway. Two waves on a small register file (2 slots, 6 pool blocks, 7 in
// reserve): the first takes the pool and the reserve and waits at the barrier; the second can never allocate.
TEST(MachineModel, WavesThatDependOnEachOtherDeadlockEvenWithAvoidance) {
  const auto small = [](int workgroup_waves) {
    return preset("rdna4-dvgpr32", R"("compute_unit": {"simds": 1, "vgprs_per_lane": 480},
        "vgpr_allocation": {"dynamic_wave_limit": 2},
        "kernel": {"workgroup_waves": )" + std::to_string(workgroup_waves) + R"(, "phases": [
          {"name": "gen", "vgprs": 32, "alu_cycles": 40},
          {"name": "trav", "vgprs": 32, "traversal": true},
          {"name": "shade", "vgprs": 256, "alu_cycles": 200, "barrier": true}]})");
  };
  const Sequences two_waves = box_walks(64, 4, 4);  // few nodes: both waves traverse in step
  const MachineConfig c = small(2);
  ASSERT_TRUE(c.vgpr.deadlock_avoidance);
  const MachineResult r = run_machine_model(c, two_waves);
  EXPECT_EQ(r.status, MachineStatus::Deadlocked) << r.message;
  EXPECT_EQ(r.waves_blocked_at_end, 2u);
  EXPECT_NE(r.message.find("1 retrying S_ALLOC_VGPR"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("1 at a workgroup barrier"), std::string::npos) << r.message;

  // Without the dependency the same two waves finish one after the other.
  const MachineResult alone = run_machine_model(small(1), two_waves);
  EXPECT_EQ(alone.status, MachineStatus::Completed) << alone.message;
  EXPECT_EQ(alone.waves_waited_on_vgprs, 1u);

  // The full-size case: a workgroup of 32 waves (16 per SIMD) that all need 8 blocks of 16 before a barrier needs
  // 112 blocks per SIMD; the pool has 73 and the reserve 7.
  const MachineResult wide = run_machine_model(
      preset("rdna4-dvgpr16", R"("kernel": {"workgroup_waves": 32, "phases": [
          {"name": "trav", "vgprs": 64, "traversal": true},
          {"name": "shade", "vgprs": 128, "alu_cycles": 200, "barrier": true}]})"),
      box_walks(32 * 32, 4));
  EXPECT_EQ(wide.status, MachineStatus::Deadlocked) << wide.message;
  EXPECT_EQ(wide.waves_blocked_at_end, 32u);
}

TEST(MachineModel, BvhcntLimitThrottlesInterleavedRays) {
  // Two rays per lane: each iteration issues two intersects; with a limit of 1 the second waits for the first.
  const Sequences s = box_walks(32 * 8, 10, 1000);
  const MachineResult one = run_machine_model(
      preset("rdna4", R"("kernel": {"rays_per_lane": 2}, "ray_accelerator": {"bvhcnt_limit": 1})"), s);
  const MachineResult seven = run_machine_model(preset("rdna4", R"("kernel": {"rays_per_lane": 2})"), s);
  EXPECT_EQ(one.status, MachineStatus::Completed);
  EXPECT_EQ(seven.waves, 4u);
  EXPECT_EQ(one.box_tests, seven.box_tests);
  EXPECT_GT(one.cycles, seven.cycles);
}

// Node sequences of 64 x 64 camera rays through a 3000-triangle soup, built and encoded like the real pipeline.
const Sequences& scene_sequences() {
  static const Sequences sequences = [] {
    const Scene scene = hwbvh::test::random_triangle_soup(3000, 21, 10.0f, 0.5f);
    bvh_build::BuildOptions bo;
    bo.leaf_fits = rdna4::primitive_leaf_fits;
    const rdna4::EncodedBvh bvh = rdna4::encode(scene, bvh_build::build_wide_bvh(scene, bo).bvh, rdna4::EncodeOptions{});
    const RayBatch batch = primary_rays(auto_frame(scene.bounds(), 1.0f), 64, 64);
    TraceOptions o;
    o.record_node_sequence = true;
    return trace_rays(NodeMemory{bvh.dwords}, bvh.root_pointer, batch.rays, o, Executor(1)).node_sequences;
  }();
  return sequences;
}

// docs/machine-model.md's worked example quotes these runs; each of its table rows must be what the model gives.
std::string doc_table_row(const char* label, const MachineResult& r) {
  std::string cycles = std::to_string(r.cycles);
  for (int i = static_cast<int>(cycles.size()) - 3; i > 0; i -= 3) cycles.insert(static_cast<std::size_t>(i), ",");
  char row[256];
  std::snprintf(row, sizeof row, "| %s | %.2f (%u) | %s | %.1f | %.1f %% | %.1f %% | %.1f %% |", label,
                r.average_active_waves_per_simd, r.peak_active_waves_per_simd, cycles.c_str(), r.rays_per_1000_cycles,
                100 * r.ra_box_utilization, 100 * r.ra_triangle_utilization, 100 * r.ra_busy_fraction);
  return row;
}

const std::string& machine_model_doc() {
  static const std::string text = [] {
    std::ifstream in(hwbvh::test::source_dir() / "docs" / "machine-model.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  return text;
}

void expect_quoted(const std::string& figure) {
  EXPECT_NE(machine_model_doc().find(figure), std::string::npos) << "docs/machine-model.md should quote: " << figure;
}

TEST(MachineModel, DynamicAllocationRaisesActiveWavesWhenShadingIsThePeak) {
  const Sequences& s = scene_sequences();
  ASSERT_EQ(s.size(), 4096u);
  const MachineResult st = run_machine_model(one_cold_cu("rdna4"), s);
  const MachineResult d16 = run_machine_model(one_cold_cu("rdna4-dvgpr16"), s);
  const MachineResult d32 = run_machine_model(one_cold_cu("rdna4-dvgpr32"), s);
  for (const MachineResult* r : {&st, &d16, &d32}) {
    EXPECT_EQ(r->status, MachineStatus::Completed) << r->message;
    EXPECT_EQ(r->rays_completed, 4096u);
    EXPECT_EQ(r->box_tests, st.box_tests);  // the same work, scheduled differently
  }
  EXPECT_EQ(st.wave_limit_per_simd, 10u);
  EXPECT_LE(st.peak_active_waves_per_simd, 10u);
  EXPECT_GT(d16.average_active_waves_per_simd, st.average_active_waves_per_simd);
  EXPECT_GT(d32.average_active_waves_per_simd, st.average_active_waves_per_simd);
  EXPECT_GT(d16.peak_active_waves_per_simd, 10u);

  expect_quoted(doc_table_row("`rdna4` (static, 10 waves)", st));
  expect_quoted(doc_table_row("`rdna4-dvgpr16`", d16));
  expect_quoted(doc_table_row("`rdna4-dvgpr32`", d32));
  const double more = 100.0 * (static_cast<double>(d16.cycles) / static_cast<double>(st.cycles) - 1.0);
  expect_quoted("about " + std::to_string(std::lround(std::abs(more))) + (more >= 0 ? " % more" : " % fewer") +
                " cycles (" + std::to_string(d16.waves_waited_on_vgprs) + " and " +
                std::to_string(d32.waves_waited_on_vgprs) + " waves waited");
  // Why: the same DRAM line fills, and an L0 that serves fewer of its requests.
  const auto l0_served = [](const MachineResult& r) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f %%", 100.0 * r.memory_levels[0].served_fraction());
    return std::string(rate);
  };
  EXPECT_EQ(d16.memory_levels.back().requests, st.memory_levels.back().requests);
  expect_quoted("L0 served " + l0_served(d16) + " instead of " + l0_served(st));
  expect_quoted(std::to_string(st.memory_levels.back().requests) + " DRAM line fills");
}

TEST(MachineModel, InOrderReturnsDifferFromOutOfOrder) {
  const Sequences& s = scene_sequences();
  const MachineResult ooo = run_machine_model(one_cold_cu("rdna4"), s);
  const MachineResult in_order =
      run_machine_model(preset("rdna4", R"("memory": {"in_order_returns": true})"), s);
  const MachineResult r3 = run_machine_model(one_cold_cu("rdna3"), s);
  EXPECT_NE(in_order.cycles, ooo.cycles);
  EXPECT_GT(in_order.mean_node_fetch_latency, ooo.mean_node_fetch_latency);
  EXPECT_GT(r3.cycles, ooo.cycles);
  EXPECT_EQ(r3.memory_levels.back().requests, ooo.memory_levels.back().requests);  // the same DRAM line fills

  expect_quoted(doc_table_row("`rdna4`, in-order returns", in_order));
  expect_quoted(doc_table_row("`rdna3`", r3));
  char more[128];
  std::snprintf(more, sizeof more, "%.1f %% more cycles",
                100.0 * (static_cast<double>(in_order.cycles) / static_cast<double>(ooo.cycles) - 1.0));
  expect_quoted(more);
  expect_quoted("latency " + std::to_string(std::lround(in_order.mean_node_fetch_latency)) + " instead of " +
                std::to_string(std::lround(ooo.mean_node_fetch_latency)) + " cycles");
}

}  // namespace
}  // namespace hwbvh::emu
