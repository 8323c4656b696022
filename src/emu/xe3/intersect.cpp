// Xe3 node tests (intersect.h). Floating-point steps are one IEEE operation per statement; the emu library is
// compiled without contraction, so results do not depend on the compiler's choice of fused operations.
#include "hwbvh/emu/xe3/intersect.h"

#include <cmath>
#include <limits>

#include "emu/rtip31/intersect_node.h"

namespace hwbvh::emu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// IEEE minNum / maxNum: a NaN operand is ignored.
float min_num(float a, float b) { return std::isnan(b) ? a : (a < b ? a : b); }
float max_num(float a, float b) { return std::isnan(b) ? a : (a > b ? a : b); }

}  // namespace

Xe3BoxResult intersect_internal_node(const xe3::DecodedInternalNode& node, int64_t node_block, const PreparedRay& ray,
                                     float t_min, float t_far, uint32_t ray_mask, float grow) {
  Xe3BoxResult res;
  if ((node.node_mask & ray_mask) == 0) return res;
  const Vec3 o = ray.operands.origin, inv = ray.inverse;
  for (uint32_t i = 0; i < xe3::kNodeWidth; ++i) {
    if (!node.valid[i]) continue;
    const Aabb& box = node.child_box[i];
    float tn = -kInf, tf = kInf;
    for (int a = 0; a < 3; ++a) {
      const bool forward = inv[a] >= 0.0f;
      const float near_d = (forward ? box.min[a] : box.max[a]) - o[a];
      const float far_d = (forward ? box.max[a] : box.min[a]) - o[a];
      const float near_t = near_d * inv[a], far_t = far_d * inv[a];
      tn = max_num(tn, near_t);
      tf = min_num(tf, far_t);
    }
    const float entry = max_num(tn, t_min);
    const float exit = min_num(tf, t_far);
    const float exit_grown = exit * grow;
    if (!(entry <= exit_grown)) continue;
    // Insertion into the sorted list: nearer first, earlier slot first on ties.
    uint32_t k = res.count++;
    while (k > 0 && res.hits[k - 1].entry > entry) {
      res.hits[k] = res.hits[k - 1];
      --k;
    }
    res.hits[k] = {node.child_block(node_block, i), node.child_type(i), entry, i};
  }
  return res;
}

// The RT IP 3.1 emulator's tests (intersect_node.h); t = tn / den must not be negative.
Xe3TriangleHit intersect_triangle(const std::array<Vec3, 3>& v, const PreparedRay& ray, TriangleTest test) {
  Xe3TriangleHit hit;
  if (test == TriangleTest::Gpurt) {
    const detail::MollerTrumbore m =
        detail::moller_trumbore_numerators(v[0], v[1], v[2], ray.operands.origin, ray.operands.direction);
    if (m.tn == std::numeric_limits<float>::infinity()) return {};  // its miss
    hit = {true, m.tn / m.den, {m.un / m.den, m.vn / m.den}, m.den > 0.0f};
  } else {
    const detail::WatertightEdges e = detail::watertight_edges(v[0], v[1], v[2], ray);
    if (!e.inside) return {};
    hit = {true, e.tn / e.det, {e.v / e.det, e.w / e.det}, e.det > 0.0f};
  }
  if (!(hit.t >= 0.0f)) return {};  // behind the origin, or NaN
  return hit;
}

}  // namespace hwbvh::emu
