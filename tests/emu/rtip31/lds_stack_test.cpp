// DS_BVH_STACK_PUSH8_POP1 / PUSH8_POP2 emulation (docs/rtip31-format.md §6).
#include <gtest/gtest.h>

#include <random>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip31/lds_stack.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::emu {
namespace {

using rdna4::kInvalidNode;
using rdna4::kTerminalNode;
constexpr uint32_t I = kInvalidNode;
using Slots = std::array<uint32_t, 8>;

constexpr uint32_t box(uint32_t i) { return (i << 4) | 5; }
constexpr uint32_t prim(uint32_t i, uint32_t type = 0) { return (i << 4) | type; }

std::vector<uint32_t> drain(LdsStack& s) {
  std::vector<uint32_t> out;
  for (uint32_t x = s.pop(); x < rdna4::kEndSearch; x = s.pop()) out.push_back(x);
  return out;
}

TEST(LdsStack, PushOrderAndPopReturnsSlotZero) {
  LdsStack s;
  const Slots data{box(1), box(2), box(3), box(4), box(5), I, I, I};
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, data), box(1));
  EXPECT_EQ(s.traffic().pushes, 5u);
  EXPECT_EQ(s.traffic().pops, 1u);
  EXPECT_EQ(s.traffic().max_depth, 5u);
  EXPECT_EQ(s.address().valid_count, 4u);
  // The rest come back in sort order: slot 1 on top.
  EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(2), box(3), box(4), box(5)}));
  EXPECT_EQ(s.pop(), kTerminalNode);
  EXPECT_EQ(s.traffic().pops, 5u);  // pops of an empty ring are not counted
}

TEST(LdsStack, AllInvalidPopsTerminal) {
  LdsStack s;
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{I, I, I, I, I, I, I, I}), kTerminalNode);
  EXPECT_EQ(s.traffic().pushes, 0u);
}

TEST(LdsStack, OverflowAtExactlySixteenEntries) {
  LdsStack s;
  s.push8(I, Slots{box(1), box(2), box(3), box(4), box(5), box(6), box(7), box(8)}, true);
  s.push8(I, Slots{box(9), box(10), box(11), box(12), box(13), box(14), box(15), box(16)}, true);
  EXPECT_EQ(s.address().valid_count, 16u);
  EXPECT_FALSE(s.address().overflowed);  // 16 entries fit exactly
  EXPECT_EQ(s.traffic().lost, 0u);
  s.push8(I, Slots{box(17), I, I, I, I, I, I, I}, true);
  EXPECT_TRUE(s.address().overflowed);
  EXPECT_EQ(s.address().valid_count, 16u);
  EXPECT_EQ(s.traffic().lost, 1u);
  // The oldest entry (box 8, pushed first) was overwritten; 16 pops empty the ring, the 17th is INVALID.
  const std::vector<uint32_t> got = drain(s);
  ASSERT_EQ(got.size(), 16u);
  EXPECT_EQ(got.front(), box(17));
  EXPECT_EQ(got.back(), box(7));
  EXPECT_EQ(s.pop(), kInvalidNode);
  EXPECT_EQ(s.pop(), kInvalidNode);  // stays INVALID: overflowed is sticky
}

TEST(LdsStack, SmallRingSize) {
  LdsStack s(StackOptions{4});
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(1), box(2), box(3), box(4), box(5), box(6), I, I}), box(1));
  EXPECT_EQ(s.traffic().lost, 2u);  // 6 pushes into 4 entries
  EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(2), box(3), box(4)}));
  EXPECT_EQ(s.pop(), kInvalidNode);
  EXPECT_THROW(LdsStack(StackOptions{1}), Error);
  EXPECT_THROW(LdsStack(StackOptions{65}), Error);
  EXPECT_NO_THROW(LdsStack(StackOptions{64}));
}

