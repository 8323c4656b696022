#include "hwbvh/bvh_build/collapse.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <memory>
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
// Subtrees of at most this many binary nodes are evaluated as one parallel task.
constexpr uint32_t kTaskNodes = 4096;
// Wide nodes of one breadth-first level handed to a worker at a time.
constexpr std::size_t kLevelGrain = 256;

// What a parent needs of an evaluated child n: cost[i-1] = C(n, i), the lowest cost of n's subtree as <= i
// subtrees. It lives on a stack while a subtree is evaluated (and is not kept per node).
template <int Width>
struct Subtree {
  std::array<float, Width> cost;
  /// C(n, i) = C(n, used) for every i >= used: n's subtree never gains from more subtrees (1 for a binary leaf,
  /// at most the children's sum), so the dynamic program stops there.
  int used;
  uint32_t triangles_begin;  ///< where n's distinct triangles begin on the task's triangle stack
};

// The choices the bottom-up pass made at one binary node, which the top-down pass follows, in 8 bytes: bit 0 leaf
// (n as one subtree is a leaf, not a wide node), bits 1-3 the k of the best split into Width (used when n becomes a
// wide node), bits 4-9 n's pairs as a leaf, and from bit 10, 3 bits for each i = 2..Width: how[i] = 0 when C(n, i) =
// C(n, i-1), else k > 0: k subtrees from the left child and i-k from the right.
template <int Width>
class Entry {
 public:
  static_assert(10 + 3 * (Width - 1) <= 32, "the choices of one node fit 32 bits");
  Entry() = default;  // left uninitialised: the bottom-up pass writes every node's entry
  Entry(bool leaf, int node_split, int leaf_pairs, uint32_t pairs_at)
      : bits_((leaf ? 1u : 0u) | static_cast<uint32_t>(node_split) << 1 | static_cast<uint32_t>(leaf_pairs) << 4),
        pairs_at_(pairs_at) {}
  void set_how(int i, int k) { bits_ |= static_cast<uint32_t>(k) << (10 + 3 * (i - 2)); }

  [[nodiscard]] bool leaf() const { return (bits_ & 1u) != 0; }
  [[nodiscard]] int node_split() const { return static_cast<int>(bits_ >> 1 & 7u); }
  [[nodiscard]] uint32_t leaf_pairs() const { return bits_ >> 4 & 63u; }
  [[nodiscard]] int how(int i) const { return static_cast<int>(bits_ >> (10 + 3 * (i - 2)) & 7u); }
  /// n as a leaf: its first pair in its task's pair cache; kNoIndex for one triangle (the pair is its first reference).
  [[nodiscard]] uint32_t pairs_at() const { return pairs_at_; }

 private:
  uint32_t bits_;
  uint32_t pairs_at_;
};

// The pairs of leaf candidates, written as the bottom-up pass pairs them, so that the top-down pass copies the
// chosen leaves' pairs instead of pairing them again. One per task (and one for the nodes above the tasks).
using PairCache = std::vector<PrimPair>;

// What one evaluation task keeps while it goes through its nodes.
struct TaskState {
  explicit TaskState(PairCache& pair_cache) : cache(pair_cache) {}
  PairCache& cache;
  /// The distinct triangles, sorted, of each evaluated subtree that may still be part of a leaf (at most
  /// max_leaf_references_ references), the latest last: a node's are its children's merged, not gathered and sorted.
  std::vector<uint32_t> triangles;
};

// The binary nodes that become one wide node's children.
template <int Width>
struct WideChildren {
  std::array<uint32_t, Width> nodes{};
  int count = 0;
  uint32_t wide_mask = 0;   ///< bit i: nodes[i] becomes a wide node (else a leaf)
  uint32_t leaf_pairs = 0;  ///< the pairs of the leaf children
};

