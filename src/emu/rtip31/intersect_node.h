#pragma once
// The intersector's per-node work (docs/rtip31-format.md §5.3 box path, §5.4 primitive path), inline so
// that the traversal loop (traversal.cpp) compiles it into its own step instead of calling through a stack of
// functions; the instruction (intersect.cpp) is built on the same code. Internal to the emu module.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "hwbvh/core/bits.h"
#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "emu/simd4.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace hwbvh::emu::detail {

using rdna4::kInvalidNode;
using simd4::bit_cast4, simd4::F4, simd4::I4, simd4::U4, simd4::lane_bits, simd4::load4, simd4::store4;
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr uint32_t kSignBit = 0x80000000u;

// Child box flags (§2.3).
inline constexpr uint32_t kOnlyOpaque = 1, kOnlyNonOpaque = 2, kOnlyTriangles = 4, kOnlyProcedural = 8;

// §5.3 step 2: early culling of four children by their box flags `f` against the pointer flags; all ones in the
// lanes of culled children. Lane by lane (no branch per child: BLAS steps run it, under SKIP_PROCEDURAL).
inline U4 box_flags_cull4(U4 f, const PointerFlags& pf) {
  const auto all = [](bool b) { return U4{} - uint32_t{b}; };  // every lane all ones when b
  const auto has = [f](uint32_t bit) { return bit_cast4<U4>((f & bit) != 0); };
  const U4 only_opaque = (has(kOnlyOpaque) | all(pf.force_opaque)) & all(!pf.force_non_opaque);
  const U4 only_non_opaque = (has(kOnlyNonOpaque) | all(pf.force_non_opaque)) & all(!pf.force_opaque);
  return (only_opaque & all(pf.cull_opaque)) | (only_non_opaque & all(pf.cull_non_opaque)) |
         (has(kOnlyTriangles) & all(pf.skip_triangles)) | (has(kOnlyProcedural) & all(pf.skip_procedural));
}

// Rotates origin and direction into an OBB frame in exactly the fma order of §3.3 (z innermost). Inline, so that
// std::fma is one FMA instruction in the AVX2 wave loop (built for FMA) and a call of the C library's fmaf
// elsewhere; both round each fma once, so the results are identical.
inline void rotate_ray(const rdna4::Mat3Rows& m, Vec3& o, Vec3& d) {
  Vec3 ro, rd;
  for (int r = 0; r < 3; ++r) {
    ro[r] = std::fma(o.x, m[r].x, std::fma(o.y, m[r].y, std::fma(o.z, m[r].z, 0.0f)));
    const float dz = d.z * m[r].z;
    rd[r] = std::fma(d.x, m[r].x, std::fma(d.y, m[r].y, dz));
  }
  o = ro;
  d = rd;
}

// 1 / d per component: IEEE divisions, three lanes of one vector division.
inline Vec3 reciprocal(Vec3 d) {
  const F4 r = (F4{} + 1.0f) / F4{d.x, d.y, d.z, 1.0f};
  return {r[0], r[1], r[2]};
}

// The slab test's near plane per axis: min for a non-negative inverse direction, else max (also for NaN).
inline std::array<uint8_t, 3> near_plane_sides(Vec3 inverse) {
  return {uint8_t{!(inverse.x >= 0.0f)}, uint8_t{!(inverse.y >= 0.0f)}, uint8_t{!(inverse.z >= 0.0f)}};
}

// The slab distances (plane - origin) * inverse cannot be NaN for finite planes: the origin is finite and every
// inverse direction component finite and non-zero (a NaN needs inf * 0, inf - inf or a NaN operand).
inline bool nan_free_slabs(Vec3 origin, Vec3 inverse) {
  constexpr float kMax = std::numeric_limits<float>::max();
  const U4 magnitude = U4{} + 0x7FFFFFFFu;  // |x| by clearing the sign bit
  const F4 o = {origin.x, origin.y, origin.z, 0.0f}, inv = {inverse.x, inverse.y, inverse.z, 1.0f};
  const F4 abs_o = bit_cast4<F4>(bit_cast4<U4>(o) & magnitude);
  const F4 abs_inv = bit_cast4<F4>(bit_cast4<U4>(inv) & magnitude);
  return lane_bits((abs_o <= kMax) & (abs_inv <= kMax) & (inv != 0.0f)) == 0xFu;  // NaN compares false
}

