#pragma once
// What one lane's traversal step asks of the memory system and the ray accelerator, as each target's emulator
// records it for the machine model (TraceOptions::record_node_sequence, machine/machine.h): where the node's bytes
// are, how many, and how many boxes and triangles the accelerator tests on them. Each target fills it by its own
// rules (docs/machine-model.md, "What each target fetches"), so the model charges every target for what its
// hardware reads.
#include <cstdint>

namespace hwbvh::emu {

struct NodeFetch {
  uint32_t node = 0;            ///< the node as the target names it: an RT IP node pointer, an Xe3 64-byte block index
  uint32_t offset_64 = 0;       ///< first byte in the node section / 64 (every target's nodes are 64-byte aligned)
  uint8_t blocks_64 = 0;        ///< size / 64: 2 for 128-byte nodes, 1 for 64-byte ones
  uint8_t box_tests = 0;        ///< child boxes the accelerator tests: the node's width (8, 4 or 6); 0 for a leaf
  uint8_t triangle_tests = 0;   ///< triangles it tests on a leaf
  bool same_step = false;       ///< the second node of a BVH4x2 dual intersect: read by the step of the fetch before
  bool instance = false;        ///< an RT IP 3.1 instance node: the accelerator also transforms the ray into its BLAS

  [[nodiscard]] uint64_t byte_offset() const { return uint64_t{offset_64} * 64; }
  [[nodiscard]] uint32_t bytes() const { return uint32_t{blocks_64} * 64; }
  bool operator==(const NodeFetch&) const = default;
};

}  // namespace hwbvh::emu
