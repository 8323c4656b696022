#include "hwbvh/emu/intersect.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "simd4.h"

namespace hwbvh::emu {
namespace {

using rdna4::kInvalidNode;
using simd4::bit_cast4, simd4::F4, simd4::I4, simd4::U4, simd4::lane_bits, simd4::load4, simd4::store4;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kSignBit = 0x80000000u;

// Child box flags (§2.3).
constexpr uint32_t kOnlyOpaque = 1, kOnlyNonOpaque = 2, kOnlyTriangles = 4, kOnlyProcedural = 8;

// §5.3 step 2: early culling of a child by its box flags against the pointer flags.
bool box_flags_cull(uint32_t f, const PointerFlags& pf) {
  const bool only_opaque = ((f & kOnlyOpaque) != 0 || pf.force_opaque) && !pf.force_non_opaque;
  const bool only_non_opaque = ((f & kOnlyNonOpaque) != 0 || pf.force_non_opaque) && !pf.force_opaque;
  return (only_opaque && pf.cull_opaque) || (only_non_opaque && pf.cull_non_opaque) ||
         ((f & kOnlyTriangles) != 0 && pf.skip_triangles) || ((f & kOnlyProcedural) != 0 && pf.skip_procedural);
}

// Rotates origin and direction into an OBB frame in exactly the fma order of §3.3 (z innermost).
void rotate_ray(const rdna4::Mat3Rows& m, Vec3& o, Vec3& d) {
  Vec3 ro, rd;
  for (int r = 0; r < 3; ++r) {
    ro[r] = std::fma(o.x, m[r].x, std::fma(o.y, m[r].y, std::fma(o.z, m[r].z, 0.0f)));
    const float dz = d.z * m[r].z;
    rd[r] = std::fma(d.x, m[r].x, std::fma(d.y, m[r].y, dz));
  }
  o = ro;
  d = rd;
}

Vec3 reciprocal(Vec3 d) { return {1.0f / d.x, 1.0f / d.y, 1.0f / d.z}; }

// The slab test's near plane per axis: min for a non-negative inverse direction, else max (also for NaN).
std::array<uint8_t, 3> near_plane_sides(Vec3 inverse) {
  return {uint8_t{!(inverse.x >= 0.0f)}, uint8_t{!(inverse.y >= 0.0f)}, uint8_t{!(inverse.z >= 0.0f)}};
}

// The eight sort entries: (ext << 32 | pointer) and the key.
struct SortEntries {
  std::array<uint64_t, 8> tag;
  std::array<float, 8> key;
};

// One compare-exchange of the sorting network: swap if b sorts strictly before a (ties and NaN keys keep order).
// Branch-free: the outcome is data-dependent and would be mispredicted half of the time.
void compare_exchange(SortEntries& e, int a, int b) {
  const uint64_t ta = e.tag[a], tb = e.tag[b];
  const float ka = e.key[a], kb = e.key[b];
  const uint32_t ext_a = static_cast<uint32_t>(ta >> 32), ext_b = static_cast<uint32_t>(tb >> 32);
  const bool swap = (ext_b < ext_a) | ((ext_b == ext_a) & (kb < ka));
  // Exchange by masks (compilers turn `swap ? x : y` on these into branches).
  const uint64_t tag_diff = (ta ^ tb) & (0 - static_cast<uint64_t>(swap));
  const uint32_t key_diff = (float_bits(ka) ^ float_bits(kb)) & (0 - static_cast<uint32_t>(swap));
  e.tag[a] = ta ^ tag_diff;
  e.tag[b] = tb ^ tag_diff;
  e.key[a] = bits_float(float_bits(ka) ^ key_diff);
  e.key[b] = bits_float(float_bits(kb) ^ key_diff);
}

// Batcher odd-even merge sort of 8 inputs, 19 comparators in 6 stages (§5.3 step 8). Stages 1-3 sort each half
// (the per-half sort used when wide sort is off), stages 4-6 merge them.
constexpr int kNetwork[19][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7},  // stage 1
                                 {0, 1}, {2, 3}, {4, 5}, {6, 7},  // stage 2
                                 {1, 2}, {5, 6},                  // stage 3
                                 {0, 4}, {1, 5}, {2, 6}, {3, 7},  // stage 4
                                 {2, 4}, {3, 5},                  // stage 5
                                 {1, 2}, {3, 4}, {5, 6}};         // stage 6
constexpr int kHalfSortComparators = 10;

// The 3-bit extended sort key of a pointer: invalid last; with sort_triangles_first, primitives before boxes,
// (ptr & 7) == 1 first.
uint32_t sort_ext(uint32_t p, bool triangles_first) {
  const uint32_t type = p & 7u;
  return uint32_t{p == kInvalidNode} << 2 | uint32_t{triangles_first && type > 3} << 1 |
         uint32_t{triangles_first && type != 1};
}

// The network on (ext, key) packed into one integer per slot: ext << 35 | key bits << 3 | slot. Exact only for
// keys that are never NaN and never -0, which the Closest heuristic guarantees (its key is +inf or >= +0): then
// the key bits order like the floats, and comparing the words without their slot bits is compare_exchange's
// test. When no two valid entries tie, the network's output is simply the valid entries in ascending order
// followed by INVALID_NODE (the invalid entries sort last and are all alike), so an insertion sort of the valid
// entries (bit k of `live` set: ptr[k] is not INVALID_NODE) gives it; only ties, which a network orders by its own
// wiring, need the network. Returns DW0..7.
std::array<uint32_t, 8> sort_packed(const std::array<uint32_t, 8>& ptr, const std::array<float, 8>& key,
                                    unsigned live, bool triangles_first, int comparators, bool wide) {
  const auto word = [&](unsigned k) {
    return uint64_t{sort_ext(ptr[k], triangles_first)} << 35 | uint64_t{float_bits(key[k])} << 3 | k;
  };
  std::array<uint32_t, 8> out;
  if (wide) {
    std::array<uint64_t, 8> v;
    unsigned n = 0;
    for (unsigned m = live; m != 0; m &= m - 1) v[n++] = word(static_cast<unsigned>(std::countr_zero(m)));
    bool tie = false;
    for (unsigned i = 1; i < n; ++i) {
      const uint64_t x = v[i];
      unsigned j = i;
      for (; j > 0 && (v[j - 1] >> 3) >= (x >> 3); --j) {
        tie = tie || (v[j - 1] >> 3) == (x >> 3);
        v[j] = v[j - 1];
      }
      v[j] = x;
    }
    if (!tie) {
      out.fill(kInvalidNode);
      for (unsigned i = 0; i < n; ++i) out[i] = ptr[v[i] & 7u];
      return out;
    }
  }
  std::array<uint64_t, 8> w;
  for (unsigned k = 0; k < 8; ++k) w[k] = word(k);
#pragma GCC unroll 19
  for (int i = 0; i < comparators; ++i) {
    const int a = kNetwork[i][0], b = kNetwork[i][1];
    const uint64_t wa = w[a], wb = w[b];
    const uint64_t diff = (wa ^ wb) & (0 - static_cast<uint64_t>((wb >> 3) < (wa >> 3)));
    w[a] = wa ^ diff;
    w[b] = wb ^ diff;
  }
  for (unsigned k = 0; k < 8; ++k) out[k] = ptr[w[k] & 7u];
  return out;
}

// §5.3 steps 7-8 on the hit pointers (bit k of `live` set: ptr[k] is not INVALID): returns DW0..7.
std::array<uint32_t, 8> sort_children(const std::array<uint32_t, 8>& ptr, const std::array<float, 8>& key,
                                      unsigned live, const IntersectOptions& opt) {
  if (!opt.box_sort || opt.heuristic == SortHeuristic::Disabled) return ptr;
  // Valid entries always sort before invalid ones (their ext is smaller), so with at most one valid entry the
  // wide sort's output is that entry followed by INVALID: no need to run the network.
  if (opt.wide_sort && (live & (live - 1)) == 0) {
    std::array<uint32_t, 8> out;
    out.fill(kInvalidNode);
    for (uint32_t p : ptr) out[0] &= p;  // the one valid pointer, or INVALID
    return out;
  }
  const int comparators = opt.wide_sort ? 19 : kHalfSortComparators;
  if (opt.heuristic == SortHeuristic::Closest) {
    return sort_packed(ptr, key, live, opt.sort_triangles_first, comparators, opt.wide_sort);
  }
  SortEntries e;
  for (int k = 0; k < 8; ++k) {
    e.tag[k] = uint64_t{sort_ext(ptr[k], opt.sort_triangles_first)} << 32 | ptr[k];
    e.key[k] = key[k];
  }
#pragma GCC unroll 19
  for (int i = 0; i < comparators; ++i) compare_exchange(e, kNetwork[i][0], kNetwork[i][1]);
  std::array<uint32_t, 8> out;
  for (int k = 0; k < 8; ++k) out[k] = static_cast<uint32_t>(e.tag[k]);
  return out;
}

// Per lane x > acc ? x : acc, and x < acc ? x : acc: acc when either is NaN. That is the definition of x86's
// MAXPS / MINPS, which GCC does not emit for the portable form (it could only with -ffinite-math-only).
F4 max_or_keep(F4 x, F4 acc) {
#if defined(__SSE__)
  return _mm_max_ps(x, acc);
#else
  return x > acc ? x : acc;
#endif
}
F4 min_or_keep(F4 x, F4 acc) {
#if defined(__SSE__)
  return _mm_min_ps(x, acc);
#else
  return x < acc ? x : acc;
#endif
}
// `box`: the decoded child pointers (INVALID past the count) and dequantized boxes (NaN past the count); `obb`:
// the node's OBB matrix, read only when box.obb_index < kObbMatrixCount.
void intersect_box(const rdna4::BoxChildren& box, const rdna4::Mat3Rows& obb, const PointerFlags& pf,
                   const PreparedRay& ray, const IntersectOptions& opt, IntersectResult& res) {
  // OBB: the slab tests run in the node's rotated frame. Indices 104..126 have no matrix; they are treated like
  // 0x7F (axis-aligned), see docs/emulator.md.
  Vec3 o = ray.operands.origin, inv = ray.inverse;
  std::array<uint8_t, 3> near_is_max = ray.near_is_max;
  if (box.obb_index < rdna4::kObbMatrixCount) {
    Vec3 d = ray.operands.direction;
    rotate_ray(obb, o, d);
    inv = reciprocal(d);
    near_is_max = near_plane_sides(inv);
    res.obb_rotated = true;
  }
  const float origin[3] = {o.x, o.y, o.z}, inverse[3] = {inv.x, inv.y, inv.z};  // indexed by axis below
  // Chosen by index rather than by a branch, which the ray's direction would make unpredictable.
  const std::array<std::array<float, 8>, 3>* const sides[2] = {&box.min, &box.max};
  const float* near_plane[3];
  const float* far_plane[3];
  for (int c = 0; c < 3; ++c) {
    near_plane[c] = (*sides[near_is_max[c]])[c].data();
    far_plane[c] = (*sides[1 - near_is_max[c]])[c].data();
  }

  // Slab test of all eight slots (§5.3 step 5), four at a time: tn = maxNum(maxNum(near_x, near_y), near_z), tf
  // likewise with minNum; clamp to [0, extent]; miss on NaN; grow the far distance. maxNum ignores a NaN operand,
  // so tn is the largest non-NaN near distance, NaN only when all three are NaN: it is accumulated from -inf with
  // `x > acc ? x : acc` (which keeps acc for a NaN x; one MAXPS), and the all-NaN case is tracked apart and makes
  // the slot miss, as a NaN tn or tf does. Of two equal values (+0 and -0) either may come back, which changes no
  // outcome: t0 clamps both to +0, and keys compare equal. Missed slots' keys are arbitrary: their pointers become
  // INVALID, which sort last by their ext alone, all alike. A slot passes when it hits and its instance mask shares
  // a bit with the ray's (early culling, §5.3 step 3; culling before or after the slab test gives the same
  // pointers).
  const float grow = box_grow_factor(opt.box_grow);
  const float extent = std::isnan(ray.operands.extent) ? kInf : ray.operands.extent;
  const U4 ray_mask = U4{} + ray.operands.instance_mask;
  U4 pass[2];
  std::array<float, 8> key;
  for (int half = 0; half < 2; ++half) {
    const int h = 4 * half;
    F4 tn = F4{} - kInf, tf = F4{} + kInf;
    I4 near_nan = I4{} - 1, far_nan = I4{} - 1;
    for (int c = 0; c < 3; ++c) {
      const F4 n = (load4<F4>(near_plane[c] + h) - origin[c]) * inverse[c];
      const F4 f = (load4<F4>(far_plane[c] + h) - origin[c]) * inverse[c];
      tn = max_or_keep(n, tn);
      tf = min_or_keep(f, tf);
      near_nan &= n != n;
      far_nan &= f != f;
    }
    const I4 nan = near_nan | far_nan;
    const F4 t0 = max_or_keep(tn, F4{});
    const F4 t1 = min_or_keep(tf, F4{} + extent);
    const I4 hit = (t0 <= t1 * grow) & ~nan;
    const U4 mask_ok = (load4<U4>(&box.instance_mask[h]) & ray_mask) != 0;
    pass[half] = bit_cast4<U4>(hit) & mask_ok;
    switch (opt.heuristic) {
      case SortHeuristic::LargestFirst: store4(&key[h], t0 - t1); break;
      case SortHeuristic::ClosestMidpoint: store4(&key[h], tn + tf); break;
      case SortHeuristic::Closest:
      case SortHeuristic::Disabled: store4(&key[h], t0); break;
    }
  }

  // Early culling by box flags (§5.3 step 2), only when a pointer flag can cull.
  if (pf.cull_opaque || pf.cull_non_opaque || pf.skip_triangles || pf.skip_procedural) {
    for (int k = 0; k < 8; ++k) {
      if (box_flags_cull(box.box_flags[k], pf)) pass[k / 4][k % 4] = 0;
    }
  }
  // The hit pointers (INVALID_NODE is all ones), then adjacent duplicates removed (child reuse, §5.3 step 6).
  // Every entry becomes the next one's "previous", whether it was removed or not (a removed entry equalled its
  // predecessor), so each is compared with its original predecessor; slot 0 has none.
  const U4 hit_lo = load4<U4>(&box.pointer[0]) | ~pass[0], hit_hi = load4<U4>(&box.pointer[4]) | ~pass[1];
  const U4 prev_lo = __builtin_shufflevector(hit_lo, hit_lo, 0, 0, 1, 2);
  const U4 prev_hi = __builtin_shufflevector(hit_lo, hit_hi, 3, 4, 5, 6);
  const U4 not_first = {0, ~0u, ~0u, ~0u};
  const U4 ptr_lo = hit_lo | (bit_cast4<U4>(hit_lo == prev_lo) & not_first);
  const U4 ptr_hi = hit_hi | bit_cast4<U4>(hit_hi == prev_hi);
  const unsigned live = lane_bits(ptr_lo != kInvalidNode) | lane_bits(ptr_hi != kInvalidNode) << 4;
  std::array<uint32_t, 8> ptr;
  store4(&ptr[0], ptr_lo);
  store4(&ptr[4], ptr_hi);

  const std::array<uint32_t, 8> sorted = sort_children(ptr, key, live, opt);
  std::copy(sorted.begin(), sorted.end(), res.dw.begin());
  res.box_tests = 8;
}

// Component-wise helpers with a fixed evaluation order (left to right).
Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// What a triangle test hands to the shared culling and packing of §5.4: t = tn / den, the weights u (vertex i1) and
// v (vertex i2), and the facing from the sign of den (>= 0: front). A miss is tn = +inf, den = 1.
struct TriangleCandidate {
  float tn = kInf;
  float den = 1.0f;
  float u = 0.0f;
  float v = 0.0f;
};

// Möller–Trumbore, as GPURT's emulation writes it (§5.4). A miss keeps the numerators: u = un, v = vn.
TriangleCandidate moller_trumbore(const rdna4::DecodedTriangle& tri, const RayOperands& ray) {
  const Vec3 a = tri.vertex[0], b = tri.vertex[1], c = tri.vertex[2];
  const Vec3 e1 = b - a, e2 = c - a, e3 = ray.origin - a;
  const Vec3 s1 = cross(ray.direction, e2), s2 = cross(e3, e1);
  float tn = dot(e2, s2);
  float den = dot(s1, e1);
  const float un = dot(e3, s1), vn = dot(ray.direction, s2);
  const float t = tn / den, bu = un / den, bv = vn / den;
  if (bu < 0.0f || bu > 1.0f || bv < 0.0f || bu + bv > 1.0f || t < 0.0f) {  // NaN compares false
    tn = kInf;
    den = 1.0f;
  }
  return {tn, den, un / den, vn / den};
}

// Woop, Benthin, Wald 2013 (JCGT 2(1)), "Watertight Ray/Triangle Intersection": vertices relative to the origin,
// permuted so that the ray runs along kz and sheared so that it becomes the +z axis; then 2D edge functions
// U, V, W (weights of a, b, c times det), recomputed in double precision when one is exactly zero. The hit test
// accepts both windings and rejects t < 0 only (no extent test, like §5.4). det = U + V + W has the sign of den in
// §5.4 (>= 0: the ray travels against (b - a) x (c - a)), because the permutation keeps the winding.
TriangleCandidate watertight(const rdna4::DecodedTriangle& tri, const PreparedRay& ray) {
  // Plain arrays, indexed by the ray's axes (glm's operator[] is a switch, unpredictable with per-ray axes).
  const Vec3 o = ray.operands.origin;
  const auto relative = [o](Vec3 p) { return std::array<float, 3>{p.x - o.x, p.y - o.y, p.z - o.z}; };
  const std::array<float, 3> a = relative(tri.vertex[0]), b = relative(tri.vertex[1]), c = relative(tri.vertex[2]);
  const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
  const float ax = a[kx] - ray.shear_x * a[kz], ay = a[ky] - ray.shear_y * a[kz];
  const float bx = b[kx] - ray.shear_x * b[kz], by = b[ky] - ray.shear_y * b[kz];
  const float cx = c[kx] - ray.shear_x * c[kz], cy = c[ky] - ray.shear_y * c[kz];
  float u = cx * by - cy * bx;
  float v = ax * cy - ay * cx;
  float w = bx * ay - by * ax;
  if (u == 0.0f || v == 0.0f || w == 0.0f) {
    // Products of floats are exact in double: only the difference rounds (twice, harmlessly).
    const auto edge = [](float p, float q, float r, float s) {
      return static_cast<float>(static_cast<double>(p) * static_cast<double>(q) -
                                static_cast<double>(r) * static_cast<double>(s));
    };
    u = edge(cx, by, cy, bx);
    v = edge(ax, cy, ay, cx);
    w = edge(bx, ay, by, ax);
  }
  // Outside (or NaN): the edge functions do not all share one sign.
  const bool inside = (u >= 0.0f && v >= 0.0f && w >= 0.0f) || (u <= 0.0f && v <= 0.0f && w <= 0.0f);
  const float det = u + v + w;
  if (!inside || det == 0.0f) return {};
  const float az = ray.shear_z * a[kz], bz = ray.shear_z * b[kz], cz = ray.shear_z * c[kz];
  const float tn = u * az + v * bz + w * cz;
  // t = tn / det >= 0, tested without dividing: tn with det's sign applied must not be negative (NaN: miss).
  if (!(bits_float(float_bits(tn) ^ (float_bits(det) & kSignBit)) >= 0.0f)) return {};
  return {tn, det, v / det, w / det};
}

// One triangle slot of the primitive path (§5.4); returns (t, I, J, prim << 1 | hitkind).
std::array<uint32_t, 4> intersect_triangle(const rdna4::DecodedTriangle& tri, const PointerFlags& pf,
                                           const PreparedRay& ray, TriangleTest test, uint32_t& triangle_tests) {
  TriangleCandidate hit{0.0f, 1.0f, 0.0f, 0.0f};  // procedural: replaced below
  if (!tri.procedural) {
    hit = test == TriangleTest::Gpurt ? moller_trumbore(tri, ray.operands) : watertight(tri, ray);
    ++triangle_tests;
  }
  float tn = hit.tn, den = hit.den, u = hit.u, v = hit.v;

  // Culling and opacity from the pointer flags.
  const bool opaque = pf.force_opaque || (!pf.force_non_opaque && tri.opaque);
  bool culled = false;
  if (!tri.procedural) {
    bool front = den >= 0.0f;  // -0.0 counts as front
    if (pf.flip_facedness) {
      front = !front;
      tn = bits_float(float_bits(tn) ^ kSignBit);
      den = bits_float(float_bits(den) ^ kSignBit);
    }
    culled = (front ? pf.cull_front_facing : pf.cull_back_facing) || pf.skip_triangles;
  } else {
    culled = pf.skip_procedural;
  }
  culled = culled || (opaque ? pf.cull_opaque : pf.cull_non_opaque);
  if (culled) {
    tn = kInf, den = 1.0f, u = 0.0f, v = 0.0f;
  } else if (tri.procedural) {
    tn = 0.0f, den = 1.0f, u = 0.0f, v = 0.0f;
  }

  // Result packing: sign of I = procedural, sign of J = non-opaque, low bit of the id = back face.
  uint32_t ub = float_bits(u) & ~kSignBit, vb = float_bits(v) & ~kSignBit;
  if (tri.procedural) {
    ub = float_bits(1.0f) | kSignBit;
    vb = float_bits(1.0f);
  }
  if (!opaque) vb |= kSignBit;
  const uint32_t hitkind = tri.procedural ? 0u : float_bits(den) >> 31;
  const float t_out = tri.procedural ? tn : tn / den;
  return {float_bits(t_out), ub, vb, (tri.primitive_id << 1) | hitkind};
}

void intersect_primitive(const rdna4::DecodedPair& pair, const PointerFlags& pf, const PreparedRay& ray,
                         TriangleTest test, IntersectResult& res) {
  for (int k = 0; k < 2; ++k) {
    const rdna4::DecodedTriangle& tri = pair.tri[k];
    // An invalid tri1 (indices 0,0,0) is not tested and reports a miss.
    const std::array<uint32_t, 4> slot = (k == 1 && !tri.valid)
                                             ? std::array<uint32_t, 4>{float_bits(kInf), float_bits(1.0f),
                                                                       float_bits(1.0f), 0u}
                                             : intersect_triangle(tri, pf, ray, test, res.triangle_tests);
    std::copy(slot.begin(), slot.end(), res.dw.begin() + 4 * k);
    res.dw[8 + k] = (tri.geometry_id << 2) | pair.navigation;
  }
}

// The result of a node that faults, or that the instruction does not intersect (instance, types 4 and 7).
IntersectResult empty_result(uint32_t node_pointer) {
  IntersectResult res;
  res.dw.fill(kInvalidNode);
  res.kind = rdna4::node_kind(node_pointer);
  return res;
}

bool intersected(rdna4::NodeKind kind) { return kind == rdna4::NodeKind::Box || kind == rdna4::NodeKind::Primitive; }

}  // namespace