// PreparedRay's fields from the ray's parts (intersect.h), inline so that the instance step prepares its object-space
// ray in the traversal's own code. The axes are chosen before the divisions, so that they are independent.
inline void prepare_ray(PreparedRay& ray, Vec3 origin, Vec3 direction, uint32_t instance_mask) {
  ray.operands = {origin, direction, kInf, instance_mask};
  // The direction as one vector, read by axis index below.
  const F4 d = {direction.x, direction.y, direction.z, 1.0f};
  const F4 magnitude = bit_cast4<F4>(bit_cast4<U4>(d) & 0x7FFFFFFFu);
  const float x = magnitude[0], y = magnitude[1], z = magnitude[2];
  // Selects, not branches, which random directions would mispredict; ties go to the lower axis.
  const int kz = (z > x) & (z > y) ? 2 : int{y > x};
  const int next_x = kz == 2 ? 0 : kz + 1, next_y = next_x == 2 ? 0 : next_x + 1;
  const bool reversed = d[kz] < 0.0f;  // an odd permutation for a reversed ray keeps the winding
  ray.kz = kz;
  ray.kx = reversed ? next_y : next_x;
  ray.ky = reversed ? next_x : next_y;
  // IEEE divisions, lanes of two independent vector divisions.
  const F4 inverse = (F4{} + 1.0f) / d;
  const F4 shear = F4{d[ray.kx], d[ray.ky], 1.0f, 1.0f} / d[kz];
  ray.inverse = {inverse[0], inverse[1], inverse[2]};
  ray.shear_x = shear[0];  // d[kx] / d[kz]
  ray.shear_y = shear[1];  // d[ky] / d[kz]
  ray.shear_z = shear[2];  // 1 / d[kz]
  ray.near_is_max = near_plane_sides(ray.inverse);
  ray.nan_free_slabs = nan_free_slabs(origin, ray.inverse);
}

// The eight sort entries: (ext << 32 | pointer) and the key.
struct SortEntries {
  std::array<uint64_t, 8> tag;
  std::array<float, 8> key;
};

// One compare-exchange of the sorting network: swap if b sorts strictly before a (ties and NaN keys keep order).
// Branch-free: the outcome is data-dependent and would be mispredicted half of the time.
inline void compare_exchange(SortEntries& e, int a, int b) {
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
inline constexpr int kNetwork[19][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7},  // stage 1
                                 {0, 1}, {2, 3}, {4, 5}, {6, 7},  // stage 2
                                 {1, 2}, {5, 6},                  // stage 3
                                 {0, 4}, {1, 5}, {2, 6}, {3, 7},  // stage 4
                                 {2, 4}, {3, 5},                  // stage 5
                                 {1, 2}, {3, 4}, {5, 6}};         // stage 6
inline constexpr int kHalfSortComparators = 10;

