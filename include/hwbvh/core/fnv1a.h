#pragma once
// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3), over several byte ranges as if they were
// concatenated: the blob checksum of format version 1 (docs/blob-format.md) and the benchmarks' results hash.
#include <cstddef>
#include <cstdint>
#include <span>

namespace hwbvh {

class Fnv1a64 {
 public:
  void add(std::span<const std::byte> bytes) {
    for (std::byte b : bytes) hash_ = (hash_ ^ std::to_integer<uint64_t>(b)) * kPrime;
  }
  /// The eight bytes of `v`, least significant first (its little-endian encoding).
  void add_le64(uint64_t v) {
    for (int i = 0; i < 8; ++i) hash_ = (hash_ ^ ((v >> (8 * i)) & 0xFF)) * kPrime;
  }
  [[nodiscard]] uint64_t value() const { return hash_; }

 private:
  static constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace hwbvh
