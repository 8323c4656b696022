#pragma once
// One float step up or down: std::nextafter(x, +-infinity) without the library call, which is not inlined and
// which the encoder would call for every padded OBB bound and every quantized box plane.
#include <cstdint>
#include <limits>

#include "hwbvh/core/bits.h"

namespace hwbvh::rdna4 {

// By the bit pattern, whose integer order is the float order within each sign: +0 and positive finite floats step
// up by adding one (+0 to the smallest subnormal), negative ones and -infinity step toward zero by subtracting one.
constexpr float next_up(float x) {
  const uint32_t bits = float_bits(x);
  if (bits < 0x7F800000u) return bits_float(bits + 1);
  if (bits > 0x80000000u && bits <= 0xFF800000u) return bits_float(bits - 1);
  if (bits == 0x80000000u) return std::numeric_limits<float>::denorm_min();  // -0
  return x;                                                                   // +infinity, NaN
}

constexpr float next_down(float x) {
  const uint32_t bits = float_bits(x);
  if (bits >= 0x80000000u && bits < 0xFF800000u) return bits_float(bits + 1);  // -0 to minus the smallest subnormal
  if (bits != 0 && bits <= 0x7F800000u) return bits_float(bits - 1);
  if (bits == 0) return -std::numeric_limits<float>::denorm_min();  // +0
  return x;                                                         // -infinity, NaN
}

}  // namespace hwbvh::rdna4
