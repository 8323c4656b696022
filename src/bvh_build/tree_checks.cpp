#include "hwbvh/bvh_build/tree_checks.h"

#include <algorithm>

namespace hwbvh::bvh_build {
namespace {

constexpr size_t kMaxProblems = 50;

class Checker {
 public:
  Checker(const Scene& scene, const WideBvh8& bvh, bool allow_duplicates, uint32_t max_leaf_pairs)
      : scene_(scene), bvh_(bvh), allow_duplicates_(allow_duplicates), max_leaf_pairs_(max_leaf_pairs),
        references_(scene.triangles.size(), 0), leaf_union_(scene.triangles.size()),
        pair_owner_(bvh.pairs.size(), kNoIndex) {}

  std::vector<std::string> run() {
    if (bvh_.nodes.empty()) return {"the tree has no nodes"};
    if (!(bvh_.bounds == bvh_.nodes[0].bounds)) report("tree bounds differ from the root node's bounds");
    walk();
    for (size_t p = 0; p < pair_owner_.size(); ++p) {
      if (pair_owner_[p] == kNoIndex) report("pair " + std::to_string(p) + " belongs to no leaf");
    }
    check_triangles();
    if (dropped_ > 0) problems_.push_back("... and " + std::to_string(dropped_) + " more problems");
    return std::move(problems_);
  }

 private:
  void report(std::string problem) {
    if (problems_.size() < kMaxProblems) {
      problems_.push_back(std::move(problem));
    } else {
      ++dropped_;
    }
  }

  // Breadth-first from the root, so each node's reachability is known exactly.
  void walk() {
    std::vector<bool> reached(bvh_.nodes.size(), false);
    reached[0] = true;
    for (std::vector<uint32_t> queue{0}; !queue.empty();) {
      std::vector<uint32_t> next;
      for (const uint32_t w : queue) check_node(w, reached, next);
      queue = std::move(next);
    }
    for (size_t w = 0; w < reached.size(); ++w) {
      if (!reached[w]) report("node " + std::to_string(w) + " is not reachable from the root");
    }
  }

  void check_node(uint32_t w, std::vector<bool>& reached, std::vector<uint32_t>& next) {
    const WideBvh8::Node& node = bvh_.nodes[w];
    const std::string name = "node " + std::to_string(w);
    if (node.child_count < 1 || node.child_count > WideBvh8::kWidth) {
      report(name + " has " + std::to_string(node.child_count) + " children");
    }
    const uint32_t count = std::min<uint32_t>(node.child_count, WideBvh8::kWidth);
    for (uint32_t i = 0; i < count; ++i) {
      const WideBvh8::Child& child = node.children[i];
      const std::string child_name = name + " child " + std::to_string(i);
      if (!node.bounds.contains(child.bounds)) report(child_name + " box is not inside the node box");
      if (child.is_leaf()) {
        check_leaf(w, child, child_name);
        continue;
      }
      if (child.index >= bvh_.nodes.size()) {
        report(child_name + " points to missing node " + std::to_string(child.index));
        continue;
      }
      if (reached[child.index]) {
        report(child_name + " points to node " + std::to_string(child.index) + ", which is reached more than once");
        continue;
      }
      reached[child.index] = true;
      next.push_back(child.index);
      if (!child.bounds.contains(bvh_.nodes[child.index].bounds)) {
        report(child_name + " box does not contain the box of node " + std::to_string(child.index));
      }
    }
  }

  void check_leaf(uint32_t w, const WideBvh8::Child& child, const std::string& name) {
    if (child.pair_count > max_leaf_pairs_) {
      report(name + " has " + std::to_string(child.pair_count) + " pairs (max " + std::to_string(max_leaf_pairs_) +
             ")");
    }
    if (uint64_t{child.index} + child.pair_count > bvh_.pairs.size()) {
      report(name + " pair range is outside the pair array");
      return;
    }
    std::vector<uint32_t> in_leaf;
    for (uint32_t p = child.index; p < child.index + child.pair_count; ++p) {
      if (pair_owner_[p] != kNoIndex) report(name + " shares pair " + std::to_string(p) + " with another leaf");
      pair_owner_[p] = w;
      const PrimPair& pair = bvh_.pairs[p];
      if (pair.tri0 == pair.tri1) report("pair " + std::to_string(p) + " has equal or no triangles");
      for (int k = 0; k < 2; ++k) {
        const uint32_t t = k == 0 ? pair.tri0 : pair.tri1;
        if (k == 1 && !pair.has_tri1()) continue;
        if (t >= scene_.triangles.size()) {
          report("pair " + std::to_string(p) + " references missing triangle " + std::to_string(t));
          continue;
        }
        if (std::find(in_leaf.begin(), in_leaf.end(), t) != in_leaf.end()) {
          report(name + " holds triangle " + std::to_string(t) + " twice");
        }
        in_leaf.push_back(t);
        ++references_[t];
        leaf_union_[t].grow(child.bounds);
        if (!allow_duplicates_ && !child.bounds.contains(triangle_box(t))) {
          report(name + " box does not contain triangle " + std::to_string(t));
        }
      }
    }
  }

  void check_triangles() {
    for (uint32_t t = 0; t < scene_.triangles.size(); ++t) {
      const std::string name = "triangle " + std::to_string(t);
      if (scene_.is_degenerate(t)) {
        if (references_[t] > 0) report("degenerate " + name + " is referenced");
        continue;
      }
      if (references_[t] == 0) {
        report(name + " is not referenced");
      } else if (!allow_duplicates_ && references_[t] > 1) {
        report(name + " is referenced " + std::to_string(references_[t]) + " times");
      } else if (allow_duplicates_ && !leaf_union_[t].contains(triangle_box(t))) {
        report(name + " is not covered by the boxes of the leaves referencing it");
      }
    }
  }

  [[nodiscard]] Aabb triangle_box(uint32_t t) const {
    return triangle_bounds(scene_.vertex(t, 0), scene_.vertex(t, 1), scene_.vertex(t, 2));
  }

  const Scene& scene_;
  const WideBvh8& bvh_;
  bool allow_duplicates_;
  uint32_t max_leaf_pairs_;
  std::vector<uint32_t> references_;  ///< per triangle: leaves referencing it
  std::vector<Aabb> leaf_union_;      ///< per triangle: union of those leaves' boxes
  std::vector<uint32_t> pair_owner_;  ///< per pair: node holding the leaf, or kNoIndex
  std::vector<std::string> problems_;
  size_t dropped_ = 0;
};

}  // namespace

std::vector<std::string> check_wide_bvh(const Scene& scene, const WideBvh8& bvh, bool allow_duplicates,
                                        uint32_t max_leaf_pairs) {
  return Checker(scene, bvh, allow_duplicates, max_leaf_pairs).run();
}

}  // namespace hwbvh::bvh_build
