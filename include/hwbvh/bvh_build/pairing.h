#pragma once
// Triangle pairing inside a leaf. Hardware tests triangles two at a time (RT IP 3.1 pair descriptors, RT IP 2.0
// pair-compressed triangle nodes, Xe QuadLeaf), so a leaf of n triangles costs one traversal step per pair.
// Edge-sharing triangles are paired first (two vertices with the same index or the same position). Formats whose
// pair is two independent triangles (RT IP 3.1: each triangle has its own three vertex indices) also pair the
// triangles left over, preferring ones that share a vertex, since every pair costs one traversal step;
// formats that store a pair as a quad (RT IP 2.0, Xe QuadLeaf) need the shared edge and leave them alone.
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/bvh_build/wide_bvh.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

class TrianglePairing {
 public:
  static constexpr uint32_t kMaxTriangles = 64;  ///< per call (leaves hold at most 2 * 32 triangles)

  /// Welds the scene's vertex positions (equal positions get one id) once, so each call compares small ids; the
  /// weld runs on `executor` and is the same at any thread count.
  /// `pair_leftovers`: also pair triangles without a shared edge (see above). `pair_fits`: when set, only
  /// triangles it accepts are paired (edge-sharing or not).
  explicit TrianglePairing(const Scene& scene, bool pair_leftovers = false, PairFitFn pair_fits = {},
                           const Executor& executor = Executor(1));

  /// Pairs distinct scene triangles `triangles` (at most kMaxTriangles) and appends the pairs to `out`:
  /// edge-sharing triangles are matched greedily, least-connected first (optimal on strips and fans, and
  /// leaving few lone triangles on general meshes); with pair_leftovers the unmatched triangles are then paired
  /// with each other (a shared vertex first); the rest become lone pairs (tri1 = kNoIndex).
  /// Within a pair tri0 < tri1; pairs are ordered by tri0. Deterministic. Returns the number of pairs added.
  /// Throws hwbvh::Error (Runtime) for more than kMaxTriangles triangles.
  uint32_t pair(std::span<const uint32_t> triangles, std::vector<PrimPair>& out) const;

 private:
  std::vector<uint32_t> weld_;  ///< per position: the smallest index of a position with equal coordinates
  const Scene* scene_;
  bool pair_leftovers_;
  PairFitFn pair_fits_;
};

}  // namespace hwbvh::bvh_build
