#pragma once
// Walks an RT IP 3.1 tree from the root the way RRA's loader does (bvh/rtip31/encoded_rt_ip_31_bottom_level_bvh.cpp,
// CountNodes and GetTrianglePairIndices), but checks first what RRA takes on trust: every child pointer lands
// on a node inside the data, of a bottom-level type (or an instance node in a top level), no box or instance
// node is reached twice, and every primitive range
// decodes and ends with its stop bit within the 8 pairs RRA has room for. Work is bounded by the data size.
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rra {

struct WalkCounts {
  uint32_t box_nodes = 0;
  uint32_t primitive_nodes = 0;  ///< distinct 128-byte primitive nodes holding a pair of some range
  uint32_t depth = 0;            ///< nodes on the longest path from the root to a leaf node, both included
  uint32_t instance_nodes = 0;
};

/// `section`: node dwords addressed like a node section, node pointers relative to dword 0 (slot 0 is a header,
/// not read). Calls `on_pair` with each pair's pointer and, for a top level, `on_instance` with each instance
/// node's pointer (each instance node reached once); without `on_instance` an instance child is refused as in a
/// BLAS. Throws hwbvh::Error(BadInput) naming `file`.
WalkCounts walk_tree(std::span<const uint32_t> section, const std::string& file,
                     const std::function<void(uint32_t pointer, const rdna4::DecodedPair&)>& on_pair,
                     const std::function<void(uint32_t pointer)>& on_instance = {});

}  // namespace hwbvh::rra
