#include "hwbvh/formats/rdna3/tree_check.h"

#include <algorithm>
#include <optional>

#include "formats/tree_walker.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/instance_node.h"
#include "hwbvh/formats/rdna3/node_section.h"

namespace hwbvh::rdna3 {
namespace {

using formats::hex32;

// Real trees are far shallower; the limit bounds recursion on hostile input.
constexpr uint32_t kMaxDepth = 256;
constexpr uint32_t kSlotDwords = kSlotBytes / 4;

// What lies below a box child: its primitives (triangles, or a top level's instances) and their opacity (for the
// flags check).
struct Below {
  uint32_t primitives = 0;
  bool any_opaque = false;
  bool any_non_opaque = false;
  std::vector<uint32_t> scene_triangles;  // with a scene: the scene triangles reached
  void add(const Below& b) {
    primitives += b.primitives;
    any_opaque = any_opaque || b.any_opaque;
    any_non_opaque = any_non_opaque || b.any_non_opaque;
    scene_triangles.insert(scene_triangles.end(), b.scene_triangles.begin(), b.scene_triangles.end());
  }
};

class Walker : formats::TreeWalker<TreeCheckResult> {
 public:
  using TreeWalker::TreeWalker;

  TreeCheckResult run() {
    std::string error;
    const auto header = read_node_section_header(dw_, &error);
    if (!header) return refuse(error);
    header_ = *header;
    reached_.assign(header_.node_slots, 0);
    expected_parent_.assign(header_.node_slots, kInvalidNode);
    if (node_type(header_.root_pointer) != kTypeBoxFp32) {
      problem("root pointer " + hex32(header_.root_pointer) + " is not an FP32 box node");
    } else {
      visit_box(header_.root_pointer, kInvalidNode, 0);
    }
    if (scene_) check_containment();
    check_parent_table();
    if (result_.instance_nodes != header_.instance_nodes) {
      problem("header counts " + std::to_string(header_.instance_nodes) + " instance nodes, " +
              std::to_string(result_.instance_nodes) + " are reachable");
    }
    return std::move(result_);
  }

 private:
  // First slot of the node `pointer` addresses if `bytes` fit inside the node slots; nullopt otherwise.
  std::optional<uint32_t> slot_of(uint32_t pointer, uint32_t bytes) {
    const uint64_t offset = node_byte_offset(pointer);
    if (offset < kHeaderSlots * kSlotBytes || offset + bytes > uint64_t{header_.node_slots} * kSlotBytes) {
      problem("pointer " + hex32(pointer) + " is outside the node slots");
      return std::nullopt;
    }
    return static_cast<uint32_t>(offset / kSlotBytes);
  }

  // Marks the slots of a node as reached; false (with a problem) if one of them was reached before.
  bool claim(uint32_t slot, uint32_t pointer, uint32_t parent, bool box) {
    if (reached_[slot] != kNotReached || (box && reached_[slot + 1] != kNotReached)) {
      problem("node " + hex32(pointer) + " is reached twice or overlaps another node (cycle or shared node)");
      return false;
    }
    reached_[slot] = kNodeStart;
    if (box) reached_[slot + 1] = kBoxSecondHalf;
    expected_parent_[slot] = parent;
    return true;
  }

  template <std::size_t N>
  std::array<uint32_t, N> copy_node(uint32_t slot) const {
    std::array<uint32_t, N> node{};
    std::copy_n(dw_.begin() + std::ptrdiff_t{slot} * kSlotDwords, N, node.begin());
    return node;
  }

  Below visit_box(uint32_t pointer, uint32_t parent, uint32_t depth) {
    Below below;
    if (full()) return below;
    if (depth > kMaxDepth) {
      problem("box node " + hex32(pointer) + " is more than " + std::to_string(kMaxDepth) + " levels deep");
      return below;
    }
    const std::optional<uint32_t> slot = slot_of(pointer, kBoxNodeBytes);
    if (!slot || !claim(*slot, pointer, parent, true)) return below;
    ++result_.box_nodes;
    result_.max_depth = std::max(result_.max_depth, depth);
    const DecodedBoxNode node = decode_box_node(copy_node<kBoxNodeDwords>(*slot));
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t child = node.child_pointer[k];
      if (child == kInvalidNode) continue;
      Below c;
      switch (node_type(child)) {
        case kTypeBoxFp32: c = visit_box(child, pointer, depth + 1); break;
        case kTypeTriangle0:
        case kTypeTriangle1: c = visit_triangle_node(child, pointer); break;
        case kTypeInstance: c = visit_instance_node(child, pointer); break;
        default:
          problem("box node " + hex32(pointer) + " child " + std::to_string(k) + " has unsupported type " +
                  std::to_string(node_type(child)));
      }
      check_flags(pointer, k, node.child_flags[k], c);
      add_child("box node " + hex32(pointer), k, node.child_box[k], c.scene_triangles);
      below.add(c);
    }
    if (node.primitive_count != below.primitives) {
      problem("box node " + hex32(pointer) + " stores " + std::to_string(node.primitive_count) +
              " primitives below it, " + std::to_string(below.primitives) + " are reachable");
    }
    return below;
  }

