#include "hwbvh/core/npz.h"

#include <zip.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh {
namespace {

constexpr std::array<unsigned char, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kAlignment = 64;  // NumPy pads the header so that the data starts at a multiple of 64

// The header dict of a .npy file: {'descr': '<i4', 'fortran_order': False, 'shape': (3, 2), } in any key order.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file, const std::string& what)
      : text_(text), file_(file), what_(what) {}

  NpyArray parse() {
    NpyArray out;
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<uint64_t>> shape;
    expect('{');
    while (!accept('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        if (peek() == '[') fail("a structured dtype (a list of fields) is not a plain numeric array");
        descr = string_literal();
      } else if (key == "fortran_order") {
        fortran = boolean();
      } else if (key == "shape") {
        shape = tuple();
      } else {
        fail("unknown header key '" + key + "'");
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("text after the header dict");
    if (!descr || !fortran || !shape) fail("the header lacks one of 'descr', 'fortran_order' and 'shape'");
    if (*fortran) fail("Fortran-ordered data is not read; save np.ascontiguousarray(a)");
    set_dtype(*descr, out);
    out.shape = std::move(*shape);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw_bad_input(file_, what_ + ": " + problem); }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("header is not the dict NumPy writes (expected '") + c + "')");
  }

  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("header is not the dict NumPy writes (expected a quoted string)");
    const std::size_t end = text_.find(quote, ++pos_);
    if (end == std::string_view::npos) fail("header has an unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail("'fortran_order' is not True or False");
  }

  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    while (!accept(')')) {
      skip_space();
      uint64_t v = 0;
      const std::size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const auto digit = static_cast<uint64_t>(text_[pos_++] - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) fail("a shape dimension is too large");
        v = 10 * v + digit;
      }
      if (pos_ == start) fail("'shape' is not a tuple of non-negative integers");
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2's long literal
      dims.push_back(v);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }

  void set_dtype(const std::string& descr, NpyArray& out) const {
    const auto bad = [&] { fail("dtype '" + descr + "' is not a plain integer, float or bool type"); };
    if (descr.size() < 3) bad();
    const char order = descr[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') bad();
    out.big_endian = order == '>';
    out.kind = descr[1];
    if (out.kind != 'i' && out.kind != 'u' && out.kind != 'f' && out.kind != 'b') bad();
    const std::string size = descr.substr(2);
    if (size != "1" && size != "2" && size != "4" && size != "8") bad();
    out.item_bytes = static_cast<uint32_t>(std::stoul(size));
    if ((out.kind == 'f' && out.item_bytes == 1) || (out.kind == 'b' && out.item_bytes != 1)) bad();
  }

  std::string_view text_;
  const std::string& file_;
  const std::string& what_;
  std::size_t pos_ = 0;
};

uint32_t read_le(std::span<const std::byte> bytes, std::size_t at, std::size_t count) {
  uint32_t v = 0;
  for (std::size_t i = 0; i < count; ++i) v |= std::to_integer<uint32_t>(bytes[at + i]) << (8 * i);
  return v;
}

// libzip's error text of `error`, freed after use.
std::string zip_message(zip_error_t* error) {
  std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

}  // namespace

uint64_t NpyArray::element_count() const {
  uint64_t n = 1;
  for (const uint64_t d : shape) n *= d;
  return n;
}

std::string NpyArray::descr() const {
  const char order = item_bytes == 1 ? '|' : big_endian ? '>' : '<';
  return std::string{order, kind} + std::to_string(item_bytes);
}

NpyArray make_int_array(std::span<const int64_t> values, std::vector<uint64_t> shape, char kind, uint32_t item_bytes) {
  NpyArray a;
  a.kind = kind;
  a.item_bytes = item_bytes;
  a.shape = std::move(shape);
  a.data.resize(values.size() * item_bytes);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<uint64_t>(values[i]);
    for (uint32_t b = 0; b < item_bytes; ++b) a.data[i * item_bytes + b] = static_cast<std::byte>((v >> (8 * b)) & 0xFF);
  }
  return a;
}