// The 3-bit extended sort key of a pointer: invalid last; with sort_triangles_first, primitives before boxes,
// (ptr & 7) == 1 first.
inline uint32_t sort_ext(uint32_t p, bool triangles_first) {
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
// wiring, need the network. Writes DW0..7 to `out`; gives their pointer slots (bit k: DW k is not INVALID_NODE).
inline unsigned sort_packed(const std::array<uint32_t, 8>& ptr, const std::array<float, 8>& key, unsigned live,
                        bool triangles_first, int comparators, bool wide, uint32_t* out) {
  const auto word = [&](unsigned k) {
    return uint64_t{sort_ext(ptr[k], triangles_first)} << 35 | uint64_t{float_bits(key[k])} << 3 | k;
  };
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
      std::fill_n(out, 8, kInvalidNode);
      for (unsigned i = 0; i < n; ++i) out[i] = ptr[v[i] & 7u];
      return (1u << n) - 1;
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
  unsigned pointer_slots = 0;
  for (unsigned k = 0; k < 8; ++k) {
    out[k] = ptr[w[k] & 7u];
    pointer_slots |= static_cast<unsigned>(~w[k] >> 37 & 1u) << k;  // ext bit 2: INVALID_NODE
  }
  return pointer_slots;
}

// §5.3 steps 7-8 on the hit pointers (bit k of `live` set: ptr[k] is not INVALID): writes DW0..7 to `out`; gives
// their pointer slots (bit k: DW k is not INVALID_NODE), known here without reading `out` back.
inline unsigned sort_children(const std::array<uint32_t, 8>& ptr, const std::array<float, 8>& key, unsigned live,
                              const IntersectOptions& opt, uint32_t* out) {
  if (!opt.box_sort || opt.heuristic == SortHeuristic::Disabled) {
    std::copy(ptr.begin(), ptr.end(), out);
    return live;
  }
  // Valid entries always sort before invalid ones (their ext is smaller), so with at most one valid entry the
  // wide sort's output is that entry followed by INVALID: no need to run the network.
  if (opt.wide_sort && (live & (live - 1)) == 0) {
    std::fill_n(out, 8, kInvalidNode);
    if (live != 0) out[0] = ptr[static_cast<unsigned>(std::countr_zero(live))];
    return live != 0 ? 1u : 0u;
  }
  const int comparators = opt.wide_sort ? 19 : kHalfSortComparators;
  if (opt.heuristic == SortHeuristic::Closest) {
    return sort_packed(ptr, key, live, opt.sort_triangles_first, comparators, opt.wide_sort, out);
  }
  SortEntries e;
  for (int k = 0; k < 8; ++k) {
    e.tag[k] = uint64_t{sort_ext(ptr[k], opt.sort_triangles_first)} << 32 | ptr[k];
    e.key[k] = key[k];
  }
#pragma GCC unroll 19
  for (int i = 0; i < comparators; ++i) compare_exchange(e, kNetwork[i][0], kNetwork[i][1]);
  unsigned pointer_slots = 0;
  for (unsigned k = 0; k < 8; ++k) {
    out[k] = static_cast<uint32_t>(e.tag[k]);
    pointer_slots |= static_cast<unsigned>(~e.tag[k] >> 34 & 1u) << k;  // ext bit 2: INVALID_NODE
  }
  return pointer_slots;
}

// Per lane x > acc ? x : acc, and x < acc ? x : acc: acc when either is NaN. That is the definition of x86's
// MAXPS / MINPS, which GCC does not emit for the portable form (it could only with -ffinite-math-only).
inline F4 max_or_keep(F4 x, F4 acc) {
#if defined(__SSE__)
  return _mm_max_ps(x, acc);
#else
  return x > acc ? x : acc;
#endif
}
inline F4 min_or_keep(F4 x, F4 acc) {
#if defined(__SSE__)
  return _mm_min_ps(x, acc);
#else
  return x < acc ? x : acc;
#endif
}
// The slab test's operands for one node: the ray in the node's frame (origin, 1 / direction), and per axis the
// plane array nearest along the ray and the farthest.
struct SlabOperands {
  float origin[3], inverse[3];
  const float* near_plane[3];
  const float* far_plane[3];
  float extent;  ///< the ray's extent, +inf for NaN
  float grow;    ///< box_grow_factor
};

// Slab test of all eight slots (§5.3 step 5), four at a time: tn = maxNum(maxNum(near_x, near_y), near_z), tf
// likewise with minNum; clamp to [0, extent]; miss on NaN; grow the far distance. maxNum ignores a NaN operand, so
// tn is the largest non-NaN near distance, NaN only when all three are NaN: it is accumulated from -inf with
// `x > acc ? x : acc` (which keeps acc for a NaN x; one MAXPS), and the all-NaN case is tracked apart and makes the
// slot miss, as a NaN tn or tf does. kNanFree: the caller knows that no plane distance can be NaN (finite origin,
// finite non-zero inverse direction, finite planes in every slot that holds a pointer; the other slots' results
// are never read), so nothing needs tracking. Of two equal values (+0 and -0) either may come back, which changes
// no outcome: t0 clamps both to +0, and keys compare equal. Missed slots' keys are arbitrary: their pointers become
// INVALID, which sort last by their ext alone, all alike. A slot passes when it hits and its instance mask shares
// a bit with the ray's (early culling, §5.3 step 3; culling before or after the slab test gives the same pointers).
template <bool kNanFree>
inline void slab_test(const rdna4::BoxChildren& box, const SlabOperands& s, uint32_t instance_mask,
                      SortHeuristic heuristic, U4 (&pass)[2], std::array<float, 8>& key) {
  const U4 ray_mask = U4{} + instance_mask;
  for (int half = 0; half < 2; ++half) {
    const int h = 4 * half;
    F4 tn = F4{} - kInf, tf = F4{} + kInf;
    I4 near_nan = I4{} - 1, far_nan = I4{} - 1;
    for (int c = 0; c < 3; ++c) {
      const F4 n = (load4<F4>(s.near_plane[c] + h) - s.origin[c]) * s.inverse[c];
      const F4 f = (load4<F4>(s.far_plane[c] + h) - s.origin[c]) * s.inverse[c];
      tn = max_or_keep(n, tn);
      tf = min_or_keep(f, tf);
      if constexpr (!kNanFree) {
        near_nan &= n != n;
        far_nan &= f != f;
      }
    }
    const F4 t0 = max_or_keep(tn, F4{});
    const F4 t1 = min_or_keep(tf, F4{} + s.extent);
    I4 hit = t0 <= t1 * s.grow;
    if constexpr (!kNanFree) hit &= ~(near_nan | far_nan);
    const U4 mask_ok = (load4<U4>(&box.instance_mask[h]) & ray_mask) != 0;
    pass[half] = bit_cast4<U4>(hit) & mask_ok;
    switch (heuristic) {
      case SortHeuristic::LargestFirst: store4(&key[h], t0 - t1); break;
      case SortHeuristic::ClosestMidpoint: store4(&key[h], tn + tf); break;
      case SortHeuristic::Closest:
      case SortHeuristic::Disabled: store4(&key[h], t0); break;
    }
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HWBVH_EMU_AVX2 1
// Run the copies of the hot path built for AVX2 (with FMA and the bit-manipulation instructions that come with it): set
// when the program starts if the CPU has them. Both code paths give identical results; tests clear it to run the
// portable one.
inline bool use_avx2 = [] {
  __builtin_cpu_init();
  // LZCNT from CPUID leaf 0x80000001 (ECX bit 5): Clang's __builtin_cpu_supports does not know the name.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool lzcnt = __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_LZCNT) != 0;
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && lzcnt && __builtin_cpu_supports("popcnt");
}();

// slab_test on all eight slots at once, for CPUs with AVX2: the same IEEE operations lane by lane in the same order
// (VMAXPS / VMINPS keep their second operand exactly as MAXPS / MINPS do), so the same pass bits and keys.
template <bool kNanFree>
[[gnu::target("avx2")]] inline void slab_test_avx2(const rdna4::BoxChildren& box, const SlabOperands& s,
                                                    uint32_t instance_mask, SortHeuristic heuristic, U4 (&pass)[2],
                                                    std::array<float, 8>& key) {
  __m256 tn = _mm256_set1_ps(-kInf), tf = _mm256_set1_ps(kInf);
  __m256 near_nan = _mm256_castsi256_ps(_mm256_set1_epi32(-1)), far_nan = near_nan;
  for (int c = 0; c < 3; ++c) {
    const __m256 origin = _mm256_set1_ps(s.origin[c]), inverse = _mm256_set1_ps(s.inverse[c]);
    const __m256 n = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(s.near_plane[c]), origin), inverse);
    const __m256 f = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(s.far_plane[c]), origin), inverse);
    tn = _mm256_max_ps(n, tn);
    tf = _mm256_min_ps(f, tf);
    if constexpr (!kNanFree) {
      near_nan = _mm256_and_ps(near_nan, _mm256_cmp_ps(n, n, _CMP_UNORD_Q));
      far_nan = _mm256_and_ps(far_nan, _mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    }
  }
  const __m256 t0 = _mm256_max_ps(tn, _mm256_setzero_ps());
  const __m256 t1 = _mm256_min_ps(tf, _mm256_set1_ps(s.extent));
  __m256 hit = _mm256_cmp_ps(t0, _mm256_mul_ps(t1, _mm256_set1_ps(s.grow)), _CMP_LE_OQ);
  if constexpr (!kNanFree) hit = _mm256_andnot_ps(_mm256_or_ps(near_nan, far_nan), hit);
  const auto* child_masks = reinterpret_cast<const __m256i*>(box.instance_mask.data());
  const __m256i masks =
      _mm256_and_si256(_mm256_loadu_si256(child_masks), _mm256_set1_epi32(static_cast<int>(instance_mask)));
  const __m256i passed =
      _mm256_andnot_si256(_mm256_cmpeq_epi32(masks, _mm256_setzero_si256()), _mm256_castps_si256(hit));
  store4(&pass[0], _mm256_castsi256_si128(passed));
  store4(&pass[1], _mm256_extracti128_si256(passed, 1));
  switch (heuristic) {
    case SortHeuristic::LargestFirst: _mm256_storeu_ps(key.data(), _mm256_sub_ps(t0, t1)); break;
    case SortHeuristic::ClosestMidpoint: _mm256_storeu_ps(key.data(), _mm256_add_ps(tn, tf)); break;
    case SortHeuristic::Closest:
    case SortHeuristic::Disabled: _mm256_storeu_ps(key.data(), t0); break;
  }
}
#endif

