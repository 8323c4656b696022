#pragma once
// Hand-built RT IP 3.1 node sections for the emulator tests, made with the node encoders (box_node.h,
// primitive_node.h). Nodes are placed by 128-byte index; index 0 is the (zero) section header, so the root box
// node at index 1 has pointer 0x15.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/formats/rdna4/box_node.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/primitive_node.h"

namespace hwbvh::emu::test {

constexpr uint32_t box_ptr(uint32_t index) { return (index << 4) | rdna4::kTypeBox; }
constexpr uint32_t prim_ptr(uint32_t index, uint32_t type = 0) { return (index << 4) | type; }

inline Aabb box(Vec3 min, Vec3 max) { return Aabb{min, max}; }

/// A node section under construction.
struct NodeImage {
  std::vector<uint32_t> dwords = std::vector<uint32_t>(rdna4::kNodeDwords, 0u);

  void put(uint32_t index, const rdna4::NodeDwords& node) {
    const size_t first = size_t{index} * rdna4::kNodeDwords;
    if (dwords.size() < first + rdna4::kNodeDwords) dwords.resize(first + rdna4::kNodeDwords, 0u);
    std::copy(node.begin(), node.end(), dwords.begin() + static_cast<std::ptrdiff_t>(first));
  }
  [[nodiscard]] NodeMemory memory() const { return NodeMemory{dwords}; }
};

inline rdna4::BoxChildInput box_child(const Aabb& b, uint32_t node_type = rdna4::kTypeBox, uint32_t range = 1,
                                      uint32_t flags = 0, uint32_t mask = 0xFF) {
  rdna4::BoxChildInput c;
  c.box = b;
  c.node_type = node_type;
  c.range_length = range;
  c.box_flags = flags;
  c.instance_mask = mask;
  return c;
}

/// A box node whose box children start at node index `internal_index` and leaf ranges at `leaf_index`.
inline rdna4::NodeDwords box_node(uint32_t internal_index, uint32_t leaf_index, uint32_t parent,
                                  std::initializer_list<rdna4::BoxChildInput> children,
                                  uint32_t obb_index = rdna4::kNoObb) {
  rdna4::BoxNodeInput in;
  in.internal_base = internal_index << 4;
  in.leaf_base = leaf_index << 4;
  in.parent_pointer = parent;
  in.obb_index = obb_index;
  in.child_count = static_cast<uint32_t>(children.size());
  std::copy(children.begin(), children.end(), in.children.begin());
  return rdna4::encode_box_node(in);
}

inline rdna4::PrimTriangleInput triangle(Vec3 a, Vec3 b, Vec3 c, uint32_t primitive_id, uint32_t geometry_id = 0,
                                         bool opaque = true) {
  rdna4::PrimTriangleInput t;
  t.v = {a, b, c};
  t.primitive_id = primitive_id;
  t.geometry_id = geometry_id;
  t.opaque = opaque;
  return t;
}

inline rdna4::PrimPairInput pair(const rdna4::PrimTriangleInput& tri0, bool stop = true) {
  rdna4::PrimPairInput p;
  p.tri0 = tri0;
  p.range_stop = stop;
  return p;
}
inline rdna4::PrimPairInput pair(const rdna4::PrimTriangleInput& tri0, const rdna4::PrimTriangleInput& tri1,
                                 bool stop = true) {
  rdna4::PrimPairInput p = pair(tri0, stop);
  p.tri1 = tri1;
  return p;
}

inline rdna4::NodeDwords primitive_node(std::initializer_list<rdna4::PrimPairInput> pairs) {
  const std::vector<rdna4::PrimPairInput> v(pairs);
  const std::optional<rdna4::NodeDwords> node = rdna4::encode_primitive_node(v);
  EXPECT_TRUE(node.has_value()) << "test primitive node does not fit";
  return node.value_or(rdna4::NodeDwords{});
}

/// A triangle in the plane x = `x` that contains the points (x, y, z) with y, z in [-1, 1]: a ray along +x
/// through (y, z) = (0, 0) hits it at t = x - origin.x.
inline rdna4::PrimTriangleInput wall(float x, uint32_t primitive_id, uint32_t geometry_id = 0) {
  return triangle({x, -1.0f, -1.0f}, {x, 3.0f, -1.0f}, {x, -1.0f, 3.0f}, primitive_id, geometry_id);
}
/// Bounds of wall(x).
inline Aabb wall_box(float x) { return box({x, -1.0f, -1.0f}, {x, 3.0f, 3.0f}); }

}  // namespace hwbvh::emu::test
