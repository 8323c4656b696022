#pragma once
// Resealing a blob: recomputing its recorded file size and checksums (docs/blob-format.md §2, §3) after its bytes
// were changed. The fuzz targets reseal their inputs so that mutations get past the checksums to the structural
// checks and the node decoders behind them; the hostile-blob tests (tests/hostile) reseal hand-made corruptions.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/bytes.h"

namespace hwbvh::fuzz {

/// A copy of `bytes` with the header's file size, every section checksum whose entry lies inside the file, and
/// then the header checksum recomputed. Bytes too short for a header, or a table running past the end, are
/// returned with as much fixed as the layout allows.
inline std::vector<std::byte> reseal(std::span<const std::byte> bytes) {
  constexpr std::size_t kVersionOffset = 8, kFileSizeOffset = 24, kCountOffset = 16;
  std::vector<std::byte> out(bytes.begin(), bytes.end());
  if (out.size() < blob::kFileHeaderBytes) return out;
  blob::store_le64(out, kFileSizeOffset, out.size());
  const uint32_t version = blob::load_le32(out, kVersionOffset);  // the checksums of that version
  const uint64_t count = blob::load_le32(out, kCountOffset);
  const uint64_t table_end = blob::kFileHeaderBytes + count * blob::kSectionEntryBytes;
  if (table_end > out.size()) return out;
  for (uint64_t i = 0; i < count; ++i) {
    const std::size_t e = blob::kFileHeaderBytes + i * blob::kSectionEntryBytes;
    const uint64_t offset = blob::load_le64(out, e + 8), size = blob::load_le64(out, e + 16);
    if (offset <= out.size() && size <= out.size() - offset)
      blob::store_le64(out, e + 24, blob::checksum(std::span(out).subspan(offset, size), version));
  }
  std::vector<std::byte> covered(out.begin(), out.begin() + blob::kHeaderChecksumOffset);
  covered.insert(covered.end(), out.begin() + blob::kFileHeaderBytes,
                 out.begin() + static_cast<std::ptrdiff_t>(table_end));
  blob::store_le64(out, blob::kHeaderChecksumOffset, blob::checksum(covered, version));
  return out;
}

}  // namespace hwbvh::fuzz
