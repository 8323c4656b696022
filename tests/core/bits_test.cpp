#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/geometry.h"

namespace hwbvh {
namespace {

TEST(Bits, FieldsStraddleDwordsLsbFirst) {
  std::array<uint32_t, 2> dw{};
  set_bits(dw, 28, 8, 0xAB);  // low nibble in dw[0] bits 31:28, high nibble in dw[1] bits 3:0
  EXPECT_EQ(dw[0], 0xB0000000u);
  EXPECT_EQ(dw[1], 0x0000000Au);
  EXPECT_EQ(get_bits(dw, 28, 8), 0xABu);
  set_bits(dw, 0, 32, 0xFFFFFFFFu);
  EXPECT_EQ(dw[0], 0xFFFFFFFFu);
  EXPECT_EQ(dw[1], 0x0000000Au);
  EXPECT_EQ(get_bits(dw, 3, 0), 0u);
}

TEST(Bits, RandomRoundTripKeepsNeighbours) {
  std::mt19937 mt(1);
  auto rng = [&] { return static_cast<uint32_t>(mt()); };
  for (int i = 0; i < 20000; ++i) {
    std::array<uint32_t, 4> dw{rng(), rng(), rng(), rng()};
    const auto before = dw;
    const unsigned width = rng() % 33, offset = rng() % (128 - width + 1);
    const uint32_t value = rng();
    set_bits(dw, offset, width, value);
    ASSERT_EQ(get_bits(dw, offset, width), static_cast<uint32_t>(value & low_mask(width)));
    for (unsigned b = 0; b < 128; ++b) {
      if (b >= offset && b < offset + width) continue;
      ASSERT_EQ(get_bits(dw, b, 1), get_bits(before, b, 1)) << "bit " << b;
    }
  }
}

TEST(Bits, FieldAndBitLength) {
  EXPECT_EQ(field(0x107E8083u, 30, 28), 1u);
  EXPECT_EQ(field(0x107E8083u, 7, 0), 0x83u);
  EXPECT_EQ(bit_length(0), 0u);
  EXPECT_EQ(bit_length(1), 1u);
  EXPECT_EQ(bit_length(0x80000000u), 32u);
  EXPECT_EQ(float_bits(1.0f), 0x3F800000u);
}

TEST(Geometry, AabbBasics) {
  Aabb box;
  EXPECT_TRUE(box.empty());
  EXPECT_EQ(box.surface_area(), 0.0f);
  box.grow(Vec3{0, 0, 0});
  box.grow(Vec3{1, 2, 3});
  EXPECT_FALSE(box.empty());
  EXPECT_FLOAT_EQ(box.surface_area(), 2.0f * (2 + 6 + 3));
  EXPECT_TRUE(box.contains(Vec3{0.5f, 1, 1}));
  EXPECT_FALSE(box.contains(Vec3{1.5f, 1, 1}));
  const std::array<Vec3, 8> corners = box.corners();
  EXPECT_EQ(corners[0], Vec3(0, 0, 0));
  EXPECT_EQ(corners[1], Vec3(1, 0, 0));
  EXPECT_EQ(corners[2], Vec3(0, 2, 0));
  EXPECT_EQ(corners[4], Vec3(0, 0, 3));
  EXPECT_EQ(corners[7], Vec3(1, 2, 3));
}

TEST(Geometry, RoundTowardKeepsTheDoubleOnItsSide) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const double third = 1.0 / 3;
  EXPECT_LT(double{round_toward(third, -kInf)}, third);
  EXPECT_GT(double{round_toward(third, kInf)}, third);
  EXPECT_EQ(std::nextafter(round_toward(third, -kInf), kInf), round_toward(third, kInf));  // neighbours
  EXPECT_EQ(round_toward(0.5, -kInf), 0.5f);  // exact values stay
  EXPECT_EQ(round_toward(0.5, kInf), 0.5f);
  EXPECT_EQ(round_toward(1e39, -kInf), std::numeric_limits<float>::max());  // beyond the float range
  EXPECT_EQ(round_toward(1e39, kInf), kInf);
  EXPECT_EQ(round_toward(-1e39, -kInf), -kInf);
  EXPECT_EQ(round_toward(double{kInf}, -kInf), kInf);  // infinities pass
  EXPECT_EQ(round_toward(-double{kInf}, kInf), -kInf);
}

}  // namespace
}  // namespace hwbvh
