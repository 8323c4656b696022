// The stack instructions of the BVH4 targets against the spec: RDNA 3's DS_BVH_STACK_RTN_B32 (push4/pop1,
// docs/rtip31-format.md §6.6) and DS_BVH_STACK_PUSH8_POP2_RTN_B64 as the BVH4x2
// loop drives it (§6.3, §6.5).
#include <gtest/gtest.h>

#include <vector>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip31/lds_stack.h"
#include "hwbvh/emu/rtip20/stack.h"
#include "hwbvh/formats/rdna3/node_pointer.h"

namespace hwbvh::emu {
namespace {

using rdna3::kInvalidNode;
using rdna3::kTerminalNode;
constexpr uint32_t I = kInvalidNode;
using Data4 = std::array<uint32_t, 4>;
using Slots = std::array<uint32_t, 8>;

constexpr uint32_t box(uint32_t i) { return (i << 4) | 5; }
constexpr uint32_t tri(uint32_t i, uint32_t type = 0) { return (i << 3) | type; }

// Pops until the stack says TERMINAL or INVALID; returns what came out, then that end marker.
std::vector<uint32_t> drain(Rdna3Stack& s) {
  std::vector<uint32_t> out;
  while (true) {
    out.push_back(ds_bvh_stack_rtn(s, kTerminalNode, {I, I, I, I}));
    if (out.back() == kTerminalNode || out.back() == kInvalidNode) return out;
  }
}

TEST(Rdna3Stack, PushesWZYAndReturnsX) {
  Rdna3Stack s;
  EXPECT_EQ(ds_bvh_stack_rtn(s, I, {box(1), box(2), box(3), box(4)}), box(1));  // x returned, never stored
  EXPECT_EQ(s.index(), 3u);
  EXPECT_EQ(s.entry(0), box(4));  // w first, then z, then y
  EXPECT_EQ(s.entry(1), box(3));
  EXPECT_EQ(s.entry(2), box(2));
  EXPECT_EQ(s.traffic().pushes, 3u);
  EXPECT_EQ(s.traffic().pops, 0u);
  EXPECT_EQ(s.traffic().max_depth, 3u);
  // The rest come back in sort order (y on top), then TERMINAL at index 0.
  EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(2), box(3), box(4), kTerminalNode}));
  EXPECT_EQ(s.traffic().pops, 3u);
  EXPECT_EQ(s.index(), 0u);
}

TEST(Rdna3Stack, InvalidSlotsAreNotPushedAndAnInvalidXPops) {
  Rdna3Stack s;
  EXPECT_EQ(ds_bvh_stack_rtn(s, I, {box(1), I, box(3), I}), box(1));
  EXPECT_EQ(s.traffic().pushes, 1u);
  // x invalid: y, z, w are pushed, then the top is popped — the closest pushed child.
  EXPECT_EQ(ds_bvh_stack_rtn(s, I, {I, box(5), box(6), I}), box(5));
  EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(6), box(3), kTerminalNode}));
  EXPECT_EQ(ds_bvh_stack_rtn(s, I, {I, I, I, I}), kTerminalNode);
}

TEST(Rdna3Stack, TerminalAsLastPushesNothingAndPops) {
  Rdna3Stack s;
  ds_bvh_stack_rtn(s, I, {box(1), box(2), I, I});
  // A triangle step: its four result dwords are floats, never pushed.
  EXPECT_EQ(ds_bvh_stack_rtn(s, kTerminalNode, {0x40000000, 0x3F800000, 0x3E800000, 0x3E800000}), box(2));
  EXPECT_EQ(s.traffic().pushes, 1u);
}

TEST(Rdna3Stack, WalkBackPushesOnlyWhatSortsAfterLast) {
  const Data4 data{box(1), box(2), box(3), box(4)};
  {
    Rdna3Stack s;  // came back from box 2: boxes 3 and 4 are still to do
    EXPECT_EQ(ds_bvh_stack_rtn(s, box(2), data), box(3));
    EXPECT_EQ(drain(s), (std::vector<uint32_t>{box(4), kTerminalNode}));
  }
  {
    Rdna3Stack s;  // came back from box 4, the last one: nothing left here
    EXPECT_EQ(ds_bvh_stack_rtn(s, box(4), data), kTerminalNode);
    EXPECT_EQ(s.traffic().pushes, 0u);
  }
  {
    Rdna3Stack s;  // came back from box 1: 2, 3, 4 pushed, and x (= last) is not returned
    EXPECT_EQ(ds_bvh_stack_rtn(s, box(1), data), box(2));
    EXPECT_EQ(s.traffic().pushes, 3u);
  }
  {
    Rdna3Stack s;  // last is not among the results (it now misses): nothing is pushed
    EXPECT_EQ(ds_bvh_stack_rtn(s, box(9), data), kTerminalNode);
    EXPECT_EQ(s.traffic().pushes, 0u);
  }
}

