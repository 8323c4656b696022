// Xe3 node tests (xe3_intersect.h). Floating-point steps are one IEEE operation per statement; the emu library is
// compiled without contraction, so results do not depend on the compiler's choice of fused operations.
#include "hwbvh/emu/xe3_intersect.h"

#include <cmath>
#include <limits>

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

// Woop, Benthin, Wald 2013 (JCGT 2(1)): vertices relative to the origin, permuted so that the ray runs along kz and
// sheared onto the +z axis; 2D edge functions wa, wb, wc (the weights of v0, v1, v2 times their sum), recomputed in
// double where one is exactly zero; inside when all share a sign. PreparedRay's permutation keeps the winding, so
// a positive sum means the ray travels against (v1 - v0) x (v2 - v0).
Xe3TriangleHit intersect_triangle_watertight(const std::array<Vec3, 3>& v, const PreparedRay& ray) {
  const Vec3 o = ray.operands.origin;
  const Vec3 a = v[0] - o, b = v[1] - o, c = v[2] - o;
  const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
  const float ax = a[kx] - ray.shear_x * a[kz], ay = a[ky] - ray.shear_y * a[kz];
  const float bx = b[kx] - ray.shear_x * b[kz], by = b[ky] - ray.shear_y * b[kz];
  const float cx = c[kx] - ray.shear_x * c[kz], cy = c[ky] - ray.shear_y * c[kz];
  float wa = cx * by - cy * bx;
  float wb = ax * cy - ay * cx;
  float wc = bx * ay - by * ax;
  if (wa == 0.0f || wb == 0.0f || wc == 0.0f) {
    const auto exact = [](float p, float q, float r, float s) {
      return static_cast<float>(static_cast<double>(p) * q - static_cast<double>(r) * s);
    };
    wa = exact(cx, by, cy, bx);
    wb = exact(ax, cy, ay, cx);
    wc = exact(bx, ay, by, ax);
  }
  const bool inside = (wa >= 0.0f && wb >= 0.0f && wc >= 0.0f) || (wa <= 0.0f && wb <= 0.0f && wc <= 0.0f);
  const float det = wa + wb + wc;
  Xe3TriangleHit hit;
  if (!inside || det == 0.0f) return hit;
  const float az = ray.shear_z * a[kz], bz = ray.shear_z * b[kz], cz = ray.shear_z * c[kz];
  const float t_scaled = wa * az + wb * bz + wc * cz;
  const float t = t_scaled / det;
  if (!(t >= 0.0f)) return hit;  // behind the origin, or NaN
  hit.hit = true;
  hit.t = t;
  hit.barycentrics = {wb / det, wc / det};
  hit.front_face = det > 0.0f;
  return hit;
}

}  // namespace hwbvh::emu
