// OBB matrices (spec §3.2, Appendix A) and the builder's index selection (§3.4, Appendix B).
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <glm/geometric.hpp>
#include <gtest/gtest.h>

#include "fixtures/paths.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/obb.h"

namespace hwbvh::rdna4 {
namespace {

const Mat3Rows kIdentity{Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};

Vec3 rotate(const Mat3Rows& m, Vec3 p) { return {glm::dot(m[0], p), glm::dot(m[1], p), glm::dot(m[2], p)}; }

Mat3Rows transpose(const Mat3Rows& m) {
  Mat3Rows t{};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) t[r][c] = m[c][r];
  }
  return t;
}

/// §3.4's score: Σ_r |dot(R[r], Q[π(r)])| maximised over row permutations (3 = same frame up to axis order/sign).
float frame_match(const Mat3Rows& r, const Mat3Rows& q) {
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  float best = 0.0f;
  for (const auto& p : perms) {
    float s = 0.0f;
    for (int i = 0; i < 3; ++i) s += std::fabs(glm::dot(r[i], q[p[i]]));
    best = std::max(best, s);
  }
  return best;
}

TEST(ObbMatrix, AllAreProperRotations) {
  for (uint32_t k = 0; k < kObbMatrixCount; ++k) {
    const Mat3Rows m = obb_matrix(k);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(glm::dot(m[i], m[j]), i == j ? 1.0f : 0.0f, 1e-6f) << "matrix " << k;
    }
    EXPECT_NEAR(glm::dot(m[0], glm::cross(m[1], m[2])), 1.0f, 1e-6f) << "matrix " << k;
  }
  EXPECT_TRUE(obb_matrix(kNoObb) == kIdentity);
}

TEST(ObbMatrix, SpotChecksAgainstAppendixA) {
  const float c = 0.923880f, s = 0.382683f;
  const Mat3Rows m0 = obb_matrix(0), m16 = obb_matrix(16), m14 = obb_matrix(14), m103 = obb_matrix(103);
  const auto near = [](Vec3 a, Vec3 b) { return glm::length(a - b) < 2e-6f; };
  EXPECT_TRUE(near(m0[0], {1, 0, 0}) && near(m0[1], {0, c, -s}) && near(m0[2], {0, s, c}));
  EXPECT_TRUE(near(m16[0], {c, -s, 0}) && near(m16[1], {s, c, 0}) && near(m16[2], {0, 0, 1}));
  EXPECT_TRUE(m14 == (Mat3Rows{Vec3{0, 0, 1}, Vec3{0, 1, 0}, Vec3{-1, 0, 0}}));  // exact: codes for 0 and ±1
  EXPECT_TRUE(near(m103[0], {0.333333f, 0.910684f, 0.244017f}) && near(m103[1], {-0.244017f, 0.333333f, -0.910684f}) &&
              near(m103[2], {-0.910684f, 0.244017f, 0.333333f}));
}

TEST(ObbMatrix, MatchesTheDecodedTableInTheSpec) {
  const std::filesystem::path spec = test::shared_dir() / "spec" / "rtip31-format.md";
  std::ifstream in(spec);
  if (!in) GTEST_SKIP() << "../shared/spec is absent";
  std::string line;
  while (std::getline(in, line) && line.rfind("#### Decoded matrices", 0) != 0) {
  }
  int rows = 0;
  while (std::getline(in, line) && line.rfind("## ", 0) != 0) {
    if (line.size() < 3 || line[0] != '|' || !std::isdigit(static_cast<unsigned char>(line[2]))) continue;
    for (char& ch : line) ch = ch == '|' ? ' ' : ch;
    std::istringstream fields(line);
    uint32_t index = 0;
    fields >> index;
    const Mat3Rows m = obb_matrix(index);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        float expected = 0.0f;
        fields >> expected;
        EXPECT_NEAR(m[r][c], expected, 1e-6f) << "matrix " << index << " [" << r << "][" << c << "]";
      }
    }
    ++rows;
  }
  EXPECT_EQ(rows, 104);
}

TEST(ObbIndex, SymmetricInputsReadTheNanRowAndTheBestPermutationWins) {
  // Identity and 180° rotations have no rotation axis: the NaN axis reads LUT row (0, 0) at the angle bin (§3.4).
  const Mat3Rows half_x{Vec3{1, 0, 0}, Vec3{0, -1, 0}, Vec3{0, 0, -1}};
  const Mat3Rows half_y{Vec3{-1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, -1}};
  EXPECT_EQ(matrix_to_obb_index(kIdentity), 57u);
  EXPECT_EQ(matrix_to_obb_index(half_x), 18u);
  EXPECT_EQ(matrix_to_obb_index(half_y), 18u);
  // The other cyclic permutations are proper 120° rotations; one of them maps to "no OBB" (identity frame),
  // which scores a perfect 3 against an axis-aligned input and beats LUT[0]'s matrix.
  for (const Mat3Rows& r : {kIdentity, half_x, half_y}) {
    EXPECT_LT(frame_match(r, obb_matrix(57)), 3.0f - 1e-3f);
    EXPECT_EQ(matrix_to_best_obb_index(r), kNoObb);
  }
  // A reflection is handled by negating row 2 first.
  EXPECT_EQ(matrix_to_best_obb_index({Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, -1}}), kNoObb);
}

