#pragma once
// Small hand-built RT IP 3.1 trees (made with nodes.h) that the traversal and wavefront tests both walk.
#include "emu/rtip31/nodes.h"

namespace hwbvh::emu::test {

/// Root with two leaf children: walls at x = 2 (primitive 0, node 20) and x = 4 (primitive 1, geometry 7, node 21).
inline NodeImage two_leaves() {
  NodeImage img;
  img.put(1, box_node(2, 20, rdna4::kInvalidNode, {box_child(wall_box(2), 0, 1), box_child(wall_box(4), 0, 1)}));
  img.put(20, primitive_node({pair(wall(2, 0))}));
  img.put(21, primitive_node({pair(wall(4, 1, 7))}));
  return img;
}

/// Root (1) with box children A (2), B (3), C (4), entered at t = 1, 2, 3 along +x from the origin; each has one leaf
/// child (nodes 5, 6, 7) holding a wall at x = 9, 8 and 3.5: the closest hit is in the box entered last.
inline NodeImage three_boxes() {
  NodeImage img;
  auto big = [](float x0, float x1) { return box({x0, -1, -1}, {x1, 3, 3}); };
  img.put(1, box_node(2, 0, rdna4::kInvalidNode,
                      {box_child(big(1, 10)), box_child(big(2, 10)), box_child(big(3, 4))}));
  img.put(2, box_node(0, 5, rdna4::kRootPointer, {box_child(wall_box(9), 0, 1)}));
  img.put(3, box_node(0, 6, rdna4::kRootPointer, {box_child(wall_box(8), 0, 1)}));
  img.put(4, box_node(0, 7, rdna4::kRootPointer, {box_child(wall_box(3.5f), 0, 1)}));
  img.put(5, primitive_node({pair(wall(9, 0))}));
  img.put(6, primitive_node({pair(wall(8, 1))}));
  img.put(7, primitive_node({pair(wall(3.5f, 2))}));
  return img;
}

}  // namespace hwbvh::emu::test
