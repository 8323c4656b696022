// RT IP 3.1 OBB index selection, builder side (docs/rtip31-format.md §3.4, Appendix B).
//
// Computed in float, like GPURT's shader code, so that the axis-angle cells match its choice.
#include "hwbvh/formats/rdna4/obb.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include <glm/geometric.hpp>

#include "formats/rdna4/obb_tables.h"
#include "hwbvh/core/bits.h"

namespace hwbvh::rdna4 {
namespace {

float det(const Mat3Rows& r) { return glm::dot(r[0], glm::cross(r[1], r[2])); }

/// AMD's float -> uint conversion: NaN and negatives become 0; then the LUT's bin clamp at 15.
uint32_t lut_bin(float x) {
  if (!(x > 0.0f)) return 0;
  return x >= 15.0f ? 15u : static_cast<uint32_t>(x);
}

/// Σ_r |dot(R[r], Q[π(r)])| maximised over the 6 row permutations π. The nine |dot|s are taken once; each
/// permutation adds its three in row order.
float match_score(const Mat3Rows& r, const Mat3Rows& q) {
  static constexpr int kPerm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::array<std::array<float, 3>, 3> dots{};
  for (int row = 0; row < 3; ++row)
    for (int col = 0; col < 3; ++col) dots[row][col] = std::fabs(glm::dot(r[row], q[col]));
  float best = 0.0f;
  for (const auto& perm : kPerm) best = std::max(best, dots[0][perm[0]] + dots[1][perm[1]] + dots[2][perm[2]]);
  return best;
}

/// obb_matrix(index), decoded once: the candidate search below scores three indices per triangle.
const Mat3Rows& table_matrix(uint32_t index) {
  static const std::array<Mat3Rows, kObbMatrixCount + 1> table = [] {
    std::array<Mat3Rows, kObbMatrixCount + 1> m{};
    for (uint32_t i = 0; i < kObbMatrixCount; ++i) m[i] = obb_matrix(i);
    m[kObbMatrixCount] = obb_matrix(kNoObb);  // the identity
    return m;
  }();
  return table[std::min(index, kObbMatrixCount)];
}

}  // namespace

uint32_t obb_angle_bin_by_acos(float cos_angle, bool negated) {
  float angle = std::acos(cos_angle);
  if (negated) angle = -angle;
  if (angle < 0.0f) angle += 6.283185306f;
  return lut_bin(angle / 0.392699081625f);  // bins of pi/8
}

uint32_t obb_angle_bin(float cos_angle, bool negated) {
  // The bin is monotonic in the cosine on [-1, 1) (acos is monotonic, and so are the negation, the wrap-around
  // add and the division, each rounded), so it is the number of bin starts the cosine has passed. The starts are
  // found once by bisection over the floats of [-1, 1), with the acos formula itself as the judge.
  struct Starts {
    std::array<float, 16> of{};  // of[k]: the first cosine (in the order below) whose bin is >= k; of[0] unused
  };
  // Floats of [-1, 1) in increasing order of the bin: descending cosines without negation, ascending with it.
  static const std::array<Starts, 2> starts = [] {
    const auto to_key = [](float f) {
      const auto bits = static_cast<int32_t>(float_bits(f) & 0x7FFFFFFFu);
      return f < 0.0f ? -bits : bits;
    };
    const auto from_key = [](int32_t key) {
      return key < 0 ? -bits_float(static_cast<uint32_t>(-key)) : bits_float(static_cast<uint32_t>(key));
    };
    const int32_t first_key = to_key(-1.0f), last_key = to_key(std::nextafter(1.0f, 0.0f));
    std::array<Starts, 2> table{};
    for (int negate = 0; negate < 2; ++negate) {
      // position p (0 = lowest bin) -> cosine: ascending keys with negation, descending without.
      const auto cosine = [&](int64_t p) {
        return from_key(static_cast<int32_t>(negate != 0 ? first_key + p : last_key - p));
      };
      const int64_t count = int64_t{last_key} - first_key + 1;
      for (uint32_t k = 0; k < 16; ++k) {
        int64_t lo = 0, hi = count;  // the first position whose bin is >= k lies in [lo, hi]; hi: none
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (obb_angle_bin_by_acos(cosine(mid), negate != 0) >= k) hi = mid;
          else lo = mid + 1;
        }
        // A bin never reached starts past every cosine: sorted with the others, and never passed.
        const float never = (negate != 0 ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
        table[negate].of[k] = lo == count ? never : cosine(lo);
      }
    }
    return table;
  }();
  // Outside [-1, 1) (NaN, rounding past +-1, the cosine 1 whose negated angle is -0): the formula itself.
  if (!(cos_angle >= -1.0f && cos_angle < 1.0f)) return obb_angle_bin_by_acos(cos_angle, negated);
  // The starts passed, by bisection: of[1..15] ascend with negation and descend without.
  const Starts& s = starts[negated ? 1 : 0];
  uint32_t bin = 0;
  for (uint32_t step = 8; step > 0; step /= 2) {
    const float start = s.of[bin + step];
    if (negated ? cos_angle >= start : cos_angle <= start) bin += step;
  }
  return bin;
}

uint32_t matrix_to_obb_index(const Mat3Rows& r) {
  // Rotation axis from the antisymmetric part, angle from the trace (its cosine: acos is taken only by
  // obb_angle_bin's table).
  Vec3 axis{r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]};
  const float cos_angle = 0.5f * (r[0][0] + r[1][1] + r[2][2] - 1.0f);
  bool negated = false;
  const float length = std::sqrt(glm::dot(axis, axis));
  // A symmetric matrix (identity, 180° rotations) has no axis: GPURT's 0/0 gives NaN, which AMD's float->uint
  // conversion turns into bin 0, so such a matrix reads LUT row (0, 0) at its angle bin (§3.4).
  uint32_t xi = 0, yi = 0;
  if (length > 0.0f) {
    axis /= length;
    if (axis.z < 0.0f) {
      axis = -axis;
      negated = true;
    }
    xi = lut_bin((axis.x + 1.0f) / 0.125f);
    yi = lut_bin((axis.y + 1.0f) / 0.125f);
  }
  return detail::kObbAxisAngleLut[xi * 256 + yi * 16 + obb_angle_bin(cos_angle, negated)];
}

