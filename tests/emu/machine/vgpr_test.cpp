// VGPR allocation rules of the machine model (docs/machine-model.md §8): static occupancy, and the
// dynamic register file's blocks, slots, all-or-nothing requests, 8-block cap and deadlock-avoidance reserve.
#include <gtest/gtest.h>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/vgpr.h"

namespace hwbvh::emu {
namespace {

DynamicVgprParams params(uint32_t block, bool avoidance, uint32_t file = 1536, uint32_t slots = 16) {
  DynamicVgprParams p;
  p.file_vgprs = file;
  p.block_vgprs = block;
  p.max_blocks = 8;
  p.wave_limit = slots;
  p.deadlock_avoidance = avoidance;
  return p;
}

TEST(MachineVgpr, StaticOccupancyUsesGranule24) {
  // §8.1: min(16, floor(1536 / roundup(V, 24))): 16 waves up to 96 VGPRs. (§8.1 also says "256 VGPRs -> 6
  // waves", which the formula does not give: 256 rounds up to 264, and 1536 / 264 = 5. The formula is used.)
  EXPECT_EQ(static_waves_per_simd(96, 24, 1536, 16), 16u);
  EXPECT_EQ(static_waves_per_simd(97, 24, 1536, 16), 12u);   // 120 VGPRs each
  EXPECT_EQ(static_waves_per_simd(128, 24, 1536, 16), 10u);  // 144 each
  EXPECT_EQ(static_waves_per_simd(240, 24, 1536, 16), 6u);
  EXPECT_EQ(static_waves_per_simd(256, 24, 1536, 16), 5u);   // 264 each
  EXPECT_EQ(static_waves_per_simd(0, 24, 1536, 16), 16u);    // still one granule
  EXPECT_EQ(static_waves_per_simd(24, 24, 1536, 16), 16u);   // the slot limit
  EXPECT_EQ(static_waves_per_simd(256, 24, 200, 16), 0u);    // does not fit
}

TEST(MachineVgpr, PoolSizesFollowSpec) {
  // §8.2 [derived]: 16 slots; block 16 -> 73 pool blocks with avoidance (80 without); block 32 -> 25 (32).
  const DynamicVgprFile b16(params(16, true));
  EXPECT_EQ(b16.pool_blocks(), 73u);
  EXPECT_EQ(b16.reserve_blocks(), 7u);
  EXPECT_EQ(DynamicVgprFile(params(16, false)).pool_blocks(), 80u);
  EXPECT_EQ(DynamicVgprFile(params(16, false)).reserve_blocks(), 0u);
  EXPECT_EQ(DynamicVgprFile(params(32, true)).pool_blocks(), 25u);
  EXPECT_EQ(DynamicVgprFile(params(32, false)).pool_blocks(), 32u);
  EXPECT_THROW(DynamicVgprFile(params(32, true, 600)), Error);  // 512 slot VGPRs + 224 reserve > 600
}

TEST(MachineVgpr, BlockGranularity) {
  const DynamicVgprFile b16(params(16, true)), b32(params(32, true));
  EXPECT_EQ(b16.blocks_for(0), 1u);  // never below the launch block
  EXPECT_EQ(b16.blocks_for(1), 1u);
  EXPECT_EQ(b16.blocks_for(16), 1u);
  EXPECT_EQ(b16.blocks_for(17), 2u);
  EXPECT_EQ(b16.blocks_for(128), 8u);
  EXPECT_EQ(b32.blocks_for(33), 2u);
  EXPECT_EQ(b32.blocks_for(256), 8u);

  DynamicVgprFile f(params(16, false));
  const uint32_t s = *f.launch();
  ASSERT_TRUE(f.s_alloc_vgpr(s, 40));  // 3 blocks: 2 from the pool
  EXPECT_EQ(f.held_blocks(s), 3u);
  EXPECT_EQ(f.free_pool_blocks(), 78u);
}

TEST(MachineVgpr, EverySlotOwnsOneBlock) {
  DynamicVgprFile f(params(16, true));
  for (uint32_t i = 0; i < 16; ++i) {
    const auto s = f.launch();
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(*s, i);
    EXPECT_EQ(f.held_blocks(*s), 1u);
  }
  EXPECT_FALSE(f.launch().has_value());  // the wave limit
  EXPECT_EQ(f.free_slots(), 0u);
  EXPECT_EQ(f.free_pool_blocks(), 73u);  // launching took nothing from the pool
  f.end_wave(5);
  EXPECT_EQ(f.free_slots(), 1u);
  EXPECT_EQ(*f.launch(), 5u);
}

TEST(MachineVgpr, AllOrNothingSuccessAndFailureSequence) {
  DynamicVgprFile f(params(32, false));  // 32 pool blocks
  const uint32_t a = *f.launch(), b = *f.launch(), c = *f.launch();
  EXPECT_TRUE(f.s_alloc_vgpr(a, 256));  // +7
  EXPECT_TRUE(f.s_alloc_vgpr(b, 256));  // +7
  EXPECT_TRUE(f.s_alloc_vgpr(c, 256));  // +7
  EXPECT_EQ(f.free_pool_blocks(), 11u);
  const uint32_t d = *f.launch(), e = *f.launch();
  EXPECT_TRUE(f.s_alloc_vgpr(d, 224));  // +6 -> 5 left
  const uint64_t v = f.version();
  EXPECT_FALSE(f.s_alloc_vgpr(e, 256));  // +7 does not fit: nothing changes
  EXPECT_EQ(f.held_blocks(e), 1u);
  EXPECT_EQ(f.free_pool_blocks(), 5u);
  EXPECT_EQ(f.version(), v);
  EXPECT_TRUE(f.s_alloc_vgpr(e, 192));  // +5 fits exactly
  EXPECT_EQ(f.free_pool_blocks(), 0u);
  EXPECT_TRUE(f.s_alloc_vgpr(a, 256));  // already held: nothing to do
  EXPECT_EQ(f.held_blocks(a), 8u);
  EXPECT_TRUE(f.s_alloc_vgpr(a, 32));   // shrinking never fails: 7 back
  EXPECT_EQ(f.held_blocks(a), 1u);
  EXPECT_EQ(f.free_pool_blocks(), 7u);
  EXPECT_TRUE(f.s_alloc_vgpr(a, 0));  // the launch block stays
  EXPECT_EQ(f.held_blocks(a), 1u);
  f.end_wave(b);
  EXPECT_EQ(f.free_pool_blocks(), 14u);
}

TEST(MachineVgpr, EightBlockCap) {
  DynamicVgprFile f(params(16, false));
  const uint32_t s = *f.launch();
  EXPECT_FALSE(f.s_alloc_vgpr(s, 129));  // 9 blocks of 16: above the maximum, though the pool has room
  EXPECT_EQ(f.held_blocks(s), 1u);
  EXPECT_TRUE(f.s_alloc_vgpr(s, 128));
  EXPECT_EQ(f.held_blocks(s), 8u);
  EXPECT_FALSE(f.s_alloc_vgpr(s, 144));
}

TEST(MachineVgpr, AvoidanceReserveServesOneWaveAtATime) {
  // Block 32 with avoidance: 25 pool blocks, 7 in reserve.
  DynamicVgprFile f(params(32, true));
  std::vector<uint32_t> w;
  for (int i = 0; i < 5; ++i) w.push_back(*f.launch());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(f.s_alloc_vgpr(w[i], 256));  // 21 pool blocks
  EXPECT_EQ(f.free_pool_blocks(), 4u);
  EXPECT_FALSE(f.reserve_owner().has_value());

  ASSERT_TRUE(f.s_alloc_vgpr(w[3], 192));  // +5: the pool's 4 and one reserve block
  EXPECT_EQ(f.free_pool_blocks(), 0u);
  EXPECT_EQ(f.free_reserve_blocks(), 6u);
  EXPECT_EQ(f.reserve_owner(), w[3]);

  EXPECT_FALSE(f.s_alloc_vgpr(w[4], 64));  // the reserve is taken: another wave may not draw on it
  ASSERT_TRUE(f.s_alloc_vgpr(w[3], 256));  // the owner can always reach the maximum
  EXPECT_EQ(f.held_blocks(w[3]), 8u);
  EXPECT_EQ(f.free_reserve_blocks(), 4u);

  f.end_wave(w[3]);  // 7 blocks back: the reserve refills first, the rest to the pool
  EXPECT_FALSE(f.reserve_owner().has_value());
  EXPECT_EQ(f.free_reserve_blocks(), 7u);
  EXPECT_EQ(f.free_pool_blocks(), 4u);
  ASSERT_TRUE(f.s_alloc_vgpr(w[4], 256));  // now w[4] may use it
  EXPECT_EQ(f.reserve_owner(), w[4]);
  EXPECT_TRUE(f.s_alloc_vgpr(w[4], 128));  // shrinking gives reserve blocks back first
  EXPECT_FALSE(f.reserve_owner().has_value());
  EXPECT_EQ(f.free_reserve_blocks(), 7u);
  EXPECT_EQ(f.held_blocks(w[4]), 4u);
  EXPECT_EQ(f.free_pool_blocks(), 1u);

  DynamicVgprFile off(params(32, false));  // without avoidance there is no reserve to fall back on
  const uint32_t x = *off.launch();
  EXPECT_EQ(off.reserve_blocks(), 0u);
  EXPECT_TRUE(off.s_alloc_vgpr(x, 256));
  EXPECT_FALSE(off.reserve_owner().has_value());
}

}  // namespace
}  // namespace hwbvh::emu
