// The .hwbvh container: serialisation, validation and atomic file writes (docs/blob-format.md).
#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/blob_file.h"

#include <algorithm>
#include <bit>
#include <string_view>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/core/fnv1a.h"
#include "hwbvh/core/progress.h"
#include "message.h"

// Header-only: nothing to link, for this library or for find_package(hwbvh) users.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace hwbvh::blob {
namespace {

// File header field offsets (docs/blob-format.md §2).
constexpr std::size_t kVersionOffset = 8;
constexpr std::size_t kTargetOffset = 12;
constexpr std::size_t kCountOffset = 16;
constexpr std::size_t kReservedOffset = 20;
constexpr std::size_t kFileSizeOffset = 24;

bool is_known_target(uint32_t t) { return t >= 1 && t <= 3; }
bool is_known_section_type(uint32_t t) { return t >= 1 && t <= 9; }
// The first format version with this section type: the two-level sections came with version 3, their world bounds
// with version 4.
uint32_t first_version_with(uint32_t t) {
  if (t >= static_cast<uint32_t>(SectionType::WorldBounds)) return 4;
  return t >= static_cast<uint32_t>(SectionType::InstanceSideband) ? 3 : 1;
}
bool is_valid_alignment(uint32_t a) { return a >= 1 && a <= kMaxAlignment && std::has_single_bit(a); }
uint32_t required_alignment(SectionType t) { return t == SectionType::Nodes ? kNodesAlignment : 1; }

uint64_t align_up(uint64_t v, uint64_t alignment) { return (v + alignment - 1) / alignment * alignment; }

std::string section_label(std::size_t index, uint32_t type) {
  return is_known_section_type(type)
             ? detail::cat("section ", index, " (", section_type_name(static_cast<SectionType>(type)), ")")
             : detail::cat("section ", index);
}

// The checksum of the file header (without its checksum field) followed by the section table.
uint64_t header_checksum(std::span<const std::byte> file, std::size_t table_end, uint32_t version) {
  std::vector<std::byte> covered(file.begin(), file.begin() + kHeaderChecksumOffset);
  covered.insert(covered.end(), file.begin() + kFileHeaderBytes, file.begin() + static_cast<std::ptrdiff_t>(table_end));
  return checksum(covered, version);
}

// Recognises a magic altered by CR/LF conversion, so the message can say what happened.
bool is_text_mangled_magic(std::span<const std::byte> bytes) {
  const auto text = [&](std::size_t n) {
    return std::string_view(reinterpret_cast<const char*>(bytes.data()), std::min(n, bytes.size()));
  };
  return text(7) == std::string_view("HWBVH\n\x1a", 7) || text(9) == std::string_view("HWBVH\r\r\n\x1a", 9);
}

Blob parse_impl(std::span<const std::byte> bytes, const std::string& name, FileLayout* layout) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(name, problem); };
  const uint64_t size = bytes.size();
  const std::string_view magic(kMagic, sizeof kMagic);

  // Magic and version first: a future version may change everything after them.
  if (size == 0) fail("empty file (not an hwbvh blob)");
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()), std::min<uint64_t>(size, 8));
  if (head != magic.substr(0, head.size())) {
    if (is_text_mangled_magic(bytes))
      fail("the file was altered by a text-mode transfer (line endings converted); copy it in binary mode");
    fail("not an hwbvh blob (bad magic)");
  }
  if (size < kTargetOffset) fail(detail::cat("truncated: ", size, " bytes, too short for the file header"));
  const uint32_t version = load_le32(bytes, kVersionOffset);
  if (version < kOldestReadableVersion || version > kFormatVersion)
    fail(detail::cat("unsupported format version ", version, " (this hwbvh reads versions ", kOldestReadableVersion,
                     " to ", kFormatVersion, ")"));
  if (size < kFileHeaderBytes)
    fail(detail::cat("truncated: ", size, " bytes, too short for the ", kFileHeaderBytes, "-byte file header"));

  // Section table, declared file size, then the checksum that covers both.
  const uint32_t count = load_le32(bytes, kCountOffset);
  if (count > kMaxSections) fail(detail::cat("section count ", count, " exceeds the limit of ", kMaxSections));
  const uint64_t table_end = kFileHeaderBytes + uint64_t{count} * kSectionEntryBytes;
  if (table_end > size)
    fail(detail::cat("truncated: ", size, " bytes, the section table ends at byte ", table_end));
  const uint64_t recorded_size = load_le64(bytes, kFileSizeOffset);
  if (recorded_size > size)
    fail(detail::cat("truncated: ", size, " bytes, the header records ", recorded_size, " bytes"));
  if (recorded_size < size)
    fail(detail::cat(size, " bytes, but the header records ", recorded_size,
                     " bytes (trailing data or corrupted header)"));
  const uint64_t stored_header_sum = load_le64(bytes, kHeaderChecksumOffset);
  const uint64_t header_sum = header_checksum(bytes, table_end, version);
  if (stored_header_sum != header_sum)
    fail(detail::cat("header checksum mismatch (stored ", detail::hex64(stored_header_sum), ", computed ",
                     detail::hex64(header_sum), "): file header or section table corrupted"));
  const uint32_t target = load_le32(bytes, kTargetOffset);
  if (!is_known_target(target)) fail(detail::cat("unknown target ", target, " (known: 1 rtip31, 2 rtip20, 3 xe3)"));
  if (load_le32(bytes, kReservedOffset) != 0) fail("reserved header field (bytes 20..23) is not zero");

  // Section entries: type, alignment, bounds (overflow-safe: offset <= size, then size <= size - offset).
  std::vector<SectionEntry> entries(count);
  for (uint32_t i = 0; i < count; ++i) {
    const std::size_t e = kFileHeaderBytes + std::size_t{i} * kSectionEntryBytes;
    const uint32_t type = load_le32(bytes, e);
    const uint32_t alignment = load_le32(bytes, e + 4);
    const uint64_t offset = load_le64(bytes, e + 8);
    const uint64_t length = load_le64(bytes, e + 16);
    const std::string label = section_label(i, type);
    if (!is_known_section_type(type) || first_version_with(type) > version)
      fail(detail::cat(label, ": unknown section type ", type, " for format version ", version));
    const auto section_type = static_cast<SectionType>(type);
    for (uint32_t j = 0; j < i; ++j)
      if (entries[j].type == section_type)
        fail(detail::cat("duplicate ", section_type_name(section_type), " section (table entries ", j, " and ", i,
                         ")"));
    if (!is_valid_alignment(alignment))
      fail(detail::cat(label, ": alignment ", alignment, " is not a power of two in 1..", kMaxAlignment));
    if (alignment % required_alignment(section_type) != 0)
      fail(detail::cat(label, ": alignment ", alignment, " is below the required ",
                       required_alignment(section_type)));
    if (offset > size || length > size - offset)
      fail(detail::cat(label, ": offset ", offset, " + size ", length, " runs past the end of the file (", size,
                       " bytes)"));
    if (offset < table_end)
      fail(detail::cat(label, ": offset ", offset, " lies inside the file header or section table (which end at ",
                       table_end, ")"));
    if (offset % alignment != 0)
      fail(detail::cat(label, ": offset ", offset, " is not a multiple of its alignment ", alignment));
    entries[i] = {section_type, alignment, offset, length, load_le64(bytes, e + 24)};
  }

  // Overlaps, and padding: every byte outside the header, table and sections must be zero, so that no bit of
  // the file escapes a check.
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(entries[a].offset, a) < std::pair(entries[b].offset, b);
  });
  uint64_t covered = table_end;
  uint32_t previous = count;
  const auto check_padding = [&](uint64_t from, uint64_t to) {
    for (uint64_t p = from; p < to; ++p)
      if (bytes[p] != std::byte{0})
        fail(detail::cat("non-zero padding byte at offset ", p, " (outside every section): corrupted"));
  };
  for (uint32_t i : order) {
    const SectionEntry& s = entries[i];
    if (s.offset < covered)  // never for the first: offsets were checked against table_end
      fail(detail::cat("sections ", previous, " and ", i, " overlap"));
    check_padding(covered, s.offset);
    covered = std::max(covered, s.offset + s.size);
    previous = i;
  }
  check_padding(covered, size);

  Blob blob;
  blob.target = static_cast<Target>(target);
  blob.sections.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const SectionEntry& s = entries[i];
    const auto data = bytes.subspan(s.offset, s.size);
    const uint64_t sum = checksum(data, version);
    if (sum != s.checksum)
      fail(detail::cat(section_label(i, static_cast<uint32_t>(s.type)), ": checksum mismatch (stored ",
                       detail::hex64(s.checksum), ", computed ", detail::hex64(sum), "): section data corrupted"));
    blob.sections.push_back({s.type, s.alignment, std::vector<std::byte>(data.begin(), data.end())});
  }
  if (layout) *layout = {version, size, std::move(entries)};
  return blob;
}

