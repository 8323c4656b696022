#include "hwbvh/formats/rdna3/node_section.h"

#include "formats/section_header.h"

namespace hwbvh::rdna3 {

using formats::header_error;

namespace {

constexpr uint32_t kSlotDwords = kSlotBytes / 4;

}  // namespace

std::size_t node_section_dwords(uint32_t node_slots) {
  const std::size_t table = (std::size_t{node_slots} + kSlotDwords - 1) / kSlotDwords * kSlotDwords;
  return std::size_t{node_slots} * kSlotDwords + table;
}

BoxNodeDwords write_node_section_header(const NodeSectionHeader& header) {
  BoxNodeDwords dw{};
  dw[0] = kNodeSectionMagic;
  dw[1] = header.root_pointer;
  dw[2] = header.node_slots;
  dw[3] = header.box_nodes;
  dw[4] = header.triangle_nodes;
  formats::write_bounds(dw, 5, header.bounds);
  dw[11] = header.instance_nodes;
  return dw;
}

std::optional<NodeSectionHeader> read_node_section_header(std::span<const uint32_t> dwords, std::string* error) {
  if (dwords.size() < kBoxNodeDwords) return header_error(error, "node section is shorter than its 128-byte header");
  if (dwords[0] != kNodeSectionMagic)
    return header_error(error, "node section header has the wrong magic (not an RT IP 2.0 section)");
  NodeSectionHeader h;
  h.root_pointer = dwords[1];
  h.node_slots = dwords[2];
  h.box_nodes = dwords[3];
  h.triangle_nodes = dwords[4];
  h.bounds = formats::read_bounds(dwords, 5);
  h.instance_nodes = dwords[11];
  if (2 * (uint64_t{h.box_nodes} + h.instance_nodes) + h.triangle_nodes + kHeaderSlots != h.node_slots) {
    return header_error(error, "node section header node counts do not add up to its slot count");
  }
  if (node_section_dwords(h.node_slots) != dwords.size()) {
    return header_error(error, "node section header slot count disagrees with the section size");
  }
  const uint64_t root = node_byte_offset(h.root_pointer);
  if (root < kHeaderSlots * kSlotBytes || root + kBoxNodeBytes > uint64_t{h.node_slots} * kSlotBytes) {
    return header_error(error, "node section root pointer is outside the node slots");
  }
  return h;
}

uint32_t parent_pointer(std::span<const uint32_t> dwords, const NodeSectionHeader& header, uint32_t pointer) {
  const uint64_t slot = node_byte_offset(pointer) / kSlotBytes;
  if (slot >= header.node_slots) return kInvalidNode;
  return dwords[std::size_t{header.node_slots} * kSlotDwords + static_cast<std::size_t>(slot)];
}

}  // namespace hwbvh::rdna3
