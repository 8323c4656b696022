#pragma once
// Decoded views of an RT IP 3.1 node section for `hwbvh dump`, read only through formats/rdna4/decode.h.
//
// The walk is breadth-first from the root pointer of the node-section header (0x15 when the header is
// unreadable). It is safe on hostile input: every pointer is bounds-checked before its node is read, a box node
// is expanded at most once (so cycles terminate), and every problem is recorded with the node and child slot
// that led to it instead of being followed.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/rdna4/node_section.h"

namespace hwbvh::pipeline {

struct DumpedNode {
  uint64_t offset = 0;       ///< byte offset in the node section
  uint32_t pointer = 0;      ///< the pointer this node was first reached by (type bits included)
  rdna4::NodeKind kind = rdna4::NodeKind::Box;
  std::optional<rdna4::DecodedBoxNode> box;               ///< set for box nodes
  std::optional<rdna4::PrimitiveHeader> primitive_header;  ///< set for primitive nodes with a valid header
  std::vector<std::optional<rdna4::DecodedPair>> pairs;    ///< primitive nodes: pairs 0..P-1, nullopt if malformed
  std::optional<rdna4::DecodedInstanceNode> instance;      ///< set for instance nodes (a top level's leaves)
};

inline constexpr std::size_t kMaxProblems = 100;  ///< problems kept as text; the rest are only counted

struct NodeDump {
  uint64_t section_bytes = 0;
  std::optional<rdna4::NodeSectionHeader> header;  ///< nullopt when the section header is malformed
  uint32_t root_pointer = rdna4::kRootPointer;
  std::vector<DumpedNode> nodes;      ///< breadth-first order
  std::vector<std::string> problems;  ///< each names the bad node/pointer (the first kMaxProblems of them)
  uint64_t problem_count = 0;         ///< all problems found; 0 for a well-formed tree
  uint64_t not_shown = 0;             ///< nodes reachable from the root but left out because of max_nodes
};

/// Decodes the nodes breadth-first from the root of the node section `dwords`, keeping the first `max_nodes` (0 = no
/// limit) and counting the others in not_shown.
NodeDump dump_tree(std::span<const uint32_t> dwords, std::size_t max_nodes);

/// Decodes the one node `pointer` addresses, as the node type its low bits name.
NodeDump dump_pointer(std::span<const uint32_t> dwords, uint32_t pointer);

/// Decodes the one node at byte `offset` of the node section, as the type the tree gives it (the bytes of a node
/// do not say whether it is a box or a primitive node). nullopt when no node reachable from the root sits there.
std::optional<NodeDump> dump_offset(std::span<const uint32_t> dwords, uint64_t offset);

}  // namespace hwbvh::pipeline
