#pragma once
// Sub-Triangle Opacity Culling (STOC) states and sub-triangle numbering (docs/xe3-format.md §2, §3, §5.2).
//
// A triangle's barycentric domain at subdivision level L is split into 4^L micro-triangles on a 2^L x 2^L grid:
// cell (iu, iv) holds an upright micro-triangle (corners (iu, iv), (iu+1, iv), (iu, iv+1) in units of 2^-L of the
// barycentrics (u, v) = weights of vertices 1 and 2) and, below the hypotenuse, an inverted one (corners (iu+1, iv),
// (iu, iv+1), (iu+1, iv+1)). Two numberings:
//   Bird (default): the API opacity-micromap "bird" curve (§3.4, §7.4). Hierarchical: the level-l ancestor of
//     micro-triangle m of level L is m >> 2(L - l), its level-(L+k) descendants are [m 4^k, (m+1) 4^k).
//   Row: the 2020 paper's row order (§3.3): band r = iu + iv (+1 if inverted) from vertex 0, index
//     r^2 + 2 iv (+1 if inverted).
// Leaf masks store one bit per sub-triangle: bit k of the opaque mask and bit k of the transparent mask describe
// sub-triangle k (§2.1): (1, 0) opaque, (0, 1) transparent, (0, 0) unknown; (1, 1) is undefined and never written.
//
// The encoder takes per-triangle states at any level 0..12 in bird order (the hierarchical order, so that level 1
// and level 3 summaries are reductions over contiguous ranges) and writes the leaf masks in the order the options
// name. Who produces the states (the opacity bake) is not this header's business.
#include <cstddef>
#include <cstdint>
#include <span>

#include "hwbvh/core/geometry.h"

namespace hwbvh::xe3 {

/// The state of one sub-triangle. The value is the (transparent, opaque) bit pair: bit 0 = opaque, bit 1 =
/// transparent.
enum class SubTriangleState : uint8_t {
  Unknown = 0,      ///< partially transparent or not known: the any-hit shader decides
  Opaque = 1,       ///< every point passes the alpha test
  Transparent = 2,  ///< every point fails the alpha test
};

enum class SubTriangleOrder : uint8_t {
  Bird = 0,  ///< opacity-micromap order (default)
  Row = 1,   ///< the 2020 paper's row order
};

inline constexpr uint32_t kMaxStocLevel = 12;  ///< deepest subdivision level (OMM maximum, STOC3 pointer range)
inline constexpr uint32_t kStoc1Level = 1;     ///< 4 sub-triangles, in the 64-byte QuadLeaf
inline constexpr uint32_t kStoc3Level = 3;     ///< 64 sub-triangles, in the 128-byte STOC3 leaf

/// 4^level: the number of sub-triangles at `level`.
constexpr uint64_t sub_triangle_count(uint32_t level) { return uint64_t{1} << (2 * level); }

/// A micro-triangle of the 2^L x 2^L grid.
struct MicroTriangle {
  uint32_t iu = 0;
  uint32_t iv = 0;
  bool inverted = false;  ///< the inverted triangle of the cell (only where iu + iv < 2^L - 1)
  friend bool operator==(const MicroTriangle&, const MicroTriangle&) = default;
};

/// The micro-triangle with bird index `index` (< 4^level) at `level` (<= 12), and back.
MicroTriangle bird_micro_triangle(uint32_t index, uint32_t level);
uint32_t bird_index(MicroTriangle m, uint32_t level);
/// The same for row order.
MicroTriangle row_micro_triangle(uint32_t index, uint32_t level);
uint32_t row_index(MicroTriangle m, uint32_t level);

/// The sub-triangle containing barycentrics (u, v) (weights of vertices 1 and 2) at `level`, numbered in `order`.
/// Rules of §3.4: u, v clamped to [0, 1]; points on or over the hypotenuse go to the last diagonal's upright
/// triangles; ties on a cell's inner diagonal go to the inverted triangle.
uint32_t sub_triangle_index(Vec2 uv, uint32_t level, SubTriangleOrder order);

/// The planar masks of one triangle at one level, as a leaf stores them.
struct StocMasks {
  uint64_t opaque = 0;
  uint64_t transparent = 0;
  /// Some sub-triangle is unknown at this level although the finer input knows part of it (§5.2 step 6): the
  /// any-hit shader could decide more with the finer data (the leaf's swstoc bit).
  bool swstoc = false;
  friend bool operator==(const StocMasks&, const StocMasks&) = default;
};

/// Masks at `target_level` (0..3: at most 64 sub-triangles) from `states`: 4^L states of one triangle in bird order at
/// level L = log4(states.size()) (<= 12). A coarser sub-triangle is opaque (transparent) only if all its
/// descendants are; a finer one inherits its ancestor's state. Bit k of the masks is sub-triangle k in `order`.
/// Throws hwbvh::Error(Runtime) if states.size() is not a power of 4 up to 4^12 or target_level > 3.
StocMasks summarize(std::span<const SubTriangleState> states, uint32_t target_level, SubTriangleOrder order);

/// The state that bit `k` of a pair of planar masks describes; the undefined (1, 1) reads as Unknown.
constexpr SubTriangleState state_of(uint64_t opaque, uint64_t transparent, uint32_t k) {
  const bool o = ((opaque >> k) & 1u) != 0, t = ((transparent >> k) & 1u) != 0;
  return o == t ? SubTriangleState::Unknown : (o ? SubTriangleState::Opaque : SubTriangleState::Transparent);
}

/// The level of a state array: L with size == 4^L, or -1.
int stoc_level_of(std::size_t state_count);

}  // namespace hwbvh::xe3
