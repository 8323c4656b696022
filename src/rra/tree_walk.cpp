#include "tree_walk.h"

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::rra {
namespace {

// RRA collects one leaf range's pairs into a std::array of 8 (GetTrianglePairIndices).
constexpr uint32_t kMaxRangePairs = 8;

rdna4::NodeView node_at(std::span<const uint32_t> section, uint64_t slot) {
  return rdna4::NodeView(section.subspan(slot * rdna4::kNodeDwords, rdna4::kNodeDwords));
}

}  // namespace

WalkCounts walk_tree(std::span<const uint32_t> section, const std::string& file,
                     const std::function<void(uint32_t pointer, const rdna4::DecodedPair&)>& on_pair,
                     const std::function<void(uint32_t pointer)>& on_instance) {
  const uint64_t slots = section.size() / rdna4::kNodeDwords;
  const auto fail = [&](uint64_t byte, const std::string& problem) {
    throw_bad_input(file, fmt::format("node at byte {}: {}", byte, problem));
  };
  // Slot of a pointer's node, checked to lie inside the node data (slot 0 is the header).
  const auto slot_of = [&](uint32_t pointer, uint64_t from) {
    const uint64_t slot = rdna4::node_byte_offset(pointer) / rdna4::kNodeBytes;
    if (slot == 0 || slot >= slots)
      fail(from, fmt::format("child pointer 0x{:08x} points outside the node data (bytes 128..{})", pointer,
                             slots * rdna4::kNodeBytes));
    return slot;
  };
  if (slots < 2) fail(0, "no root node");

  WalkCounts counts;
  std::vector<uint8_t> seen(slots, 0);  // 1 box node, 2 primitive node, 3 instance node
  std::deque<std::pair<uint32_t, uint32_t>> boxes{{rdna4::kRootPointer, 1}};  // pointer, depth
  while (!boxes.empty()) {
    const auto [box_pointer, box_depth] = boxes.front();
    boxes.pop_front();
    const uint64_t box_byte = rdna4::node_byte_offset(box_pointer);
    const uint64_t box_slot = box_byte / rdna4::kNodeBytes;
    if (seen[box_slot] != 0) fail(box_byte, "reached twice from the root (a cycle or a shared node)");
    seen[box_slot] = 1;
    ++counts.box_nodes;
    const rdna4::BoxChildren children = rdna4::decode_box_children(node_at(section, box_slot));
    for (uint32_t pointer : children.pointer) {
      if (pointer == rdna4::kInvalidNode) continue;
      const uint32_t type = pointer & 0xFu;
      if (type == rdna4::kTypeBox) {
        slot_of(pointer, box_byte);
        boxes.emplace_back(pointer, box_depth + 1);
        continue;
      }
      counts.depth = std::max(counts.depth, box_depth + 1);
      if (type == rdna4::kTypeInstance && on_instance) {
        const uint64_t slot = slot_of(pointer, box_byte);
        if (seen[slot] != 0) fail(slot * rdna4::kNodeBytes, "instance node reached twice or used as another node");
        seen[slot] = 3;
        ++counts.instance_nodes;
        on_instance(pointer);
        continue;
      }
      if ((type & 7u) > 3u)
        fail(box_byte, fmt::format("child pointer 0x{:08x} has node type {}, not a box or triangle pair", pointer,
                                   type));
      uint64_t slot = slot_of(pointer, box_byte);
      uint32_t pair = rdna4::pair_index(pointer);
      for (uint32_t n = 0;; ++n) {
        const uint64_t byte = slot * rdna4::kNodeBytes;
        if (n == kMaxRangePairs) fail(byte, "primitive range longer than 8 pairs");
        if (seen[slot] == 1 || seen[slot] == 3) fail(byte, "box or instance node used as a primitive node");
        rdna4::NodeDwords node{};
        const rdna4::NodeView view = node_at(section, slot);
        std::copy(view.begin(), view.end(), node.begin());
        std::string error;
        const auto header = rdna4::decode_primitive_header(node, &error);
        const auto decoded = header ? rdna4::decode_primitive_pair(view, pair, &error) : std::nullopt;
        if (!decoded) fail(byte, fmt::format("pair {}: {}", pair, error));
        if (seen[slot] == 0) ++counts.primitive_nodes;
        seen[slot] = 2;
        on_pair(rdna4::make_node_pointer(byte, rdna4::pair_node_type(pair)), *decoded);
        if (decoded->range_stop) break;
        if (++pair == header->pair_count) {
          pair = 0;
          if (++slot == slots) fail(byte, "primitive range runs past the end of the node data");
        }
      }
    }
  }
  return counts;
}

}  // namespace hwbvh::rra
