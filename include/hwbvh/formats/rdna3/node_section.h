#pragma once
// The RT IP 2.0 node section: the bytes a GPU reads, plus the parent pointers GPURT keeps beside them.
//
//   byte 0          128-byte section header (ours; the hardware never reads it), little-endian dwords:
//                     DW0 magic 'HW20' (0x30325748)   DW1 root pointer   DW2 node slots N   DW3 box nodes
//                     DW4 triangle nodes   DW5..DW10 scene bounds min xyz, max xyz (f32)
//                     DW11 instance nodes (a top level's; 0 in a BLAS)   DW12..DW31 zero
//   byte 128        the root FP32 box node (pointer 0x15), then the other box nodes (128 B each) and the
//                   triangle nodes (64 B each) or, in a top level, the instance nodes (128 B each,
//                   instance_node.h); N counts the 64-byte slots from byte 0 to here, header included
//   byte 64 N       parent table: one dword per 64-byte slot s < N, the pointer of the box node that references
//                   the node starting at slot s (0xFFFFFFFF for the root, the header and the second half of a
//                   box node), padded with 0xFFFFFFFF to a multiple of 64 bytes
//
// RT IP 2.0 box nodes have no parent field, and the stackless walk-back after a stack overflow needs the parent
// of box and triangle nodes alike (docs/rtip31-format.md §6.6, §7.2). GPURT stores one parent dword per
// 64-byte node in metadata before its acceleration-structure header; we keep the same table after the nodes so
// that node pointers stay relative to byte 0 of the section.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna3/node_pointer.h"

namespace hwbvh::rdna3 {

inline constexpr uint32_t kNodeSectionMagic = 0x30325748u;  // "HW20"
inline constexpr uint32_t kHeaderSlots = 2;                 // the 128-byte header

struct NodeSectionHeader {
  uint32_t root_pointer = kRootPointer;
  uint32_t node_slots = 0;  ///< 64-byte slots before the parent table, header included
  uint32_t box_nodes = 0;
  uint32_t triangle_nodes = 0;
  Aabb bounds;
  uint32_t instance_nodes = 0;
};

/// Dwords of a whole section with `node_slots` slots: the slots and the padded parent table.
std::size_t node_section_dwords(uint32_t node_slots);

BoxNodeDwords write_node_section_header(const NodeSectionHeader& header);

/// Reads and checks the header against the section size: magic, 2 x (box + instance nodes) + triangle nodes + 2 =
/// slots, size = node_section_dwords(slots), root pointer inside the node slots. nullopt with `error` set otherwise.
std::optional<NodeSectionHeader> read_node_section_header(std::span<const uint32_t> dwords, std::string* error);

/// The parent-table entry of the node that `pointer` addresses, or 0xFFFFFFFF when the pointer lies outside the
/// node slots. `dwords` is the whole section, `header` its header (read_node_section_header succeeded).
uint32_t parent_pointer(std::span<const uint32_t> dwords, const NodeSectionHeader& header, uint32_t pointer);

}  // namespace hwbvh::rdna3