TEST(LdsStack, SkipSentinels) {
  LdsStack s;
  // SKIP_4_7 in slot 6: slot 5 and 4 are not pushed; slots 7 and 0..3 are.
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(0), box(1), box(2), box(3), box(4), box(5), rdna4::kSkip4To7,
                                                box(7)}),
            box(0));
  EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(1), box(2), box(3), box(7)}));
  // SKIP_0_7 in slot 6 (the instance-node case): only slot 7 is pushed and returned.
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(0), box(1), box(2), box(3), box(4), box(5), rdna4::kSkip0To7,
                                                box(7)}),
            box(7));
  EXPECT_EQ(s.pop(), kTerminalNode);
  // SKIP_0_3 in slot 2: slots 1 and 0 are not pushed.
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(0), box(1), rdna4::kSkip0To3, box(3), I, I, I, I}), box(3));
  EXPECT_EQ(s.pop(), kTerminalNode);
}

// A primitive-node result: triangle data in slots 0..6 (values that look like pointers must not be pushed),
// the node pointer in slot 7, last = 0xFFFFFFF8 | nav.
uint32_t range_step(LdsStack& s, uint32_t node, uint32_t nav) {
  return ds_bvh_stack_push8_pop1(s, rdna4::kEndSearch | nav, Slots{box(1), box(2), 3, 4, 5, 6, 7, node});
}

TEST(LdsStack, PrimitiveRangeUpdate) {
  LdsStack s;
  s.push8(I, Slots{box(9), I, I, I, I, I, I, I}, true);  // something below, to see what END_OF_RANGE returns
  EXPECT_EQ(range_step(s, prim(4, 0), rdna4::kNavEndOfPair), prim(4, 1));
  EXPECT_EQ(range_step(s, prim(4, 2), rdna4::kNavEndOfPair), prim(4, 3));
  EXPECT_EQ(range_step(s, prim(4, 3), rdna4::kNavEndOfPair), prim(4, 8));  // pair 3 -> 4 is type 3 -> 8
  EXPECT_EQ(range_step(s, prim(4, 8), rdna4::kNavEndOfPair), prim(4, 9));
  EXPECT_EQ(range_step(s, prim(4, 10), rdna4::kNavEndOfNode), prim(5, 0));  // next node, pair 0
  EXPECT_EQ(range_step(s, prim(4, 1), rdna4::kNavEndOfNode), prim(5, 0));
  EXPECT_EQ(s.traffic().pushes, 7u);                                     // one per range continuation
  EXPECT_EQ(range_step(s, prim(5, 0), rdna4::kNavEndOfRange), box(9));  // nothing pushed: the stack pops
  EXPECT_EQ(s.traffic().pushes, 7u);
  EXPECT_EQ(range_step(s, prim(5, 0), rdna4::kNavEndOfRange), kTerminalNode);
}

TEST(LdsStack, PrimitiveRangeUpdateOfASentinelPushesNothing) {
  // Slot 7 holds a sentinel (not a node pointer): there is no range to continue, and no other slot is pushed.
  LdsStack s;
  s.push8(I, Slots{box(9), I, I, I, I, I, I, I}, true);
  EXPECT_EQ(range_step(s, rdna4::kEndSearch | 1u, rdna4::kNavEndOfPair), box(9));
  EXPECT_EQ(s.traffic().pushes, 1u);
}

TEST(LdsStack, WalkBackRePushRules) {
  const Slots data{prim(7, 1), prim(8), box(2), box(3), box(4), I, I, I};
  {
    // last = a box child: only the children sorted after it are pushed.
    LdsStack s;
    EXPECT_EQ(ds_bvh_stack_push8_pop1(s, box(3), data), box(4));
    EXPECT_EQ(s.pop(), kTerminalNode);
  }
  {
    // last = the last child: nothing is pushed.
    LdsStack s;
    EXPECT_EQ(ds_bvh_stack_push8_pop1(s, box(4), data), kTerminalNode);
  }
  {
    // last = a primitive (any pair pointer): every primitive counts as visited, every box is re-pushed.
    LdsStack s;
    EXPECT_EQ(ds_bvh_stack_push8_pop1(s, prim(99, 2), data), box(2));
    EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(3), box(4)}));
  }
  {
    // last not among the children and no primitive children: nothing is pushed.
    LdsStack s;
    EXPECT_EQ(ds_bvh_stack_push8_pop1(s, box(50), Slots{box(2), box(3), I, I, I, I, I, I}), kTerminalNode);
  }
  {
    // Without primitive-range mode only the exact match stops the pushes: both primitives before it are skipped.
    LdsStack s;
    EXPECT_EQ(ds_bvh_stack_push8_pop1(s, prim(8), data, false), box(2));
    EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(3), box(4)}));
  }
}