const char* fault_name(NodeFault fault) {
  switch (fault) {
    case NodeFault::None: return "none";
    case NodeFault::OutOfRange: return "node outside the node memory";
    case NodeFault::Misaligned: return "box or instance pointer not on a 128-byte boundary";
    case NodeFault::MalformedPrimitive: return "malformed primitive node";
    case NodeFault::UnsupportedNode: return "unsupported node type";
  }
  return "unknown fault";
}

const uint32_t* NodeMemory::find(uint32_t pointer, NodeFault& fault) const {
  const rdna4::NodeKind kind = rdna4::node_kind(pointer);
  if ((kind == rdna4::NodeKind::Box || kind == rdna4::NodeKind::Instance) && (pointer & 8u) != 0) {
    fault = NodeFault::Misaligned;
    return nullptr;
  }
  const uint64_t first = rdna4::node_byte_offset(pointer) / 4;
  if (first > dwords.size() || dwords.size() - first < rdna4::kNodeDwords) {
    fault = NodeFault::OutOfRange;
    return nullptr;
  }
  fault = NodeFault::None;
  return dwords.data() + first;
}

NodeFault NodeMemory::fetch(uint32_t pointer, rdna4::NodeDwords& out) const {
  NodeFault fault;
  const uint32_t* node = find(pointer, fault);
  if (node != nullptr) std::copy_n(node, rdna4::kNodeDwords, out.begin());
  return fault;
}

