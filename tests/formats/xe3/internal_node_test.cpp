// InternalNode6 (docs/xe3-format.md §6.1): golden bytes worked out by hand from the quantization rule, conservative
// quantization on random boxes, node types and empty slots, and the decoder.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/internal_node.h"

namespace hwbvh::xe3 {
namespace {

TEST(Xe3InternalNode, GoldenBytes) {
  // Child 0: an internal node over [0,1]^3. Child 1: a list of two QuadLeafs over [1,3] x [0,0.5] x [-1,1].
  InternalNodeInput in;
  in.child_offset = 1;
  in.child_count = 2;
  in.children[0] = {Aabb{{0, 0, 0}, {1, 1, 1}}, kNodeTypeMixed, 1};
  in.children[1] = {Aabb{{1, 0, -1}, {3, 0.5f, 1}}, kNodeTypeQuad, 2};
  // Growth by one ulp of the largest magnitude: 2^-23 for child 0, 2^-22 for child 1 (magnitude 3).
  //   lower = (-2^-23, -2^-22, -1 - 2^-22); upper = (3 + 2^-22, 1 + 2^-23, 1 + 2^-22)
  //   exponents: x extent ~3.0000004 -> 2 (255/64 covers it); y ~1.0000004 -> 1; z ~2.0000005 -> 2
  //   x (step 1/64):  child 0 [0, 65]  (64 reads 1 - 2^-23 < 1 + 2^-23);  child 1 [63, 193]  (64 reads
  //                   1 - 2^-23 > 1 - 2^-22; 192 reads 3.0 after rounding < 3 + 2^-22)
  //   y (step 1/128): child 0 [0, 129];  child 1 [0, 65]
  //   z (step 1/64):  child 0 [64, 129] (64 reads -2^-22 <= -2^-23);  child 1 [0, 129]
  const BlockDwords expected = {
      0xB4000000, 0xB4800000, 0xBF800002,  // lower: -2^-23, -2^-22, -(1 + 2^-22)
      1,                                   // childOffset
      0x01020000,                          // nodeType 0 (mixed), reserved 0, exp_x 2, exp_y 1
      0x1201FF02,                          // exp_z 2, nodeMask 0xFF, childData 0 = 1 block | type 0,
                                           // childData 1 = 2 blocks | type 4 << 2
      0x00000000,                          // childData 2..5: empty
      0x80803F00, 0xC1418080, 0x00000000,  // lower_x = 0, 63, 80 x4; upper_x = 65, 193, 0 x4
      0x80800000, 0x41818080, 0x00000000,  // lower_y = 0, 0, 80 x4;  upper_y = 129, 65, 0 x4
      0x80800040, 0x81818080, 0x00000000};  // lower_z = 64, 0, 80 x4; upper_z = 129, 129, 0 x4
  EXPECT_EQ(encode_internal_node(in), expected);

  const DecodedInternalNode d = decode_internal_node(expected);
  EXPECT_EQ(d.child_offset, 1);
  EXPECT_EQ(d.exponent, (std::array<int32_t, 3>{2, 1, 2}));
  EXPECT_EQ(d.child_type(0), kNodeTypeMixed);
  EXPECT_EQ(d.child_type(1), kNodeTypeQuad);
  EXPECT_EQ(d.child_block(10, 0), 11);
  EXPECT_EQ(d.child_block(10, 1), 12);
  EXPECT_EQ(d.child_block(10, 2), 14);
  EXPECT_TRUE(d.valid[0] && d.valid[1]);
  for (uint32_t i = 2; i < 6; ++i) EXPECT_FALSE(d.valid[i]);
  EXPECT_TRUE(d.child_box[0].contains(in.children[0].box));
  EXPECT_TRUE(d.child_box[1].contains(in.children[1].box));
  EXPECT_EQ(d.child_box[1].max.x, 3.015625f);  // -2^-23 + 193/64 rounds to even
}

TEST(Xe3InternalNode, FatLeafWhenAllChildrenAreLeavesOfOneType) {
  InternalNodeInput in;
  in.child_count = 3;
  for (uint32_t i = 0; i < 3; ++i) in.children[i] = {Aabb{Vec3(float(i)), Vec3(float(i) + 1)}, kNodeTypeQuad128, 2};
  const DecodedInternalNode fat = decode_internal_node(encode_internal_node(in));
  EXPECT_EQ(fat.node_type, kNodeTypeQuad128);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(fat.child_data[i], 2u);  // startPrim 0
    EXPECT_EQ(fat.child_type(i), kNodeTypeQuad128);
  }
  in.children[2].node_type = kNodeTypeQuad;
  in.children[2].blocks = 1;
  const DecodedInternalNode mixed = decode_internal_node(encode_internal_node(in));
  EXPECT_EQ(mixed.node_type, kNodeTypeMixed);
  EXPECT_EQ(mixed.child_data[0], 2u | kNodeTypeQuad128 << 2);
  EXPECT_EQ(mixed.child_type(2), kNodeTypeQuad);
}

TEST(Xe3InternalNode, QuantizationIsConservativeAndTight) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int trial = 0; trial < 2000; ++trial) {
    const float scale = std::ldexp(1.0f, exponent(rng));
    const Vec3 origin = (Vec3(unit(rng), unit(rng), unit(rng)) - 0.5f) * scale * (trial % 3 == 0 ? 1000.0f : 2.0f);
    InternalNodeInput in;
    in.child_count = 1 + trial % 6;
    for (uint32_t i = 0; i < in.child_count; ++i) {
      Vec3 a = origin + Vec3(unit(rng), unit(rng), unit(rng)) * scale;
      Vec3 b = a + Vec3(unit(rng), unit(rng), unit(rng)) * scale * (i == 0 ? 0.0f : 0.3f);  // child 0 is a point
      in.children[i] = {Aabb{glm::min(a, b), glm::max(a, b)}, kNodeTypeQuad, 1};
    }
    const DecodedInternalNode d = decode_internal_node(encode_internal_node(in));
    for (uint32_t i = 0; i < in.child_count; ++i) {
      const Aabb& box = in.children[i].box;
      ASSERT_TRUE(d.valid[i]);
      ASSERT_TRUE(d.child_box[i].contains(box)) << "trial " << trial << " child " << i;
      for (int a = 0; a < 3; ++a) {
        // Tight: at most one grid step (plus the growth) beyond the box on each side.
        const float step = std::ldexp(1.0f, d.exponent[a] - 8);
        const float slack = step + 4.0f * std::fabs(std::nextafter(scale * 2000.0f, INFINITY) - scale * 2000.0f);
        ASSERT_LE(box.min[a] - d.child_box[i].min[a], slack);
        ASSERT_LE(d.child_box[i].max[a] - box.max[a], slack);
      }
    }
  }
}

TEST(Xe3InternalNode, RejectsCallerBugs) {
  InternalNodeInput in;
  EXPECT_THROW(encode_internal_node(in), Error);  // no children
  in.child_count = 1;
  in.children[0] = {Aabb{Vec3(0), Vec3(1)}, kNodeTypeQuad, 4};
  EXPECT_THROW(encode_internal_node(in), Error);  // 4 blocks do not fit blockIncr
  in.children[0] = {Aabb{Vec3(0), Vec3(1)}, kNodeTypeProcedural, 1};
  EXPECT_THROW(encode_internal_node(in), Error);
  in.children[0] = {Aabb{}, kNodeTypeQuad, 1};
  EXPECT_THROW(encode_internal_node(in), Error);  // empty box
  in.children[0] = {Aabb{Vec3(-3e38f), Vec3(3e38f)}, kNodeTypeQuad, 1};
  EXPECT_THROW(encode_internal_node(in), Error);  // extent beyond what exponent 127 covers
}

}  // namespace
}  // namespace hwbvh::xe3
