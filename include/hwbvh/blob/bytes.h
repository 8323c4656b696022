#pragma once
// Little-endian byte helpers for the blob container and its sections. Every multi-byte value in a .hwbvh file
// is little-endian (docs/blob-format.md); these helpers spell the byte order out so the code is correct on any
// host, and every load is bounds-checked by its caller before it is made.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hwbvh::blob {

/// Appends `value` as 4 little-endian bytes.
inline void append_le32(std::vector<std::byte>& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}
/// Appends `value` as 8 little-endian bytes.
inline void append_le64(std::vector<std::byte>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}
/// Overwrites 8 bytes at `offset` with `value`, little-endian. Precondition: offset + 8 <= out.size().
inline void store_le64(std::span<std::byte> out, std::size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[offset + i] = static_cast<std::byte>(value >> (8 * i));
}
/// Reads 4 little-endian bytes at `offset`. Precondition: offset + 4 <= bytes.size().
inline uint32_t load_le32(std::span<const std::byte> bytes, std::size_t offset) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{std::to_integer<uint8_t>(bytes[offset + i])} << (8 * i);
  return v;
}
/// Reads 8 little-endian bytes at `offset`. Precondition: offset + 8 <= bytes.size().
inline uint64_t load_le64(std::span<const std::byte> bytes, std::size_t offset) {
  return uint64_t{load_le32(bytes, offset)} | uint64_t{load_le32(bytes, offset + 4)} << 32;
}

/// Dwords (e.g. an encoded node section) as little-endian bytes.
inline std::vector<std::byte> dwords_to_bytes(std::span<const uint32_t> dwords) {
  std::vector<std::byte> out;
  out.reserve(dwords.size() * 4);
  for (uint32_t d : dwords) append_le32(out, d);
  return out;
}
/// Little-endian bytes as dwords; a trailing partial dword (size % 4 != 0) is dropped, callers check sizes.
inline std::vector<uint32_t> bytes_to_dwords(std::span<const std::byte> bytes) {
  std::vector<uint32_t> out(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_le32(bytes, 4 * i);
  return out;
}

}  // namespace hwbvh::blob