  // A flag may only promise what holds for every triangle below the child.
  void check_flags(uint32_t pointer, uint32_t k, uint32_t flags, const Below& c) {
    const bool bad = ((flags & kBoxFlagOnlyOpaque) && c.any_non_opaque) ||
                     ((flags & kBoxFlagOnlyNonOpaque) && c.any_opaque) ||
                     ((flags & kBoxFlagOnlyProcedural) && c.primitives > 0);
    if (bad) problem("box node " + hex32(pointer) + " child " + std::to_string(k) + " has box flags " + hex32(flags) +
                     " that do not hold for the triangles below it");
  }

  // An instance counts as one primitive of its box node; what lies below it (its BLAS) is another section, so box
  // flags over it may promise nothing.
  Below visit_instance_node(uint32_t pointer, uint32_t parent) {
    Below below;
    const std::optional<uint32_t> slot = slot_of(pointer, kInstanceNodeBytes);
    if (!slot || !claim(*slot, pointer, parent, true)) return below;
    ++result_.instance_nodes;
    below.primitives = 1;
    below.any_opaque = below.any_non_opaque = true;
    return below;
  }

  Below visit_triangle_node(uint32_t pointer, uint32_t parent) {
    Below below;
    const std::optional<uint32_t> slot = slot_of(pointer, kTriangleNodeBytes);
    if (!slot || !claim(*slot, pointer, parent, false)) return below;
    ++result_.triangle_nodes;
    const TriangleNodeDwords node = copy_node<kTriangleNodeDwords>(*slot);
    // A type-1 pointer makes the traversal test triangle 1, then triangle 0 of the same node.
    const uint32_t last_type = node_type(pointer);
    if (last_type == kTypeTriangle1) ++result_.pair_nodes;
    for (uint32_t type = 0; type <= last_type; ++type) {
      const DecodedTriangle tri = decode_triangle(node, type);
      ++result_.triangles;
      ++below.primitives;
      below.any_opaque = below.any_opaque || tri.id.opaque;
      below.any_non_opaque = below.any_non_opaque || !tri.id.opaque;
      const std::optional<std::array<Vec3, 3>> source = source_vertices(tri);
      if (!source) {
        problem("triangle node " + hex32(pointer) + " triangle " + std::to_string(type) + " has I/J sources " +
                std::to_string(tri.id.i_source) + "/" + std::to_string(tri.id.j_source) + " (not a vertex order)");
        continue;
      }
      const std::string where = "triangle node " + hex32(pointer);
      const uint32_t scene_tri = scene_triangle(where, tri.geometry_id, tri.primitive_id, *source);
      if (scene_tri == kNoIndex) continue;
      if (tri.id.opaque == scene_->is_alpha_tested(scene_tri)) {
        problem(where + ": triangle " + std::to_string(scene_tri) + " has the wrong opaque bit");
      }
      below.scene_triangles.push_back(scene_tri);
    }
    return below;
  }

  // Every node start reached, and the parent table names each node's parent (0xFFFFFFFF everywhere else).
  void check_parent_table() {
    const std::size_t table = std::size_t{header_.node_slots} * kSlotDwords;
    for (uint32_t s = kHeaderSlots; s < header_.node_slots && !full(); ++s) {
      if (reached_[s] == kNotReached) {
        problem("node slot " + std::to_string(s) + " (byte " + std::to_string(uint64_t{s} * kSlotBytes) +
                ") is not reachable from the root");
      }
    }
    for (std::size_t i = table; i < dw_.size() && !full(); ++i) {
      const std::size_t s = i - table;
      const uint32_t expected = s < expected_parent_.size() ? expected_parent_[s] : kInvalidNode;
      if (dw_[i] != expected) {
        problem("parent table entry " + std::to_string(s) + " is " + hex32(dw_[i]) + ", expected " + hex32(expected));
      }
    }
  }

  NodeSectionHeader header_;
  enum SlotState : uint8_t { kNotReached, kNodeStart, kBoxSecondHalf };
  std::vector<uint8_t> reached_;  ///< per 64-byte slot
  std::vector<uint32_t> expected_parent_;
};

}  // namespace

TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene, std::size_t max_problems) {
  return Walker(dwords, scene, max_problems).run();
}

}  // namespace hwbvh::rdna3