TEST(LdsStack, TlasTracking) {
  LdsStack s;
  // TLAS level: two instance nodes; the first is popped (entering its BLAS).
  const uint32_t inst_a = (10u << 4) | 6, inst_b = (11u << 4) | 6;
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{inst_a, inst_b, I, I, I, I, I, I}), inst_a);
  EXPECT_TRUE(s.address().tlas_in_stack);
  EXPECT_EQ(s.address().to_tlas, 0u);
  // BLAS level: push the root and two children.
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(1), I, I, I, I, I, I, I}), box(1));
  EXPECT_FALSE(s.address().blas_to_tlas_pop);
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(2), box(3), I, I, I, I, I, I}), box(2));
  EXPECT_EQ(s.pop(), box(3));
  EXPECT_FALSE(s.address().blas_to_tlas_pop);
  // BLAS exhausted: the next pop crosses back into the TLAS.
  EXPECT_EQ(s.pop(), inst_b);
  EXPECT_TRUE(s.address().tlas_in_stack);  // set again: inst_b is an instance being entered
  // The second BLAS is exhausted at once: the crossing finds an empty ring, which reports TERMINAL (no overflow)
  // and clears both TLAS bits.
  EXPECT_EQ(s.pop(), kTerminalNode);
  EXPECT_FALSE(s.address().blas_to_tlas_pop);
  EXPECT_FALSE(s.address().tlas_in_stack);
}

TEST(LdsStack, BlasToTlasPopFlag) {
  LdsStack s;
  const uint32_t inst = (10u << 4) | 6;
  ds_bvh_stack_push8_pop1(s, I, Slots{inst, box(20), I, I, I, I, I, I});  // pops inst, box(20) stays (TLAS)
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{box(1), I, I, I, I, I, I, I}), box(1));
  EXPECT_EQ(ds_bvh_stack_push8_pop1(s, I, Slots{I, I, I, I, I, I, I, I}), box(20));
  EXPECT_TRUE(s.address().blas_to_tlas_pop);
  EXPECT_FALSE(s.address().tlas_in_stack);
}

// ds_bvh_stack_push8_pop1 takes a shortcut for a box result outside walk-back when the ring has room; push8 then
// pop go the long way. Random results (pointers of every type, sentinels, INVALID), random `last` values and rings
// of several sizes: both give the same node, address word, ring entries and traffic after every operation.
TEST(LdsStack, Push8Pop1EqualsPush8ThenPop) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> pick(0, 99);
  const auto slot = [&] {
    const uint32_t r = pick(rng);
    if (r < 45) return I;
    if (r < 50) return rdna4::kEndSearch + pick(rng) % 7;  // sentinels 0xFFFFFFF8..0xFFFFFFFE
    if (r < 53) return (pick(rng) << 4) | 6;                // instance node
    if (r < 75) return box(1 + pick(rng));
    return prim(1 + pick(rng), pick(rng) % 4);
  };
  for (uint32_t size : {2u, 4u, 8u, 16u}) {
    LdsStack fused(StackOptions{size}), stepwise(StackOptions{size});
    for (int op = 0; op < 3000; ++op) {
      if (op % 40 == 0) fused = stepwise = LdsStack(StackOptions{size});  // fresh rings, where max_depth still grows
      Slots data;
      for (uint32_t& x : data) x = slot();
      if (pick(rng) < 15) data = {I, I, I, I, I, I, rdna4::kSkip0To7, slot()};  // an instance node's result
      const uint32_t r = pick(rng);
      const uint32_t last = r < 70 ? I : r < 85 ? rdna4::kEndSearch | pick(rng) % 4 : data[pick(rng) % 8];
      const uint32_t node = ds_bvh_stack_push8_pop1(fused, last, data);
      stepwise.push8(last, data, true);
      ASSERT_EQ(node, stepwise.pop()) << "size " << size << ", operation " << op;
      ASSERT_EQ(fused.address(), stepwise.address());
      for (uint32_t i = 0; i < size; ++i) ASSERT_EQ(fused.entry(i), stepwise.entry(i));
      const StackTraffic& a = fused.traffic();
      const StackTraffic& b = stepwise.traffic();
      ASSERT_EQ(std::tie(a.pushes, a.pops, a.lost, a.max_depth), std::tie(b.pushes, b.pops, b.lost, b.max_depth));
    }
  }
}