PointerFlags PointerFlags::from_bits(uint32_t bits) {
  auto bit = [bits](int i) { return ((bits >> i) & 1u) != 0; };
  return {bit(0), bit(1), bit(2), bit(3), bit(4), bit(5), bit(6), bit(7), bit(8), bit(9)};
}

uint32_t PointerFlags::bits() const {
  return uint32_t{force_opaque} | uint32_t{force_non_opaque} << 1 | uint32_t{disable_triangle_cull} << 2 |
         uint32_t{flip_facedness} << 3 | uint32_t{cull_back_facing} << 4 | uint32_t{cull_front_facing} << 5 |
         uint32_t{cull_opaque} << 6 | uint32_t{cull_non_opaque} << 7 | uint32_t{skip_triangles} << 8 |
         uint32_t{skip_procedural} << 9;
}

const char* triangle_test_name(TriangleTest test) {
  return test == TriangleTest::Gpurt ? "gpurt" : "watertight";
}

TriangleTest parse_triangle_test(std::string_view name) {
  if (name == "watertight") return TriangleTest::Watertight;
  if (name == "gpurt") return TriangleTest::Gpurt;
  throw Error(ErrorKind::BadInput, "", "unknown triangle test '" + std::string(name) + "' (valid: watertight, gpurt)");
}

