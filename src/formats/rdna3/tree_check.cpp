#include "hwbvh/formats/rdna3/tree_check.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/node_section.h"

namespace hwbvh::rdna3 {
namespace {

// Real trees are far shallower; the limit bounds recursion on hostile input.
constexpr uint32_t kMaxDepth = 256;
constexpr uint32_t kSlotDwords = kSlotBytes / 4;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

bool same_bits(Vec3 a, Vec3 b) {
  return float_bits(a.x) == float_bits(b.x) && float_bits(a.y) == float_bits(b.y) && float_bits(a.z) == float_bits(b.z);
}

// What lies below a box child: triangle count and the opacity of the triangles (for the flags check).
struct Below {
  uint32_t triangles = 0;
  bool any_opaque = false;
  bool any_non_opaque = false;
  std::vector<uint32_t> scene_triangles;  // with a scene: the scene triangles reached
  void add(const Below& b) {
    triangles += b.triangles;
    any_opaque = any_opaque || b.any_opaque;
    any_non_opaque = any_non_opaque || b.any_non_opaque;
    scene_triangles.insert(scene_triangles.end(), b.scene_triangles.begin(), b.scene_triangles.end());
  }
};

class Walker {
 public:
  Walker(std::span<const uint32_t> dw, const Scene* scene, std::size_t max_problems)
      : dw_(dw), scene_(scene), max_problems_(max_problems) {}

  TreeCheckResult run() {
    std::string error;
    const auto header = read_node_section_header(dw_, &error);
    if (!header) {
      problem(error);
      return std::move(result_);
    }
    header_ = *header;
    reached_.assign(header_.node_slots, 0);
    expected_parent_.assign(header_.node_slots, kInvalidNode);
    if (scene_) result_.triangle_references.assign(scene_->triangles.size(), 0);
    if (node_type(header_.root_pointer) != kTypeBoxFp32) {
      problem("root pointer " + hex(header_.root_pointer) + " is not an FP32 box node");
    } else {
      visit_box(header_.root_pointer, kInvalidNode, 0);
    }
    if (scene_) check_containment();
    check_parent_table();
    return std::move(result_);
  }

 private:
  void problem(const std::string& what) {
    if (result_.problems.size() < max_problems_) result_.problems.push_back(what);
  }
  [[nodiscard]] bool full() const { return result_.problems.size() >= max_problems_; }

  // First slot of the node `pointer` addresses if `bytes` fit inside the node slots; nullopt otherwise.
  std::optional<uint32_t> slot_of(uint32_t pointer, uint32_t bytes) {
    const uint64_t offset = node_byte_offset(pointer);
    if (offset < kHeaderSlots * kSlotBytes || offset + bytes > uint64_t{header_.node_slots} * kSlotBytes) {
      problem("pointer " + hex(pointer) + " is outside the node slots");
      return std::nullopt;
    }
    return static_cast<uint32_t>(offset / kSlotBytes);
  }

  // Marks the slots of a node as reached; false (with a problem) if one of them was reached before.
  bool claim(uint32_t slot, uint32_t pointer, uint32_t parent, bool box) {
    if (reached_[slot] != kNotReached || (box && reached_[slot + 1] != kNotReached)) {
      problem("node " + hex(pointer) + " is reached twice or overlaps another node (cycle or shared node)");
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
      problem("box node " + hex(pointer) + " is more than " + std::to_string(kMaxDepth) + " levels deep");
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
        default:
          problem("box node " + hex(pointer) + " child " + std::to_string(k) + " has unsupported type " +
                  std::to_string(node_type(child)));
      }
      check_flags(pointer, k, node.child_flags[k], c);
      if (scene_) containment_.push_back({pointer, k, node.child_box[k], c.scene_triangles});
      below.add(c);
    }
    if (node.primitive_count != below.triangles) {
      problem("box node " + hex(pointer) + " stores " + std::to_string(node.primitive_count) + " triangles below it, " +
              std::to_string(below.triangles) + " are reachable");
    }
    return below;
  }

