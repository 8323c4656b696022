#pragma once
// The conservative opacity bake (docs/xe3-format.md §5.2): per alpha-tested triangle, the state of each of its
// 4^L sub-triangles (stoc.h numbering, bird order) at level L = 0..12. A sub-triangle is Opaque (Transparent) only
// if every texel it can sample passes (fails) the alpha test (alpha_test.h). "Can sample" is over-approximated: the
// texels whose cells the sub-triangle's UV image touches under nearest sampling with wrapping, widened by a small
// margin so that float rounding of the interpolated UV never reaches a texel outside the set. A larger set can only
// make more sub-triangles Unknown, never wrong. docs/opacity.md.
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/core/progress.h"
#include "hwbvh/formats/xe3/stoc.h"
#include "hwbvh/scene/alpha_test.h"

namespace hwbvh::xe3 {

/// Conservative bake of one triangle at `level` (0..12): 4^level states in bird order. Opaque/Transparent only if
/// every texel the sub-triangle can sample agrees (docs/xe3-format.md §5.2); Unknown otherwise. Triangles that are
/// not alpha-tested bake to all Opaque. Throws hwbvh::Error(BadInput) for level > 12 or tri out of range.
std::vector<SubTriangleState> bake_opacity(const AlphaTest& alpha, uint32_t tri, uint32_t level);

/// Bakes every triangle of `alpha` at `level`, in parallel (`threads`, 0 = all; the result does not depend on it).
/// Triangles that are not alpha-tested get an empty vector ("no information": their leaves stay opaque). `progress`
/// hears "opacity bake" (triangles baked).
std::vector<std::vector<SubTriangleState>> bake_all(const AlphaTest& alpha, uint32_t level, int threads = 0,
                                                    const ProgressCallback& progress = {});

/// States of one triangle at a coarser `level` from bird-order `states` at a finer (or equal) level: a coarse
/// sub-triangle is Opaque (Transparent) only if all its descendants are, and inherits the state otherwise when
/// `level` is finer. Throws hwbvh::Error(Runtime) if states.size() is not 4^L (L <= 12) or level > 12.
std::vector<SubTriangleState> restate(std::span<const SubTriangleState> states, uint32_t level);

}  // namespace hwbvh::xe3
