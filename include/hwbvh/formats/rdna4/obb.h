#pragma once
// RT IP 3.1 oriented bounding boxes, builder side (docs/rtip31-format.md §3.4, Appendix B).
//
// A box node may name one of 104 hardware rotations (DW7 [6:0], 127 = none); the hardware matrices are
// decoded by decode.h's obb_matrix. The builder maps a candidate rotation to an index through the axis-angle
// lookup table of Appendix B.
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rdna4 {

/// Axis-angle LUT lookup (Appendix B) of a rotation given by its rows; may return 127 (no OBB).
uint32_t matrix_to_obb_index(const Mat3Rows& rows);

/// The pi/8 bin of a rotation's angle, given its cosine (the trace's), as GPURT computes it: the angle acos(c),
/// negated when the axis was flipped to z >= 0 and then wrapped into [0, 2 pi), over pi/8, clamped to 0..15.
uint32_t obb_angle_bin_by_acos(float cos_angle, bool negated);
/// The same bin without acos: the cosine compared with the 15 bin starts found once from the formula above.
uint32_t obb_angle_bin(float cos_angle, bool negated);

/// Best of the three cyclic row permutations of `rows` (§3.4); may return 127.
uint32_t matrix_to_best_obb_index(const Mat3Rows& rows);

/// Step A of §3.4: the edge/normal frame of a triangle mapped to an index (127 if degenerate).
uint32_t triangle_obb_candidate(Vec3 v0, Vec3 v1, Vec3 v2);

}  // namespace hwbvh::rdna4
