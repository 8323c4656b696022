#pragma once
// Four 32-bit lanes at a time with GCC/Clang vector extensions: plain IEEE operations per lane, as scalar code would
// do them. Comparisons give -1 / 0 per lane; `mask ? a : b` selects per lane. Shared by the intersector (slab tests
// of four child slots) and the stack (which of eight result slots hold pointers).
#include <cstdint>
#include <cstring>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace hwbvh::emu::simd4 {

using F4 = float __attribute__((vector_size(16)));
using I4 = int32_t __attribute__((vector_size(16)));
using U4 = uint32_t __attribute__((vector_size(16)));

/// Unaligned loads and stores, and reinterpretation between vector types.
template <typename V, typename T>
V load4(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename To, typename From>
To bit_cast4(From v) {
  return load4<To>(&v);
}
template <typename V, typename T>
void store4(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
/// Bit i set when lane i of the comparison result `m` (-1 / 0) is true.
inline unsigned lane_bits(I4 m) {
#if defined(__SSE__)
  return static_cast<unsigned>(_mm_movemask_ps(bit_cast4<F4>(m)));
#else
  return (m[0] & 1u) | (m[1] & 2u) | (m[2] & 4u) | (m[3] & 8u);
#endif
}
/// Bit k set when slot k of the eight dwords equals `value`.
inline unsigned equal_bits8(const uint32_t* eight, uint32_t value) {
  return lane_bits(load4<U4>(eight) == value) | lane_bits(load4<U4>(eight + 4) == value) << 4;
}
/// Bit k set when slot k of the eight dwords lies in [first, first + count) (unsigned, without wrapping past 2^32).
inline unsigned in_range_bits8(const uint32_t* eight, uint32_t first, uint32_t count) {
  return lane_bits(load4<U4>(eight) - first < count) | lane_bits(load4<U4>(eight + 4) - first < count) << 4;
}

}  // namespace hwbvh::emu::simd4
