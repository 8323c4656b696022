#include "hwbvh/emu/rtip20/intersect.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "emu/rtip31/intersect_node.h"

namespace hwbvh::emu {
namespace {

using rdna3::kInvalidNode;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kSignBit = 0x80000000u;

// Copies the node `pointer` addresses; false if it does not lie wholly inside `memory`.
template <std::size_t N>
bool fetch(const NodeMemory& memory, uint32_t pointer, std::array<uint32_t, N>& out) {
  const uint64_t first = rdna3::node_byte_offset(pointer) / 4;
  if (first > memory.dwords.size() || memory.dwords.size() - first < N) return false;
  std::copy_n(memory.dwords.begin() + static_cast<std::ptrdiff_t>(first), N, out.begin());
  return true;
}

// RT IP 2.0 early culling of a child by its box flags against the pointer flags (§5.3 step 2, §5.7).
bool box_flags_cull(uint32_t f, const PointerFlags& pf) {
  const bool only_opaque = ((f & rdna3::kBoxFlagOnlyOpaque) != 0 || pf.force_opaque) && !pf.force_non_opaque;
  const bool only_non_opaque = ((f & rdna3::kBoxFlagOnlyNonOpaque) != 0 || pf.force_non_opaque) && !pf.force_opaque;
  return (only_opaque && pf.cull_opaque) || (only_non_opaque && pf.cull_non_opaque) ||
         ((f & rdna3::kBoxFlagOnlyTriangles) != 0 && pf.skip_triangles) ||
         ((f & rdna3::kBoxFlagOnlyProcedural) != 0 && pf.skip_procedural);
}

void intersect_box(const rdna3::BoxNodeDwords& raw, const PointerFlags& pf, const Bvh4RayOperands& ray,
                   const IntersectOptions& opt, Bvh4IntersectResult& res) {
  const rdna3::DecodedBoxNode node = rdna3::decode_box_node(raw);
  const float grow = box_grow_factor(opt.box_grow);
  const Vec3 o = ray.origin, inv = ray.inverse_direction;
  std::array<uint32_t, 4> ptr{};
  std::array<float, 4> key{};
  for (int k = 0; k < 4; ++k) {
    const Aabb& b = node.child_box[k];
    // The slab test of GPURT's fast_intersect_bbox: one IEEE operation per step, minNum/maxNum reductions.
    float near_c[3], far_c[3];
    for (int c = 0; c < 3; ++c) {
      const float dlo = b.min[c] - o[c];
      const float dhi = b.max[c] - o[c];
      const float lo = dlo * inv[c];
      const float hi = dhi * inv[c];
      const bool forward = inv[c] >= 0.0f;  // a NaN inverse takes the "else" branch
      near_c[c] = forward ? lo : hi;
      far_c[c] = forward ? hi : lo;
    }
    const float tn = std::fmax(std::fmax(near_c[0], near_c[1]), near_c[2]);
    const float tf = std::fmin(std::fmin(far_c[0], far_c[1]), far_c[2]);
    float t0 = std::fmax(tn, 0.0f);
    float t1 = std::fmin(tf, ray.extent);
    if (std::isnan(tn) || std::isnan(tf)) {
      t0 = kInf;
      t1 = -kInf;
    }
    const float t1_grown = t1 * grow;
    const uint32_t child = box_flags_cull(node.child_flags[k], pf) ? kInvalidNode : node.child_pointer[k];
    ptr[k] = t0 <= t1_grown ? child : kInvalidNode;
    switch (opt.heuristic) {
      case SortHeuristic::LargestFirst: key[k] = t0 - t1; break;
      case SortHeuristic::ClosestMidpoint:
        key[k] = (std::isnan(tn) ? 0.0f : tn) + (std::isnan(tf) ? kInf : tf);
        break;
      case SortHeuristic::Closest:
      case SortHeuristic::Disabled: key[k] = t0; break;
    }
  }
  if (opt.box_sort && opt.heuristic != SortHeuristic::Disabled) {
    constexpr int kNetwork[5][2] = {{0, 2}, {1, 3}, {0, 1}, {2, 3}, {1, 2}};
    for (const auto& [a, b] : kNetwork) {
      if ((ptr[b] != kInvalidNode && key[b] < key[a]) || ptr[a] == kInvalidNode) {
        std::swap(ptr[a], ptr[b]);
        std::swap(key[a], key[b]);
      }
    }
  }
  res.dw = ptr;
  res.box_tests = 4;
}

// t_num, t_denom and the weights of the slot's vertices 0, 1, 2 times t_denom, by the chosen test. A miss is
// t_num = +inf, t_denom = 1.
struct TriangleNumerators {
  float tn, den;
  std::array<float, 3> weight;
};

TriangleNumerators triangle_numerators(const rdna3::DecodedTriangle& tri, const Bvh4RayOperands& ray,
                                       TriangleTest test) {
  const Vec3 a = tri.vertex[0], b = tri.vertex[1], c = tri.vertex[2];
  if (test == TriangleTest::Watertight) {
    // The watertight test wants the ray's shear: prepared per test, since this test is not the target's default.
    const PreparedRay prepared(RayOperands{ray.origin, ray.direction});
    const detail::WatertightEdges e = detail::watertight_edges(a, b, c, prepared);
    if (!detail::watertight_hit(e)) return {kInf, 1.0f, {}};
    return {e.tn, e.det, {e.u, e.v, e.w}};
  }
  const detail::MollerTrumbore m = detail::moller_trumbore_numerators(a, b, c, ray.origin, ray.direction);
  return {m.tn, m.den, {m.den - m.un - m.vn, m.un, m.vn}};
}

void intersect_triangle(const rdna3::TriangleNodeDwords& raw, uint32_t type, const PointerFlags& pf,
                        const Bvh4RayOperands& ray, Bvh4Version version, TriangleTest test, Bvh4IntersectResult& res) {
  const rdna3::DecodedTriangle tri = rdna3::decode_triangle(raw, type);
  const bool rtip30 = version == Bvh4Version::Rtip30;
  const bool procedural = rtip30 && tri.id.procedural;
  float tn = 0.0f, den = 1.0f, i = 0.0f, j = 0.0f;
  if (!procedural) {
    if (tri.id.i_source > 2 || tri.id.j_source > 2) {
      res.fault = NodeFault::MalformedPrimitive;
      return;
    }
    // The vertices in slot order; SwizzleBarycentrics picks I and J among their weights by the I and J sources.
    const TriangleNumerators n = triangle_numerators(tri, ray, test);
    tn = n.tn;
    den = n.den;
    i = n.weight[tri.id.i_source];
    j = n.weight[tri.id.j_source];
    ++res.triangle_tests;
  }

  // PerformTriangleCulling (version 2 and up).
  const bool opaque = pf.force_opaque || (!pf.force_non_opaque && tri.id.opaque);
  detail::cull_triangle(pf, procedural, opaque, tn, den, i, j);
  res.dw = {float_bits(tn), float_bits(den), float_bits(i), float_bits(j)};
  if (rtip30) {
    res.dw[2] &= ~kSignBit;
    res.dw[3] &= ~kSignBit;
    if (procedural) {
      res.dw[2] = float_bits(1.0f) | kSignBit;
      res.dw[3] = float_bits(1.0f);
    }
    if (!opaque) res.dw[3] |= kSignBit;
  }
}

}  // namespace

Bvh4IntersectResult image_bvh_intersect_ray(const NodeMemory& memory, const PointerFlags& flags,
                                            const Bvh4RayOperands& ray, uint32_t node_pointer,
                                            const IntersectOptions& options, Bvh4Version version) {
  Bvh4IntersectResult res;
  res.dw.fill(kInvalidNode);
  const uint32_t type = rdna3::node_type(node_pointer);
  if (type == rdna3::kTypeBoxFp32) {
    res.kind = rdna4::NodeKind::Box;
    rdna3::BoxNodeDwords node;
    if (!fetch(memory, node_pointer, node)) {
      res.fault = NodeFault::OutOfRange;
      return res;
    }
    intersect_box(node, flags, ray, options, res);
  } else if (rdna3::is_triangle_pointer(node_pointer)) {
    res.kind = rdna4::NodeKind::Primitive;
    rdna3::TriangleNodeDwords node;
    if (!fetch(memory, node_pointer, node)) {
      res.fault = NodeFault::OutOfRange;
      return res;
    }
    intersect_triangle(node, type, flags, ray, version, options.triangle_test.value_or(kBvh4TriangleTest), res);
    if (res.fault != NodeFault::None) res.dw.fill(kInvalidNode);
  } else if (type == rdna3::kTypeBoxFp16) {
    res.fault = NodeFault::UnsupportedNode;
  }
  return res;
}

DualIntersectResult image_bvh_dual_intersect_ray(const NodeMemory& memory, const PointerFlags& flags,
                                                 const Bvh4RayOperands& ray, uint32_t node0, uint32_t node1,
                                                 const IntersectOptions& options) {
  DualIntersectResult res;
  res.dw.fill(kInvalidNode);
  const uint32_t nodes[2] = {node0, node1};
  for (std::size_t n = 0; n < 2; ++n) {
    if (n == 1 && node1 == kInvalidNode) break;
    const Bvh4IntersectResult r =
        image_bvh_intersect_ray(memory, flags, ray, nodes[n], options, Bvh4Version::Rtip30);
    res.kind[n] = r.kind;
    if (r.fault != NodeFault::None && res.fault == NodeFault::None) {
      res.fault = r.fault;
      res.fault_node = nodes[n];
    }
    std::copy(r.dw.begin(), r.dw.end(), res.dw.begin() + static_cast<std::ptrdiff_t>(4 * n));
    res.box_tests += r.box_tests;
    res.triangle_tests += r.triangle_tests;
    rdna3::TriangleNodeDwords tri;
    if (r.kind == rdna4::NodeKind::Primitive && r.fault == NodeFault::None && fetch(memory, nodes[n], tri)) {
      res.dw[8 + n] = rdna3::decode_triangle(tri, nodes[n]).geometry_id;
    }
  }
  if (res.fault != NodeFault::None) res.dw.fill(kInvalidNode);
  return res;
}

Bvh4TriangleHit read_triangle_result(const std::array<uint32_t, 4>& dw, Bvh4Version version) {
  Bvh4TriangleHit h;
  const float den = bits_float(dw[1]);
  h.t = bits_float(dw[0]) / den;
  h.back_face = (dw[1] & kSignBit) != 0;
  if (version == Bvh4Version::Rtip30) {
    h.procedural = (dw[2] & kSignBit) != 0;
    h.non_opaque = (dw[3] & kSignBit) != 0;
    h.barycentrics = {std::fabs(bits_float(dw[2] & ~kSignBit) / den), std::fabs(bits_float(dw[3] & ~kSignBit) / den)};
  } else {
    h.barycentrics = {bits_float(dw[2]) / den, bits_float(dw[3]) / den};
  }
  return h;
}

}  // namespace hwbvh::emu
