#pragma once
// Bit-field helpers for hardware layouts stored as little-endian dword arrays.
//
// Node layouts in docs/*-format.md are given as "bit b of a node is bit (b mod 32) of dword (b div 32)", with
// multi-bit fields stored least-significant bit first and allowed to straddle two dwords (an LSB-first
// bit stream). These helpers read and write such fields; they never use compiler bitfields.
#include <bit>
#include <cassert>
#include <cstdint>
#include <span>

namespace hwbvh {

/// Mask with the low `width` bits set; width may be 0..64.
constexpr uint64_t low_mask(unsigned width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

/// Reads `width` (0..32) bits starting at stream bit `offset` of `dw`.
constexpr uint32_t get_bits(std::span<const uint32_t> dw, unsigned offset, unsigned width) {
  if (width == 0) return 0;
  assert(offset + width <= dw.size() * 32);
  const unsigned word = offset / 32, shift = offset % 32;
  uint64_t v = dw[word];
  if (shift + width > 32) v |= uint64_t{dw[word + 1]} << 32;
  return static_cast<uint32_t>((v >> shift) & low_mask(width));
}

/// Writes the low `width` (0..32) bits of `value` at stream bit `offset` of `dw`; other bits are kept.
constexpr void set_bits(std::span<uint32_t> dw, unsigned offset, unsigned width, uint32_t value) {
  if (width == 0) return;
  assert(offset + width <= dw.size() * 32);
  const unsigned word = offset / 32, shift = offset % 32;
  const uint64_t field = (uint64_t{value} & low_mask(width)) << shift;
  const uint64_t mask = low_mask(width) << shift;
  dw[word] = static_cast<uint32_t>((dw[word] & ~mask) | field);
  if (shift + width > 32) {
    dw[word + 1] = static_cast<uint32_t>((dw[word + 1] & ~(mask >> 32)) | (field >> 32));
  }
}

/// Bits [hi:lo] (inclusive) of a single 32-bit word.
constexpr uint32_t field(uint32_t word, unsigned hi, unsigned lo) {
  return static_cast<uint32_t>((word >> lo) & low_mask(hi - lo + 1));
}

constexpr uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }
constexpr float bits_float(uint32_t u) { return std::bit_cast<float>(u); }

/// Number of significant bits: 0 for 0, else 32 - clz(x).
constexpr unsigned bit_length(uint32_t x) { return static_cast<unsigned>(std::bit_width(x)); }

}  // namespace hwbvh