// Leaves of triangle pairs when given a scene; without one, every leaf is one reference (a box of a top-level tree).
template <int Width>
class Collapser {
 public:
  Collapser(const Scene* scene, const BinaryBvh& binary, const BuildOptions& options)
      : scene_(scene), binary_(binary), options_(options),
        max_leaf_references_(scene ? 2 * options.max_leaf_pairs : 1),
        dp_(std::make_unique_for_overwrite<Entry<Width>[]>(binary.nodes.size())) {
    if (scene) pairing_.emplace(*scene, options.pair_leftovers, options.pair_fits, Executor(options.threads));
    range_scale_ = range_scale(binary.nodes[0].bounds);
    const float root_area = binary.nodes[0].bounds.surface_area(range_scale_);
    area_scale_ = root_area > 0.0f ? 1.0f / root_area : 1.0f;
  }

  // Progress in binary nodes evaluated, then in references placed in the wide tree's leaves.
  WideBvh<Width> run() {
    ProgressCounter progress(options_.progress, "collapse", binary_.nodes.size() + binary_.refs.size());
    evaluate_all(progress);
    WideBvh<Width> wide = extract(progress);
    progress.finish();
    return wide;
  }

 private:
  // Bottom-up pass. Nodes are in preorder, so a subtree is an index range [n, end) and children come after their
  // parent (the left child's subtree ends where the right child begins): small subtrees are evaluated in parallel
  // (back to front), then the nodes above them.
  // Back to front, a subtree ends with its root, and a node's right subtree comes before its left: the
  // children's costs are the top two entries of a stack, left above right.
  void evaluate_all(ProgressCounter& progress) {
    std::vector<uint32_t> top;
    using Range = std::pair<uint32_t, uint32_t>;  // a subtree's nodes
    for (std::vector<Range> stack{{0, static_cast<uint32_t>(binary_.nodes.size())}}; !stack.empty();) {
      const auto [n, end] = stack.back();
      stack.pop_back();
      if (end - n <= kTaskNodes) {
        task_begin_.push_back(n);  // in preorder: the stack takes left children first
        task_end_.push_back(end);
        continue;
      }
      top.push_back(n);
      const uint32_t right = binary_.nodes[n].right;
      stack.emplace_back(right, end);
      stack.emplace_back(BinaryBvh::left(n), right);
    }
    caches_.resize(task_begin_.size() + 1);  // the last: the nodes above the tasks
    std::vector<Subtree<Width>> task_results(task_begin_.size());
    Executor(options_.threads).for_each(0, task_begin_.size(), [&](std::size_t t) {
      TaskState state(caches_[t]);
      std::vector<Subtree<Width>> stack;
      for (uint32_t n = task_end_[t]; n-- > task_begin_[t];) {
        if (binary_.nodes[n].is_leaf()) {
          stack.push_back(evaluate(n, nullptr, nullptr, state));
          continue;
        }
        const Subtree<Width> left = stack.back();
        stack.pop_back();
        stack.back() = evaluate(n, &left, &stack.back(), state);
      }
      task_results[t] = stack.back();
      caches_[t].shrink_to_fit();  // kept until the top-down pass: no room left from its growth
      progress.add(task_end_[t] - task_begin_[t]);
    });
    std::unordered_map<uint32_t, Subtree<Width>> known;  // the costs of task roots and top nodes, by node
    for (size_t t = 0; t < task_begin_.size(); ++t) known.emplace(task_begin_[t], task_results[t]);
    std::sort(top.begin(), top.end());
    TaskState state(caches_.back());
    for (auto it = top.rbegin(); it != top.rend(); ++it) {
      const Subtree<Width>& left = known.at(BinaryBvh::left(*it));
      Subtree<Width> right = known.at(binary_.nodes[*it].right);
      right.triangles_begin = 0;  // its triangles are on its own task's stack
      known.emplace(*it, evaluate(*it, &left, &right, state));
    }
  }

