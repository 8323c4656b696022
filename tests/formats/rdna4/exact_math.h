#pragma once
// Exact comparisons of small sums of floats for the quantization tests: values are turned into integers scaled by
// a common power of two (128-bit), so no rounding can hide an off-by-one-ulp plane.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace hwbvh::test {

__extension__ using Int128 = __int128;

/// One term m * 2^e of an exact sum.
struct Dyadic {
  int64_t mant = 0;
  int exp = 0;
};

inline Dyadic dyadic(double x) {  // exact for floats and for doubles with <= 53 significant bits
  if (x == 0.0) return {};
  int e = 0;
  const double m = std::frexp(x, &e);
  return {static_cast<int64_t>(std::ldexp(m, 53)), e - 53};
}

/// Sign (-1, 0, +1) of the exact sum, or nullopt when the terms span too many binary orders to fit 128 bits.
inline std::optional<int> exact_sign(std::initializer_list<Dyadic> terms) {
  int lo = 1 << 20, hi = -(1 << 20);
  for (const Dyadic& t : terms) {
    if (t.mant == 0) continue;
    lo = std::min(lo, t.exp);
    hi = std::max(hi, t.exp);
  }
  if (lo > hi) return 0;
  if (hi - lo > 70) return std::nullopt;  // 54-bit mantissas shifted by <= 70 stay below 2^125
  Int128 sum = 0;
  for (const Dyadic& t : terms) sum += static_cast<Int128>(t.mant) << (t.exp - lo);
  return sum > 0 ? 1 : sum < 0 ? -1 : 0;
}

}  // namespace hwbvh::test
