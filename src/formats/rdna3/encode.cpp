// Whole-tree RT IP 2.0 encoder (docs/rtip31-format.md §8.1, §8.3; layout in node_section.h).
//
// Steps:
//   1. Slots: WideBvh<4> nodes are numbered breadth-first, so box node n goes to byte 128 + 128 n; triangle nodes
//      follow in breadth-first leaf order (nodes in index order, their leaf children in slot order).
//   2. Bottom-up (reverse breadth-first): each subtree's box flags (AND over its triangles) and triangle count.
//   3. Box and triangle nodes are encoded independently, in parallel, then the header and the parent table.
#include "hwbvh/formats/rdna3/encode.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/node_section.h"
#include "hwbvh/formats/rdna3/triangle_node.h"

namespace hwbvh::rdna3 {
namespace {

using bvh_build::PrimPair;
using Bvh4 = bvh_build::WideBvh<4>;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kSlotDwords = kSlotBytes / 4;

TriangleInput triangle_input(const Scene& scene, uint32_t tri) {
  const Triangle& t = scene.triangles[tri];
  TriangleInput in;
  for (int k = 0; k < 3; ++k) in.v[k] = scene.positions[t.v[k]];
  in.primitive_id = t.primitive;
  in.geometry_id = t.geometry;
  in.opaque = !scene.is_alpha_tested(tri);
  return in;
}

TriangleNodeInput node_input(const Scene& scene, const PrimPair& pair) {
  TriangleNodeInput in;
  in.tri0 = triangle_input(scene, pair.tri0);
  if (pair.has_tri1()) in.tri1 = triangle_input(scene, pair.tri1);
  return in;
}

// Box flags of a triangle, as its parent's child flags would be for a leaf holding only it.
uint32_t triangle_flags(const Scene& scene, uint32_t tri) {
  return kBoxFlagOnlyTriangles | (scene.is_alpha_tested(tri) ? kBoxFlagOnlyNonOpaque : kBoxFlagOnlyOpaque);
}

uint32_t leaf_flags(const Scene& scene, const PrimPair& pair) {
  return triangle_flags(scene, pair.tri0) & (pair.has_tri1() ? triangle_flags(scene, pair.tri1) : 0xFFu);
}

uint32_t box_slot(uint32_t node) { return kHeaderSlots + 2 * node; }
uint32_t box_pointer(uint32_t node) { return make_node_pointer(uint64_t{box_slot(node)} * kSlotBytes, kTypeBoxFp32); }

// Box node `n`'s input: child count, `primitive_count`, every child's box, and the pointers of its box-node children,
// whose parent-table entries it fills in; the leaf slots' pointers and every slot's flags are the caller's.
BoxNodeInput box_input(const Bvh4& bvh, uint32_t n, uint32_t primitive_count, uint32_t* parents) {
  const Bvh4::Node& node = bvh.nodes[n];
  BoxNodeInput in;
  in.child_count = node.child_count;
  in.primitive_count = primitive_count;
  for (uint32_t c = 0; c < node.child_count; ++c) {
    const Bvh4::Child& child = node.children[c];
    in.children[c].box = child.bounds;
    if (child.is_leaf()) continue;
    in.children[c].pointer = box_pointer(child.index);
    parents[box_slot(child.index)] = box_pointer(n);
  }
  return in;
}

// 64-byte slots before a top level's parent table.
uint32_t tlas_slots(const Bvh4& tree) {
  uint32_t slots = box_slot(static_cast<uint32_t>(tree.nodes.size()));
  for (const Bvh4::Node& node : tree.nodes)
    for (uint32_t c = 0; c < node.child_count; ++c) slots += node.children[c].is_leaf() ? 2 : 0;
  return slots;
}

}  // namespace

bool pair_leaf_fits(const Scene& scene, std::span<const bvh_build::PrimPair> pairs) {
  if (pairs.size() != 1) return false;
  const TriangleNodeInput in = node_input(scene, pairs[0]);
  return in.tri0.geometry_id <= kMaxGeometryId && (!in.tri1 || can_pair(in.tri0, *in.tri1));
}

void configure_build(bvh_build::BuildOptions& options) {
  options.max_leaf_pairs = 1;
  options.leaf_fits = pair_leaf_fits;
  options.pair_leftovers = false;  // a pair is a quad: it needs the shared edge
}

EncodedBvh encode(const Scene& scene, const bvh_build::WideBvh<4>& bvh, const EncodeOptions& options) {
  if (bvh.nodes.empty()) throw Error(ErrorKind::Runtime, scene.source, "empty BVH cannot be encoded");
  const auto start = Clock::now();
  const auto node_count = static_cast<uint32_t>(bvh.nodes.size());

  // Triangle node index of every leaf child, in breadth-first leaf order.
  std::vector<std::array<uint32_t, 4>> leaf_index(node_count);
  uint32_t triangle_nodes = 0;
  for (uint32_t n = 0; n < node_count; ++n) {
    const Bvh4::Node& node = bvh.nodes[n];
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh4::Child& child = node.children[c];
      if (!child.is_leaf()) continue;
      // Checked here, sequentially, so that the parallel encoding below cannot fail.
      if (!pair_leaf_fits(scene, std::span(bvh.pairs).subspan(child.index, child.pair_count))) {
        throw Error(ErrorKind::Runtime, scene.source,
                    "a BVH4 leaf of " + std::to_string(child.pair_count) +
                        " pairs does not fit one RT IP 2.0 triangle node (build with rdna3::configure_build)");
      }
      leaf_index[n][c] = triangle_nodes++;
    }
  }
  const uint32_t first_triangle_slot = box_slot(node_count);
  const uint32_t node_slots = first_triangle_slot + triangle_nodes;
  auto triangle_slot = [&](uint32_t t) { return first_triangle_slot + t; };

