// The binary Geometry section: round trip with degenerate flags, and validation of hostile bytes.
#include "hwbvh/blob/geometry_section.h"

#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures/random_scene.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::blob {
namespace {

using ::testing::HasSubstr;

Scene scene_with_degenerate() {
  Scene s = test::quad_grid(2);
  Triangle d;
  d.v[0] = 0;
  d.v[1] = 1;
  d.v[2] = 2;  // three collinear grid points: zero area
  d.primitive = s.geometries[0].triangle_count++;
  s.triangles.push_back(d);
  return s;
}

void expect_refused(const std::vector<std::byte>& bytes, const std::string& needle) {
  try {
    (void)decode_geometry(bytes, "g.hwbvh");
    ADD_FAILURE() << "accepted; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), HasSubstr("g.hwbvh: geometry section: "));
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

void put32(std::vector<std::byte>& b, std::size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(v >> (8 * i));
}

TEST(GeometrySection, RoundTripKeepsEveryTriangleAndFlagsDegenerates) {
  const Scene s = scene_with_degenerate();
  const std::vector<std::byte> bytes = encode_geometry(s);
  EXPECT_EQ(bytes.size(), 8 + 12 * s.positions.size() + 24 * s.triangles.size());
  const GeometrySection g = decode_geometry(bytes, "mem");
  ASSERT_EQ(g.positions.size(), s.positions.size());
  ASSERT_EQ(g.triangles.size(), s.triangles.size());
  for (std::size_t i = 0; i < s.positions.size(); ++i) EXPECT_EQ(g.positions[i], s.positions[i]);
  for (uint32_t i = 0; i < s.triangles.size(); ++i) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(g.triangles[i].v[k], s.triangles[i].v[k]);
    EXPECT_EQ(g.triangles[i].geometry, s.triangles[i].geometry);
    EXPECT_EQ(g.triangles[i].primitive, s.triangles[i].primitive);
    EXPECT_EQ(g.triangles[i].degenerate(), s.is_degenerate(i)) << i;
  }
  EXPECT_TRUE(g.triangles.back().degenerate());
}

TEST(GeometrySection, LayoutIsAsDocumented) {
  const std::vector<std::byte> bytes = encode_geometry(scene_with_degenerate());
  EXPECT_EQ(load_le32(bytes, 0), 9u);   // 3 x 3 grid points
  EXPECT_EQ(load_le32(bytes, 4), 9u);   // 8 grid triangles + 1 degenerate
  EXPECT_EQ(bits_float(load_le32(bytes, 8 + 12 * 4)), 1.0f);  // point 4 = (1, 1, 0)
  const std::size_t last = 8 + 12 * 9 + 24 * 8;
  EXPECT_EQ(load_le32(bytes, last + 4), 1u);   // v1
  EXPECT_EQ(load_le32(bytes, last + 16), 8u);  // primitive id
  EXPECT_EQ(load_le32(bytes, last + 20), kTriDegenerate);
}

TEST(GeometrySection, HostileBytesAreRefused) {
  const std::vector<std::byte> good = encode_geometry(scene_with_degenerate());
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW((void)decode_geometry(cut, "g"), Error) << n;
  }
  auto edit = [&](auto&& change) {
    std::vector<std::byte> b = good;
    change(b);
    return b;
  };
  expect_refused(std::vector<std::byte>(4), "too short");
  expect_refused(edit([](auto& b) { put32(b, 0, 0xFFFFFFFF); }), "need");
  expect_refused(edit([](auto& b) { put32(b, 4, 0xFFFFFFFF); }), "need");
  expect_refused(edit([](auto& b) { b.push_back(std::byte{0}); }), "need");
  const std::size_t tri0 = 8 + 12 * 9;
  expect_refused(edit([&](auto& b) { put32(b, tri0 + 8, 9); }),
                 "triangle 0 vertex index 9 is out of range (9 positions)");
  expect_refused(edit([&](auto& b) { put32(b, tri0 + 20, 2); }), "triangle 0 has unknown flag bits 2");
  const uint32_t nan = float_bits(std::numeric_limits<float>::quiet_NaN());
  expect_refused(edit([&](auto& b) { put32(b, 8 + 4, nan); }), "position 0 has a non-finite coordinate");
  const uint32_t inf = float_bits(std::numeric_limits<float>::infinity());
  expect_refused(edit([&](auto& b) { put32(b, 8 + 12 * 8 + 8, inf); }), "position 8 has a non-finite coordinate");
}

TEST(GeometrySection, EmptySceneRoundTrips) {
  const GeometrySection g = decode_geometry(encode_geometry(Scene{}), "mem");
  EXPECT_TRUE(g.positions.empty());
  EXPECT_TRUE(g.triangles.empty());
}

}  // namespace
}  // namespace hwbvh::blob
