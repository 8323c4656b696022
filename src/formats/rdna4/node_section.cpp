#include "hwbvh/formats/rdna4/node_section.h"

#include "hwbvh/core/bits.h"

namespace hwbvh::rdna4 {

NodeDwords write_node_section_header(const NodeSectionHeader& header) {
  NodeDwords dw{};
  dw[0] = kNodeSectionMagic;
  dw[1] = header.root_pointer;
  dw[2] = header.node_slots;
  dw[3] = header.box_nodes;
  dw[4] = header.primitive_nodes;
  for (int a = 0; a < 3; ++a) {
    dw[5 + a] = float_bits(header.bounds.min[a]);
    dw[8 + a] = float_bits(header.bounds.max[a]);
  }
  return dw;
}

std::optional<NodeSectionHeader> read_node_section_header(const uint32_t* dwords, std::size_t dword_count,
                                                          std::string* error) {
  auto fail = [&](const char* why) -> std::optional<NodeSectionHeader> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (dword_count < 2 * kNodeDwords || dword_count % kNodeDwords != 0)
    return fail("node section is not a whole number of 128-byte nodes (at least header + root)");
  if (dwords[0] != kNodeSectionMagic) return fail("node section header has the wrong magic");
  NodeSectionHeader h;
  h.root_pointer = dwords[1];
  h.node_slots = dwords[2];
  h.box_nodes = dwords[3];
  h.primitive_nodes = dwords[4];
  for (int a = 0; a < 3; ++a) {
    h.bounds.min[a] = bits_float(dwords[5 + a]);
    h.bounds.max[a] = bits_float(dwords[8 + a]);
  }
  if (uint64_t{h.node_slots} * kNodeDwords != dword_count) return fail("node section header slot count disagrees with its size");
  if (uint64_t{h.box_nodes} + h.primitive_nodes + 1 != h.node_slots) return fail("node section header node counts do not add up");
  if (node_byte_offset(h.root_pointer) >= uint64_t{h.node_slots} * kNodeBytes || node_byte_offset(h.root_pointer) == 0)
    return fail("node section root pointer is outside the section");
  return h;
}

}  // namespace hwbvh::rdna4
