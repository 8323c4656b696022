#pragma once
// The .hwbvh container: little-endian; magic, format version, target, section table, one checksum per
// section. Layout in docs/blob-format.md (readable without this library). Files are written to a temporary
// name and renamed, so a failed write never leaves a partial file. The reader checks every offset, size and
// checksum before use and refuses unknown versions and targets with a clear message.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace hwbvh::blob {

/// The newest version: 3 adds the two-level sections (InstanceSideband, Levels) and the node-section header's
/// instance count, 4 the WorldBounds section; a blob is written in the lowest version that has all its sections
/// (one-level blobs: 2, which older readers read). Version 1 differs from 2 only in its checksum (FNV-1a) and is
/// still read.
inline constexpr uint32_t kFormatVersion = 4;
inline constexpr uint32_t kOldestReadableVersion = 1;

enum class Target : uint32_t {
  Rtip31 = 1,  ///< AMD RDNA 4 (RT IP 3.1) BVH8 compressed format
  Rtip20 = 2,  ///< AMD RDNA 2/3 (RT IP 2.0) BVH4
  Xe3 = 3,     ///< Intel Xe3 QBVH6 + QuadLeaf/STOC
};

enum class SectionType : uint32_t {
  Nodes = 1,      ///< the node array exactly as the GPU reads it
  Geometry = 2,   ///< source triangles (positions + ids) for the oracle and tools; binary, see docs
  SceneMeta = 3,  ///< JSON: source file, geometries (names, triangle counts, bounds), degenerate count
  BuildMeta = 4,  ///< JSON: build options and statistics
  AlphaTest = 5,  ///< the any-hit shader's data: cutoff, alpha textures, per-triangle texture and UVs (opacity_sections.h)
  Stoc = 6,       ///< rtip31 STOC sideband: per alpha-tested triangle its sub-triangle states (opacity_sections.h)
  InstanceSideband = 7,  ///< two-level: GPURT's 64-byte record per instance node (instance_sections.h)
  Levels = 8,     ///< two-level: BLAS ranges in the Nodes section, per instance node its BLAS and mask
  WorldBounds = 9,  ///< two-level: the exact world-space box of the scene's triangles (instance_sections.h)
};

struct Section {
  SectionType type{};
  uint32_t alignment = 16;  ///< required alignment of the section's file offset (Nodes: 128)
  std::vector<std::byte> data;
};

struct Blob {
  Target target = Target::Rtip31;
  std::vector<Section> sections;
  /// The section of this type, or nullptr.
  [[nodiscard]] const Section* find(SectionType type) const;
  /// Same, but throws hwbvh::Error(BadInput) naming `file` if absent.
  [[nodiscard]] const Section& require(SectionType type, const std::string& file) const;
};

const char* target_name(Target t);  ///< "rtip31", "rtip20", "xe3"
/// "nodes", "geometry", "scene-meta", "build-meta", "alpha-test", "stoc", "instance-sideband", "levels",
/// "world-bounds"
const char* section_type_name(SectionType t);

// File layout constants (docs/blob-format.md §2, §3). Exposed for tools and tests that inspect raw bytes.
inline constexpr char kMagic[8] = {'H', 'W', 'B', 'V', 'H', '\r', '\n', '\x1a'};
inline constexpr std::size_t kFileHeaderBytes = 40;  ///< magic, version, target, count, reserved, size, checksum
inline constexpr std::size_t kHeaderChecksumOffset = 32;  ///< u64 header checksum field inside the file header
inline constexpr std::size_t kSectionEntryBytes = 32;     ///< type, alignment, offset, size, checksum
inline constexpr uint32_t kMaxSections = 64;
inline constexpr uint32_t kMaxAlignment = 4096;
inline constexpr uint32_t kNodesAlignment = 128;  ///< Nodes sections start 128-byte aligned (a GPU node stride)

/// The checksum of every section, and of the file header + section table, in format `version`: XXH3-64 with
/// seed 0 from version 2 on, 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) in version 1.
uint64_t checksum(std::span<const std::byte> bytes, uint32_t version = kFormatVersion);

/// Where a section sits in a file, as recorded in its section table (reported by `hwbvh info`).
struct SectionEntry {
  SectionType type{};
  uint32_t alignment = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

struct FileLayout {
  uint32_t version = kFormatVersion;  ///< the file's format version
  uint64_t file_size = 0;
  std::vector<SectionEntry> sections;  ///< in section-table order
};

/// Serialises to bytes in the canonical layout (sections in order, each at its alignment, zero padding).
/// Throws hwbvh::Error(Runtime) for a blob that cannot be written: more than kMaxSections sections, a section
/// type twice, or an alignment that is not a power of two up to kMaxAlignment (Nodes: a multiple of 128).
std::vector<std::byte> serialize(const Blob& blob);
/// Parses and validates bytes; `name` is used in messages. Throws hwbvh::Error(BadInput).
Blob parse(std::span<const std::byte> bytes, const std::string& name);
/// Same, and also reports the file's section table in `layout`.
Blob parse(std::span<const std::byte> bytes, const std::string& name, FileLayout& layout);

/// Writes atomically: a temporary file in the same directory, then rename. Throws hwbvh::Error(Runtime).
void write_file(const std::filesystem::path& path, const Blob& blob);
/// Reads and validates; throws hwbvh::Error(BadInput) naming the file and the problem.
Blob read_file(const std::filesystem::path& path);
/// Same, and also reports the file's section table in `layout`.
Blob read_file(const std::filesystem::path& path, FileLayout& layout);

}  // namespace hwbvh::blob
