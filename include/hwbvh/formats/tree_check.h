#pragma once
// What every format's whole-tree check (rdna3/, rdna4/, xe3/ tree_check.h) reports besides its own node counts.
#include <cstdint>
#include <string>
#include <vector>

namespace hwbvh::formats {

struct TreeCheckSummary {
  std::vector<std::string> problems;  ///< empty when the tree is well formed
  uint64_t triangles = 0;             ///< triangle references reached
  uint32_t max_depth = 0;             ///< box- or internal-node levels below the root
  /// Per scene triangle: how many times it was reached (only when a scene is given).
  std::vector<uint32_t> triangle_references;
  [[nodiscard]] bool ok() const { return problems.empty(); }
};

}  // namespace hwbvh::formats