// slab_test on the widest vectors the CPU has.
template <bool kNanFree>
inline void slab_test_widest(const rdna4::BoxChildren& box, const SlabOperands& s, uint32_t instance_mask,
                             SortHeuristic heuristic, U4 (&pass)[2], std::array<float, 8>& key) {
#if HWBVH_EMU_AVX2
  if (use_avx2) {
    slab_test_avx2<kNanFree>(box, s, instance_mask, heuristic, pass, key);
    return;
  }
#endif
  slab_test<kNanFree>(box, s, instance_mask, heuristic, pass, key);
}

// §5.3 on a decoded box node. `box`: the decoded child pointers (INVALID past the count) and dequantized boxes (NaN
// past the count); `obb`: the node's OBB matrix, read only when box.obb_index < kObbMatrixCount; `traits`:
// BoxTraits::of(box).
inline void intersect_box(const rdna4::BoxChildren& box, const rdna4::Mat3Rows& obb, BoxTraits traits,
                          const PointerFlags& pf, const PreparedRay& ray, const IntersectOptions& opt,
                          IntersectResult& res) {
  // OBB: the slab tests run in the node's rotated frame. Indices 104..126 have no matrix; they are treated like
  // 0x7F (axis-aligned), see docs/emulator.md.
  Vec3 o = ray.operands.origin, inv = ray.inverse;
  std::array<uint8_t, 3> near_is_max = ray.near_is_max;
  bool nan_free = ray.nan_free_slabs;
  if (box.obb_index < rdna4::kObbMatrixCount) {
    Vec3 d = ray.operands.direction;
    rotate_ray(obb, o, d);
    inv = reciprocal(d);
    near_is_max = near_plane_sides(inv);
    nan_free = nan_free_slabs(o, inv);
    res.obb_rotated = true;
  }
  const float extent = std::isnan(ray.operands.extent) ? kInf : ray.operands.extent;
  SlabOperands s{{o.x, o.y, o.z}, {inv.x, inv.y, inv.z}, {}, {}, extent, box_grow_factor(opt.box_grow)};
  // Selects, not branches, which the ray's direction would make unpredictable.
  for (int c = 0; c < 3; ++c) {
    const float* min = box.min[c].data();
    const float* max = box.max[c].data();
    s.near_plane[c] = near_is_max[c] != 0 ? max : min;
    s.far_plane[c] = near_is_max[c] != 0 ? min : max;
  }
  U4 pass[2];
  std::array<float, 8> key;
  if (nan_free && traits.finite_planes) {
    slab_test_widest<true>(box, s, ray.operands.instance_mask, opt.heuristic, pass, key);
  } else {
    slab_test_widest<false>(box, s, ray.operands.instance_mask, opt.heuristic, pass, key);
  }

  // Early culling by box flags (§5.3 step 2), only when a pointer flag can cull.
  if (pf.cull_opaque || pf.cull_non_opaque || pf.skip_triangles || pf.skip_procedural) {
    pass[0] &= ~box_flags_cull4(load4<U4>(&box.box_flags[0]), pf);
    pass[1] &= ~box_flags_cull4(load4<U4>(&box.box_flags[4]), pf);
  }
  // The hit pointers (INVALID_NODE is all ones), then adjacent duplicates removed (child reuse, §5.3 step 6).
  // Every entry becomes the next one's "previous", whether it was removed or not (a removed entry equalled its
  // predecessor), so each is compared with its original predecessor; slot 0 has none. Without child reuse only
  // missed slots can be equal, and those are INVALID already.
  U4 ptr_lo = load4<U4>(&box.pointer[0]) | ~pass[0], ptr_hi = load4<U4>(&box.pointer[4]) | ~pass[1];
  if (!traits.distinct_pointers) {
    const U4 prev_lo = __builtin_shufflevector(ptr_lo, ptr_lo, 0, 0, 1, 2);
    const U4 prev_hi = __builtin_shufflevector(ptr_lo, ptr_hi, 3, 4, 5, 6);
    const U4 not_first = {0, ~0u, ~0u, ~0u};
    ptr_lo |= bit_cast4<U4>(ptr_lo == prev_lo) & not_first;
    ptr_hi |= bit_cast4<U4>(ptr_hi == prev_hi);
  }
  const unsigned live = lane_bits(ptr_lo != kInvalidNode) | lane_bits(ptr_hi != kInvalidNode) << 4;
  std::array<uint32_t, 8> ptr;
  store4(&ptr[0], ptr_lo);
  store4(&ptr[4], ptr_hi);

  const unsigned pointer_slots = sort_children(ptr, key, live, opt, res.dw.data());
  // Another sentinel among the children (a malformed node) leaves the stack its general rules.
  res.pointer_slots = traits.sentinel_free ? pointer_slots : IntersectResult::kSlotsUnknown;
  res.box_tests = 8;
}

