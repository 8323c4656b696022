#pragma once
// One float step up or down: std::nextafter(x, +-infinity) without the library call, which is not inlined and
// which the encoder would call for every padded OBB bound and every quantized box plane.
#include <cstdint>
#include <limits>

#include "hwbvh/core/bits.h"

namespace hwbvh::rdna4 {

constexpr float next_up(float x) {
  if (!(x < std::numeric_limits<float>::infinity())) return x;  // NaN, +inf
  if (x == 0.0f) return std::numeric_limits<float>::denorm_min();
  const uint32_t bits = float_bits(x);
  return bits_float(x > 0.0f ? bits + 1 : bits - 1);
}

constexpr float next_down(float x) {
  if (!(x > -std::numeric_limits<float>::infinity())) return x;  // NaN, -inf
  if (x == 0.0f) return -std::numeric_limits<float>::denorm_min();
  const uint32_t bits = float_bits(x);
  return bits_float(x > 0.0f ? bits - 1 : bits + 1);
}

}  // namespace hwbvh::rdna4