std::vector<int64_t> int_values(const NpyArray& array, const std::string& file, const std::string& what) {
  if (array.kind != 'i' && array.kind != 'u')
    throw_bad_input(file, what + ": dtype '" + array.descr() + "' is not an integer type");
  const uint64_t count = array.element_count();
  std::vector<int64_t> out(count);
  const uint32_t n = array.item_bytes;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (uint32_t b = 0; b < n; ++b) {
      const uint32_t shift = 8 * (array.big_endian ? n - 1 - b : b);
      v |= std::to_integer<uint64_t>(array.data[i * n + b]) << shift;
    }
    if (array.kind == 'i' && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    if (array.kind == 'u' && v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw_bad_input(file, what + ": value " + std::to_string(v) + " at index " + std::to_string(i) + " is too large");
    out[i] = static_cast<int64_t>(v);
  }
  return out;
}

NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& file, const std::string& what) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, what + ": " + problem); };
  if (bytes.size() < 10 || !std::equal(kMagic.begin(), kMagic.end(), bytes.begin(),
                                       [](unsigned char m, std::byte b) { return std::byte{m} == b; }))
    fail("not a .npy file (no \\x93NUMPY magic string)");
  const auto major = std::to_integer<unsigned>(bytes[6]);
  if (major < 1 || major > 3) fail("unknown .npy format version " + std::to_string(major));
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + length_bytes;
  if (bytes.size() < header_start) fail("truncated header");
  const uint32_t header_length = read_le(bytes, 8, length_bytes);
  if (bytes.size() - header_start < header_length) fail("truncated header");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + header_start), header_length);
  NpyArray out = HeaderParser(header, file, what).parse();
  uint64_t size = out.item_bytes;
  for (const uint64_t d : out.shape) {
    if (d != 0 && size > std::numeric_limits<uint64_t>::max() / d) fail("the shape's size overflows");
    size *= d;
  }
  const std::size_t data_start = header_start + header_length;
  if (bytes.size() - data_start != size)
    fail("holds " + std::to_string(bytes.size() - data_start) + " data bytes; its shape and dtype need " +
         std::to_string(size));
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return out;
}

std::vector<std::byte> npy_bytes(const NpyArray& array) {
  // Python's tuple literal: (), (3,) or (3, 2).
  std::string shape;
  for (std::size_t i = 0; i < array.shape.size(); ++i) shape += (i > 0 ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1) shape += ',';
  std::string header =
      "{'descr': '" + array.descr() + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  constexpr std::size_t kPreamble = 10;  // magic (6), version (2), header length (2)
  header.append(kAlignment - 1 - (kPreamble + header.size()) % kAlignment, ' ');
  header += '\n';
  std::vector<std::byte> out;
  out.reserve(kPreamble + header.size() + array.data.size());
  for (const unsigned char m : kMagic) out.push_back(std::byte{m});
  out.push_back(std::byte{1});
  out.push_back(std::byte{0});
  out.push_back(static_cast<std::byte>(header.size() & 0xFF));
  out.push_back(static_cast<std::byte>(header.size() >> 8));
  for (const char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

std::vector<std::pair<std::string, NpyArray>> parse_npz(std::span<const std::byte> bytes, const std::string& file,
                                                        uint64_t max_bytes) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, problem); };
  if (bytes.empty()) fail("not an .npz file: the file is empty");  // libzip would open it as an empty archive
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) fail("cannot read the archive: " + zip_message(&error));
  std::unique_ptr<zip_t, ZipCloser> archive(zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    zip_source_free(source);
    fail("not an .npz file (a zip archive of .npy files): " + zip_message(&error));
  }
  zip_error_fini(&error);
  std::vector<std::pair<std::string, NpyArray>> arrays;
  uint64_t total = 0;
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), index, 0, &stat) != 0 || !(stat.valid & ZIP_STAT_NAME) ||
        !(stat.valid & ZIP_STAT_SIZE))
      fail("entry " + std::to_string(i) + ": " + zip_strerror(archive.get()));
    const std::string name = stat.name;
    constexpr std::string_view kExtension = ".npy";
    if (name.size() <= kExtension.size() || !name.ends_with(kExtension))
      fail("entry '" + name + "' is not an .npy file (an .npz holds NAME.npy entries only)");
    const std::string key = name.substr(0, name.size() - kExtension.size());
    if (std::any_of(arrays.begin(), arrays.end(), [&](const auto& a) { return a.first == key; }))
      fail("entry '" + name + "' is in the archive twice");
    if (stat.size > max_bytes - total)
      fail("entry '" + name + "' holds " + std::to_string(stat.size) + " bytes; more than the " +
           std::to_string(max_bytes) + " bytes an .npz may hold here");
    total += stat.size;
    std::unique_ptr<zip_file_t, ZipFileCloser> entry(zip_fopen_index(archive.get(), index, 0));
    if (!entry) fail("entry '" + name + "': " + zip_strerror(archive.get()));
    // Read in pieces: the size is the archive's claim, so memory grows only with data that is really there.
    std::vector<std::byte> data;
    std::array<std::byte, 1 << 16> piece;
    for (;;) {
      const zip_int64_t got = zip_fread(entry.get(), piece.data(), piece.size());
      if (got < 0) fail("entry '" + name + "' is damaged: " + zip_file_strerror(entry.get()));
      if (got == 0) break;
      if (data.size() + static_cast<uint64_t>(got) > stat.size)
        fail("entry '" + name + "' holds more data than its size says");
      data.insert(data.end(), piece.begin(), piece.begin() + got);
    }
    if (data.size() != stat.size) fail("entry '" + name + "' is truncated");
    arrays.emplace_back(key, parse_npy(data, file, name));
  }
  return arrays;
}