TEST(LdsStack, PackedAddressLayout) {
  StackAddress a;
  a.valid_count = 16;
  a.to_tlas = 5;
  a.write_index = 9;
  a.base = 0x2ABC;
  a.tlas_in_stack = true;
  a.overflowed = false;
  a.blas_to_tlas_pop = true;
  const uint32_t expected = 16u | (5u << 5) | (9u << 10) | (0x2ABCu << 15) | (1u << 29) | (1u << 31);
  EXPECT_EQ(a.pack(), expected);
  EXPECT_EQ(StackAddress::unpack(expected), a);
  for (uint32_t v : {0u, 0xFFFFFFFFu, 0x40000000u, 0x12345678u}) EXPECT_EQ(StackAddress::unpack(v).pack(), v);
  LdsStack s(StackOptions{}, 0x123);
  EXPECT_EQ(s.address().pack(), 0x123u << 15);  // initial value: base only
}

TEST(LdsStack, Push8Pop2) {
  {
    // Two entries: the first pop and the entry below it.
    LdsStack s;
    const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{box(1), box(2), box(3), I, I, I, I, I});
    EXPECT_EQ(r, (std::array<uint32_t, 2>{box(2), box(1)}));
    EXPECT_EQ(s.pop(), box(3));
  }
  {
    // A triangle-1 pointer also returns triangle 0 of the same node.
    LdsStack s;
    const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{prim(4, 1), box(2), I, I, I, I, I, I});
    EXPECT_EQ(r, (std::array<uint32_t, 2>{prim(4, 0), prim(4, 1)}));
    EXPECT_EQ(s.pop(), box(2));
  }
  {
    // A single entry goes to the first slot; an empty stack gives (TERMINAL, INVALID).
    LdsStack s;
    EXPECT_EQ(ds_bvh_stack_push8_pop2(s, I, Slots{box(1), I, I, I, I, I, I, I}),
              (std::array<uint32_t, 2>{box(1), I}));
    EXPECT_EQ(ds_bvh_stack_push8_pop2(s, I, Slots{I, I, I, I, I, I, I, I}),
              (std::array<uint32_t, 2>{kTerminalNode, I}));
  }
  {
    // The second pop never returns an instance node (it must be entered alone).
    LdsStack s;
    const uint32_t inst = (10u << 4) | 6;
    EXPECT_EQ(ds_bvh_stack_push8_pop2(s, I, Slots{box(1), inst, I, I, I, I, I, I}),
              (std::array<uint32_t, 2>{box(1), I}));
    EXPECT_EQ(s.pop(), inst);
  }
  {
    // No primitive-range update in POP2: a primitive pointer in slot 7 with last = 0xFFFFFFF8 is an ordinary push.
    LdsStack s;
    const auto r = ds_bvh_stack_push8_pop2(s, rdna4::kEndSearch, Slots{I, I, I, I, I, I, I, prim(4, 0)});
    EXPECT_EQ(r, (std::array<uint32_t, 2>{prim(4, 0), I}));
  }
}

}  // namespace
}  // namespace hwbvh::emu
