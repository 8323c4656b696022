#pragma once
// Structural checks of a WideBvh<8> against its scene, for tests and for a --check flag.
#include <cstdint>
#include <string>
#include <vector>

#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

/// Returns every problem found in `bvh` (empty = ok): child counts outside 1..8; a child box not inside its
/// node's box or an internal child's box not containing its node's box; a node not reachable exactly once
/// from the root; a leaf with 0 or more than max_leaf_pairs pairs, or a pair range outside `pairs` or shared
/// by two leaves; a pair with equal or invalid triangles; a degenerate triangle referenced; a non-degenerate
/// triangle not referenced exactly once (at least once, and once per leaf, if allow_duplicates: spatial
/// splits); a triangle's box not inside its leaf box (with allow_duplicates, not inside the union of the boxes
/// of all leaves referencing it, since each clipped box covers only part of the triangle).
std::vector<std::string> check_wide_bvh(const Scene& scene, const WideBvh8& bvh, bool allow_duplicates,
                                        uint32_t max_leaf_pairs = 8);

}  // namespace hwbvh::bvh_build