TEST(Rdna3Stack, OverflowOverwritesTheOldestAndPopsInvalidBelowIt) {
  Rdna3Stack s(StackOptions{8});
  // 4 x 3 = 12 pushes into 8 entries (x is returned each time): the four oldest, boxes 3, 2, 1 and 6, are lost.
  for (uint32_t i = 0; i < 4; ++i) {
    ds_bvh_stack_rtn(s, I, {box(100 + i), box(3 * i + 1), box(3 * i + 2), box(3 * i + 3)});
  }
  EXPECT_EQ(s.index(), 12u);
  EXPECT_EQ(s.traffic().lost, 4u);
  EXPECT_EQ(s.traffic().max_depth, 8u);
  const std::vector<uint32_t> got = drain(s);
  ASSERT_EQ(got.size(), 9u);
  EXPECT_EQ(got.front(), box(10));  // the last instruction's y is on top
  EXPECT_EQ(got[7], box(5));
  EXPECT_EQ(got[8], kInvalidNode);  // popped into the overwritten region: walk back
  EXPECT_EQ(s.index(), 3u);
  // The traversal adds one back; from then on a drained stack keeps answering INVALID_NODE, never TERMINAL.
  s.undo_invalid_pop();
  EXPECT_EQ(s.index(), 4u);
  EXPECT_EQ(ds_bvh_stack_rtn(s, I, {I, box(20), I, I}), box(20));
  EXPECT_EQ(ds_bvh_stack_rtn(s, kTerminalNode, {I, I, I, I}), kInvalidNode);
  EXPECT_EQ(s.traffic().pops, 9u);  // reading a replaced INVALID_NODE is not a pop
}

TEST(Rdna3Stack, PackedAddressAndSizes) {
  Rdna3Stack s(StackOptions{16}, 0x123);
  ds_bvh_stack_rtn(s, I, {box(9), box(1), box(2), I});
  EXPECT_EQ(s.packed_address(), (0x123u << 18) | 2u);
  EXPECT_EQ(s.size(), 16u);
  EXPECT_THROW(Rdna3Stack(StackOptions{1}), Error);
  EXPECT_THROW(Rdna3Stack(StackOptions{65}), Error);
}

TEST(Rdna3Stack, IndexSaturates) {
  Rdna3Stack s(StackOptions{8});
  const uint32_t ops = kRdna3StackIndexMax / 3 + 2;
  for (uint32_t i = 0; i < ops; ++i) ds_bvh_stack_rtn(s, I, {box(9), box(1), box(2), box(3)});
  EXPECT_EQ(s.index(), kRdna3StackIndexMax);
  EXPECT_EQ(s.traffic().pushes, 3u * ops);
}

// PUSH8_POP2 the way the BVH4x2 loop feeds it: DW0..3 = node x's result, DW4..7 = node y's, triangle slots
// replaced by push controls.
TEST(Push8Pop2ForBvh4x2, TwoBoxResults) {
  LdsStack s;
  // Node x's children a1 < a2, node y's b1 < b2: pushed 7..0, so x's come out first, two at a time.
  const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{box(1), box(2), I, I, box(3), box(4), I, I});
  EXPECT_EQ(r, (std::array<uint32_t, 2>{box(2), box(1)}));  // (first, second) = (try_pop, pop)
  EXPECT_EQ(ds_bvh_stack_push8_pop2(s, I, Slots{I, I, I, I, I, I, I, I}), (std::array<uint32_t, 2>{box(4), box(3)}));
  EXPECT_EQ(ds_bvh_stack_push8_pop2(s, I, Slots{I, I, I, I, I, I, I, I}),
            (std::array<uint32_t, 2>{kTerminalNode, I}));
}

TEST(Push8Pop2ForBvh4x2, TrianglePairComesOutWhole) {
  LdsStack s;
  // A pair node's triangle-1 pointer on top: the pop returns it as second and its triangle 0 as first.
  const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{tri(40, 1), box(2), I, I, I, I, I, I});
  EXPECT_EQ(r, (std::array<uint32_t, 2>{tri(40, 0), tri(40, 1)}));
  EXPECT_EQ(s.address().valid_count, 1u);
}

TEST(Push8Pop2ForBvh4x2, PushControlsOfTriangleSlots) {
  constexpr uint32_t kSkip0To3 = 0xFFFFFFFDu, kSkip4To7 = 0xFFFFFFFBu, kTag = 0x80000000u;
  {
    // y was a triangle (DW7 = SKIP_4_7), x a box: only x's children are pushed.
    LdsStack s;
    const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{box(1), box(2), I, I, 0x40000000, 0, 0, kSkip4To7});
    EXPECT_EQ(r, (std::array<uint32_t, 2>{box(2), box(1)}));
    EXPECT_EQ(s.traffic().pushes, 2u);
  }
  {
    // x was triangle 1 of a pair whose triangle 0 is not with it: DW2 = SKIP_0_3, DW3 = tagged triangle 0; y a box.
    LdsStack s;
    const uint32_t tri0 = tri(40, 0) | kTag;
    const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{0x40000000, 0, kSkip0To3, tri0, box(5), I, I, I});
    EXPECT_EQ(s.traffic().pushes, 2u);  // box 5 (slot 4) first, then the tagged triangle 0 (slot 3)
    EXPECT_EQ(r, (std::array<uint32_t, 2>{box(5), tri0}));
  }
  {
    // Both triangles (x = triangle 0, y = triangle 1 of one node): nothing pushed, the next two are popped.
    LdsStack s;
    s.push8(I, Slots{box(7), box(8), I, I, I, I, I, I}, false);
    const auto r = ds_bvh_stack_push8_pop2(s, I, Slots{0, 0, 0, kSkip0To3, 0, 0, 0, kSkip4To7});
    EXPECT_EQ(r, (std::array<uint32_t, 2>{box(8), box(7)}));
  }
}

TEST(Push8Pop2ForBvh4x2, WalkBackRePushesOnlyLaterChildren) {
  LdsStack s;
  // Re-visiting the parent (x) alone after coming back from its child box 2: boxes 3 and 4 remain.
  const auto r = ds_bvh_stack_push8_pop2(s, box(2), Slots{box(1), box(2), box(3), box(4), I, I, I, I});
  EXPECT_EQ(r, (std::array<uint32_t, 2>{box(4), box(3)}));
  EXPECT_EQ(s.traffic().pushes, 2u);
}

}  // namespace
}  // namespace hwbvh::emu
