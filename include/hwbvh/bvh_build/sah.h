#pragma once
// Surface area heuristic cost of a wide tree, with the cost model the collapse optimises (collapse.h).
#include "hwbvh/bvh_build/wide_bvh.h"

namespace hwbvh::bvh_build {

/// SAH cost: sum over wide nodes of SA(node)/SA(root) * box_step_cost plus sum over leaf children of
/// SA(leaf)/SA(root) * pair_step_cost * pairs. Leaf boxes are the children's stored (possibly clipped) bounds.
/// Defined for Width 4, 6 and 8.
template <int Width>
double sah_cost(const WideBvh<Width>& bvh, float box_step_cost, float pair_step_cost);

}  // namespace hwbvh::bvh_build
