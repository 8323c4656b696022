// The decoder must accept any 128 bytes without undefined behaviour or out-of-range reads, and reject primitive
// headers whose sections do not fit the node with an explanation.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rdna4 {
namespace {

/// 32-bit results, so raw draws convert to uint32_t without narrowing.
using Rng = std::independent_bits_engine<std::mt19937, 32, uint32_t>;

NodeDwords header_node(uint32_t dw0, uint32_t dw1) {
  NodeDwords node{};
  node[0] = dw0;
  node[1] = dw1;
  return node;
}

uint32_t make_dw0(uint32_t lx, uint32_t ly, uint32_t lz, uint32_t t, uint32_t ga, uint32_t gp, uint32_t pairs) {
  return (lx - 1) | (ly - 1) << 5 | (lz - 1) << 10 | t << 15 | (ga / 2) << 20 | (gp / 2) << 24 | (pairs - 1) << 28;
}
uint32_t make_dw1(uint32_t pa, uint32_t pp, uint32_t midpoint) { return pa | pp << 5 | midpoint << 10; }

TEST(DecodeRobustness, RandomNodesNeverCrash) {
  Rng rng(99);
  uint64_t accepted_headers = 0, decoded_pairs = 0;
  for (int iter = 0; iter < 100000; ++iter) {
    NodeDwords node;
    for (auto& dw : node) dw = rng();
    if (iter % 2 == 1) {
      // Plausible headers reach the deeper decode paths: vertex type 0, small T, a midpoint in range.
      node[0] &= 0x7FFFFFFFu;
      node[0] = (node[0] & ~(0x1Fu << 15)) | ((rng() % 8) << 15);
      node[1] = (node[1] & ~(0x3FFu << 10)) | ((600 + rng() % 400) << 10);
    }
    const DecodedBoxNode box = decode_box_node(node);
    ASSERT_GE(box.child_count, 1u);
    ASSERT_LE(box.child_count, 8u);

    std::string error;
    const auto header = decode_primitive_header(node, &error);
    if (!header) {
      ASSERT_FALSE(error.empty());
      continue;
    }
    ++accepted_headers;
    for (uint32_t i = 0; i < 16; ++i) (void)decode_primitive_vertex(node, *header, i);
    for (uint32_t pair = 0; pair < 8; ++pair) decoded_pairs += decode_primitive_pair(node, pair).has_value();
  }
  EXPECT_GT(accepted_headers, 1000u);
  EXPECT_GT(decoded_pairs, 100u);
}

TEST(DecodeRobustness, HeadersBeyondTheNodeAreRejected) {
  std::string error;
  // Vertex type 1.
  EXPECT_FALSE(decode_primitive_header(header_node(make_dw0(8, 8, 8, 0, 0, 0, 1) | 0x80000000u, make_dw1(0, 0, 990)), &error));
  EXPECT_NE(error.find("vertex type"), std::string::npos) << error;
  // T + L > 32: negative prefix.
  error.clear();
  EXPECT_FALSE(decode_primitive_header(header_node(make_dw0(32, 8, 8, 4, 0, 0, 1), make_dw1(0, 0, 990)), &error));
  EXPECT_NE(error.find("exceed 32"), std::string::npos) << error;
  // Primitive-ID section running into the descriptors: midpoint 1000 + PA 31 > 1024 - 29.
  error.clear();
  EXPECT_FALSE(decode_primitive_header(header_node(make_dw0(8, 8, 8, 0, 0, 0, 1), make_dw1(31, 0, 1000)), &error));
  EXPECT_NE(error.find("primitive-ID"), std::string::npos) << error;
  // 8 pairs with 31-bit payloads: 15 * 31 bits cannot fit above any midpoint below the descriptors.
  error.clear();
  EXPECT_FALSE(decode_primitive_header(header_node(make_dw0(8, 8, 8, 0, 0, 0, 8), make_dw1(31, 31, 300)), &error));
  EXPECT_FALSE(error.empty());
  // Geometry-ID section reaching below the header and prefixes: midpoint 60 with GA 30.
  error.clear();
  EXPECT_FALSE(decode_primitive_header(header_node(make_dw0(8, 8, 8, 0, 30, 30, 1), make_dw1(0, 0, 60)), &error));
  EXPECT_NE(error.find("geometry-ID"), std::string::npos) << error;
  // A consistent header is accepted.
  EXPECT_TRUE(decode_primitive_header(header_node(make_dw0(8, 8, 8, 0, 30, 30, 2), make_dw1(31, 31, 700)), &error));
}

TEST(DecodeRobustness, VertexIndexPastTheVertexSectionIsRejected) {
  // Lx = Ly = Lz = 32, no prefixes: 96-bit vertices. midpoint 400 leaves room for (400 - 52) / 96 = 3 vertices.
  NodeDwords node = header_node(make_dw0(32, 32, 32, 0, 0, 0, 1), make_dw1(0, 0, 400));
  const uint32_t desc_ok = 2u << 25 | 1u << 21 | 0u << 17;  // tri0 = 0,1,2
  node[31] = desc_ok << 3;
  std::string error;
  EXPECT_TRUE(decode_primitive_pair(node, 0, &error).has_value()) << error;
  node[31] = (3u << 25 | 1u << 21) << 3;  // tri0 = 0,1,3
  EXPECT_FALSE(decode_primitive_pair(node, 0, &error).has_value());
  EXPECT_NE(error.find("past the vertex section"), std::string::npos) << error;
  // A procedural tri0 (15, 15, x) reads no vertices and is accepted.
  node[31] = (15u << 25 | 15u << 21 | 15u << 17) << 3;
  const auto p = decode_primitive_pair(node, 0, &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_TRUE(p->tri[0].procedural);
  EXPECT_FALSE(p->tri[1].valid);
}

TEST(DecodeRobustness, VertexDecodeRefusesInconsistentHeaders) {
  const NodeDwords node{};
  PrimitiveHeader h;
  h.payload_bits = {40, 8, 8};
  EXPECT_TRUE(std::isnan(decode_primitive_vertex(node, h, 0).x));
  h.payload_bits = {32, 32, 32};
  EXPECT_FALSE(std::isnan(decode_primitive_vertex(node, h, 0).x));
  EXPECT_TRUE(std::isnan(decode_primitive_vertex(node, h, 10).x));  // 52 + 11 * 96 > 1024
  EXPECT_TRUE(std::isnan(decode_primitive_vertex(node, h, 0xFFFFFFFFu).x));
}

}  // namespace
}  // namespace hwbvh::rdna4
