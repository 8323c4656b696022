#pragma once
// NumPy's array files: .npy (one array: a magic string, a header that is a Python dict literal, the raw data) and
// .npz (a zip archive of .npy files, one per array, as np.savez stores them and np.savez_compressed deflates them).
// The zip container is libzip's; the .npy header is parsed here (NumPy's "format" module documents it: versions 1.0,
// 2.0 and 3.0, keys descr, fortran_order and shape). Plain numeric arrays only (no structured or object dtypes).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace hwbvh {

/// One array: its NumPy type (kind 'i' signed, 'u' unsigned, 'f' float, 'b' bool; item size in bytes; byte order)
/// and shape, and its data in C order as stored.
struct NpyArray {
  char kind = 'i';
  uint32_t item_bytes = 4;
  bool big_endian = false;
  std::vector<uint64_t> shape;   ///< empty: a scalar (one element)
  std::vector<std::byte> data;   ///< element_count() * item_bytes bytes
  [[nodiscard]] uint64_t element_count() const;
  /// The dtype string NumPy writes: "<i4", "|u1", ">f8", ...
  [[nodiscard]] std::string descr() const;
};

/// A 1-D or 2-D little-endian integer array of `values`, written as `descr_kind` ('i' or 'u') of `item_bytes`.
NpyArray make_int_array(std::span<const int64_t> values, std::vector<uint64_t> shape, char kind, uint32_t item_bytes);

/// The elements of an integer array ('i' or 'u', any size or byte order) as int64. Throws hwbvh::Error(BadInput)
/// naming `file` and `what` for another kind, or an unsigned value above INT64_MAX.
std::vector<int64_t> int_values(const NpyArray& array, const std::string& file, const std::string& what);

/// Parses one .npy file's bytes. Throws hwbvh::Error(BadInput) naming `file` and `what` (e.g. "children.npy") for a
/// bad magic string or version, a header that is not the dict NumPy writes, an unsupported dtype, Fortran order, or
/// data that is not exactly shape's size.
NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& file, const std::string& what);
/// The .npy file of `array` (format 1.0, the header padded so that the data starts at a multiple of 64 bytes).
std::vector<std::byte> npy_bytes(const NpyArray& array);

/// The arrays of an .npz archive's bytes by name (the entry name without ".npy"), in the archive's order. Throws
/// hwbvh::Error(BadInput) naming `file` for bytes that are not a zip archive, a damaged entry (CRC, truncation), an
/// entry not named *.npy, a name twice, a bad .npy, or more than `max_bytes` of uncompressed data in all.
std::vector<std::pair<std::string, NpyArray>> parse_npz(std::span<const std::byte> bytes, const std::string& file,
                                                        uint64_t max_bytes = uint64_t{1} << 36);
/// An .npz archive of `arrays` (entries NAME.npy, stored uncompressed as np.savez writes them, with a fixed time
/// stamp so that the same arrays give the same bytes).
std::vector<std::byte> npz_bytes(const std::vector<std::pair<std::string, NpyArray>>& arrays);

/// read_file_bytes + parse_npz. Throws hwbvh::Error(BadInput) naming `path`.
std::vector<std::pair<std::string, NpyArray>> read_npz(const std::filesystem::path& path);
/// npz_bytes written atomically (write_file_atomically).
void write_npz(const std::filesystem::path& path, const std::vector<std::pair<std::string, NpyArray>>& arrays);

}  // namespace hwbvh