uint32_t matrix_to_best_obb_index(const Mat3Rows& rows) {
  Mat3Rows r = rows;
  if (det(r) < 0.0f) r[2] = -r[2];
  // The rows' cyclic shifts, written out: building them by index arithmetic cost more than scoring them.
  const std::array<uint32_t, 3> indices{matrix_to_obb_index(r), matrix_to_obb_index({r[1], r[2], r[0]}),
                                        matrix_to_obb_index({r[2], r[0], r[1]})};
  uint32_t best = kNoObb;
  float best_score = -1.0f;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const uint32_t index = indices[k];
    // An index met before scores the same again, which would not replace the best (the first of equal scores).
    if (std::find(indices.begin(), indices.begin() + k, index) != indices.begin() + k) continue;
    const float score = match_score(r, table_matrix(index));  // index 127 (no OBB) scores the identity
    if (score > best_score) {
      best = index;
      best_score = score;
    }
  }
  return best;
}

uint32_t triangle_obb_candidate(Vec3 v0, Vec3 v1, Vec3 v2) {
  const auto unit = [](Vec3 v, Vec3& out) {
    const float len = std::sqrt(glm::dot(v, v));
    if (!(len > 0.0f) || !std::isfinite(len)) return false;
    out = v / len;
    return true;
  };
  Vec3 e0{0.0f}, e1{0.0f}, n{0.0f};
  if (!unit(v1 - v0, e0) || !unit(v2 - v1, e1) || !unit(glm::cross(e0, e1), n)) return kNoObb;
  return matrix_to_best_obb_index({e0, n, glm::cross(e0, n)});
}

}  // namespace hwbvh::rdna4