  // Subtree flags and triangle counts, children before parents (nodes are numbered breadth-first).
  std::vector<uint32_t> subtree_flags(node_count, 0xFFu), subtree_triangles(node_count, 0);
  for (uint32_t n = node_count; n-- > 0;) {
    const Bvh4::Node& node = bvh.nodes[n];
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh4::Child& child = node.children[c];
      const PrimPair* pair = child.is_leaf() ? &bvh.pairs[child.index] : nullptr;
      subtree_flags[n] &= pair ? leaf_flags(scene, *pair) : subtree_flags[child.index];
      subtree_triangles[n] += pair ? (pair->has_tri1() ? 2u : 1u) : subtree_triangles[child.index];
    }
  }

  EncodedBvh out;
  out.dwords.assign(node_section_dwords(node_slots), 0u);
  uint32_t* const parents = out.dwords.data() + std::size_t{node_slots} * kSlotDwords;
  std::fill(parents, out.dwords.data() + out.dwords.size(), kInvalidNode);

  const Executor executor(options.threads);
  ProgressCounter progress(options.progress, "encoding", node_count);
  for_each_counted(executor, 0, node_count, 64, progress, [&](std::size_t i) {
    const auto n = static_cast<uint32_t>(i);
    const Bvh4::Node& node = bvh.nodes[n];
    BoxNodeInput in = box_input(bvh, n, subtree_triangles[n], parents);
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh4::Child& child = node.children[c];
      BoxChildInput& ci = in.children[c];
      if (!child.is_leaf()) {
        ci.flags = subtree_flags[child.index];
        continue;
      }
      const PrimPair& pair = bvh.pairs[child.index];
      const uint32_t slot = triangle_slot(leaf_index[n][c]);
      const TriangleNodeDwords tri = encode_triangle_node(node_input(scene, pair)).value();
      std::copy(tri.begin(), tri.end(), out.dwords.begin() + std::ptrdiff_t{slot} * kSlotDwords);
      ci.pointer = make_node_pointer(uint64_t{slot} * kSlotBytes, pair.has_tri1() ? kTypeTriangle1 : kTypeTriangle0);
      ci.flags = leaf_flags(scene, pair);
      parents[slot] = box_pointer(n);
    }
    const BoxNodeDwords box = encode_box_node(in);
    std::copy(box.begin(), box.end(), out.dwords.begin() + std::ptrdiff_t{box_slot(n)} * kSlotDwords);
  });
  progress.finish();

  EncodeStats& st = out.stats;
  st.box_nodes = node_count;
  st.triangle_nodes = triangle_nodes;
  for (const Bvh4::Node& node : bvh.nodes) {
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh4::Child& child = node.children[c];
      if (!child.is_leaf()) continue;
      const bool pair = bvh.pairs[child.index].has_tri1();
      st.pair_nodes += pair ? 1 : 0;
      st.triangles += pair ? 2 : 1;
    }
  }
  st.node_bytes = uint64_t{out.dwords.size()} * 4;
  st.parent_table_bytes = st.node_bytes - uint64_t{node_slots} * kSlotBytes;

  NodeSectionHeader header;
  header.node_slots = node_slots;
  header.box_nodes = node_count;
  header.triangle_nodes = triangle_nodes;
  header.bounds = bvh.bounds;
  const BoxNodeDwords header_dwords = write_node_section_header(header);
  std::copy(header_dwords.begin(), header_dwords.end(), out.dwords.begin());
  st.seconds_encode = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

