// RT IP 2.0 triangle node with pair compression (docs/rtip31-format.md §8.3): golden bytes assembled by hand from the
// spec's table, the I/J swizzle, what can and cannot be paired, and the decoder.
#include <gtest/gtest.h>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/triangle_node.h"

namespace hwbvh::rdna3 {
namespace {

// The quad A B C D in the z = 1 plane, split along B-C: triangles (A, B, C) and (C, B, D), consistently wound.
const Vec3 A{0.0f, 0.0f, 1.0f}, B{2.0f, 0.0f, 1.0f}, C{0.0f, 2.0f, 1.0f}, D{2.0f, 2.0f, 1.0f};
constexpr uint32_t kZero = 0, kOne = 0x3F800000, kTwo = 0x40000000;

TriangleInput tri(Vec3 a, Vec3 b, Vec3 c, uint32_t primitive, uint32_t geometry = 3, bool opaque = true) {
  return TriangleInput{{a, b, c}, primitive, geometry, opaque};
}

TEST(Rdna3TriangleNode, LoneTriangleGoldenBytes) {
  const auto node = encode_triangle_node({tri(A, B, C, 7), std::nullopt});
  ASSERT_TRUE(node);
  const TriangleNodeDwords expected = {
      kZero, kZero, kOne, kTwo, kZero, kOne, kZero, kTwo, kOne,  // v0 = A, v1 = B, v2 = C (unrotated)
      0, 0, 0,                                                   // v3 unused
      0x01000003,                                                // geometry 3, geometry flags OPAQUE (bit 24)
      7, 0,                                                      // primitive index of triangle 0 / 1
      0x00000089};  // triangle 0: I source 1, J source 2 (identity), opaque; triangle 1 byte 0
  EXPECT_EQ(*node, expected);
}

TEST(Rdna3TriangleNode, PairGoldenBytes) {
  // Shared edge B->C in triangle 0 and C->B in triangle 1: no rotation needed, v3 = D.
  const auto node = encode_triangle_node({tri(A, B, C, 10), tri(C, B, D, 11)});
  ASSERT_TRUE(node);
  const TriangleNodeDwords expected = {
      kZero, kZero, kOne, kTwo, kZero, kOne, kZero, kTwo, kOne,  // v0 = A, v1 = B, v2 = C
      kTwo, kTwo, kOne,                                          // v3 = D
      0x01000003, 10, 11,
      // Triangle 1 is tested as (v1, v3, v2) = (B, D, C); its source order is (C, B, D), so source vertex 1 (B)
      // sits in slot 0 and source vertex 2 (D) in slot 1: I = 0, J = 1 -> 0x04 | opaque 0x80.
      0x00008489};
  EXPECT_EQ(*node, expected);
}

TEST(Rdna3TriangleNode, RotatedPairGoldenBytes) {
  // The same quad with both triangles given in other rotations: tri0 = (C, A, B), tri1 = (B, D, C). The shared
  // edge is tri0's v2 -> v0, so tri0 is rotated to start at A; tri1's C -> B is v2 -> v0, so v3 = D.
  const auto node = encode_triangle_node({tri(C, A, B, 10, 3, false), tri(B, D, C, 11, 3, false)});
  ASSERT_TRUE(node);
  const TriangleNodeDwords expected = {
      kZero, kZero, kOne, kTwo, kZero, kOne, kZero, kTwo, kOne, kTwo, kTwo, kOne,
      0x00000003,  // not opaque: no geometry flags
      10, 11,
      // tri0 tested as (A, B, C), source (C, A, B): I = 0, J = 1 -> 0x04. tri1 tested as (B, D, C) = source order.
      0x00000904};
  EXPECT_EQ(*node, expected);
}

TEST(Rdna3TriangleNode, DecoderPutsTrianglesBackInSourceOrder) {
  const TriangleInput t0 = tri(C, A, B, 10), t1 = tri(B, D, C, 11);
  const auto node = encode_triangle_node({t0, t1});
  ASSERT_TRUE(node);
  for (uint32_t type : {kTypeTriangle0, kTypeTriangle1}) {
    const DecodedTriangle d = decode_triangle(*node, type);
    const TriangleInput& in = type == 0 ? t0 : t1;
    EXPECT_EQ(d.primitive_id, in.primitive_id);
    EXPECT_EQ(d.geometry_id, 3u);
    EXPECT_EQ(d.geometry_flags, kGeometryFlagOpaque);
    EXPECT_TRUE(d.id.opaque);
    EXPECT_FALSE(d.id.double_sided || d.id.flip_winding || d.id.procedural);
    const auto source = source_vertices(d);
    ASSERT_TRUE(source);
    EXPECT_EQ(*source, in.v);
  }
  // The intersector's slot order: triangle 1 is (v1, v3, v2).
  EXPECT_EQ(decode_triangle(*node, kTypeTriangle1).vertex, (std::array<Vec3, 3>{B, D, C}));
}

TEST(Rdna3TriangleNode, WhatCanBePaired) {
  const TriangleInput t0 = tri(A, B, C, 0);
  EXPECT_TRUE(can_pair(t0, tri(C, B, D, 1)));
  EXPECT_TRUE(can_pair(t0, tri(D, C, B, 1)));   // any rotation of the partner
  EXPECT_FALSE(can_pair(t0, tri(B, C, D, 1)));  // shared edge in the same direction: inconsistent winding
  EXPECT_FALSE(can_pair(t0, tri(C, B, D, 1, 4)));         // another geometry
  EXPECT_FALSE(can_pair(t0, tri(C, B, D, 1, 3, false)));  // other opacity
  EXPECT_FALSE(can_pair(t0, tri(D, {5, 5, 5}, {6, 5, 5}, 1)));  // no shared edge
  // Equal as floats but not bit for bit: -0.0 would not decode bit-identically.
  const Vec3 a_neg{-0.0f, 0.0f, 1.0f};
  EXPECT_FALSE(can_pair(tri(a_neg, B, C, 0), tri(B, A, {1, -1, 1}, 1)));
  EXPECT_FALSE(encode_triangle_node({t0, tri(B, C, D, 1)}));
}

TEST(Rdna3TriangleNode, GeometryIdLimit) {
  EXPECT_TRUE(encode_triangle_node({tri(A, B, C, 0, kMaxGeometryId), std::nullopt}));
  EXPECT_FALSE(encode_triangle_node({tri(A, B, C, 0, kMaxGeometryId + 1), std::nullopt}));
}

TEST(Rdna3TriangleNode, DecoderIsTotal) {
  // Types 2 and 3 read v4 from bytes 48..59 and have no primitive index; I/J sources that are not a vertex order
  // (equal, or 3) give no source order.
  TriangleNodeDwords node{};
  for (uint32_t i = 0; i < 16; ++i) node[i] = float_bits(static_cast<float>(i));
  node[15] = 0x1F0E0503;  // type 0: I 3, J 0; type 1: I 1, J 1; type 2: I 2, J 3; type 3: I 3, J 3, double sided
  const DecodedTriangle t2 = decode_triangle(node, 2);
  EXPECT_EQ(t2.vertex[2], Vec3(12.0f, 13.0f, 14.0f));  // v4
  EXPECT_EQ(t2.primitive_id, 0xFFFFFFFFu);
  EXPECT_EQ(decode_triangle(node, 3).vertex[1], Vec3(12.0f, 13.0f, 14.0f));
  for (uint32_t type = 0; type < 4; ++type) EXPECT_FALSE(source_vertices(decode_triangle(node, type))) << type;
  EXPECT_TRUE(decode_triangle(node, 3).id.double_sided);
  EXPECT_EQ(decode_triangle(node, 9).vertex, decode_triangle(node, 1).vertex);  // type & 3
}

}  // namespace
}  // namespace hwbvh::rdna3
