#include "hwbvh/bvh_build/given_tree.h"

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hwbvh/bvh_build/pairing.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {
namespace {

constexpr int64_t kNotReached = -2;
constexpr int64_t kNoParent = -1;

std::string node_name(int64_t n) { return "node " + std::to_string(n); }

Aabb box_of(const Scene& scene, uint32_t tri) {
  return triangle_bounds(scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2));
}

// Node n's children in row order (the entries that are not -1).
std::vector<int64_t> children_of(const TreeTopology& tree, std::size_t n) {
  std::vector<int64_t> out;
  for (uint32_t k = 0; k < tree.width; ++k) {
    const int64_t c = tree.children[n * tree.width + k];
    if (c >= 0) out.push_back(c);
  }
  return out;
}

bool is_leaf(const TreeTopology& tree, int64_t n) { return tree.prim_count[static_cast<std::size_t>(n)] > 0; }

// Leaf n's triangles, in the given order.
std::span<const int64_t> leaf_primitives(const TreeTopology& tree, int64_t n) {
  const auto i = static_cast<std::size_t>(n);
  return std::span(tree.primitives).subspan(static_cast<std::size_t>(tree.prim_begin[i]),
                                            static_cast<std::size_t>(tree.prim_count[i]));
}

// The row-by-row checks: sizes, child indices, what kind of node each is.
void check_rows(const TreeTopology& tree, uint32_t max_children) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(tree.source, problem); };
  const std::size_t n = tree.node_count();
  if (tree.width < 2 || tree.width > TreeTopology::kMaxWidth)
    fail("children has rows of " + std::to_string(tree.width) + " entries; a tree's rows hold 2 (binary) to 8 (wide)");
  if (n == 0) fail("the tree has no nodes");
  if (tree.children.size() != n * tree.width || tree.prim_begin.size() != n)
    fail("children (" + std::to_string(tree.children.size() / tree.width) + " rows), prim_begin (" +
         std::to_string(tree.prim_begin.size()) + ") and prim_count (" + std::to_string(n) +
         ") must have one row per node");
  const auto primitives = static_cast<int64_t>(tree.primitives.size());
  for (std::size_t i = 0; i < n; ++i) {
    uint32_t kids = 0;
    for (uint32_t k = 0; k < tree.width; ++k) {
      const int64_t c = tree.children[i * tree.width + k];
      if (c < -1 || c >= static_cast<int64_t>(n))
        fail(node_name(static_cast<int64_t>(i)) + ": child " + std::to_string(c) + " is not a node (0.." +
             std::to_string(n - 1) + ", or -1 for none)");
      kids += c >= 0 ? 1 : 0;
    }
    const int64_t count = tree.prim_count[i];
    const int64_t begin = tree.prim_begin[i];
    if (kids > 0) {
      if (count != 0) fail(node_name(static_cast<int64_t>(i)) + " has both children and primitives (prim_count " +
                           std::to_string(count) + "); a node is either inner or a leaf");
      if (tree.binary() && kids != 2)
        fail(node_name(static_cast<int64_t>(i)) + " has 1 child; an inner node of a binary tree has 2");
      if (kids > max_children)
        fail(node_name(static_cast<int64_t>(i)) + " has " + std::to_string(kids) + " children; the target's nodes hold at most " +
             std::to_string(max_children));
    } else if (count <= 0) {
      fail(node_name(static_cast<int64_t>(i)) + " has neither children nor primitives (prim_count " +
           std::to_string(count) + ")");
    } else if (begin < 0 || begin > primitives || count > primitives - begin) {
      fail("leaf " + node_name(static_cast<int64_t>(i)) + ": its primitives [" + std::to_string(begin) + ", " +
           std::to_string(begin) + " + " + std::to_string(count) + ") are not inside the " +
           std::to_string(primitives) + " entries of primitives");
    }
  }
}

// From the root down: every node reached once, none its own ancestor.
void check_links(const TreeTopology& tree) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(tree.source, problem); };
  const std::size_t n = tree.node_count();
  std::vector<int64_t> parent(n, kNotReached);
  parent[0] = kNoParent;
  for (std::vector<int64_t> stack{0}; !stack.empty();) {
    const int64_t node = stack.back();
    stack.pop_back();
    const std::vector<int64_t> kids = children_of(tree, static_cast<std::size_t>(node));
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {  // the first child is popped first: preorder
      const int64_t c = *it;
      const auto ci = static_cast<std::size_t>(c);
      if (parent[ci] != kNotReached) {
        for (int64_t a = node; a != kNoParent; a = parent[static_cast<std::size_t>(a)]) {
          if (a == c)
            fail("a cycle: " + node_name(node) + " names " + node_name(c) + ", " +
                 (a == node ? "itself" : "its own ancestor") + ", as a child");
        }
        fail(node_name(c) + " has two parents, " + node_name(parent[ci]) + " and " + node_name(node));
      }
      parent[ci] = node;
      stack.push_back(c);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (parent[i] == kNotReached) fail(node_name(static_cast<int64_t>(i)) + " is not reached from the root (node 0)");
  }
}

