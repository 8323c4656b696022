#include "hwbvh/bvh_build/collapse.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hwbvh/bvh_build/pairing.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/core/progress.h"

namespace hwbvh::bvh_build {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr uint8_t kLeaf = 1;
// Subtrees of at most this many binary nodes are evaluated as one parallel task.
constexpr uint32_t kTaskNodes = 4096;

// Costs of one binary node n: cost[i-1] = C(n, i), the lowest cost of n's subtree as <= i subtrees. Only its
// parent reads them, so they live on a stack while a subtree is evaluated (and are not kept per node).
template <int Width>
using Costs = std::array<float, Width>;

// The choices the bottom-up pass made at one binary node, which the top-down pass follows.
template <int Width>
struct Entry {
  std::array<uint8_t, Width> how{};   ///< how[0]: kLeaf or 0 (wide node); how[i-1], i >= 2: 0 = as C(n, i-1),
                                      ///< k > 0 = k subtrees from the left child and i-k from the right
  uint8_t node_split = 0;             ///< k of the best split into Width, used when n becomes a wide node
  uint8_t leaf_pairs = 0;             ///< pairs of n as a leaf, when how[0] == kLeaf
};

struct Scratch {
  std::vector<uint32_t> triangles;
  std::vector<PrimPair> pairs;
};

// Leaves of triangle pairs when given a scene; without one, every leaf is one reference (a box of a top-level tree).
template <int Width>
class Collapser {
 public:
  Collapser(const Scene* scene, const BinaryBvh& binary, const BuildOptions& options)
      : scene_(scene), binary_(binary), options_(options),
        max_leaf_references_(scene ? 2 * options.max_leaf_pairs : 1), dp_(binary.nodes.size()) {
    if (scene) pairing_.emplace(*scene, options.pair_leftovers, options.pair_fits);
    range_scale_ = range_scale(binary.nodes[0].bounds);
    const float root_area = binary.nodes[0].bounds.surface_area(range_scale_);
    area_scale_ = root_area > 0.0f ? 1.0f / root_area : 1.0f;
  }

  // Progress in binary nodes evaluated, then in references paired into the wide tree's leaves.
  WideBvh<Width> run() {
    ProgressCounter progress(options_.progress, "collapse", binary_.nodes.size() + binary_.refs.size());
    evaluate_all(progress);
    WideBvh<Width> wide = extract(progress);
    progress.finish();
    return wide;
  }

 private:
  // Bottom-up pass. Nodes are in preorder, so a subtree is the index range [n, n + size(n)) and children come
  // after their parent: small subtrees are evaluated in parallel (back to front), then the nodes above them.
  // Back to front, a subtree ends with its root, and a node's right subtree comes before its left: the
  // children's costs are the top two entries of a stack, left above right.
  void evaluate_all(ProgressCounter& progress) {
    const auto count = static_cast<uint32_t>(binary_.nodes.size());
    std::vector<uint32_t> size(count, 1);
    for (uint32_t n = count; n-- > 0;) {
      const BinaryBvh::Node& node = binary_.nodes[n];
      if (!node.is_leaf()) size[n] = 1 + size[BinaryBvh::left(n)] + size[node.right];
    }
    std::vector<uint32_t> tasks, top;
    for (std::vector<uint32_t> stack{0}; !stack.empty();) {
      const uint32_t n = stack.back();
      stack.pop_back();
      if (size[n] <= kTaskNodes) {
        tasks.push_back(n);
        continue;
      }
      top.push_back(n);
      stack.push_back(binary_.nodes[n].right);
      stack.push_back(BinaryBvh::left(n));
    }
    std::vector<Costs<Width>> task_costs(tasks.size());
    Executor(options_.threads).for_each(0, tasks.size(), [&](size_t t) {
      Scratch scratch;
      std::vector<Costs<Width>> stack;
      for (uint32_t n = tasks[t] + size[tasks[t]]; n-- > tasks[t];) {
        if (binary_.nodes[n].is_leaf()) {
          stack.push_back(evaluate(n, nullptr, nullptr, scratch));
          continue;
        }
        const Costs<Width> left = stack.back();
        stack.pop_back();
        stack.back() = evaluate(n, &left, &stack.back(), scratch);
      }
      task_costs[t] = stack.back();
      progress.add(size[tasks[t]]);
    });
    std::unordered_map<uint32_t, Costs<Width>> known;  // the costs of task roots and top nodes, by node
    for (size_t t = 0; t < tasks.size(); ++t) known.emplace(tasks[t], task_costs[t]);
    std::sort(top.begin(), top.end());
    Scratch scratch;
    for (auto it = top.rbegin(); it != top.rend(); ++it) {
      const BinaryBvh::Node& node = binary_.nodes[*it];
      known.emplace(*it, evaluate(*it, &known.at(BinaryBvh::left(*it)), &known.at(node.right), scratch));
    }
  }