  // Fills dp_[n] and returns n's costs, from its children's (null for a leaf). n's pairs, when n may be a leaf,
  // are kept at the end of the task's cache.
  Subtree<Width> evaluate(uint32_t n, const Subtree<Width>* l, const Subtree<Width>* r, TaskState& state) {
    const BinaryBvh::Node& node = binary_.nodes[n];
    const float area = node.bounds.surface_area(range_scale_) * area_scale_;
    PairCache& cache = state.cache;
    Subtree<Width> result;
    const auto first_pair = static_cast<uint32_t>(cache.size());
    const std::span<const uint32_t> triangles = distinct_triangles(n, l, r, state.triangles, result.triangles_begin);
    if (node.is_leaf()) {
      // One reference (the binary builders' leaf size): always a valid leaf, whatever i.
      uint8_t leaf_pairs = 0;
      result.cost.fill(leaf_cost(area, kInfinity, triangles, cache, leaf_pairs));
      result.used = 1;
      dp_[n] = Entry<Width>(true, 0, leaf_pairs, cache.size() > first_pair ? first_pair : kNoIndex);
      return result;
    }
    // distribute[i-1]: best split of i subtrees between the children (Ylitie et al., C_distribute). Beyond
    // i = used(l) + used(r) the children's costs are constant, so the candidates for i are those for `used` with
    // the candidate k = used(l) repeated: the best one is the same, and its k moves up when it is beyond used(l).
    const int used = std::min(Width, l->used + r->used);
    std::array<float, Width> distribute;
    std::array<int, Width> split;
    for (int i = 2; i <= used; ++i) {
      distribute[i - 1] = kInfinity;
      split[i - 1] = 0;
      for (int k = 1; k < i; ++k) {
        const float c = l->cost[k - 1] + r->cost[i - k - 1];
        if (c < distribute[i - 1]) {
          distribute[i - 1] = c;
          split[i - 1] = k;
        }
      }
    }
    for (int i = used + 1; i <= Width; ++i) {
      distribute[i - 1] = distribute[used - 1];
      split[i - 1] = split[used - 1] <= l->used ? split[used - 1] : split[used - 1] + i - used;
    }
    const float internal = area * options_.box_step_cost + distribute[Width - 1];
    uint8_t leaf_pairs = 0;
    const float leaf = leaf_cost(area, internal, triangles, cache, leaf_pairs);
    const bool is_leaf = leaf < internal;
    Entry<Width> e(is_leaf, split[Width - 1], is_leaf ? leaf_pairs : 0,
                   is_leaf && cache.size() > first_pair ? first_pair : kNoIndex);
    result.cost[0] = std::min(leaf, internal);
    for (int i = 2; i <= Width; ++i) {
      const bool fewer = result.cost[i - 2] <= distribute[i - 1];
      result.cost[i - 1] = fewer ? result.cost[i - 2] : distribute[i - 1];
      if (!fewer) e.set_how(i, split[i - 1]);
    }
    result.used = used;
    // Whether the root box node should hold the whole tree as its one leaf child: the pass prices the root as
    // anyone's child (a leaf against a box step plus its children), but the root's box step is paid either
    // way, so the leaf only has to beat the children. A two-triangle mesh is then one pair behind one box, not
    // two lone triangles in two leaves that every ray through the box tests one step at a time.
    if (n == 0) root_is_one_leaf_ = e.leaf() && result.cost[0] < distribute[Width - 1];
    if (!is_leaf) cache.resize(first_pair);  // its pairs, if any, are never used
    dp_[n] = e;
    return result;
  }

