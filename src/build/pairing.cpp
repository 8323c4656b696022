#include "hwbvh/build/pairing.h"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <string>
#include <utility>

#include "hwbvh/core/error.h"

namespace hwbvh::build {

TrianglePairing::TrianglePairing(const Scene& scene, bool pair_leftovers, PairFitFn pair_fits)
    : weld_(scene.positions.size()), scene_(&scene), pair_leftovers_(pair_leftovers), pair_fits_(std::move(pair_fits)) {
  std::vector<uint32_t> order(scene.positions.size());
  std::iota(order.begin(), order.end(), 0u);
  const auto& p = scene.positions;
  const auto less = [&](uint32_t a, uint32_t b) {
    if (p[a].x != p[b].x) return p[a].x < p[b].x;
    if (p[a].y != p[b].y) return p[a].y < p[b].y;
    if (p[a].z != p[b].z) return p[a].z < p[b].z;
    return a < b;
  };
  std::sort(order.begin(), order.end(), less);
  for (size_t i = 0; i < order.size(); ++i) {
    const bool same = i > 0 && p[order[i]] == p[order[i - 1]];
    weld_[order[i]] = same ? weld_[order[i - 1]] : order[i];
  }
}

uint32_t TrianglePairing::pair(std::span<const uint32_t> triangles, std::vector<PrimPair>& out) const {
  if (triangles.size() > kMaxTriangles) {
    throw Error(ErrorKind::Runtime, scene_->source,
                "cannot pair " + std::to_string(triangles.size()) + " triangles at once (max 64)");
  }
  const auto n = static_cast<int>(triangles.size());
  std::array<uint32_t, kMaxTriangles> tris{};
  std::copy(triangles.begin(), triangles.end(), tris.begin());
  std::sort(tris.begin(), tris.begin() + n);

  // Edge adjacency as bit masks: i and j share an edge if two welded vertices coincide.
  std::array<std::array<uint32_t, 3>, kMaxTriangles> ids{};
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) ids[i][k] = weld_[scene_->triangles[tris[i]].v[k]];
  }
  // tris is sorted, so i < j gives the format's pair test its (tri0, tri1) order.
  const auto fits = [&](int i, int j) { return !pair_fits_ || pair_fits_(*scene_, tris[i], tris[j]); };
  std::array<uint64_t, kMaxTriangles> adjacent{};
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
  const auto degree = [&](int i) { return std::popcount(adjacent[i] & free_mask); };
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
  std::array<PrimPair, kMaxTriangles> pairs{};
  int count = 0;
  for (int u = least_connected(free_mask, 1); u >= 0; u = least_connected(free_mask, 1)) {
    free_mask &= ~(uint64_t{1} << u);
    const int v = least_connected(adjacent[u] & free_mask, 0);
    free_mask &= ~(uint64_t{1} << v);
    pairs[count++] = {tris[u], tris[v]};
  }
  // Leftovers: a triangle sharing a vertex keeps the node's unique-vertex count down; otherwise the next one.
  const auto shares_vertex = [&](int i, int j) {
    for (const uint32_t a : ids[i])
      if (a == ids[j][0] || a == ids[j][1] || a == ids[j][2]) return true;
    return false;
  };
  uint64_t unpaired = 0;  // leftovers that no other leftover fits
  while (pair_leftovers_ && std::popcount(free_mask) >= 2) {
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
    pairs[count++] = {tris[u], tris[v]};
  }
  free_mask |= unpaired;
  for (; free_mask != 0; free_mask &= free_mask - 1) pairs[count++] = {tris[std::countr_zero(free_mask)], kNoIndex};
  for (int i = 0; i < count; ++i) {
    if (pairs[i].has_tri1() && pairs[i].tri1 < pairs[i].tri0) std::swap(pairs[i].tri0, pairs[i].tri1);
  }
  std::sort(pairs.begin(), pairs.begin() + count, [](const PrimPair& a, const PrimPair& b) { return a.tri0 < b.tri0; });
  out.insert(out.end(), pairs.begin(), pairs.begin() + count);
  return static_cast<uint32_t>(count);
}

}  // namespace hwbvh::build