  // Fills dp_[n] and returns n's costs, from its children's (null for a leaf).
  Costs<Width> evaluate(uint32_t n, const Costs<Width>* l, const Costs<Width>* r, Scratch& scratch) {
    const BinaryBvh::Node& node = binary_.nodes[n];
    const float area = node.bounds.surface_area(range_scale_) * area_scale_;
    Entry<Width>& e = dp_[n];
    Costs<Width> cost;
    if (node.is_leaf()) {
      // One reference (the Embree adapter's leaf size): always a valid leaf, whatever i.
      cost.fill(leaf_cost(n, area, kInfinity, scratch, e.leaf_pairs));
      e.how.fill(0);
      e.how[0] = kLeaf;
      return cost;
    }
    // distribute[i-1]: best split of i subtrees between the children (Ylitie et al., C_distribute).
    std::array<float, Width> distribute{};
    std::array<uint8_t, Width> split{};
    for (int i = 2; i <= Width; ++i) {
      distribute[i - 1] = kInfinity;
      for (int k = 1; k < i; ++k) {
        const float c = (*l)[k - 1] + (*r)[i - k - 1];
        if (c < distribute[i - 1]) {
          distribute[i - 1] = c;
          split[i - 1] = static_cast<uint8_t>(k);
        }
      }
    }
    const float internal = area * options_.box_step_cost + distribute[Width - 1];
    e.node_split = split[Width - 1];
    uint8_t leaf_pairs = 0;
    const float leaf = leaf_cost(n, area, internal, scratch, leaf_pairs);
    cost[0] = std::min(leaf, internal);
    e.how[0] = leaf < internal ? kLeaf : 0;
    e.leaf_pairs = leaf < internal ? leaf_pairs : 0;
    for (int i = 2; i <= Width; ++i) {
      const bool fewer = cost[i - 2] <= distribute[i - 1];
      cost[i - 1] = fewer ? cost[i - 2] : distribute[i - 1];
      e.how[i - 1] = fewer ? 0 : split[i - 1];
    }
    // Whether the root box node should hold the whole tree as its one leaf child: the pass prices the root as
    // anyone's child (a leaf against a box step plus its children), but the root's box step is paid either
    // way, so the leaf only has to beat the children. A two-triangle mesh is then one pair behind one box, not
    // two lone triangles in two leaves that every ray through the box tests one step at a time.
    if (n == 0) root_is_one_leaf_ = e.how[0] == kLeaf && cost[0] < distribute[Width - 1];
    return cost;
  }

