#pragma once
// What the three node-section headers (rdna3/, rdna4/, xe3/ node_section.cpp) store and check alike: the scene
// bounds as six float bit patterns, and how a failed read reports its reason.
#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/geometry.h"

namespace hwbvh::formats {

/// Writes `bounds` to dw[first..first + 5]: min x, y, z, then max x, y, z, as float bit patterns.
inline void write_bounds(std::span<uint32_t> dw, std::size_t first, const Aabb& bounds) {
  for (int a = 0; a < 3; ++a) {
    dw[first + static_cast<std::size_t>(a)] = float_bits(bounds.min[a]);
    dw[first + 3 + static_cast<std::size_t>(a)] = float_bits(bounds.max[a]);
  }
}

/// The bounds write_bounds wrote at dw[first..first + 5].
inline Aabb read_bounds(std::span<const uint32_t> dw, std::size_t first) {
  Aabb bounds;
  for (int a = 0; a < 3; ++a) {
    bounds.min[a] = bits_float(dw[first + static_cast<std::size_t>(a)]);
    bounds.max[a] = bits_float(dw[first + 3 + static_cast<std::size_t>(a)]);
  }
  return bounds;
}

/// A header read's failure: sets `*error` (when given) to `why`; the read returns the nullopt.
inline std::nullopt_t header_error(std::string* error, const char* why) {
  if (error) *error = why;
  return std::nullopt;
}

}  // namespace hwbvh::formats
