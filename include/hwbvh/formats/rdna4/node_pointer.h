#pragma once
// RT IP 3.1 node pointers and sentinels (docs/rtip31-format.md §1.1, §1.3).
//
//   pointer = (byte_offset >> 3) | type      byte_offset = (pointer & ~0xF) << 3   (128-byte nodes)
//   pointer & 7:  0..3 primitive node (pair index = (p & 3) | ((p & 8) >> 1)), 5 box node, 6 instance node
#include <array>
#include <cstdint>

namespace hwbvh::rdna4 {

inline constexpr uint32_t kNodeBytes = 128;
inline constexpr uint32_t kNodeDwords = 32;
using NodeDwords = std::array<uint32_t, kNodeDwords>;  ///< one 128-byte node as little-endian dwords

inline constexpr uint32_t kTypeBox = 5;
inline constexpr uint32_t kTypeInstance = 6;

inline constexpr uint32_t kInvalidNode = 0xFFFFFFFFu;   ///< empty slot; empty stack after an overflow
inline constexpr uint32_t kTerminalNode = 0xFFFFFFFEu;  ///< empty stack, never overflowed: traversal done
inline constexpr uint32_t kSkip0To3 = 0xFFFFFFFDu;
inline constexpr uint32_t kSkip4To7 = 0xFFFFFFFBu;
inline constexpr uint32_t kSkip0To7 = 0xFFFFFFF9u;
inline constexpr uint32_t kEndSearch = 0xFFFFFFF8u;     ///< pointers >= this are sentinels
inline constexpr uint32_t kRootPointer = 0x15u;         ///< root box node at byte 128 of the node section

enum class NodeKind { Primitive, Box, Instance, Unsupported };  // 2 bits each in node_kind's table

constexpr uint32_t make_node_pointer(uint64_t byte_offset, uint32_t type) {
  return static_cast<uint32_t>(byte_offset >> 3) | type;
}
/// Byte offset of the node a pointer addresses; 64-bit so the whole 32 GiB pointer range is covered.
constexpr uint64_t node_byte_offset(uint32_t pointer) { return uint64_t{pointer & ~0xFu} << 3; }
constexpr NodeKind node_kind(uint32_t pointer) {
  // The kind of each of the 8 types (pointer & 7) in 2 bits, read with a shift: traversal asks several times per
  // step, and a switch compiles to a chain of compares and branches.
  constexpr auto kinds = [] {
    uint32_t table = 0;
    for (uint32_t type = 0; type < 8; ++type) {
      const NodeKind kind = type < 4               ? NodeKind::Primitive
                            : type == kTypeBox      ? NodeKind::Box
                            : type == kTypeInstance ? NodeKind::Instance
                                                    : NodeKind::Unsupported;
      table |= static_cast<uint32_t>(kind) << (2 * type);
    }
    return table;
  }();
  return static_cast<NodeKind>(kinds >> (2 * (pointer & 7u)) & 3u);
}
constexpr uint32_t pair_index(uint32_t pointer) { return (pointer & 3u) | ((pointer & 8u) >> 1); }
/// The 4-bit node type that addresses pair `pair` (0..7) of a primitive node: 0,1,2,3,8,9,10,11.
constexpr uint32_t pair_node_type(uint32_t pair) { return pair < 4 ? pair : pair + 4; }
/// Sentinel test used by the stack instruction (§1.3).
constexpr bool is_sentinel(uint32_t value) { return (value >> 3) == 0x1FFFFFFFu; }

}  // namespace hwbvh::rdna4
