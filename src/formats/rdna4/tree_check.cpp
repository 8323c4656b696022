#include "hwbvh/formats/rdna4/tree_check.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "formats/tree_walker.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/rdna4/node_section.h"

namespace hwbvh::rdna4 {
namespace {

using formats::hex32;

// Real trees are far shallower (a BVH8 over 2^32 triangles needs ~11 levels); the limit bounds recursion on
// hostile input.
constexpr uint32_t kMaxDepth = 256;

// The intersector's ray rotation (§3.3) applied to a point: fma chain z, y, x.
Vec3 rotate_like_hardware(const Mat3Rows& m, Vec3 p) {
  Vec3 r;
  for (int i = 0; i < 3; ++i) r[i] = std::fma(p.x, m[i][0], std::fma(p.y, m[i][1], std::fma(p.z, m[i][2], 0.0f)));
  return r;
}

class Walker : formats::TreeWalker<TreeCheckResult> {
 public:
  using TreeWalker::TreeWalker;

  TreeCheckResult run() {
    std::string error;
    const auto header = read_node_section_header(dw_.data(), dw_.size(), &error);
    if (!header) return refuse(error);
    slots_ = header->node_slots;
    first_instance_slot_ = slots_ - header->instance_nodes;  // a TLAS has no primitive nodes: instances end it
    visited_.assign(slots_, 0);
    visited_[0] = 1;
    std::vector<uint32_t> below;
    if (node_kind(header->root_pointer) != NodeKind::Box) {
      problem("root pointer " + hex32(header->root_pointer) + " is not a box node");
    } else {
      visit_box(header->root_pointer, kInvalidNode, 0, 0, below);
    }
    // Child boxes are in their node's OBB frame, with the intersector's float rotation.
    if (scene_) {
      check_containment([](uint32_t obb_index, Vec3 v) {
        return obb_index != kNoObb ? rotate_like_hardware(obb_matrix(obb_index), v) : v;
      });
    }
    for (uint32_t s = 1; s < slots_ && !full(); ++s)
      if (!visited_[s]) problem("node slot " + std::to_string(s) + " (byte " + std::to_string(uint64_t{s} * kNodeBytes) + ") is not reachable from the root");
    return std::move(result_);
  }

 private:
  bool fetch(uint32_t pointer, NodeDwords& node) {
    const uint64_t offset = node_byte_offset(pointer);
    if (offset == 0 || offset / kNodeBytes >= slots_) {
      problem("pointer " + hex32(pointer) + " is outside the node section");
      return false;
    }
    std::copy_n(dw_.begin() + static_cast<std::ptrdiff_t>(offset / 4), kNodeDwords, node.begin());
    return true;
  }

  // Visits a box node; appends every vertex below it to `below` (only with a scene).
  void visit_box(uint32_t pointer, uint32_t parent, uint32_t index_in_parent, uint32_t depth, std::vector<uint32_t>& below) {
    if (full()) return;
    if (depth > kMaxDepth) {
      problem("box node " + hex32(pointer) + " is more than " + std::to_string(kMaxDepth) + " levels deep");
      return;
    }
    NodeDwords raw;
    if (!fetch(pointer, raw)) return;
    const uint32_t slot = static_cast<uint32_t>(node_byte_offset(pointer) / kNodeBytes);
    if (visited_[slot]) {
      problem("box node " + hex32(pointer) + " is reached twice (cycle or shared node)");
      return;
    }
    visited_[slot] = 1;
    ++result_.box_nodes;
    result_.max_depth = std::max(result_.max_depth, depth);
    const DecodedBoxNode node = decode_box_node(raw);
    if (node.parent_pointer != parent) problem("box node " + hex32(pointer) + " has parent pointer " + hex32(node.parent_pointer) + ", expected " + hex32(parent));
    if (parent != kInvalidNode && node.index_in_parent != index_in_parent) problem("box node " + hex32(pointer) + " has index_in_parent " + std::to_string(node.index_in_parent) + ", expected " + std::to_string(index_in_parent));
    const bool rotated = node.obb_index != kNoObb;
    if (rotated) ++result_.obb_box_nodes;
    if (rotated && node.obb_index >= kObbMatrixCount) problem("box node " + hex32(pointer) + " has OBB index " + std::to_string(node.obb_index) + " (valid: 0..103 or 127)");

    uint32_t last_prim_node = 0;
    for (uint32_t k = 0; k < node.child_count; ++k) {
      const uint32_t child = node.child_pointer[k];
      std::vector<uint32_t> child_triangles;
      switch (node_kind(child)) {
        case NodeKind::Box:
          visit_box(child, pointer, k, depth + 1, child_triangles);
          break;
        case NodeKind::Primitive:
          visit_range(child, pointer, last_prim_node, child_triangles);
          break;
        case NodeKind::Instance:
          visit_instance(child, pointer);
          break;
        default:
          problem("box node " + hex32(pointer) + " child " + std::to_string(k) + " has unsupported type " +
                  std::to_string(child & 7));
      }
      add_child("box node " + hex32(pointer), k, node.child_box[k], child_triangles, rotated ? node.obb_index : kNoObb);
      below.insert(below.end(), child_triangles.begin(), child_triangles.end());
    }
  }