void IntersectOptions::validate() const {
  if (box_grow > 255) {
    throw Error(ErrorKind::BadInput, "", "box grow value " + std::to_string(box_grow) + " is outside 0..255");
  }
  if (static_cast<uint32_t>(heuristic) > 3) {
    throw Error(ErrorKind::BadInput, "",
                "box sort heuristic " + std::to_string(static_cast<uint32_t>(heuristic)) + " is outside 0..3");
  }
  if (triangle_test != TriangleTest::Watertight && triangle_test != TriangleTest::Gpurt) {
    throw Error(ErrorKind::BadInput, "",
                "triangle test " + std::to_string(static_cast<uint32_t>(triangle_test)) + " is not 0 or 1");
  }
}

PreparedRay::PreparedRay(const RayOperands& ray)
    : operands(ray), inverse(reciprocal(ray.direction)), near_is_max(near_plane_sides(inverse)) {
  const Vec3 d = ray.direction;
  const float x = std::abs(d.x), y = std::abs(d.y), z = std::abs(d.z);
  kz = (z > x && z > y) ? 2 : (y > x ? 1 : 0);  // ties go to the lower axis
  kx = (kz + 1) % 3;
  ky = (kx + 1) % 3;
  if (d[kz] < 0.0f) std::swap(kx, ky);  // an odd permutation for a reversed ray keeps the winding
  shear_x = d[kx] / d[kz];
  shear_y = d[ky] / d[kz];
  shear_z = 1.0f / d[kz];
}

IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const PreparedRay& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  IntersectResult res = empty_result(node_pointer);
  if (!intersected(res.kind)) return res;
  const uint32_t* node = memory.find(node_pointer, res.fault);
  if (node == nullptr) return res;
  const rdna4::NodeView view(node, rdna4::kNodeDwords);
  if (res.kind == rdna4::NodeKind::Box) {
    const rdna4::BoxChildren box = rdna4::decode_box_children(view);
    const bool rotated = box.obb_index < rdna4::kObbMatrixCount;
    intersect_box(box, rotated ? rdna4::obb_matrix(box.obb_index) : rdna4::Mat3Rows{}, flags, ray, options, res);
  } else if (const auto pair = rdna4::decode_primitive_pair(view, rdna4::pair_index(node_pointer))) {
    intersect_primitive(*pair, flags, ray, options.triangle_test, res);
  } else {
    res.fault = NodeFault::MalformedPrimitive;
  }
  return res;
}

namespace {
// Entries for `wanted` items of which the memory holds at most `available`: a power of two, no more than needed.
uint32_t cache_mask(uint32_t wanted, size_t available) {
  const auto cap = static_cast<uint32_t>(std::min<size_t>(available, uint32_t{1} << 30));
  return std::bit_ceil(std::clamp(wanted, 1u, std::max(cap, 1u))) - 1;
}
}  // namespace

