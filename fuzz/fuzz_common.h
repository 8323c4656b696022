#pragma once
// Helpers shared by the libFuzzer targets (fuzz/README.md). A target returns normally for every input the library
// refuses with hwbvh::Error; anything else it does wrong — a sanitizer report, an uncaught exception of another
// type, a broken invariant (fuzz_check) — aborts and becomes a crash that libFuzzer saves.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/bytes.h"
#include "reseal.h"

namespace hwbvh::fuzz {

/// The fuzzer's input as bytes.
inline std::span<const std::byte> input_bytes(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

/// Aborts with `what` when an invariant the library promises does not hold.
inline void fuzz_check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

/// Same target and the same sections (type, alignment, bytes) in the same order.
inline bool same_content(const blob::Blob& a, const blob::Blob& b) {
  if (a.target != b.target || a.sections.size() != b.sections.size()) return false;
  for (std::size_t i = 0; i < a.sections.size(); ++i) {
    const blob::Section &x = a.sections[i], &y = b.sections[i];
    if (x.type != y.type || x.alignment != y.alignment || x.data != y.data) return false;
  }
  return true;
}

/// The first N little-endian dwords of `bytes`, zero-padded: one node of a fixed size from any input.
template <std::size_t N>
std::array<uint32_t, N> leading_dwords(std::span<const std::byte> bytes) {
  std::array<uint32_t, N> out{};
  std::array<std::byte, 4 * N> padded{};
  std::copy_n(bytes.begin(), std::min(bytes.size(), padded.size()), padded.begin());
  for (std::size_t i = 0; i < N; ++i) out[i] = blob::load_le32(padded, 4 * i);
  return out;
}

}  // namespace hwbvh::fuzz