  // Walks a primitive range pair by pair as the traversal does (§4.7 navigation).
  void visit_range(uint32_t pointer, uint32_t box, uint32_t& last_prim_node, std::vector<uint32_t>& below) {
    for (uint32_t guard = 0; guard < 16 * 8 && !full(); ++guard) {
      NodeDwords raw;
      if (!fetch(pointer, raw)) return;
      const uint32_t slot = static_cast<uint32_t>(node_byte_offset(pointer) / kNodeBytes);
      if (slot != last_prim_node) {
        // Several leaf ranges of one box node may share a primitive node; any other sharing is a problem.
        if (visited_[slot]) problem("primitive node " + hex32(pointer & ~0xFu) + " is reached from more than one place (box " + hex32(box) + ")");
        visited_[slot] = 1;
        ++result_.primitive_nodes;
        last_prim_node = slot;
      }
      std::string error;
      const auto pair = decode_primitive_pair(raw, pair_index(pointer), &error);
      if (!pair) {
        problem("primitive node " + hex32(pointer) + ": " + error);
        return;
      }
      for (const DecodedTriangle& t : pair->tri) {
        if (!t.valid) continue;
        ++result_.triangles;
        const uint32_t tri =
            scene_triangle("primitive node " + hex32(pointer), t.geometry_id, t.primitive_id, t.vertex);
        if (tri != kNoIndex) below.push_back(tri);
      }
      if (pair->navigation == kNavEndOfRange) return;
      pointer = pair->navigation == kNavEndOfNode ? (pointer & ~0xFu) + 0x10
                                                  : (pointer & ~0xFu) | pair_node_type(pair_index(pointer) + 1);
    }
    problem("primitive range at " + hex32(pointer) + " has no stop bit within 128 pairs");
  }

  // An instance node (§2.9): in the instance region the header names, reached once, its parent pointer the box
  // node that points to it, and a filter node whose children decode to finite, non-inverted boxes (but child 0 of
  // GPURT's primitive-root form, which never hits: range length 1 flags it, instance_node.h).
  void visit_instance(uint32_t pointer, uint32_t box) {
    NodeDwords raw;
    if (!fetch(pointer, raw)) return;
    const std::string where = "instance node " + hex32(pointer);
    const uint32_t slot = static_cast<uint32_t>(node_byte_offset(pointer) / kNodeBytes);
    if (slot < first_instance_slot_) {
      problem(where + " is outside the instance region (slots " + std::to_string(first_instance_slot_) + ".." +
              std::to_string(slots_ - 1) + ")");
      return;
    }
    if (visited_[slot]) {
      problem(where + " is reached from more than one place (box " + hex32(box) + ")");
      return;
    }
    visited_[slot] = 1;
    ++result_.instance_nodes;
    const DecodedInstanceNode node = decode_instance_node(raw.data());
    if (node.parent_pointer != box) problem(where + " has parent pointer " + hex32(node.parent_pointer) + ", expected " + hex32(box));
    const DecodedBoxNode filter = decode_box_node(node.filter_box);
    const uint32_t first_box = filter.info[0].range_length == 1 ? 1 : 0;
    for (uint32_t k = first_box; k < filter.child_count; ++k) {
      const Aabb& b = filter.child_box[k];
      bool valid = true;
      for (int a = 0; a < 3; ++a) valid = valid && std::isfinite(b.min[a]) && std::isfinite(b.max[a]) && b.min[a] <= b.max[a];
      if (!valid) problem(where + " filter child " + std::to_string(k) + " has no valid box");
    }
  }

  uint32_t slots_ = 0;
  uint32_t first_instance_slot_ = 0;
  std::vector<uint8_t> visited_;
};

}  // namespace

TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene, std::size_t max_problems) {
  return Walker(dwords, scene, max_problems).run();
}

}  // namespace hwbvh::rdna4
