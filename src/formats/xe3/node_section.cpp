#include "hwbvh/formats/xe3/node_section.h"

#include <algorithm>

#include "formats/section_header.h"

namespace hwbvh::xe3 {

using formats::header_error;

std::size_t node_section_dwords(uint32_t node_blocks, uint32_t stoc_data_blocks) {
  return (std::size_t{node_blocks} + stoc_data_blocks) * kBlockDwords;
}

std::array<uint32_t, kHeaderDwords> write_node_section_header(const NodeSectionHeader& header) {
  std::array<uint32_t, kHeaderDwords> dw{};
  dw[0] = kNodeSectionMagic;
  dw[1] = header.root_block;
  dw[2] = header.node_blocks;
  dw[3] = header.internal_nodes;
  dw[4] = header.quad_leaves;
  dw[5] = header.stoc3_leaves;
  dw[6] = header.stoc_level;
  dw[7] = static_cast<uint32_t>(header.order);
  formats::write_bounds(dw, 8, header.bounds);
  dw[14] = header.stoc_data_blocks;
  dw[15] = header.instance_leaves;
  return dw;
}

std::optional<NodeSectionHeader> read_node_section_header(std::span<const uint32_t> dwords, std::string* error) {
  if (dwords.size() < kHeaderDwords) return header_error(error, "node section is shorter than its 128-byte header");
  if (dwords[0] != kNodeSectionMagic)
    return header_error(error, "node section header has the wrong magic (not an Xe3 section)");
  NodeSectionHeader h;
  h.root_block = dwords[1];
  h.node_blocks = dwords[2];
  h.internal_nodes = dwords[3];
  h.quad_leaves = dwords[4];
  h.stoc3_leaves = dwords[5];
  h.stoc_level = dwords[6];
  h.bounds = formats::read_bounds(dwords, 8);
  h.stoc_data_blocks = dwords[14];
  h.instance_leaves = dwords[15];
  if (h.stoc_level != 0 && h.stoc_level != 1 && h.stoc_level != 3) {
    return header_error(error, "node section header names a STOC level other than 0, 1 or 3");
  }
  if (dwords[7] > 1) return header_error(error, "node section header names an unknown sub-triangle order");
  h.order = static_cast<SubTriangleOrder>(dwords[7]);
  if (std::any_of(dwords.begin() + 16, dwords.begin() + kHeaderDwords, [](uint32_t d) { return d != 0; })) {
    return header_error(error, "node section header has non-zero padding");
  }
  if (uint64_t{h.internal_nodes} + h.quad_leaves + 2 * (uint64_t{h.stoc3_leaves} + h.instance_leaves) + kHeaderBlocks !=
      h.node_blocks) {
    return header_error(error, "node section header node counts do not add up to its block count");
  }
  if (h.instance_leaves != 0 && (h.quad_leaves != 0 || h.stoc3_leaves != 0 || h.stoc_data_blocks != 0)) {
    return header_error(error, "node section header counts both instance leaves and triangle leaves");
  }
  if (node_section_dwords(h.node_blocks, h.stoc_data_blocks) != dwords.size()) {
    return header_error(error, "node section header block counts disagree with the section size");
  }
  if (h.root_block < kHeaderBlocks || h.root_block >= h.node_blocks) {
    return header_error(error, "node section root block is outside the nodes");
  }
  return h;
}

}  // namespace hwbvh::xe3
