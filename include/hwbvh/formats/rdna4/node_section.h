#pragma once
// The 128-byte header at offset 0 of an RT IP 3.1 node section. GPURT puts its acceleration-structure header
// there (§1.5); the hardware never reads it, so this one is ours: it lets tools check a node section on its own.
// The root box node follows at byte 128 (pointer 0x15). Layout (little-endian dwords):
//   DW0 magic 'HWN1' (0x314E5748)   DW1 root pointer   DW2 node slots (128-byte slots including this header)
//   DW3 box nodes   DW4 primitive nodes   DW5..DW10 scene bounds min xyz, max xyz (f32)   DW11 instance nodes
//   DW12..DW31 zero
// A top-level structure has instance nodes and no primitive nodes; a BLAS has no instance nodes.
#include <cstdint>
#include <optional>
#include <string>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::rdna4 {

inline constexpr uint32_t kNodeSectionMagic = 0x314E5748u;  // "HWN1"

struct NodeSectionHeader {
  uint32_t root_pointer = kRootPointer;
  uint32_t node_slots = 0;
  uint32_t box_nodes = 0;
  uint32_t primitive_nodes = 0;
  Aabb bounds;
  uint32_t instance_nodes = 0;  ///< after the box nodes (top-level structures only)
};

NodeDwords write_node_section_header(const NodeSectionHeader& header);
/// Reads and checks the header against the section size in dwords; nullopt with `error` set if inconsistent.
std::optional<NodeSectionHeader> read_node_section_header(const uint32_t* dwords, std::size_t dword_count,
                                                          std::string* error);

}  // namespace hwbvh::rdna4