// intersect_instance (intersect.h) on a decoded instance node, with the object-space ray prepared into `object_ray`
// unless the instance is culled. Inline, so that the traversal's instance step runs in its wave loop's code (in the
// AVX2 copy: each fma one instruction, the slab test eight-wide).
inline InstanceIntersect intersect_instance(const DecodedInstance& instance, const PointerFlags& flags,
                                            const RayOperands& ray, const IntersectOptions& options,
                                            PreparedRay& object_ray) {
  InstanceIntersect out;
  out.dw.fill(kInvalidNode);
  const rdna4::DecodedInstanceNode& inst = instance.node;
  out.parent_pointer = inst.parent_pointer;
  const uint32_t instance_flags = rdna4::base_pointer_flags(inst.blas_base_pointer);
  const bool procedural_blas = (instance_flags & rdna4::kPointerFlagSkipTriangles) != 0;
  out.culled = (inst.instance_mask & ray.instance_mask) == 0 || (!procedural_blas && flags.skip_triangles) ||
               (procedural_blas && flags.skip_procedural);
  if (!out.culled) {
    const Mat3x4& w = inst.world_to_object;
    const Vec3 o = ray.origin, d = ray.direction;
    Vec3 origin, direction;
    for (int r = 0; r < 3; ++r) {
      origin[r] = std::fma(o.x, w[r][0], std::fma(o.y, w[r][1], std::fma(o.z, w[r][2], w[r][3])));
      direction[r] = std::fma(d.x, w[r][0], std::fma(d.y, w[r][1], d.z * w[r][2]));
    }
    // The filter node's four boxes, tested like a box node's eight (§5.3 steps 5..8) with the object-space ray.
    IntersectResult filter;
    prepare_ray(object_ray, origin, direction, ray.instance_mask);
    object_ray.operands.extent = ray.extent;
    intersect_box(instance.filter, rdna4::Mat3Rows{}, instance.traits, flags, object_ray, options, filter);
    // The hit children's bytes come first, misses after them, under every heuristic (§5.5): the traversal reads
    // the BLAS root from byte 0 alone. Sorted results are in that form already; unsorted ones (heuristic 3, or box
    // sort off) keep the hits' slot order.
    unsigned packed = 0;
    for (unsigned k = 0; k < 8 && packed < 4; ++k) {
      if (filter.dw[k] == kInvalidNode) continue;
      const unsigned shift = 8 * packed++;
      out.dw[7] = (out.dw[7] & ~(0xFFu << shift)) | (filter.dw[k] & 0xFFu) << shift;
    }
  }
  // A culled instance returns a miss (GPURT's emulation would still test the filter, docs/rtip31-format.md §5.5).
  const uint64_t blas = (inst.blas_base_pointer & ~(uint64_t{0x3FF} << 54)) |
                        uint64_t{rdna4::merge_instance_flags(flags.bits(), instance_flags)} << 54;
  out.dw[2] = static_cast<uint32_t>(blas);
  out.dw[3] = static_cast<uint32_t>(blas >> 32);
  out.dw[6] = inst.user_data;
  return out;
}