// Every non-degenerate scene triangle in exactly one leaf, once; nothing else in a leaf.
void check_primitives(const Scene& scene, const TreeTopology& tree) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(tree.source, problem); };
  const auto triangles = static_cast<int64_t>(scene.triangles.size());
  std::vector<int64_t> leaf_of(scene.triangles.size(), -1);
  for (std::size_t i = 0; i < tree.node_count(); ++i) {
    const auto leaf = static_cast<int64_t>(i);
    if (!is_leaf(tree, leaf)) continue;
    for (const int64_t tri : leaf_primitives(tree, leaf)) {
      if (tri < 0 || tri >= triangles)
        fail("leaf " + node_name(leaf) + ": primitive " + std::to_string(tri) + " is not a triangle of the scene (0.." +
             std::to_string(triangles - 1) + ")");
      const auto t = static_cast<std::size_t>(tri);
      if (scene.is_degenerate(static_cast<uint32_t>(tri)))
        fail("leaf " + node_name(leaf) + " holds triangle " + std::to_string(tri) +
             ", which is degenerate (zero area); degenerate triangles are kept out of every BVH");
      if (leaf_of[t] == leaf) fail("leaf " + node_name(leaf) + " holds triangle " + std::to_string(tri) + " twice");
      if (leaf_of[t] >= 0)
        fail("triangle " + std::to_string(tri) + " is in two leaves, " + node_name(leaf_of[t]) + " and " +
             node_name(leaf));
      leaf_of[t] = leaf;
    }
  }
  for (int64_t tri = 0; tri < triangles; ++tri) {
    if (leaf_of[static_cast<std::size_t>(tri)] < 0 && !scene.is_degenerate(static_cast<uint32_t>(tri)))
      fail("triangle " + std::to_string(tri) + " is in no leaf; every non-degenerate triangle must be in one");
  }
}