NodeDecodeCache::NodeDecodeCache(const NodeMemory& memory, uint32_t box_nodes, uint32_t pairs)
    : memory_(memory),
      box_mask_(cache_mask(box_nodes, memory.dwords.size() / rdna4::kNodeDwords)),
      pair_mask_(cache_mask(pairs, memory.dwords.size() / rdna4::kNodeDwords * 8)),
      box_key_(box_mask_ + size_t{1}, kInvalidNode),
      pair_key_(pair_mask_ + size_t{1}, kInvalidNode),
      boxes_(std::make_unique_for_overwrite<Slot<Box>[]>(box_mask_ + size_t{1})),
      pairs_(std::make_unique_for_overwrite<Slot<Pair>[]>(pair_mask_ + size_t{1})) {}

const NodeDecodeCache::Box* NodeDecodeCache::fill_box(uint32_t slot, uint32_t pointer, NodeFault& fault) {
  const uint32_t* node = memory_.find(pointer, fault);
  if (node == nullptr) return nullptr;
  const rdna4::BoxChildren children = rdna4::decode_box_children(rdna4::NodeView(node, rdna4::kNodeDwords));
  Box* entry = new (boxes_[slot].bytes) Box{children, rdna4::obb_matrix(children.obb_index)};
  box_key_[slot] = pointer;
  return entry;
}