// Component-wise helpers with a fixed evaluation order (left to right).
inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// What a triangle test hands to the shared culling and packing of §5.4: t = tn / den, the weights u (vertex i1) and
// v (vertex i2), and the facing from the sign of den (>= 0: front). A miss is tn = +inf, den = 1.
struct TriangleCandidate {
  float tn = kInf;
  float den = 1.0f;
  float u = 0.0f;
  float v = 0.0f;
};

// Möller–Trumbore, as GPURT's emulation writes it (§5.4; its fast_intersect_triangle, which RT IP 2.0 runs too):
// t = tn / den, and un, vn the weights of b and c times den. A miss is tn = +inf, den = 1 and keeps un, vn.
struct MollerTrumbore {
  float tn, den, un, vn;
};
inline MollerTrumbore moller_trumbore_numerators(Vec3 a, Vec3 b, Vec3 c, Vec3 origin, Vec3 direction) {
  const Vec3 e1 = b - a, e2 = c - a, e3 = origin - a;
  const Vec3 s1 = cross(direction, e2), s2 = cross(e3, e1);
  float tn = dot(e2, s2);
  float den = dot(s1, e1);
  const float un = dot(e3, s1), vn = dot(direction, s2);
  const float t = tn / den, bu = un / den, bv = vn / den;
  if (bu < 0.0f || bu > 1.0f || bv < 0.0f || bu + bv > 1.0f || t < 0.0f) {  // NaN compares false
    tn = kInf;
    den = 1.0f;
  }
  return {tn, den, un, vn};
}