Blob read_impl(const std::filesystem::path& path, FileLayout* layout) {
  return parse_impl(read_file_bytes(path), path.string(), layout);
}

}  // namespace

const Section* Blob::find(SectionType type) const {
  for (const Section& s : sections)
    if (s.type == type) return &s;
  return nullptr;
}

const Section& Blob::require(SectionType type, const std::string& file) const {
  const Section* s = find(type);
  if (!s) throw_bad_input(file, detail::cat("has no ", section_type_name(type), " section"));
  return *s;
}

const char* target_name(Target t) {
  switch (t) {
    case Target::Rtip31: return "rtip31";
    case Target::Rtip20: return "rtip20";
    case Target::Xe3: return "xe3";
  }
  return "unknown";
}

const char* section_type_name(SectionType t) {
  switch (t) {
    case SectionType::Nodes: return "nodes";
    case SectionType::Geometry: return "geometry";
    case SectionType::SceneMeta: return "scene-meta";
    case SectionType::BuildMeta: return "build-meta";
    case SectionType::AlphaTest: return "alpha-test";
    case SectionType::Stoc: return "stoc";
    case SectionType::InstanceSideband: return "instance-sideband";
    case SectionType::Levels: return "levels";
    case SectionType::WorldBounds: return "world-bounds";
  }
  return "unknown";
}

