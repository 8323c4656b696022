// The Xe3 top level (tlas.h): InternalNode6s over InstanceLeafs.
#include "hwbvh/formats/xe3/tlas.h"

#include <algorithm>
#include <deque>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/internal_node.h"
#include "hwbvh/formats/xe3/node_section.h"

namespace hwbvh::xe3 {
namespace {

using Bvh6 = bvh_build::WideBvh<6>;

[[noreturn]] void caller_bug(const std::string& what) { throw Error(ErrorKind::Runtime, "", "Xe3 top level: " + what); }

uint32_t instance_count(const Bvh6& tree) {
  uint32_t n = 0;
  for (const Bvh6::Node& node : tree.nodes)
    for (uint32_t c = 0; c < node.child_count; ++c) n += node.children[c].is_leaf() ? 1 : 0;
  return n;
}

}  // namespace

std::span<const uint32_t> unpadded_level(std::span<const uint32_t> level) {
  if (level.size() < kHeaderDwords) return level;
  const std::size_t size = node_section_dwords(level[2], level[14]);  // header DW2 N, DW14 D
  const bool zeros = size <= level.size() && std::all_of(level.begin() + static_cast<std::ptrdiff_t>(size),
                                                         level.end(), [](uint32_t d) { return d == 0; });
  return zeros && level.size() - size < kHeaderDwords ? level.first(size) : level;
}

uint64_t tlas_bytes(const Bvh6& tree) {
  return (uint64_t{kHeaderBlocks} + tree.nodes.size() + uint64_t{kInstanceLeafBlocks} * instance_count(tree)) *
         kBlockBytes;
}

Xe3EncodedTlas encode_tlas(const Bvh6& tree, std::span<const TlasInstance> instances) {
  const auto count = static_cast<uint32_t>(tree.nodes.size());
  // Breadth-first layout: each node's children take consecutive blocks at the cursor.
  std::vector<uint32_t> block(count, 0), first_child(count, 0), depth(count, 0), order;
  std::vector<std::vector<uint32_t>> leaf_block(count);
  uint32_t cursor = kRootBlock + 1;
  block[0] = kRootBlock;
  for (std::deque<uint32_t> queue{0}; !queue.empty(); queue.pop_front()) {
    const uint32_t n = queue.front();
    order.push_back(n);
    const Bvh6::Node& node = tree.nodes[n];
    first_child[n] = cursor;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh6::Child& child = node.children[c];
      if (child.is_leaf()) {
        leaf_block[n].push_back(cursor);
        cursor += kInstanceLeafBlocks;
        continue;
      }
      if (child.index >= count) caller_bug("a child names node " + std::to_string(child.index));
      depth[child.index] = depth[n] + 1;
      if (depth[child.index] >= kTrailLevels) caller_bug("the tree is deeper than the 29-level restart trail");
      block[child.index] = cursor++;
      queue.push_back(child.index);
    }
  }
  if (order.size() != count) caller_bug("the root does not reach every node once");

  Xe3EncodedTlas out;
  out.internal_nodes = count;
  const uint32_t leaves = instance_count(tree);
  NodeSectionHeader header;
  header.node_blocks = cursor;
  header.internal_nodes = count;
  header.instance_leaves = leaves;
  header.bounds = tree.bounds;
  out.dwords.assign(node_section_dwords(cursor, 0), 0);
  const auto h = write_node_section_header(header);
  std::copy(h.begin(), h.end(), out.dwords.begin());

  // Children before parents, so that each node's mask is the OR of its children's.
  std::vector<uint32_t> mask(count, 0);
  std::vector<std::pair<uint32_t, uint32_t>> placed;  // (leaf block, instance)
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const uint32_t n = *it;
    const Bvh6::Node& node = tree.nodes[n];
    InternalNodeInput in;
    in.child_offset = static_cast<int32_t>(first_child[n] - block[n]);
    in.child_count = node.child_count;
    std::size_t leaf = 0;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh6::Child& child = node.children[c];
      InternalChildInput& ci = in.children[c];
      ci.box = child.bounds;
      if (!child.is_leaf()) {
        mask[n] |= mask[child.index];
        continue;
      }
      if (child.pair_count != 1 || child.index >= tree.pairs.size() || tree.pairs[child.index].tri0 >= instances.size())
        caller_bug("a leaf child is not one instance");
      const uint32_t i = tree.pairs[child.index].tri0;
      ci.node_type = kNodeTypeInstance;
      ci.blocks = kInstanceLeafBlocks;
      mask[n] |= instances[i].leaf.mask;
      const InstanceLeafDwords dw = encode_instance_leaf(instances[i].leaf);
      const uint32_t b = leaf_block[n][leaf++];
      std::copy(dw.begin(), dw.end(), out.dwords.begin() + static_cast<std::ptrdiff_t>(std::size_t{b} * kBlockDwords));
      placed.emplace_back(b, i);
    }
    in.node_mask = mask[n];
    const BlockDwords dw = encode_internal_node(in);
    std::copy(dw.begin(), dw.end(),
              out.dwords.begin() + static_cast<std::ptrdiff_t>(std::size_t{block[n]} * kBlockDwords));
  }
  std::sort(placed.begin(), placed.end());
  for (const auto& [b, i] : placed) out.instance_order.push_back(i);
  return out;
}

}  // namespace hwbvh::xe3