// §5.4's slot: the weights divided by den (a miss keeps the numerators: u = un, v = vn).
inline TriangleCandidate moller_trumbore(const rdna4::DecodedTriangle& tri, const RayOperands& ray) {
  const MollerTrumbore m =
      moller_trumbore_numerators(tri.vertex[0], tri.vertex[1], tri.vertex[2], ray.origin, ray.direction);
  return {m.tn, m.den, m.un / m.den, m.vn / m.den};
}

// The edge functions of Woop, Benthin, Wald 2013 (JCGT 2(1)), "Watertight Ray/Triangle Intersection": vertices
// relative to the origin, permuted so that the ray runs along kz and sheared so that it becomes the +z axis; then 2D
// edge functions u, v, w (weights of a, b, c times det), recomputed in double precision when one is exactly zero.
// `inside`: the ray passes through the triangle (either winding; all three share a sign and det = u + v + w is not
// zero); tn = t * det. det has the sign of den in §5.4 (>= 0: the ray travels against (b - a) x (c - a)), because
// the permutation keeps the winding. Shared by the RT IP 3.1 and Xe3 triangle tests, which differ only in how they
// then test t.
struct WatertightEdges {
  bool inside = false;
  float u = 0.0f, v = 0.0f, w = 0.0f, det = 0.0f, tn = 0.0f;
};
inline WatertightEdges watertight_edges(Vec3 va, Vec3 vb, Vec3 vc, const PreparedRay& ray) {
  // Plain arrays, indexed by the ray's axes (glm's operator[] is a switch, unpredictable with per-ray axes).
  const Vec3 o = ray.operands.origin;
  const auto relative = [o](Vec3 p) { return std::array<float, 3>{p.x - o.x, p.y - o.y, p.z - o.z}; };
  const std::array<float, 3> a = relative(va), b = relative(vb), c = relative(vc);
  const int kx = ray.kx, ky = ray.ky, kz = ray.kz;
  const float ax = a[kx] - ray.shear_x * a[kz], ay = a[ky] - ray.shear_y * a[kz];
  const float bx = b[kx] - ray.shear_x * b[kz], by = b[ky] - ray.shear_y * b[kz];
  const float cx = c[kx] - ray.shear_x * c[kz], cy = c[ky] - ray.shear_y * c[kz];
  WatertightEdges e;
  e.u = cx * by - cy * bx;
  e.v = ax * cy - ay * cx;
  e.w = bx * ay - by * ax;
  if (e.u == 0.0f || e.v == 0.0f || e.w == 0.0f) {
    // Products of floats are exact in double: only the difference rounds (twice, harmlessly).
    const auto edge = [](float p, float q, float r, float s) {
      return static_cast<float>(static_cast<double>(p) * static_cast<double>(q) -
                                static_cast<double>(r) * static_cast<double>(s));
    };
    e.u = edge(cx, by, cy, bx);
    e.v = edge(ax, cy, ay, cx);
    e.w = edge(bx, ay, by, ax);
  }
  // Outside (or NaN): the edge functions do not all share one sign.
  const bool same_sign =
      (e.u >= 0.0f && e.v >= 0.0f && e.w >= 0.0f) || (e.u <= 0.0f && e.v <= 0.0f && e.w <= 0.0f);
  e.det = e.u + e.v + e.w;
  e.inside = same_sign && e.det != 0.0f;
  if (!e.inside) return e;
  const float az = ray.shear_z * a[kz], bz = ray.shear_z * b[kz], cz = ray.shear_z * c[kz];
  e.tn = e.u * az + e.v * bz + e.w * cz;
  return e;
}

