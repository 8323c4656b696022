#include "hwbvh/formats/rdna4/node_section.h"

#include "formats/section_header.h"

namespace hwbvh::rdna4 {

using formats::header_error;

NodeDwords write_node_section_header(const NodeSectionHeader& header) {
  NodeDwords dw{};
  dw[0] = kNodeSectionMagic;
  dw[1] = header.root_pointer;
  dw[2] = header.node_slots;
  dw[3] = header.box_nodes;
  dw[4] = header.primitive_nodes;
  formats::write_bounds(dw, 5, header.bounds);
  dw[11] = header.instance_nodes;
  return dw;
}

std::optional<NodeSectionHeader> read_node_section_header(const uint32_t* dwords, std::size_t dword_count,
                                                          std::string* error) {
  if (dword_count < 2 * kNodeDwords || dword_count % kNodeDwords != 0)
    return header_error(error, "node section is not a whole number of 128-byte nodes (at least header + root)");
  if (dwords[0] != kNodeSectionMagic) return header_error(error, "node section header has the wrong magic");
  NodeSectionHeader h;
  h.root_pointer = dwords[1];
  h.node_slots = dwords[2];
  h.box_nodes = dwords[3];
  h.primitive_nodes = dwords[4];
  h.bounds = formats::read_bounds({dwords, dword_count}, 5);
  h.instance_nodes = dwords[11];
  if (uint64_t{h.node_slots} * kNodeDwords != dword_count)
    return header_error(error, "node section header slot count disagrees with its size");
  if (h.instance_nodes != 0 && h.primitive_nodes != 0)
    return header_error(error, "node section header has both instance and primitive nodes");
  if (uint64_t{h.box_nodes} + h.primitive_nodes + h.instance_nodes + 1 != h.node_slots)
    return header_error(error, "node section header node counts do not add up");
  if (node_byte_offset(h.root_pointer) >= uint64_t{h.node_slots} * kNodeBytes || node_byte_offset(h.root_pointer) == 0)
    return header_error(error, "node section root pointer is outside the section");
  return h;
}

}  // namespace hwbvh::rdna4
