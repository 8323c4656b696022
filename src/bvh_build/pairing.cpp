#include "hwbvh/bvh_build/pairing.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {

TrianglePairing::TrianglePairing(const Scene& scene, bool pair_leftovers, PairFitFn pair_fits, const Executor& executor)
    : weld_(scene.positions.size()), scene_(&scene), pair_leftovers_(pair_leftovers), pair_fits_(std::move(pair_fits)) {
  // Equal positions (compared with ==, so -0 matches +0 and NaN matches nothing) get the smallest index among
  // them: every position is put in an open-addressing table where equal positions share a slot that keeps the
  // smallest of their indices (an atomic minimum, so the table's values do not depend on the threads' order),
  // and each position then reads its slot.
  const auto& p = scene.positions;
  const auto count = static_cast<uint32_t>(p.size());
  const std::size_t mask = std::bit_ceil(2 * p.size() + 1) - 1;
  const auto first = std::make_unique_for_overwrite<uint32_t[]>(mask + 1);
  constexpr std::size_t kGrain = 1 << 16;
  executor.for_ranges(0, mask + 1, kGrain,
                      [&](std::size_t b, std::size_t e) { std::fill(&first[b], &first[e], kNoIndex); });
  const auto key = [](float f) { return uint64_t{f == 0.0f ? 0u : float_bits(f)}; };
  executor.for_ranges(0, count, kGrain, [&](std::size_t b, std::size_t e) {
    for (auto i = static_cast<uint32_t>(b); i < e; ++i) {
      weld_[i] = kNoIndex;  // NaN: welded to itself
      if (std::isnan(p[i].x) || std::isnan(p[i].y) || std::isnan(p[i].z)) continue;
      uint64_t h = (key(p[i].x) * 0x9E3779B97F4A7C15ull ^ key(p[i].y)) * 0xC2B2AE3D27D4EB4Full ^ key(p[i].z);
      h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
      for (std::size_t slot = (h ^ (h >> 32)) & mask;; slot = (slot + 1) & mask) {
        std::atomic_ref<uint32_t> cell(first[slot]);
        uint32_t held = cell.load(std::memory_order_relaxed);
        // An empty slot is taken; a failed attempt leaves in `held` the index another thread put there.
        if (held == kNoIndex && cell.compare_exchange_strong(held, i, std::memory_order_relaxed)) {
          weld_[i] = static_cast<uint32_t>(slot);
          break;
        }
        if (p[held] == p[i]) {
          while (i < held && !cell.compare_exchange_weak(held, i, std::memory_order_relaxed)) {
          }
          weld_[i] = static_cast<uint32_t>(slot);
          break;
        }
      }
    }
  });
  executor.for_ranges(0, count, kGrain, [&](std::size_t b, std::size_t e) {
    for (auto i = static_cast<uint32_t>(b); i < e; ++i) weld_[i] = weld_[i] == kNoIndex ? i : first[weld_[i]];
  });
}