// Leaf `leaf`'s triangles as pairs in runs that each fit one of the target's leaves: the triangles in windows of at
// most 2 x max_leaf_pairs (each window paired as the collapse pairs a leaf), a window's pairs in order, a run ended
// where one more pair would not fit.
std::vector<std::vector<PrimPair>> leaf_runs(const Scene& scene, const TreeTopology& tree, int64_t leaf,
                                             const TrianglePairing& pairing, const BuildOptions& options) {
  const std::span<const int64_t> prims = leaf_primitives(tree, leaf);
  const std::size_t window = 2 * options.max_leaf_pairs;
  std::vector<std::vector<PrimPair>> runs;
  std::vector<uint32_t> triangles;
  std::vector<PrimPair> pairs;
  for (std::size_t first = 0; first < prims.size(); first += window) {
    triangles.clear();
    for (std::size_t i = first; i < std::min(prims.size(), first + window); ++i)
      triangles.push_back(static_cast<uint32_t>(prims[i]));
    std::sort(triangles.begin(), triangles.end());
    pairs.clear();
    pairing.pair(triangles, pairs);
    std::vector<PrimPair> run;
    for (const PrimPair& p : pairs) {
      run.push_back(p);
      const bool fits = run.size() <= options.max_leaf_pairs && (!options.leaf_fits || options.leaf_fits(scene, run));
      if (fits) continue;
      run.pop_back();
      if (run.empty())
        throw_bad_input(tree.source, "leaf " + node_name(leaf) + ": triangles " + std::to_string(p.tri0) +
                                         (p.has_tri1() ? " and " + std::to_string(p.tri1) : "") +
                                         " do not fit one of the target's leaves even alone");
      runs.push_back(std::move(run));
      run = {p};
    }
    if (!run.empty()) runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace

void check_topology(const Scene& scene, const TreeTopology& tree, uint32_t max_children) {
  check_rows(tree, max_children);
  check_links(tree);
  check_primitives(scene, tree);
}

BinaryBvh binary_from_topology(const Scene& scene, const TreeTopology& tree, uint32_t& split_leaves) {
  check_topology(scene, tree, 2);
  split_leaves = 0;
  BinaryBvh out;
  out.nodes.reserve(2 * tree.primitives.size());
  out.refs.reserve(tree.primitives.size());
  // A given node, or, for a leaf, the part [lo, hi) of its primitives still to place; with the BinaryBvh node whose
  // child it becomes.
  struct Item {
    int64_t node;
    std::size_t lo = 0, hi = 0;
    uint32_t parent = kNoIndex;
  };
  const auto item_of = [&](int64_t node, uint32_t parent) {
    if (!is_leaf(tree, node)) return Item{node, 0, 0, parent};
    const std::span<const int64_t> prims = leaf_primitives(tree, node);
    split_leaves += prims.size() > 1 ? 1 : 0;
    const auto begin = static_cast<std::size_t>(prims.data() - tree.primitives.data());
    return Item{node, begin, begin + prims.size(), parent};
  };
  for (std::vector<Item> stack{item_of(0, kNoIndex)}; !stack.empty();) {
    const Item item = stack.back();
    stack.pop_back();
    const auto index = static_cast<uint32_t>(out.nodes.size());
    out.nodes.emplace_back().first_ref = static_cast<uint32_t>(out.refs.size());
    if (item.parent != kNoIndex && index != BinaryBvh::left(item.parent)) out.nodes[item.parent].right = index;
    if (!is_leaf(tree, item.node)) {
      const std::vector<int64_t> kids = children_of(tree, static_cast<std::size_t>(item.node));
      stack.push_back(item_of(kids[1], index));
      stack.push_back(item_of(kids[0], index));
    } else if (item.hi - item.lo == 1) {
      const auto tri = static_cast<uint32_t>(tree.primitives[item.lo]);
      out.refs.push_back({tri});
      out.nodes[index].ref_count = 1;
      out.nodes[index].bounds = box_of(scene, tri);
    } else {  // halves in the given order
      const std::size_t mid = item.lo + (item.hi - item.lo) / 2;
      stack.push_back({item.node, mid, item.hi, index});
      stack.push_back({item.node, item.lo, mid, index});
    }
  }
  out.complete_inner_nodes();
  return out;
}

template <int Width>
WideBvh<Width> wide_from_topology(const Scene& scene, const TreeTopology& tree, const BuildOptions& options,
                                  uint32_t& split_leaves) {
  check_topology(scene, tree, Width);
  split_leaves = 0;
  const TrianglePairing pairing(scene, options.pair_leftovers, options.pair_fits);
  WideBvh<Width> out;
  std::vector<int64_t> source{0};  // the given node of each wide node, breadth-first
  for (std::size_t w = 0; w < source.size(); ++w) {
    out.nodes.emplace_back();
    const int64_t s = source[w];
    const std::vector<int64_t> kids = is_leaf(tree, s) ? std::vector<int64_t>{s} : children_of(tree, static_cast<std::size_t>(s));
    for (const int64_t c : kids) {
      std::vector<std::vector<PrimPair>> runs;
      if (is_leaf(tree, c)) runs = leaf_runs(scene, tree, c, pairing, options);
      const std::size_t parts = std::max<std::size_t>(runs.size(), 1);
      typename WideBvh<Width>::Node& wide = out.nodes[w];
      if (wide.child_count + parts > Width)
        throw_bad_input(tree.source, node_name(s) + " would have more than " + std::to_string(Width) +
                                         " children: leaf " + node_name(c) + " is split into " + std::to_string(parts) +
                                         " leaves to fit the target's leaves, and the node has no room for them");
      split_leaves += parts > 1 ? 1 : 0;
      if (runs.empty()) {
        wide.children[wide.child_count++].index = static_cast<uint32_t>(source.size());
        source.push_back(c);
        continue;
      }
      for (const std::vector<PrimPair>& run : runs) {
        typename WideBvh<Width>::Child& child = wide.children[wide.child_count++];
        child.index = static_cast<uint32_t>(out.pairs.size());
        child.pair_count = static_cast<uint32_t>(run.size());
        for (const PrimPair& p : run) {
          child.bounds.grow(box_of(scene, p.tri0));
          if (p.has_tri1()) child.bounds.grow(box_of(scene, p.tri1));
        }
        out.pairs.insert(out.pairs.end(), run.begin(), run.end());
      }
    }
  }
  // Refit: wide nodes are breadth-first, so every node comes after its parent.
  for (std::size_t w = out.nodes.size(); w-- > 0;) {
    typename WideBvh<Width>::Node& node = out.nodes[w];
    for (uint32_t k = 0; k < node.child_count; ++k) {
      typename WideBvh<Width>::Child& child = node.children[k];
      if (!child.is_leaf()) child.bounds = out.nodes[child.index].bounds;
      node.bounds.grow(child.bounds);
    }
  }
  out.bounds = out.nodes[0].bounds;
  return out;
}

template WideBvh<4> wide_from_topology<4>(const Scene&, const TreeTopology&, const BuildOptions&, uint32_t&);
template WideBvh<6> wide_from_topology<6>(const Scene&, const TreeTopology&, const BuildOptions&, uint32_t&);
template WideBvh<8> wide_from_topology<8>(const Scene&, const TreeTopology&, const BuildOptions&, uint32_t&);

TreeTopology topology_of(const BinaryBvh& binary, const std::string& source) {
  TreeTopology tree;
  tree.source = source;
  const std::size_t n = binary.nodes.size();
  tree.children.assign(2 * n, -1);
  tree.prim_begin.assign(n, 0);
  tree.prim_count.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const BinaryBvh::Node& node = binary.nodes[i];
    if (node.is_leaf()) {
      tree.prim_begin[i] = node.first_ref;
      tree.prim_count[i] = node.ref_count;
    } else {
      tree.children[2 * i] = BinaryBvh::left(static_cast<uint32_t>(i));
      tree.children[2 * i + 1] = node.right;
    }
  }
  for (const BinaryBvh::Ref& ref : binary.refs) tree.primitives.push_back(ref.triangle);
  return tree;
}

}  // namespace hwbvh::bvh_build