uint64_t tlas_bytes(const Bvh4& tree) { return uint64_t{node_section_dwords(tlas_slots(tree))} * 4; }

EncodedTlas encode_tlas(const Bvh4& tree, std::span<const InstanceNodeInput> instances) {
  if (tree.nodes.empty()) throw Error(ErrorKind::Runtime, "", "empty top-level tree cannot be encoded");
  const auto node_count = static_cast<uint32_t>(tree.nodes.size());
  const uint32_t node_slots = tlas_slots(tree);
  EncodedTlas out;
  out.box_nodes = node_count;
  out.dwords.assign(node_section_dwords(node_slots), 0u);
  uint32_t* const parents = out.dwords.data() + std::size_t{node_slots} * kSlotDwords;
  std::fill(parents, out.dwords.data() + out.dwords.size(), kInvalidNode);
  auto put = [&](uint32_t slot, const BoxNodeDwords& node) {
    std::copy(node.begin(), node.end(), out.dwords.begin() + std::ptrdiff_t{slot} * kSlotDwords);
  };

  // Instances below each node, children before parents (nodes are numbered breadth-first).
  std::vector<uint32_t> subtree_instances(node_count, 0);
  for (uint32_t n = node_count; n-- > 0;) {
    const Bvh4::Node& node = tree.nodes[n];
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh4::Child& child = node.children[c];
      subtree_instances[n] += child.is_leaf() ? 1 : subtree_instances[child.index];
    }
  }
  uint32_t instance_slot = box_slot(node_count);
  for (uint32_t n = 0; n < node_count; ++n) {
    const Bvh4::Node& node = tree.nodes[n];
    BoxNodeInput in = box_input(tree, n, subtree_instances[n], parents);
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh4::Child& child = node.children[c];
      if (!child.is_leaf()) continue;
      BoxChildInput& ci = in.children[c];
      const uint32_t instance = child.pair_count == 1 ? tree.pairs[child.index].tri0 : kNoIndex;
      if (instance >= instances.size()) {
        throw Error(ErrorKind::Runtime, "",
                    "top-level tree leaf does not name one of the " + std::to_string(instances.size()) + " instances");
      }
      ci.pointer = make_node_pointer(uint64_t{instance_slot} * kSlotBytes, kTypeInstance);
      parents[instance_slot] = box_pointer(n);
      put(instance_slot, encode_instance_node(instances[instance]));
      out.instance_order.push_back(instance);
      instance_slot += 2;
    }
    put(box_slot(n), encode_box_node(in));
  }

  NodeSectionHeader header;
  header.node_slots = node_slots;
  header.box_nodes = node_count;
  header.instance_nodes = static_cast<uint32_t>(out.instance_order.size());
  header.bounds = tree.bounds;
  put(0, write_node_section_header(header));
  return out;
}

}  // namespace hwbvh::rdna3
