// RT IP 2.0 FP32 box node (docs/rtip31-format.md §8.1): golden bytes assembled by hand from the spec's table, and the
// decoder reading them back.
#include <gtest/gtest.h>

#include <limits>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/decode.h"

namespace hwbvh::rdna3 {
namespace {

// Float bit patterns used below.
constexpr uint32_t kOne = 0x3F800000, kTwo = 0x40000000, kHalf = 0x3F000000, kMinusOne = 0xBF800000,
                   kMinusTwoAndHalf = 0xC0200000, kZero = 0, kThree = 0x40400000, kTen = 0x41200000;

BoxNodeInput three_children() {
  BoxNodeInput in;
  in.child_count = 3;
  in.children[0] = {0x00000035u, Aabb{{-1.0f, 0.0f, 0.5f}, {1.0f, 2.0f, 3.0f}}, kBoxFlagOnlyTriangles};
  in.children[1] = {0x00000049u, Aabb{{-2.5f, -1.0f, -1.0f}, {0.5f, 0.5f, 10.0f}},
                    kBoxFlagOnlyTriangles | kBoxFlagOnlyOpaque};
  in.children[2] = {0x00000060u, Aabb{{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}},
                    kBoxFlagOnlyTriangles | kBoxFlagOnlyNonOpaque};
  in.primitive_count = 9;
  return in;
}

TEST(Rdna3BoxNode, GoldenBytesFromTheSpecTable) {
  const BoxNodeDwords expected = {
      // bytes 0..15: child pointers; slot 3 empty
      0x00000035, 0x00000049, 0x00000060, 0xFFFFFFFF,
      // bytes 16..39: child 0 min xyz, max xyz
      kMinusOne, kZero, kHalf, kOne, kTwo, kThree,
      // bytes 40..63: child 1
      kMinusTwoAndHalf, kMinusOne, kMinusOne, kHalf, kHalf, kTen,
      // bytes 64..87: child 2 (a point box)
      kZero, kZero, kZero, kZero, kZero, kZero,
      // bytes 88..111: empty slot 3, all zero
      0, 0, 0, 0, 0, 0,
      // byte 112: flags per child (child k in bits [8k+7:8k]), 0xFF for the empty slot; 116: triangle count
      0xFF060504, 9,
      // bytes 120..127: padding
      0, 0};
  EXPECT_EQ(encode_box_node(three_children()), expected);
}

TEST(Rdna3BoxNode, DecoderReadsTheFields) {
  const BoxNodeInput in = three_children();
  const DecodedBoxNode d = decode_box_node(encode_box_node(in));
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(d.child_pointer[k], in.children[k].pointer);
    EXPECT_EQ(d.child_box[k], in.children[k].box);
    EXPECT_EQ(d.child_flags[k], in.children[k].flags);
  }
  EXPECT_EQ(d.child_pointer[3], kInvalidNode);
  EXPECT_EQ(d.child_flags[3], kEmptySlotFlags);
  EXPECT_EQ(d.primitive_count, 9u);
}

TEST(Rdna3BoxNode, FullNodeAndInfinities) {
  BoxNodeInput in;
  in.child_count = 4;
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t k = 0; k < 4; ++k) {
    in.children[k] = {(10 + k) << 4 | kTypeBoxFp32, Aabb{{-inf, -0.0f, 1e-38f}, {inf, 0.0f, 3e38f}}, 0};
  }
  const DecodedBoxNode d = decode_box_node(encode_box_node(in));
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(d.child_pointer[k], (10 + k) << 4 | kTypeBoxFp32);
    EXPECT_EQ(float_bits(d.child_box[k].min.y), 0x80000000u);  // -0.0 kept bit for bit
    EXPECT_EQ(d.child_box[k].max.x, inf);
  }
}

TEST(Rdna3BoxNode, RejectsBadInput) {
  BoxNodeInput in = three_children();
  in.child_count = 0;
  EXPECT_THROW(encode_box_node(in), Error);
  in.child_count = 5;
  EXPECT_THROW(encode_box_node(in), Error);
  in = three_children();
  in.children[1].flags = 0x100;
  EXPECT_THROW(encode_box_node(in), Error);
}

TEST(Rdna3NodePointer, SixtyFourByteGranuleAndThreeBitType) {
  EXPECT_EQ(make_node_pointer(128, kTypeBoxFp32), kRootPointer);
  EXPECT_EQ(make_node_pointer(192, kTypeTriangle1), 0x19u);
  EXPECT_EQ(node_byte_offset(0x19), 192u);
  EXPECT_EQ(node_type(0x19), kTypeTriangle1);
  EXPECT_EQ(node_byte_offset(0xFFFFFFF8u), uint64_t{0xFFFFFFF8u} << 3);  // 64-bit: no wrap-around
  EXPECT_TRUE(is_triangle_pointer(0x43));
  EXPECT_FALSE(is_triangle_pointer(0x44));
}

}  // namespace
}  // namespace hwbvh::rdna3
