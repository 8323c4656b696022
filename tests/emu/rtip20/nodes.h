#pragma once
// Hand-built RT IP 2.0 node sections for the BVH4 emulator tests, made with the rdna3 node encoders. Nodes are
// placed by 64-byte slot; slots 0 and 1 are the section header, so a root box node in slot 2 has pointer 0x15.
// Lay nodes out without gaps (the header's slot count must equal 2 + 2 x boxes + triangle nodes).
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/formats/rdna3/box_node.h"
#include "hwbvh/formats/rdna3/node_section.h"
#include "hwbvh/formats/rdna3/triangle_node.h"

namespace hwbvh::emu::test4 {

/// The two loops on RT IP 2.0 nodes.
enum class Loop { Rtip20, Bvh4x2 };

inline TraceOutput trace(Loop loop, const Bvh4Section& section, std::span<const Ray> rays, const TraceOptions& o,
                         const Executor& ex = Executor(1)) {
  return loop == Loop::Rtip20 ? trace_rays_rtip20(section, rays, o, ex) : trace_rays_bvh4x2(section, rays, o, ex);
}

constexpr uint32_t box_ptr(uint32_t slot) { return (slot << 3) | rdna3::kTypeBoxFp32; }
constexpr uint32_t tri_ptr(uint32_t slot, uint32_t type = 0) { return (slot << 3) | type; }

inline rdna3::BoxChildInput child(uint32_t pointer, const Aabb& box, uint32_t flags = rdna3::kBoxFlagOnlyTriangles) {
  return {pointer, box, flags};
}

inline rdna3::TriangleInput triangle(Vec3 a, Vec3 b, Vec3 c, uint32_t primitive_id, uint32_t geometry_id = 0,
                                     bool opaque = true) {
  return {{a, b, c}, primitive_id, geometry_id, opaque};
}

/// A triangle in the plane x = `x` containing (x, y, z) for y, z in [-1, 1]: a ray along +x through (y, z) = (0, 0)
/// hits it at t = x - origin.x. Its normal points along +x.
inline rdna3::TriangleInput wall(float x, uint32_t primitive_id, uint32_t geometry_id = 0) {
  return triangle({x, -1.0f, -1.0f}, {x, 3.0f, -1.0f}, {x, -1.0f, 3.0f}, primitive_id, geometry_id);
}
/// The triangle completing wall(x) to the square [-1, 3]^2 (shares the edge (x,3,-1)-(x,-1,3), reversed).
inline rdna3::TriangleInput wall_partner(float x, uint32_t primitive_id, uint32_t geometry_id = 0) {
  return triangle({x, -1.0f, 3.0f}, {x, 3.0f, -1.0f}, {x, 3.0f, 3.0f}, primitive_id, geometry_id);
}
inline Aabb wall_box(float x) { return Aabb{{x, -1.0f, -1.0f}, {x, 3.0f, 3.0f}}; }

/// A node section under construction.
class Bvh4Image {
 public:
  void box(uint32_t slot, uint32_t parent, std::initializer_list<rdna3::BoxChildInput> children,
           uint32_t primitive_count = 0) {
    rdna3::BoxNodeInput in;
    in.child_count = static_cast<uint32_t>(children.size());
    std::copy(children.begin(), children.end(), in.children.begin());
    in.primitive_count = primitive_count;
    const rdna3::BoxNodeDwords node = rdna3::encode_box_node(in);
    put(slot, 2, node.data(), parent);
    ++boxes_;
  }
  void triangles(uint32_t slot, uint32_t parent, const rdna3::TriangleInput& tri0,
                 const std::optional<rdna3::TriangleInput>& tri1 = std::nullopt) {
    const std::optional<rdna3::TriangleNodeDwords> node = rdna3::encode_triangle_node({tri0, tri1});
    EXPECT_TRUE(node.has_value()) << "test triangle node does not encode";
    put(slot, 1, node.value_or(rdna3::TriangleNodeDwords{}).data(), parent);
    ++triangle_nodes_;
  }
  /// Raw dwords of slot `slot`, for corrupting nodes.
  uint32_t* slot_dwords(uint32_t slot) { return nodes_.data() + std::size_t{slot} * 16; }

  /// The section: header, nodes, parent table.
  [[nodiscard]] std::vector<uint32_t> section() const {
    rdna3::NodeSectionHeader h;
    h.node_slots = static_cast<uint32_t>(nodes_.size() / 16);
    h.box_nodes = boxes_;
    h.triangle_nodes = triangle_nodes_;
    std::vector<uint32_t> out = nodes_;
    const rdna3::BoxNodeDwords header = rdna3::write_node_section_header(h);
    std::copy(header.begin(), header.end(), out.begin());
    out.resize(rdna3::node_section_dwords(h.node_slots), rdna3::kInvalidNode);
    std::copy(parents_.begin(), parents_.end(), out.begin() + static_cast<std::ptrdiff_t>(nodes_.size()));
    return out;
  }

 private:
  void put(uint32_t slot, uint32_t slots, const uint32_t* dwords, uint32_t parent) {
    const std::size_t end = std::size_t{slot + slots} * 16;
    if (nodes_.size() < end) {
      nodes_.resize(end, 0u);
      parents_.resize(slot + slots, rdna3::kInvalidNode);
    }
    std::copy_n(dwords, std::size_t{slots} * 16, nodes_.begin() + static_cast<std::ptrdiff_t>(slot) * 16);
    parents_[slot] = parent;
  }

  std::vector<uint32_t> nodes_ = std::vector<uint32_t>(2 * 16, 0u);  // slots 0, 1: the header
  std::vector<uint32_t> parents_ = std::vector<uint32_t>(2, rdna3::kInvalidNode);
  uint32_t boxes_ = 0;
  uint32_t triangle_nodes_ = 0;
};

}  // namespace hwbvh::emu::test4