  // The distinct triangles of n's references, sorted, put on `stack` in place of its children's (from `begin` on);
  // empty if n has too many references to be a leaf. An inner node's are its children's merged: the left child's
  // are last on the stack, above the right child's.
  std::span<const uint32_t> distinct_triangles(uint32_t n, const Subtree<Width>* l, const Subtree<Width>* r,
                                               std::vector<uint32_t>& stack, uint32_t& begin) const {
    const BinaryBvh::Node& node = binary_.nodes[n];
    begin = r ? r->triangles_begin : static_cast<uint32_t>(stack.size());
    if (node.ref_count > max_leaf_references_) {
      stack.resize(begin);
      return {};
    }
    if (!r && node.ref_count == 1) {  // every binary leaf the binary builders make
      stack.push_back(binary_.refs[node.first_ref].triangle);
      return std::span(stack).subspan(begin);
    }
    std::array<uint32_t, TrianglePairing::kMaxTriangles> merged;
    uint32_t count = 0;
    if (r) {
      count = static_cast<uint32_t>(std::set_union(stack.begin() + begin, stack.begin() + l->triangles_begin,
                                                   stack.begin() + l->triangles_begin, stack.end(), merged.begin()) -
                                    merged.begin());
    } else {
      for (uint32_t i = 0; i < node.ref_count; ++i) merged[i] = binary_.refs[node.first_ref + i].triangle;
      std::sort(merged.begin(), merged.begin() + node.ref_count);
      count = static_cast<uint32_t>(std::unique(merged.begin(), merged.begin() + node.ref_count) - merged.begin());
    }
    stack.resize(begin + count);
    std::copy_n(merged.begin(), count, stack.begin() + begin);
    return std::span(stack).subspan(begin);
  }

  // SAH cost of a subtree as one leaf of its distinct `triangles` (and its pair count), or infinity if it cannot be
  // a leaf (no triangles given) or costs at least `bound` (then it would not be chosen, so pairing and the format's
  // fit test are skipped). A leaf of several triangles leaves its pairs at the end of `cache`.
  float leaf_cost(float area, float bound, std::span<const uint32_t> triangles, PairCache& cache,
                  uint8_t& pair_count) const {
    if (triangles.empty()) return kInfinity;
    const float step = area * options_.pair_step_cost;
    if (step * static_cast<float>((triangles.size() + 1) / 2) >= bound) return kInfinity;
    if (triangles.size() == 1) {  // one lone pair, which always fits (most calls: the binary leaves)
      pair_count = 1;
      return step;
    }
    const std::size_t first = cache.size();
    const uint32_t pairs = pairing_->pair(triangles, cache);
    const float cost = step * static_cast<float>(pairs);
    if (pairs > options_.max_leaf_pairs || cost >= bound ||
        (options_.leaf_fits && !options_.leaf_fits(*scene_, std::span(cache).subspan(first)))) {
      cache.resize(first);
      return kInfinity;
    }
    pair_count = static_cast<uint8_t>(pairs);
    return cost;
  }

  // The binary nodes that become the (at most i) subtrees of C(n, i), left to right.
  void subtrees(uint32_t n, int i, WideChildren<Width>& out) const {
    while (i > 1 && dp_[n].how(i) == 0) --i;
    if (i == 1) {
      out.nodes[out.count++] = n;
      return;
    }
    const int k = dp_[n].how(i);
    subtrees(BinaryBvh::left(n), k, out);
    subtrees(binary_.nodes[n].right, i - k, out);
  }

  // The binary nodes that become wide node `b`'s children (b is the root's binary node when `root`).
  [[nodiscard]] WideChildren<Width> wide_children(uint32_t b, bool root) const {
    WideChildren<Width> children;
    const BinaryBvh::Node& node = binary_.nodes[b];
    if (node.is_leaf() || (root && root_is_one_leaf_)) {
      children.nodes[children.count++] = b;
      return children;
    }
    const int k = dp_[b].node_split();
    subtrees(BinaryBvh::left(b), k, children);
    subtrees(node.right, Width - k, children);
    return children;
  }