uint32_t TrianglePairing::pair(std::span<const uint32_t> triangles, std::vector<PrimPair>& out) const {
  if (triangles.size() > kMaxTriangles) {
    throw Error(ErrorKind::Runtime, scene_->source,
                "cannot pair " + std::to_string(triangles.size()) + " triangles at once (max 64)");
  }
  const auto n = static_cast<int>(triangles.size());
  if (n == 1) {  // most leaves of fine meshes: skip the set-up below
    out.push_back({triangles[0], kNoIndex});
    return 1;
  }
  // Only the first n entries of these per-call arrays are used (and set) below: no value-initialisation, which
  // would clear some 2 KB per call.
  std::array<uint32_t, kMaxTriangles> tris;
  std::copy(triangles.begin(), triangles.end(), tris.begin());
  std::sort(tris.begin(), tris.begin() + n);

  // Edge adjacency as bit masks: i and j share an edge if two welded vertices coincide.
  std::array<std::array<uint32_t, 3>, kMaxTriangles> ids;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) ids[i][k] = weld_[scene_->triangles[tris[i]].v[k]];
  }
  // tris is sorted, so i < j gives the format's pair test its (tri0, tri1) order.
  const auto fits = [&](int i, int j) { return !pair_fits_ || pair_fits_(*scene_, tris[i], tris[j]); };
  std::array<uint64_t, kMaxTriangles> adjacent;
  std::fill(adjacent.begin(), adjacent.begin() + n, uint64_t{0});
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      int shared = 0;
      for (const uint32_t a : ids[i]) shared += (a == ids[j][0]) + (a == ids[j][1]) + (a == ids[j][2]);
      if (shared >= 2 && fits(i, j)) {
        adjacent[i] |= uint64_t{1} << j;
        adjacent[j] |= uint64_t{1} << i;
      }
    }
  }

  // Greedy matching, least-connected triangle first, matched to its least-connected free neighbour: a
  // triangle with one free neighbour loses nothing by taking it, which keeps lone triangles few.
  uint64_t free_mask = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  // Bits cleared one at a time: a triangle has at most a few free neighbours, and std::popcount is a libgcc call
  // on the baseline x86-64 target (no POPCNT instruction).
  const auto degree = [&](int i) {
    int d = 0;
    for (uint64_t m = adjacent[i] & free_mask; m != 0; m &= m - 1) ++d;
    return d;
  };
  // Lowest free-neighbour count >= min_degree among `candidates` (lowest index on ties); -1 if none.
  const auto least_connected = [&](uint64_t candidates, int min_degree) {
    int best = -1, best_degree = 0;
    for (; candidates != 0; candidates &= candidates - 1) {
      const int i = std::countr_zero(candidates);
      const int d = degree(i);
      if (d >= min_degree && (best < 0 || d < best_degree)) {
        best = i;
        best_degree = d;
      }
    }
    return best;
  };
  // Pairs go straight to the end of `out` (whose capacity the callers reuse): a local array of PrimPairs would be
  // initialised in full on every call.
  const std::size_t first = out.size();
  for (int u = least_connected(free_mask, 1); u >= 0; u = least_connected(free_mask, 1)) {
    free_mask &= ~(uint64_t{1} << u);
    const int v = least_connected(adjacent[u] & free_mask, 0);
    free_mask &= ~(uint64_t{1} << v);
    out.push_back({tris[u], tris[v]});
  }
  // Leftovers: a triangle sharing a vertex keeps the node's unique-vertex count down; otherwise the next one.
  const auto shares_vertex = [&](int i, int j) {
    for (const uint32_t a : ids[i])
      if (a == ids[j][0] || a == ids[j][1] || a == ids[j][2]) return true;
    return false;
  };
  uint64_t unpaired = 0;  // leftovers that no other leftover fits
  while (pair_leftovers_ && (free_mask & (free_mask - 1)) != 0) {  // at least two free
    const int u = std::countr_zero(free_mask);
    free_mask &= ~(uint64_t{1} << u);
    int v = -1;
    for (uint64_t c = free_mask; c != 0; c &= c - 1) {
      const int w = std::countr_zero(c);
      if (!fits(u, w)) continue;
      if (v < 0) v = w;
      if (shares_vertex(u, w)) {
        v = w;
        break;
      }
    }
    if (v < 0) {
      unpaired |= uint64_t{1} << u;
      continue;
    }
    free_mask &= ~(uint64_t{1} << v);
    out.push_back({tris[u], tris[v]});
  }
  free_mask |= unpaired;
  for (; free_mask != 0; free_mask &= free_mask - 1) out.push_back({tris[std::countr_zero(free_mask)], kNoIndex});
  const auto pairs = std::span(out).subspan(first);
  for (PrimPair& pair : pairs) {
    if (pair.has_tri1() && pair.tri1 < pair.tri0) std::swap(pair.tri0, pair.tri1);
  }
  std::sort(pairs.begin(), pairs.end(), [](const PrimPair& a, const PrimPair& b) { return a.tri0 < b.tri0; });
  return static_cast<uint32_t>(pairs.size());
}

}  // namespace hwbvh::bvh_build