  // A flag may only promise what holds for every triangle below the child.
  void check_flags(uint32_t pointer, uint32_t k, uint32_t flags, const Below& c) {
    const bool bad = ((flags & kBoxFlagOnlyOpaque) && c.any_non_opaque) ||
                     ((flags & kBoxFlagOnlyNonOpaque) && c.any_opaque) ||
                     ((flags & kBoxFlagOnlyProcedural) && c.triangles > 0);
    if (bad) problem("box node " + hex(pointer) + " child " + std::to_string(k) + " has box flags " + hex(flags) +
                     " that do not hold for the triangles below it");
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
      ++below.triangles;
      below.any_opaque = below.any_opaque || tri.id.opaque;
      below.any_non_opaque = below.any_non_opaque || !tri.id.opaque;
      const std::optional<std::array<Vec3, 3>> source = source_vertices(tri);
      if (!source) {
        problem("triangle node " + hex(pointer) + " triangle " + std::to_string(type) + " has I/J sources " +
                std::to_string(tri.id.i_source) + "/" + std::to_string(tri.id.j_source) + " (not a vertex order)");
        continue;
      }
      const uint32_t scene_tri = check_triangle(pointer, tri, *source);
      if (scene_tri != kNoIndex) below.scene_triangles.push_back(scene_tri);
    }
    return below;
  }

  // Returns the scene triangle the decoded one names, or kNoIndex.
  uint32_t check_triangle(uint32_t pointer, const DecodedTriangle& t, const std::array<Vec3, 3>& source) {
    if (!scene_) return kNoIndex;
    if (t.geometry_id >= scene_->geometries.size() ||
        t.primitive_id >= scene_->geometries[t.geometry_id].triangle_count) {
      problem("triangle node " + hex(pointer) + " names geometry " + std::to_string(t.geometry_id) + " primitive " +
              std::to_string(t.primitive_id) + ", which the scene does not have");
      return kNoIndex;
    }
    const uint32_t tri = scene_->geometries[t.geometry_id].first_triangle + t.primitive_id;
    ++result_.triangle_references[tri];
    for (int k = 0; k < 3; ++k) {
      if (!same_bits(source[k], scene_->vertex(tri, k))) {
        problem("triangle node " + hex(pointer) + ": triangle " + std::to_string(tri) +
                " does not decode bit-identically in source order");
        return kNoIndex;
      }
    }
    if (t.id.opaque == scene_->is_alpha_tested(tri)) {
      problem("triangle node " + hex(pointer) + ": triangle " + std::to_string(tri) + " has the wrong opaque bit");
    }
    return tri;
  }

  // After the walk, when reference counts are known: a child box must contain every triangle below it that is
  // referenced once; a triangle split by spatial splits (referenced several times) need only overlap it.
  void check_containment() {
    for (const ChildContents& c : containment_) {
      for (uint32_t tri : c.triangles) {
        const Aabb tri_box = triangle_bounds(scene_->vertex(tri, 0), scene_->vertex(tri, 1), scene_->vertex(tri, 2));
        const bool split = result_.triangle_references[tri] > 1;
        const bool overlaps = !Aabb{glm::max(tri_box.min, c.box.min), glm::min(tri_box.max, c.box.max)}.empty();
        if (split ? !overlaps : !c.box.contains(tri_box)) {
          problem("box node " + hex(c.node) + " child " + std::to_string(c.slot) + " does not contain triangle " +
                  std::to_string(tri) + (split ? " (split reference: no overlap)" : ""));
          return;
        }
      }
    }
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
        problem("parent table entry " + std::to_string(s) + " is " + hex(dw_[i]) + ", expected " + hex(expected));
      }
    }
  }

  struct ChildContents {
    uint32_t node;
    uint32_t slot;
    Aabb box;
    std::vector<uint32_t> triangles;
  };
  std::vector<ChildContents> containment_;

  std::span<const uint32_t> dw_;
  const Scene* scene_;
  std::size_t max_problems_;
  NodeSectionHeader header_;
  enum SlotState : uint8_t { kNotReached, kNodeStart, kBoxSecondHalf };
  std::vector<uint8_t> reached_;  ///< per 64-byte slot
  std::vector<uint32_t> expected_parent_;
  TreeCheckResult result_;
};

}  // namespace

TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene, std::size_t max_problems) {
  return Walker(dwords, scene, max_problems).run();
}

}  // namespace hwbvh::rdna3