std::vector<std::byte> npz_bytes(const std::vector<std::pair<std::string, NpyArray>>& arrays) {
  const auto fail = [](const std::string& problem) { throw Error(ErrorKind::Runtime, "", "writing .npz: " + problem); };
  if (arrays.empty()) {  // libzip writes nothing for an empty archive; np.savez() writes its end record alone
    std::vector<std::byte> end_record(22, std::byte{0});
    for (std::size_t i = 0; i < 4; ++i) end_record[i] = static_cast<std::byte>("PK\5\6"[i]);
    return end_record;
  }
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* target = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (!target) fail(zip_message(&error));
  zip_source_keep(target);  // zip_close writes into it; it is read back below
  const std::unique_ptr<zip_source_t, decltype(&zip_source_free)> target_ref(target, zip_source_free);
  zip_t* archive = zip_open_from_source(target, ZIP_TRUNCATE, &error);
  if (!archive) fail(zip_message(&error));
  zip_error_fini(&error);
  std::vector<std::vector<std::byte>> files;  // alive until zip_close reads them
  files.reserve(arrays.size());
  for (const auto& [name, array] : arrays) {
    files.push_back(npy_bytes(array));
    zip_source_t* data = zip_source_buffer(archive, files.back().data(), files.back().size(), 0);
    const zip_int64_t index = data ? zip_file_add(archive, (name + ".npy").c_str(), data, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (data) zip_source_free(data);
      const std::string message = zip_strerror(archive);
      zip_discard(archive);
      fail(message);
    }
    const auto i = static_cast<zip_uint64_t>(index);
    constexpr time_t kTimeStamp = 315532800 + 43200;  // 1980-01-01 12:00 UTC: the zip epoch in any time zone
    if (zip_set_file_compression(archive, i, ZIP_CM_STORE, 0) != 0 || zip_file_set_mtime(archive, i, kTimeStamp, 0) != 0) {
      const std::string message = zip_strerror(archive);
      zip_discard(archive);
      fail(message);
    }
  }
  if (zip_close(archive) != 0) {
    const std::string message = zip_strerror(archive);
    zip_discard(archive);
    fail(message);
  }
  zip_stat_t stat;
  if (zip_source_stat(target, &stat) != 0 || zip_source_open(target) != 0) fail("cannot read the archive back");
  std::vector<std::byte> out(stat.size);
  const zip_int64_t got = zip_source_read(target, out.data(), out.size());
  zip_source_close(target);
  if (got < 0 || static_cast<zip_uint64_t>(got) != stat.size) fail("cannot read the archive back");
  return out;
}

std::vector<std::pair<std::string, NpyArray>> read_npz(const std::filesystem::path& path) {
  return parse_npz(read_file_bytes(path), path.string());
}

void write_npz(const std::filesystem::path& path, const std::vector<std::pair<std::string, NpyArray>>& arrays) {
  write_file_atomically(path, npz_bytes(arrays));
}

}  // namespace hwbvh