  // Distinct triangles of n's references, sorted; false if n has too many references to be a leaf.
  bool leaf_triangles(uint32_t n, std::vector<uint32_t>& out) const {
    const BinaryBvh::Node& node = binary_.nodes[n];
    if (node.ref_count > max_leaf_references_) return false;
    out.resize(node.ref_count);  // `out` is reused: no reallocation, and no growth checks per element
    for (uint32_t i = 0; i < node.ref_count; ++i) out[i] = binary_.refs[node.first_ref + i].triangle;
    if (out.size() > 1) {  // one reference: every binary leaf Embree makes
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    return true;
  }

  // SAH cost of n's subtree as one leaf (and its pair count), or infinity if it cannot be a leaf or costs at
  // least `bound` (then it would not be chosen, so pairing and the format's fit test are skipped).
  float leaf_cost(uint32_t n, float area, float bound, Scratch& scratch, uint8_t& pair_count) const {
    if (!leaf_triangles(n, scratch.triangles)) return kInfinity;
    const float step = area * options_.pair_step_cost;
    if (step * static_cast<float>((scratch.triangles.size() + 1) / 2) >= bound) return kInfinity;
    if (scratch.triangles.size() == 1) {  // one lone pair, which always fits (most calls: the binary leaves)
      pair_count = 1;
      return step;
    }
    scratch.pairs.clear();
    const uint32_t pairs = pairing_->pair(scratch.triangles, scratch.pairs);
    const float cost = step * static_cast<float>(pairs);
    if (pairs > options_.max_leaf_pairs || cost >= bound) return kInfinity;
    if (options_.leaf_fits && !options_.leaf_fits(*scene_, scratch.pairs)) return kInfinity;
    pair_count = static_cast<uint8_t>(pairs);
    return cost;
  }

  // The binary nodes that become the (at most i) subtrees of C(n, i), left to right.
  void subtrees(uint32_t n, int i, std::vector<uint32_t>& out) const {
    while (i > 1 && dp_[n].how[i - 1] == 0) --i;
    if (i == 1) {
      out.push_back(n);
      return;
    }
    const int k = dp_[n].how[i - 1];
    subtrees(BinaryBvh::left(n), k, out);
    subtrees(binary_.nodes[n].right, i - k, out);
  }

  // The binary nodes that become wide node `b`'s children (b is the root's binary node when `root`).
  void wide_children(uint32_t b, bool root, std::vector<uint32_t>& children) const {
    children.clear();
    const BinaryBvh::Node& node = binary_.nodes[b];
    if (node.is_leaf() || (root && root_is_one_leaf_)) {
      children.push_back(b);
      return;
    }
    const int k = dp_[b].node_split;
    subtrees(BinaryBvh::left(b), k, children);
    subtrees(node.right, Width - k, children);
  }

  // The binary node of every wide node, breadth-first: counted before the wide nodes are made, so that their
  // array is allocated once at its size (a growing one would hold up to twice that at the build's peak).
  std::vector<uint32_t> wide_sources() const {
    std::vector<uint32_t> source{0}, children;
    for (size_t w = 0; w < source.size(); ++w) {
      wide_children(source[w], w == 0, children);
      for (const uint32_t c : children) {
        if (dp_[c].how[0] != kLeaf) source.push_back(c);
      }
    }
    return source;
  }

  // Top-down pass: breadth-first wide nodes; the root is always a wide node. Leaf pair ranges are laid out
  // from the pair counts the bottom-up pass recorded; the pairing itself then runs in parallel.
  WideBvh<Width> extract(ProgressCounter& progress) const {
    const std::vector<uint32_t> source = wide_sources();
    WideBvh<Width> out;
    out.nodes.resize(source.size());
    std::vector<uint32_t> children;
    std::vector<std::pair<uint32_t, uint32_t>> leaves;  // binary node, first pair
    uint32_t pair_total = 0;
    uint32_t next_node = 1;
    for (size_t w = 0; w < source.size(); ++w) {
      wide_children(source[w], w == 0, children);
      typename WideBvh<Width>::Node& wide = out.nodes[w];
      for (const uint32_t c : children) {
        typename WideBvh<Width>::Child& child = wide.children[wide.child_count++];
        child.bounds = binary_.nodes[c].bounds;
        wide.bounds.grow(child.bounds);
        if (dp_[c].how[0] == kLeaf) {
          child.index = pair_total;
          child.pair_count = dp_[c].leaf_pairs;
          pair_total += child.pair_count;
          leaves.emplace_back(c, child.index);
        } else {
          child.index = next_node++;
        }
      }
    }
    out.pairs.resize(pair_total);
    for_ranges_counted(Executor(options_.threads), 0, leaves.size(), 1024, progress, [&](size_t begin, size_t end) {
      Scratch scratch;
      uint64_t references = 0;
      for (size_t i = begin; i < end; ++i) {
        const auto [node, first] = leaves[i];
        references += binary_.nodes[node].ref_count;
        leaf_triangles(node, scratch.triangles);
        if (scratch.triangles.size() == 1) {  // what pairing makes of one triangle; the only case without a scene
          out.pairs[first] = {scratch.triangles[0], kNoIndex};
          continue;
        }
        scratch.pairs.clear();
        pairing_->pair(scratch.triangles, scratch.pairs);
        std::copy(scratch.pairs.begin(), scratch.pairs.end(), out.pairs.begin() + first);
      }
      return references;
    });
    out.bounds = out.nodes[0].bounds;
    return out;
  }

  const Scene* scene_;
  const BinaryBvh& binary_;
  const BuildOptions& options_;
  uint32_t max_leaf_references_;
  std::optional<TrianglePairing> pairing_;  ///< with a scene only
  std::vector<Entry<Width>> dp_;
  float range_scale_ = 1.0f;  ///< keeps the areas of huge scenes finite (range_scale)
  float area_scale_ = 1.0f;   ///< areas relative to the root's
  bool root_is_one_leaf_ = false;  ///< set when the root is evaluated
};

}  // namespace

template <int Width>
WideBvh<Width> collapse_to_wide(const Scene& scene, const BinaryBvh& binary, const BuildOptions& options) {
  return Collapser<Width>(&scene, binary, options).run();
}

template <int Width>
WideBvh<Width> collapse_boxes_to_wide(const BinaryBvh& binary, const BuildOptions& options) {
  return Collapser<Width>(nullptr, binary, options).run();
}

template WideBvh<4> collapse_to_wide<4>(const Scene&, const BinaryBvh&, const BuildOptions&);
template WideBvh<6> collapse_to_wide<6>(const Scene&, const BinaryBvh&, const BuildOptions&);
template WideBvh<8> collapse_to_wide<8>(const Scene&, const BinaryBvh&, const BuildOptions&);
template WideBvh<4> collapse_boxes_to_wide<4>(const BinaryBvh&, const BuildOptions&);
template WideBvh<6> collapse_boxes_to_wide<6>(const BinaryBvh&, const BuildOptions&);
template WideBvh<8> collapse_boxes_to_wide<8>(const BinaryBvh&, const BuildOptions&);

}  // namespace hwbvh::bvh_build