// The acos-free angle bin against GPURT's formula: every 4,099th float of [-1, 1] (and a little beyond), and every
// float between two such samples whose bins differ, so every float where the bin changes. (An exhaustive run over
// all 4.26e9 floats of |c| <= 1 agreed too, on glibc's acosf.)
TEST(ObbIndex, AngleBinWithoutAcosMatchesTheAcosFormula) {
  constexpr uint32_t kStride = 4099;
  uint32_t changes = 0;
  for (const bool negated : {false, true}) {
    for (const float sign : {1.0f, -1.0f}) {
      uint32_t previous_bin = obb_angle_bin_by_acos(sign * 0.0f, negated);
      for (uint32_t bits = kStride; bits <= float_bits(1.0f) + kStride; bits += kStride) {
        const uint32_t bin = obb_angle_bin_by_acos(sign * bits_float(bits), negated);
        ASSERT_EQ(obb_angle_bin(sign * bits_float(bits), negated), bin) << sign * bits_float(bits);
        if (bin == previous_bin) continue;
        previous_bin = bin;
        ++changes;
        for (uint32_t near = bits - kStride + 1; near < bits; ++near) {
          const float c = sign * bits_float(near);
          ASSERT_EQ(obb_angle_bin(c, negated), obb_angle_bin_by_acos(c, negated)) << c << (negated ? " negated" : "");
        }
      }
    }
  }
  EXPECT_GE(changes, 16u);  // bins 0..8 without negation, 8..15 with it, then bin 0 past 1 (acos NaN)
  for (const float c : {std::numeric_limits<float>::quiet_NaN(), 1.0f, -1.0f, 1.0000001f, -1.0000001f}) {
    for (const bool negated : {false, true}) EXPECT_EQ(obb_angle_bin(c, negated), obb_angle_bin_by_acos(c, negated)) << c;
  }
}

TEST(ObbIndex, HardwareRotationsMapToCloseFrames) {
  int exact = 0;
  for (uint32_t k = 0; k < kObbMatrixCount; ++k) {
    const Mat3Rows m = obb_matrix(k);
    const uint32_t best = matrix_to_best_obb_index(m);
    ASSERT_LE(best, kNoObb);
    if (best != kNoObb) {
      ASSERT_LT(best, kObbMatrixCount);
    }
    // The LUT is coarse (π/8 bins) so not every matrix maps to itself, but the chosen frame stays close.
    EXPECT_GT(frame_match(m, obb_matrix(best)), 2.8f) << "matrix " << k << " -> " << best;
    exact += frame_match(m, obb_matrix(best)) > 3.0f - 1e-5f;
  }
  EXPECT_GE(exact, 60);
}

TEST(ObbIndex, TriangleCandidateTightensRotatedThinBoxes) {
  EXPECT_EQ(triangle_obb_candidate(Vec3{0.0f}, Vec3{0.0f}, Vec3{1, 0, 0}), kNoObb);  // zero-length edge
  EXPECT_EQ(triangle_obb_candidate(Vec3{0.0f}, Vec3{1, 0, 0}, Vec3{2, 0, 0}), kNoObb);  // collinear
  EXPECT_EQ(triangle_obb_candidate(Vec3{0.0f}, Vec3{1, 0, 0}, Vec3{NAN, 0, 0}), kNoObb);
  for (uint32_t k : {0u, 2u, 18u, 24u, 40u, 72u, 90u, 100u}) {
    // A 10 x 1 x 0.01 slab rotated by M^T; a triangle on its large face aligns with the slab's frame.
    const Mat3Rows m = obb_matrix(k), to_world = transpose(m);
    const uint32_t c = triangle_obb_candidate(rotate(to_world, {0, 0, 0}), rotate(to_world, {10, 0, 0}),
                                              rotate(to_world, {10, 1, 0}));
    ASSERT_NE(c, kNoObb) << "matrix " << k;
    Aabb aabb, obb;
    for (int i = 0; i < 8; ++i) {
      const Vec3 world = rotate(to_world, {(i & 1) ? 10.0f : 0.0f, (i & 2) ? 1.0f : 0.0f, (i & 4) ? 0.01f : 0.0f});
      aabb.grow(world);
      obb.grow(rotate(obb_matrix(c), world));
    }
    EXPECT_LT(obb.surface_area(), 0.8f * aabb.surface_area()) << "matrix " << k << " candidate " << c;
    EXPECT_NEAR(obb.surface_area(), 20.22f, 0.01f) << "matrix " << k << " candidate " << c;
  }
}

}  // namespace
}  // namespace hwbvh::rdna4
