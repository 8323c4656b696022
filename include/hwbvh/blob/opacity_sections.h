#pragma once
// The two opacity sections of a .hwbvh blob (docs/blob-format.md §10, §11; docs/opacity.md):
//   AlphaTest (type 5): the any-hit shader's data, in every blob of an alpha-tested scene: cutoff, textures, per
//     triangle its texture and texture coordinates. The emulator's any-hit model and the Embree oracle's filter
//     read it.
//   Stoc (type 6): the RT IP 3.1 STOC sideband: per alpha-tested triangle its sub-triangle states at one level, as
//     planar opaque/transparent bit masks (the layout of Xe3's STOC leaves, stoc.h), so that the AMD-format
//     traversal can skip any-hit work too.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/xe3/stoc.h"
#include "hwbvh/scene/alpha_test.h"

namespace hwbvh::blob {

/// Encodes the AlphaTest section.
std::vector<std::byte> encode_alpha_test(const AlphaTest& alpha);
/// Decodes and validates it: exact size, triangle count = `triangle_count`, texture indices and sizes in range,
/// finite texture coordinates, cutoff in [0, 1]. Throws hwbvh::Error(BadInput) naming `file`.
AlphaTest decode_alpha_test(std::span<const std::byte> bytes, const std::string& file, uint32_t triangle_count);

/// RT IP 3.1 STOC sideband: per alpha-tested triangle, its sub-triangle states at one level, as planar masks.
struct StocSideband {
  uint32_t level = 0;  ///< 1..12
  xe3::SubTriangleOrder order = xe3::SubTriangleOrder::Bird;
  /// Per Geometry-section triangle: its index into the listed triangles, or kNoIndex when it is not listed.
  std::vector<uint32_t> slot;
  /// Per listed triangle words_per_triangle() words of each mask; bit k of word k / 64 is sub-triangle k in `order`.
  std::vector<uint64_t> opaque;
  std::vector<uint64_t> transparent;

  /// ceil(4^level / 64).
  [[nodiscard]] uint32_t words_per_triangle() const;
  /// Number of listed triangles.
  [[nodiscard]] uint32_t listed_count() const;
  /// The state of sub-triangle `k` (numbered in `order`) of triangle `tri` (Opaque for triangles it does not list).
  [[nodiscard]] xe3::SubTriangleState state_at(uint32_t tri, uint32_t k) const;
  /// The state at barycentrics `bary` of Geometry-section triangle `tri` (Opaque for triangles it does not list).
  [[nodiscard]] xe3::SubTriangleState state(uint32_t tri, Vec2 bary) const;
};

/// The sideband at `level` (1..12) in `order` from baked states: `states[t]` are triangle t's states in bird order
/// at any level (bake_all), empty for triangles without any; restated to `level` (xe3::restate). Lists exactly the
/// triangles with states. Throws hwbvh::Error(BadInput) for a level outside 1..12.
StocSideband make_stoc_sideband(std::span<const std::vector<xe3::SubTriangleState>> states, uint32_t level,
                                xe3::SubTriangleOrder order);

/// Encodes the Stoc section.
std::vector<std::byte> encode_stoc_sideband(const StocSideband& stoc);
/// Decodes and validates it (level 1..12, known order, triangle count = `triangle_count`, listed triangles
/// ascending and in range, no (1, 1) bit pairs, exact size). Throws hwbvh::Error(BadInput) naming `file`.
StocSideband decode_stoc_sideband(std::span<const std::byte> bytes, const std::string& file, uint32_t triangle_count);

}  // namespace hwbvh::blob
