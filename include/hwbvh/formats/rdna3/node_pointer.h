#pragma once
// RT IP 2.0 (RDNA 2 / RDNA 3) node pointers and sentinels (docs/rtip31-format.md §1.2, §1.3).
//
//   pointer = (byte_offset >> 3) | type      byte_offset = (pointer & ~7) << 3      (64-byte granule)
//   type:  0, 1 triangle 0 / triangle 1 of a triangle node (64 B; 2, 3 exist in hardware, unused here)
//          4 FP16 box node (64 B, unused here)   5 FP32 box node (128 B)   6 instance   7 procedural
//
// Unlike RT IP 3.1 there is no base + offset scheme: every box child holds a full pointer, and a triangle pair
// is one 64-byte node referenced through a type-1 pointer (§8.3).
#include <array>
#include <cstdint>

namespace hwbvh::rdna3 {

inline constexpr uint32_t kSlotBytes = 64;  ///< pointer granule: node byte offsets are multiples of 64
inline constexpr uint32_t kBoxNodeBytes = 128;
inline constexpr uint32_t kBoxNodeDwords = 32;
inline constexpr uint32_t kTriangleNodeBytes = 64;
inline constexpr uint32_t kTriangleNodeDwords = 16;
using BoxNodeDwords = std::array<uint32_t, kBoxNodeDwords>;            ///< one FP32 box node, little-endian dwords
using TriangleNodeDwords = std::array<uint32_t, kTriangleNodeDwords>;  ///< one triangle node

inline constexpr uint32_t kTypeTriangle0 = 0;
inline constexpr uint32_t kTypeTriangle1 = 1;
inline constexpr uint32_t kTypeBoxFp16 = 4;
inline constexpr uint32_t kTypeBoxFp32 = 5;
inline constexpr uint32_t kTypeInstance = 6;
inline constexpr uint32_t kTypeProcedural = 7;

inline constexpr uint32_t kInvalidNode = 0xFFFFFFFFu;   ///< empty child slot, box miss, lost stack entry
inline constexpr uint32_t kTerminalNode = 0xFFFFFFFEu;  ///< empty stack: traversal done
inline constexpr uint32_t kRootPointer = 0x15u;         ///< root FP32 box node at byte 128 of the node section

constexpr uint32_t make_node_pointer(uint64_t byte_offset, uint32_t type) {
  return static_cast<uint32_t>(byte_offset >> 3) | type;
}
/// Byte offset of the node a pointer addresses (64-bit, so the whole pointer range is covered).
constexpr uint64_t node_byte_offset(uint32_t pointer) { return uint64_t{pointer & ~7u} << 3; }
constexpr uint32_t node_type(uint32_t pointer) { return pointer & 7u; }
/// Types 0..3 address one triangle of a triangle node.
constexpr bool is_triangle_pointer(uint32_t pointer) { return node_type(pointer) <= 3; }

}  // namespace hwbvh::rdna3