// A watertight hit at t = tn / det >= 0, tested without dividing: tn with det's sign applied must not be negative
// (NaN: miss). No extent test, like §5.4.
inline bool watertight_hit(const WatertightEdges& e) {
  return e.inside && bits_float(float_bits(e.tn) ^ (float_bits(e.det) & kSignBit)) >= 0.0f;
}

// The watertight test of §5.4's slot.
inline TriangleCandidate watertight(const rdna4::DecodedTriangle& tri, const PreparedRay& ray) {
  const WatertightEdges e = watertight_edges(tri.vertex[0], tri.vertex[1], tri.vertex[2], ray);
  if (!watertight_hit(e)) return {};
  return {e.tn, e.det, e.v / e.det, e.w / e.det};
}

// §5.4's culling by the pointer flags (GPURT's PerformTriangleCulling), shared with RT IP 2.0 / 3.0: facing from the
// sign of den (flipped, with tn and den, by flip_facedness), opacity, triangle / procedural skipping. A culled
// candidate becomes a miss (tn = +inf, den = 1, weights 0), a procedural one the (0, 1) placeholder.
inline void cull_triangle(const PointerFlags& pf, bool procedural, bool opaque, float& tn, float& den, float& i,
                          float& j) {
  bool culled = false;
  if (!procedural) {
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
    tn = kInf, den = 1.0f, i = 0.0f, j = 0.0f;
  } else if (procedural) {
    tn = 0.0f, den = 1.0f, i = 0.0f, j = 0.0f;
  }
}

// One triangle slot of the primitive path (§5.4); returns (t, I, J, prim << 1 | hitkind).
inline std::array<uint32_t, 4> intersect_triangle(const rdna4::DecodedTriangle& tri, const PointerFlags& pf,
                                           const PreparedRay& ray, TriangleTest test, uint32_t& triangle_tests) {
  TriangleCandidate hit{0.0f, 1.0f, 0.0f, 0.0f};  // procedural: replaced below
  if (!tri.procedural) {
    hit = test == TriangleTest::Gpurt ? moller_trumbore(tri, ray.operands) : watertight(tri, ray);
    ++triangle_tests;
  }
  float tn = hit.tn, den = hit.den, u = hit.u, v = hit.v;

  // Culling and opacity from the pointer flags.
  const bool opaque = pf.force_opaque || (!pf.force_non_opaque && tri.opaque);
  cull_triangle(pf, tri.procedural, opaque, tn, den, u, v);

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

inline void intersect_primitive(const rdna4::DecodedPair& pair, const PointerFlags& pf, const PreparedRay& ray,
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
inline IntersectResult empty_result(uint32_t node_pointer) {
  IntersectResult res;
  res.dw.fill(kInvalidNode);
  res.kind = rdna4::node_kind(node_pointer);
  return res;
}

inline bool intersected(rdna4::NodeKind kind) {
  return kind == rdna4::NodeKind::Box || kind == rdna4::NodeKind::Primitive;
}


// image_bvh8_intersect_ray on the cache's node memory (intersect.h).
inline IntersectResult intersect_cached(NodeDecodeCache& cache, const PointerFlags& flags, const PreparedRay& ray,
                                        uint32_t node_pointer, const IntersectOptions& options) {
  IntersectResult res = empty_result(node_pointer);
  if (res.kind == rdna4::NodeKind::Box) {
    if (const NodeDecodeCache::Box* box = cache.box(node_pointer, res.fault)) {
      intersect_box(box->children, box->obb, box->traits, flags, ray, options, res);
    }
  } else if (res.kind == rdna4::NodeKind::Primitive) {
    const NodeDecodeCache::Pair* pair = cache.pair(node_pointer, res.fault);
    if (pair != nullptr && pair->fault != NodeFault::None) res.fault = pair->fault;
    if (res.fault == NodeFault::None) {
      intersect_primitive(pair->pair, flags, ray, options.triangle_test.value_or(kRtip31TriangleTest), res);
    }
  }
  return res;
}

}  // namespace hwbvh::emu::detail