  // The pairs of leaf child `c` (a binary node the bottom-up pass chose as a leaf), copied to `out`.
  void copy_leaf_pairs(uint32_t c, PrimPair* out) const {
    const Entry<Width>& e = dp_[c];
    if (e.pairs_at() == kNoIndex) {  // one triangle (one box without a scene)
      *out = {binary_.refs[binary_.nodes[c].first_ref].triangle, kNoIndex};
      return;
    }
    // The cache of the task that holds c: tasks are in preorder, each the node range [begin, end).
    const auto t = static_cast<std::size_t>(std::upper_bound(task_begin_.begin(), task_begin_.end(), c) -
                                            task_begin_.begin());
    const PairCache& cache = t > 0 && c < task_end_[t - 1] ? caches_[t - 1] : caches_.back();
    std::copy_n(cache.begin() + e.pairs_at(), e.leaf_pairs(), out);
  }

  // Top-down pass: breadth-first wide nodes; the root is always a wide node. A level's wide nodes find their
  // children in parallel; numbering their wide children and laying out their leaves' pairs in order is a short
  // serial pass; then all wide nodes are written in parallel, their leaves' pairs copied from the caches.
  WideBvh<Width> extract(ProgressCounter& progress) const {
    const Executor executor(options_.threads);
    std::vector<uint32_t> source{0};  // the binary node of every wide node
    std::vector<uint32_t> first_pair, first_node;  // per wide node: its leaves' first pair, its first wide child
    std::vector<WideChildren<Width>> children;      // of one level's wide nodes (found again below: less memory)
    uint32_t pair_total = 0;
    for (std::size_t level = 0; level < source.size();) {
      const std::size_t level_end = source.size();
      children.assign(level_end - level, {});
      executor.for_each(level, level_end, [&](std::size_t w) {
        WideChildren<Width>& kids = children[w - level];
        kids = wide_children(source[w], w == 0);
        for (int i = 0; i < kids.count; ++i) {
          const Entry<Width>& e = dp_[kids.nodes[i]];
          if (e.leaf()) {
            kids.leaf_pairs += e.leaf_pairs();
          } else {
            kids.wide_mask |= 1u << i;
          }
        }
      }, kLevelGrain);
      // Serial, but reads only this level's records in order (the per-child lookups ran in parallel above).
      first_pair.resize(level_end);
      first_node.resize(level_end);
      for (std::size_t w = level; w < level_end; ++w) {
        const WideChildren<Width>& kids = children[w - level];
        first_pair[w] = pair_total;
        pair_total += kids.leaf_pairs;
        first_node[w] = static_cast<uint32_t>(source.size());
        for (uint32_t m = kids.wide_mask; m != 0; m &= m - 1) source.push_back(kids.nodes[std::countr_zero(m)]);
      }
      level = level_end;
    }
    WideBvh<Width> out;
    out.nodes.resize(source.size());
    out.pairs.resize(pair_total);
    for_ranges_counted(executor, 0, source.size(), kLevelGrain, progress, [&](size_t begin, size_t end) {
      uint64_t references = 0;
      for (size_t w = begin; w < end; ++w) {
        typename WideBvh<Width>::Node& wide = out.nodes[w];
        uint32_t next_node = first_node[w], next_pair = first_pair[w];
        const WideChildren<Width> kids = wide_children(source[w], w == 0);
        for (int i = 0; i < kids.count; ++i) {
          const uint32_t c = kids.nodes[i];
          typename WideBvh<Width>::Child& child = wide.children[wide.child_count++];
          child.bounds = binary_.nodes[c].bounds;
          wide.bounds.grow(child.bounds);
          if (!dp_[c].leaf()) {
            child.index = next_node++;
            continue;
          }
          child.index = next_pair;
          child.pair_count = dp_[c].leaf_pairs();
          next_pair += child.pair_count;
          copy_leaf_pairs(c, &out.pairs[child.index]);
          references += binary_.nodes[c].ref_count;
        }
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
  std::unique_ptr<Entry<Width>[]> dp_;      ///< per binary node
  std::vector<uint32_t> task_begin_, task_end_;  ///< the node ranges of the parallel tasks, in preorder
  std::vector<PairCache> caches_;                ///< per task, then one for the nodes above the tasks
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