uint64_t checksum(std::span<const std::byte> bytes, uint32_t version) {
  if (version == 1) {
    Fnv1a64 h;
    h.add(bytes);
    return h.value();
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

namespace {

// A blob's file in the canonical layout: the header and section table (checksums filled in), then each section at
// the next multiple of its alignment after the one before, zero padding between.
struct FileHead {
  std::vector<std::byte> bytes;   ///< the header and the section table
  std::vector<uint64_t> offsets;  ///< per section, where its bytes begin
  uint64_t file_size = 0;
};

FileHead file_head(const Blob& blob) {
  // The writer is the library itself, so a malformed Blob is a programming error, reported as Runtime.
  const auto invalid = [](const std::string& problem) {
    throw Error(ErrorKind::Runtime, "", "cannot serialize blob: " + problem);
  };
  const std::size_t count = blob.sections.size();
  if (count > kMaxSections) invalid(detail::cat(count, " sections (limit ", kMaxSections, ")"));
  for (std::size_t i = 0; i < count; ++i) {
    const Section& s = blob.sections[i];
    if (!is_known_section_type(static_cast<uint32_t>(s.type)))
      invalid(detail::cat("section ", i, " has an unknown type"));
    if (!is_valid_alignment(s.alignment) || s.alignment % required_alignment(s.type) != 0)
      invalid(detail::cat(section_type_name(s.type), " section alignment ", s.alignment));
    for (std::size_t j = 0; j < i; ++j)
      if (blob.sections[j].type == s.type) invalid(detail::cat("duplicate ", section_type_name(s.type), " section"));
  }

  FileHead head;
  const uint64_t table_end = kFileHeaderBytes + count * kSectionEntryBytes;
  head.offsets.resize(count);
  uint64_t end = table_end;
  for (std::size_t i = 0; i < count; ++i) {
    head.offsets[i] = align_up(end, blob.sections[i].alignment);
    end = head.offsets[i] + blob.sections[i].data.size();
  }
  head.file_size = end;

  // The lowest version that holds every section: one-level blobs stay readable by readers of version 2.
  uint32_t version = 2;
  for (const Section& s : blob.sections) version = std::max(version, first_version_with(static_cast<uint32_t>(s.type)));
  std::vector<std::byte>& out = head.bytes;
  for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
  append_le32(out, version);
  append_le32(out, static_cast<uint32_t>(blob.target));
  append_le32(out, static_cast<uint32_t>(count));
  append_le32(out, 0);  // reserved
  append_le64(out, end);
  append_le64(out, 0);  // header checksum, filled in below
  for (std::size_t i = 0; i < count; ++i) {
    const Section& s = blob.sections[i];
    append_le32(out, static_cast<uint32_t>(s.type));
    append_le32(out, s.alignment);
    append_le64(out, head.offsets[i]);
    append_le64(out, s.data.size());
    append_le64(out, checksum(s.data, version));
  }
  store_le64(out, kHeaderChecksumOffset, header_checksum(out, table_end, version));
  return head;
}

}  // namespace

std::vector<std::byte> serialize(const Blob& blob) {
  FileHead head = file_head(blob);
  std::vector<std::byte> out = std::move(head.bytes);
  out.reserve(head.file_size);
  for (std::size_t i = 0; i < blob.sections.size(); ++i) {
    out.resize(head.offsets[i], std::byte{0});
    out.insert(out.end(), blob.sections[i].data.begin(), blob.sections[i].data.end());
  }
  return out;
}

Blob parse(std::span<const std::byte> bytes, const std::string& name) { return parse_impl(bytes, name, nullptr); }

Blob parse(std::span<const std::byte> bytes, const std::string& name, FileLayout& layout) {
  return parse_impl(bytes, name, &layout);
}

void write_file(const std::filesystem::path& path, const Blob& blob) { write_file(path, blob, {}); }

void write_file(const std::filesystem::path& path, const Blob& blob, const ProgressCallback& progress) {
  // Written piece by piece from the sections, never copied whole into one buffer: serialize()'s bytes, counted.
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  const FileHead head = file_head(blob);
  AtomicOutput out(path);
  ProgressCounter written(progress, "writing", head.file_size);
  out.write(head.bytes);
  written.add(head.bytes.size());
  uint64_t at = head.bytes.size();
  const std::vector<std::byte> padding(kMaxAlignment);
  for (std::size_t i = 0; i < blob.sections.size(); ++i) {
    out.write(std::span(padding).first(head.offsets[i] - at));
    written.add(head.offsets[i] - at);
    const std::span<const std::byte> data = blob.sections[i].data;
    for (std::size_t first = 0; first < data.size(); first += kPiece) {
      const std::span<const std::byte> piece = data.subspan(first, std::min(kPiece, data.size() - first));
      out.write(piece);
      written.add(piece.size());
    }
    at = head.offsets[i] + data.size();
  }
  out.commit();
  written.finish();
}

Blob read_file(const std::filesystem::path& path) { return read_impl(path, nullptr); }

Blob read_file(const std::filesystem::path& path, FileLayout& layout) { return read_impl(path, &layout); }

}  // namespace hwbvh::blob
