#include "hwbvh/bvh_build/sah.h"

namespace hwbvh::bvh_build {

template <int Width>
double sah_cost(const WideBvh<Width>& bvh, float box_step_cost, float pair_step_cost) {
  if (bvh.nodes.empty()) return 0.0;
  const float range = range_scale(bvh.nodes[0].bounds);
  const double root_area = bvh.nodes[0].bounds.surface_area(range);
  const double scale = root_area > 0.0 ? 1.0 / root_area : 1.0;
  double cost = 0.0;
  for (const auto& node : bvh.nodes) {
    cost += node.bounds.surface_area(range) * scale * box_step_cost;
    for (uint32_t i = 0; i < node.child_count; ++i) {
      const auto& child = node.children[i];
      if (child.is_leaf()) cost += child.bounds.surface_area(range) * scale * pair_step_cost * child.pair_count;
    }
  }
  return cost;
}

template double sah_cost<4>(const WideBvh<4>&, float, float);
template double sah_cost<6>(const WideBvh<6>&, float, float);
template double sah_cost<8>(const WideBvh<8>&, float, float);

}  // namespace hwbvh::bvh_build
