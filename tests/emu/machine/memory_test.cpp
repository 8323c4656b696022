// The machine model's memory hierarchy: latency per level, merging with fills in flight, LRU within a set, port
// bandwidth and the limit on misses in flight, each cycle computed by hand.
#include <gtest/gtest.h>

#include "emu/machine/memory.h"

namespace hwbvh::emu::machine {
namespace {

// L0: 2 sets x 2 ways of 64-byte lines, hit 10, 2 misses in flight; a coalescing buffer of 128-byte lines (hit 20);
// the memory: 100 cycles, 8 bytes per clock.
const std::vector<MemoryLevelConfig> kLevels{
    {.name = "L0", .bytes = 256, .line_bytes = 64, .ways = 2, .hit_latency = 10, .bytes_per_clock = 64,
     .misses_in_flight = 2},
    {.name = "L1", .shared_by = SharedBy::ShaderArray, .bytes = 0, .line_bytes = 128, .ways = 1, .hit_latency = 20, .bytes_per_clock = 128,
     .misses_in_flight = 4},
    {.name = "DRAM", .shared_by = SharedBy::Gpu, .bytes = 0, .line_bytes = 128, .ways = 1, .hit_latency = 100, .bytes_per_clock = 8,
     .misses_in_flight = 1}};

using Read = MemoryHierarchy::Read;

MemoryHierarchy one_cu(const std::vector<MemoryLevelConfig>& levels) {
  GpuConfig gpu;
  gpu.shader_engines = gpu.shader_arrays_per_engine = gpu.cus_per_shader_array = gpu.simulated_shader_arrays = 1;
  MemoryConfig memory;
  memory.levels = levels;
  return {memory, gpu};
}

TEST(MachineMemory, LatencyMergingLruBandwidthAndMissSlots) {
  MemoryHierarchy m = one_cu(kLevels);
  // A miss everywhere: the memory's port starts the 128-byte line at 0 (busy to 16), data at 0 + 100.
  Read r = m.read(0, 0, 4, 0);
  EXPECT_EQ(r.ready, 100u);
  EXPECT_EQ(r.level, 2u);
  // The other half of the 128-byte line: an L0 miss that merges with the L1 line in flight (returns with it).
  r = m.read(0, 64, 4, 1);
  EXPECT_EQ(r.ready, 100u);
  EXPECT_EQ(r.level, 1u);
  // An L0 hit: 200 + 10.
  r = m.read(0, 0, 4, 200);
  EXPECT_EQ(r.ready, 210u);
  EXPECT_EQ(r.level, 0u);
  // Two misses at 200: the memory's port serves the first at 200 (busy to 216), the second at 216.
  EXPECT_EQ(m.read(0, 1024, 4, 200).ready, 300u);
  EXPECT_EQ(m.read(0, 2048, 4, 200).ready, 316u);
  // A third L0 miss finds both miss slots taken: it starts when the first fill is back, at 300.
  EXPECT_EQ(m.read(0, 4096, 4, 200).ready, 400u);
  // L0 set 0 now holds lines 64 and 32 (the most recent): line 0 was evicted and the L1 keeps nothing.
  r = m.read(0, 0, 4, 500);
  EXPECT_EQ(r.ready, 600u);
  EXPECT_EQ(r.level, 2u);
  // A read spanning two L0 lines (60..67) asks for both: line 0 was just filled (in flight), line 1 is held.
  EXPECT_EQ(m.read(0, 60, 8, 501).ready, 600u);

  const std::vector<MemoryLevelResult>& c = m.counts();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].name, "L0");
  EXPECT_EQ(c[0].kind, MemoryLevelResult::Kind::Cache);
  EXPECT_EQ(c[0].requests, 9u);
  EXPECT_EQ(c[0].hits, 2u);    // 0 at 200 and 64 at 501
  EXPECT_EQ(c[0].merged, 1u);  // 0 at 501, in flight
  EXPECT_EQ(c[0].misses, 6u);
  EXPECT_EQ(c[0].first_touches, 5u);  // 0, 64, 1024, 2048, 4096; 0 again at 500 was held before
  EXPECT_EQ(c[0].bytes, 4u + 4 + 4);
  EXPECT_EQ(c[1].kind, MemoryLevelResult::Kind::MergeBuffer);
  EXPECT_EQ(c[1].requests, 6u);
  EXPECT_EQ(c[1].hits, 0u);
  EXPECT_EQ(c[1].merged, 1u);
  EXPECT_EQ(c[1].first_touches, 0u);  // it holds no lines
  EXPECT_EQ(c[1].bytes, 64u);
  EXPECT_EQ(c[2].kind, MemoryLevelResult::Kind::Memory);
  EXPECT_EQ(c[2].requests, 5u);
  EXPECT_EQ(c[2].hits, 5u);
  EXPECT_EQ(c[2].misses, 0u);
  EXPECT_EQ(c[2].bytes, 5u * 128);
  EXPECT_DOUBLE_EQ(c[2].bandwidth_use(1000), 5.0 * 128 / 1000 / 8);  // bytes / (cycles x port width)
}

// A port wider than a line serves several lines a cycle; one narrower than a line takes several cycles a line.
TEST(MachineMemory, PortWidthIsCountedInBytes) {
  std::vector<MemoryLevelConfig> levels = kLevels;
  for (const auto& [width, second] : {std::pair{64u, 211u}, {128u, 210u}, {32u, 212u}}) {
    SCOPED_TRACE(width);
    levels[0].bytes_per_clock = width;
    MemoryHierarchy m = one_cu(levels);
    m.read(0, 0, 128, 0);  // fills L0 lines 0 and 64
    // Two held 64-byte lines asked for at 200: the first starts at 200; the second when the port has moved the
    // first's 64 bytes: at once on a 128-byte port, 1 cycle later at 64 bytes, 2 cycles later at 32.
    EXPECT_EQ(m.read(0, 0, 64, 200).ready, 210u);
    EXPECT_EQ(m.read(0, 64, 64, 200).ready, second);
  }
}

}  // namespace
}  // namespace hwbvh::emu::machine
