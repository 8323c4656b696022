// Xe3 QuadLeaf with STOC1 bits and the 128-byte STOC3 leaf (docs/xe3-format.md §1.1 to §1.4): golden bytes assembled by
// hand from the spec's tables, which triangles form a quad, and the decoder.
#include <gtest/gtest.h>

#include <cmath>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/quad_leaf.h"

namespace hwbvh::xe3 {
namespace {

// The unit square in z = 0: triangle 0 = (A, B, C); triangle 1 = (B, D, C) shares the edge B-C.
const Vec3 A{0.0f, 0.0f, 0.0f}, B{1.0f, 0.0f, 0.0f}, C{0.0f, 1.0f, 0.0f}, D{1.0f, 1.0f, 0.0f};
constexpr uint32_t kZero = 0, kOne = 0x3F800000;

QuadInput golden_quad() {
  QuadInput in;
  in.tri0 = {{A, B, C}, 100};
  in.tri1 = QuadTriangle{{B, D, C}, 103};
  in.geometry = 5;
  in.shader_index = 5;
  in.opaque = false;
  in.last = true;
  in.stoc1[0] = {0b0001, 0b1000, false};  // sub-triangle 0 opaque, 3 transparent
  in.stoc1[1] = {0b0110, 0b0000, true};
  return in;
}

// The 16 dwords of golden_quad(), from §1.1 to §1.3.
constexpr BlockDwords kGoldenQuad = {
    0xFF000005,  // shaderIndex 5, geomMask 0xFF
    0x00000005,  // geomIndex 5, subType 0, DisableOpacityCull 0, OpaqueGeometry 0 (alpha-tested)
    100,         // primIndex0
    // flags: delta 3 [4:0], tri0 swstoc 0 [5], tri1 swstoc 1 [6], tri0 opaque 0001 [11:8], tri0 transparent 1000
    // [15:12], j0 = 1 (B) [17:16], j1 = 3 (D = v3) [19:18], j2 = 2 (C) [21:20], last [22], tri1 opaque 0110 [27:24],
    // tri1 transparent 0000 [31:28]
    0x00000003 | 1u << 6 | 0x1u << 8 | 0x8u << 12 | 1u << 16 | 3u << 18 | 2u << 20 | 1u << 22 | 0x6u << 24,
    kZero, kZero, kZero,  // v0 = A
    kOne, kZero, kZero,   // v1 = B
    kZero, kOne, kZero,   // v2 = C
    kOne, kOne, kZero};   // v3 = D

TEST(Xe3QuadLeaf, Stoc1GoldenBytes) {
  static_assert(kGoldenQuad[3] == 0x066D8143u);
  const std::optional<BlockDwords> leaf = encode_quad_leaf(golden_quad());
  ASSERT_TRUE(leaf);
  EXPECT_EQ(*leaf, kGoldenQuad);
}

TEST(Xe3QuadLeaf, LoneTriangleGoldenBytes) {
  QuadInput in;
  in.tri0 = {{C, A, B}, 7};
  in.geometry = 2;
  in.shader_index = 2;
  in.stoc1[0] = {0b0100, 0b0011, true};
  const BlockDwords expected = {0xFF000002, 0x40000002,  // OpaqueGeometry (bit 30)
                                7,
                                1u << 5 | 0x4u << 8 | 0x3u << 12,  // delta 0, j = (0, 0, 0), not last
                                kZero, kOne, kZero, kZero, kZero, kZero, kOne, kZero, kZero,
                                kOne, kZero, kZero};  // v3 = v2, as Intel's builder writes it
  EXPECT_EQ(encode_quad_leaf(in), expected);
}

TEST(Xe3QuadLeaf, Stoc3GoldenBytes) {
  std::array<Stoc3Bits, 2> s3{};
  s3[0] = {0x00000000FFFF0000ull, 0xF000000000000000ull, 0x1240, 5, true};
  s3[1] = {0x1ull, 0x8000000000000000ull, 0x2000, 4, false};
  const std::optional<Stoc3Dwords> leaf = encode_stoc3_leaf(golden_quad(), s3);
  ASSERT_TRUE(leaf);
  Stoc3Dwords expected{};
  std::copy(kGoldenQuad.begin(), kGoldenQuad.end(), expected.begin());
  const std::array<uint32_t, 16> tail = {
      0xFFFF0000, 0x00000000,  // bytes 64..71: fullyOpaqueBits0
      0x00000000, 0xF0000000,  // bytes 72..79: fullyTransparentBits0
      0x00000001, 0x00000000,  // bytes 80..87: fullyOpaqueBits1
      0x00000000, 0x80000000,  // bytes 88..95: fullyTransparentBits1
      0x00001240, 0x00000000,  // bytes 96..103: stoc3_tri0_addr
      0x00000105, 0x00000000,  // byte 104: level 5; byte 105 bit 0: swstoc; 106..111 reserved
      0x00002000, 0x00000000,  // bytes 112..119: stoc3_tri1_addr
      0x00000004, 0x00000000};  // byte 120: level 4; swstoc 0
  std::copy(tail.begin(), tail.end(), expected.begin() + 16);
  EXPECT_EQ(*leaf, expected);
}

TEST(Xe3QuadLeaf, WhichTrianglesFormAQuad) {
  const QuadTriangle t0{{A, B, C}, 10};
  // Any order of triangle 1's vertices is kept through j.
  const std::optional<QuadShape> s = quad_shape(t0, {{C, B, D}, 11});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->j, (std::array<uint32_t, 3>{2, 1, 3}));
  EXPECT_EQ(s->v3, D);
  EXPECT_FALSE(quad_shape(t0, {{C, B, D}, 10}));   // delta 0 would be "quad mode"
  EXPECT_FALSE(quad_shape(t0, {{C, B, D}, 9}));    // triangle 1 must have the larger primitive index
  EXPECT_TRUE(quad_shape(t0, {{C, B, D}, 41}));    // delta 31
  EXPECT_FALSE(quad_shape(t0, {{C, B, D}, 42}));   // delta 32 does not fit 5 bits
  EXPECT_FALSE(quad_shape(t0, {{B, D, Vec3{2, 2, 0}}, 11}));  // only one shared vertex
  EXPECT_FALSE(quad_shape(t0, {{Vec3{-0.0f, 1.0f, 0.0f}, B, D}, 11}));  // -0.0 is not bit-identical to +0.0
  // A lone triangle in the slot of a failed pair is the caller's job: encode_quad_leaf refuses the pair.
  QuadInput in = golden_quad();
  in.tri1->primitive = 200;
  EXPECT_FALSE(encode_quad_leaf(in));
}

TEST(Xe3QuadLeaf, RejectsMalformedStocFields) {
  QuadInput in = golden_quad();
  in.stoc1[0] = {0b0011, 0b0010, false};  // sub-triangle 1 both opaque and transparent
  EXPECT_THROW(encode_quad_leaf(in), Error);
  in.stoc1[0] = {0x10, 0, false};  // 5 bits
  EXPECT_THROW(encode_quad_leaf(in), Error);
  in = golden_quad();
  in.tri1.reset();  // a lone triangle keeps triangle-1 STOC bits
  EXPECT_THROW(encode_quad_leaf(in), Error);
  in = golden_quad();
  in.geometry = 1u << 24;
  EXPECT_THROW(encode_quad_leaf(in), Error);
  std::array<Stoc3Bits, 2> s3{};
  s3[0].full_level = 3;  // levels 4..12 only
  EXPECT_THROW(encode_stoc3_leaf(golden_quad(), s3), Error);
  s3[0] = {1, 1, 0, 0, false};
  EXPECT_THROW(encode_stoc3_leaf(golden_quad(), s3), Error);
  s3[0] = {0, 0, 64, 0, false};  // an address without a level
  EXPECT_THROW(encode_stoc3_leaf(golden_quad(), s3), Error);
}

TEST(Xe3QuadLeaf, DecoderReadsTheGoldenLeaves) {
  const DecodedQuadLeaf q = decode_quad_leaf(kGoldenQuad);
  EXPECT_EQ(q.shader_index, 5u);
  EXPECT_EQ(q.geometry_mask, 0xFFu);
  EXPECT_EQ(q.geometry_index, 5u);
  EXPECT_FALSE(q.opaque);
  EXPECT_EQ(q.primitive(0), 100u);
  EXPECT_EQ(q.primitive(1), 103u);
  EXPECT_TRUE(q.has_tri1());
  EXPECT_EQ(q.triangle(0), (std::array<Vec3, 3>{A, B, C}));
  EXPECT_EQ(q.triangle(1), (std::array<Vec3, 3>{B, D, C}));
  EXPECT_EQ(q.stoc1_opaque, (std::array<uint32_t, 2>{1, 6}));
  EXPECT_EQ(q.stoc1_transparent, (std::array<uint32_t, 2>{8, 0}));
  EXPECT_EQ(q.swstoc, (std::array<bool, 2>{false, true}));
  EXPECT_TRUE(q.last);
  EXPECT_FALSE(q.last_in_meshlet);

  std::array<Stoc3Bits, 2> s3{};
  s3[1] = {0x10, 0x20, 0x4000, 12, true};
  const DecodedStoc3Leaf d = decode_stoc3_leaf(encode_stoc3_leaf(golden_quad(), s3).value());
  EXPECT_EQ(d.quad.prim_index0, 100u);
  EXPECT_EQ(d.opaque[1], 0x10u);
  EXPECT_EQ(d.transparent[1], 0x20u);
  EXPECT_EQ(d.full_address[1], 0x4000u);
  EXPECT_EQ(d.full_level[1], 12u);
  EXPECT_TRUE(d.swstoc[1]);
  EXPECT_FALSE(d.swstoc[0]);
  EXPECT_FALSE(d.reserved_nonzero);
  Stoc3Dwords bad = encode_stoc3_leaf(golden_quad(), s3).value();
  bad[27] = 1;  // byte 108: reserved
  EXPECT_TRUE(decode_stoc3_leaf(bad).reserved_nonzero);
}

}  // namespace
}  // namespace hwbvh::xe3