const NodeDecodeCache::Pair* NodeDecodeCache::fill_pair(uint32_t slot, uint32_t pointer, NodeFault& fault) {
  const uint32_t* node = memory_.find(pointer, fault);
  if (node == nullptr) return nullptr;
  const auto pair = rdna4::decode_primitive_pair(rdna4::NodeView(node, rdna4::kNodeDwords), rdna4::pair_index(pointer));
  Pair* entry = new (pairs_[slot].bytes)
      Pair{pair ? NodeFault::None : NodeFault::MalformedPrimitive, pair.value_or(rdna4::DecodedPair{})};
  pair_key_[slot] = pointer;
  return entry;
}

IntersectResult image_bvh8_intersect_ray(NodeDecodeCache& cache, const PointerFlags& flags, const PreparedRay& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  IntersectResult res = empty_result(node_pointer);
  if (res.kind == rdna4::NodeKind::Box) {
    if (const NodeDecodeCache::Box* box = cache.box(node_pointer, res.fault)) {
      intersect_box(box->children, box->obb, flags, ray, options, res);
    }
  } else if (res.kind == rdna4::NodeKind::Primitive) {
    const NodeDecodeCache::Pair* pair = cache.pair(node_pointer, res.fault);
    if (pair != nullptr && pair->fault != NodeFault::None) res.fault = pair->fault;
    if (res.fault == NodeFault::None) intersect_primitive(pair->pair, flags, ray, options.triangle_test, res);
  }
  return res;
}

IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  return image_bvh8_intersect_ray(memory, flags, PreparedRay(ray), node_pointer, options);
}

}  // namespace hwbvh::emu
