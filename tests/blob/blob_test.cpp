// Container round trips and every kind of corruption the reader must refuse (docs/blob-format.md).
#include "hwbvh/blob/blob.h"

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "blob/scratch_dir.h"
#include "fixtures/progress_log.h"
#include "hwbvh/blob/blob_file.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh::blob {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

std::vector<std::byte> counting_bytes(std::size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(seed)) & 0xFF);
  return out;
}

// Small but with every feature: Nodes at 128-byte alignment, odd sizes that need padding, an empty section.
Blob small_blob() {
  Blob b;
  b.target = Target::Rtip31;
  b.sections.push_back({SectionType::Nodes, kNodesAlignment, counting_bytes(256, 1)});
  b.sections.push_back({SectionType::Geometry, 16, counting_bytes(37, 2)});
  b.sections.push_back({SectionType::SceneMeta, 8, bytes_of({'{', '}'})});
  b.sections.push_back({SectionType::BuildMeta, 1, {}});
  return b;
}

std::size_t entry_offset(std::size_t index) { return kFileHeaderBytes + index * kSectionEntryBytes; }

void put32(std::vector<std::byte>& b, std::size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(v >> (8 * i));
}
void put64(std::vector<std::byte>& b, std::size_t at, uint64_t v) { store_le64(b, at, v); }

// Recomputes the header checksum after a deliberate edit, so the check under test is reached.
void reseal(std::vector<std::byte>& b) {
  const std::size_t table_end = entry_offset(load_le32(b, 16));
  std::vector<std::byte> covered(b.begin(), b.begin() + kHeaderChecksumOffset);
  covered.insert(covered.end(), b.begin() + kFileHeaderBytes, b.begin() + static_cast<std::ptrdiff_t>(table_end));
  put64(b, kHeaderChecksumOffset, checksum(covered));
}

// Expects parse to refuse `bytes` with BadInput and a message containing `needle` and the file name.
void expect_refused(const std::vector<std::byte>& bytes, const std::string& needle) {
  try {
    (void)parse(bytes, "scene.hwbvh");
    ADD_FAILURE() << "accepted; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_EQ(e.file(), "scene.hwbvh");
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

TEST(Checksum, MatchesXxh3AndVersion1Fnv1a64ReferenceValues) {
  EXPECT_EQ(checksum({}), 0x2d06800538d394c2ull);  // XXH3_64bits of no bytes, xxHash's own sanity value
  EXPECT_EQ(checksum(bytes_of({'a'})), 0xe6c632b61e964e1full);
  EXPECT_EQ(checksum(bytes_of({'f', 'o', 'o', 'b', 'a', 'r'})), 0xd78fda63144c5c84ull);
  EXPECT_EQ(checksum({}, 1), 0xcbf29ce484222325ull);
  EXPECT_EQ(checksum(bytes_of({'a'}), 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(checksum(bytes_of({'f', 'o', 'o', 'b', 'a', 'r'}), 1), 0x85944171f73967e8ull);
}

// A version-1 blob (FNV-1a checksums) written by hwbvh before version 2, committed as it was.
TEST(Blob, ReadsVersion1AndRewritesItAsTheCurrentVersion) {
  const std::filesystem::path v1 = std::filesystem::path(HWBVH_SOURCE_DIR) / "tests/blob/data/cornell-box-rtip31-v1.blob";
  std::ifstream in(v1, std::ios::binary);
  ASSERT_TRUE(in) << v1;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  ASSERT_EQ(load_le32(bytes, 8), 1u);

  FileLayout layout;
  const Blob b = read_file(v1, layout);
  EXPECT_EQ(layout.version, 1u);
  EXPECT_EQ(b.target, Target::Rtip31);
  ASSERT_EQ(b.sections.size(), 4u);
  for (std::size_t i = 0; i < b.sections.size(); ++i) {
    EXPECT_EQ(layout.sections[i].checksum, checksum(b.sections[i].data, 1));
    EXPECT_NE(layout.sections[i].checksum, checksum(b.sections[i].data));
  }
  // Its checksums are checked as FNV-1a: a changed section byte is refused.
  std::vector<std::byte> corrupted = bytes;
  corrupted[layout.sections[0].offset] ^= std::byte{1};
  expect_refused(corrupted, "section 0 (nodes): checksum mismatch");

  FileLayout rewritten;
  const Blob again = parse(serialize(b), "mem", rewritten);
  EXPECT_EQ(rewritten.version, 2u);  // one-level blobs are written as version 2 (blob.h)
  ASSERT_EQ(again.sections.size(), b.sections.size());
  for (std::size_t i = 0; i < b.sections.size(); ++i) EXPECT_EQ(again.sections[i].data, b.sections[i].data);
}

TEST(Blob, RoundTripKeepsTargetSectionsAndAlignment) {
  const Blob in = small_blob();
  const std::vector<std::byte> bytes = serialize(in);
  FileLayout layout;
  const Blob out = parse(bytes, "mem", layout);
  EXPECT_EQ(out.target, in.target);
  ASSERT_EQ(out.sections.size(), in.sections.size());
  for (std::size_t i = 0; i < in.sections.size(); ++i) {
    EXPECT_EQ(out.sections[i].type, in.sections[i].type);
    EXPECT_EQ(out.sections[i].alignment, in.sections[i].alignment);
    EXPECT_EQ(out.sections[i].data, in.sections[i].data);
    EXPECT_EQ(layout.sections[i].offset % in.sections[i].alignment, 0u);
    EXPECT_EQ(layout.sections[i].size, in.sections[i].data.size());
    EXPECT_EQ(layout.sections[i].checksum, checksum(in.sections[i].data));
  }
  EXPECT_EQ(layout.file_size, bytes.size());
}

TEST(Blob, LayoutIsCanonicalAndDocumented) {
  // docs/blob-format.md: header (40) + table (32 per section), then sections in table order at their alignment.
  const std::vector<std::byte> bytes = serialize(small_blob());
  EXPECT_EQ(std::memcmp(bytes.data(), "HWBVH\r\n\x1a", 8), 0);
  EXPECT_EQ(load_le32(bytes, 8), 2u);  // no two-level section: version 2
  EXPECT_EQ(load_le32(bytes, 12), 1u);
  EXPECT_EQ(load_le32(bytes, 16), 4u);
  EXPECT_EQ(load_le64(bytes, 24), bytes.size());
  EXPECT_EQ(load_le64(bytes, entry_offset(0) + 8), 256u);          // table ends at 168 -> next 128 multiple
  EXPECT_EQ(load_le64(bytes, entry_offset(1) + 8), 256u + 256u);   // 512, already 16-aligned
  EXPECT_EQ(load_le64(bytes, entry_offset(2) + 8), 552u);          // 512 + 37 = 549 -> 552
  EXPECT_EQ(load_le64(bytes, entry_offset(3) + 8), 554u);
  EXPECT_EQ(bytes.size(), 554u);
}

TEST(Blob, EmptyBlobRoundTrips) {
  Blob in;
  in.target = Target::Xe3;
  const Blob out = parse(serialize(in), "mem");
  EXPECT_EQ(out.target, Target::Xe3);
  EXPECT_TRUE(out.sections.empty());
}

TEST(Blob, FindAndRequire) {
  const Blob b = small_blob();
  ASSERT_NE(b.find(SectionType::Geometry), nullptr);
  EXPECT_EQ(b.find(SectionType::Geometry)->data.size(), 37u);
  Blob without = b;
  without.sections.pop_back();
  EXPECT_EQ(without.find(SectionType::BuildMeta), nullptr);
  try {
    (void)without.require(SectionType::BuildMeta, "x.hwbvh");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), HasSubstr("x.hwbvh: has no build-meta section"));
  }
}

TEST(Blob, SerializeRefusesMalformedBlobs) {
  Blob dup = small_blob();
  dup.sections.push_back(dup.sections[0]);
  EXPECT_THROW((void)serialize(dup), Error);
  Blob misaligned_nodes = small_blob();
  misaligned_nodes.sections[0].alignment = 16;
  EXPECT_THROW((void)serialize(misaligned_nodes), Error);
  Blob odd_alignment = small_blob();
  odd_alignment.sections[1].alignment = 12;
  EXPECT_THROW((void)serialize(odd_alignment), Error);
}

TEST(BlobCorruption, EveryTruncationIsRefused) {
  const std::vector<std::byte> bytes = serialize(small_blob());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      (void)parse(cut, "cut.hwbvh");
      ADD_FAILURE() << "accepted a file truncated to " << n << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      if (n >= 12) {
        EXPECT_THAT(e.what(), HasSubstr("truncated")) << n;
      }
    }
  }
}

TEST(BlobCorruption, EveryBitFlipIsRefused) {
  const std::vector<std::byte> bytes = serialize(small_blob());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::byte> flipped = bytes;
      flipped[i] ^= static_cast<std::byte>(1 << bit);
      EXPECT_THROW((void)parse(flipped, "flip.hwbvh"), Error) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(BlobCorruption, HeaderFields) {
  const std::vector<std::byte> good = serialize(small_blob());
  auto edit = [&](auto&& change) {
    std::vector<std::byte> b = good;
    change(b);
    return b;
  };
  expect_refused(edit([](auto& b) { b[0] = std::byte{'X'}; }), "not an hwbvh blob (bad magic)");
  expect_refused(bytes_of({'{', '"', 'a', '"'}), "bad magic");
  expect_refused({}, "empty file");
  expect_refused(edit([](auto& b) { put32(b, 8, 5); }), "unsupported format version 5 (this hwbvh reads versions 1 to 4)");
  expect_refused(edit([](auto& b) { put32(b, 8, 0); }), "unsupported format version 0");
  expect_refused(edit([](auto& b) { put32(b, 12, 9); reseal(b); }), "unknown target 9");
  expect_refused(edit([](auto& b) { put32(b, 12, 0); reseal(b); }), "unknown target 0");
  expect_refused(edit([](auto& b) { put32(b, 12, 2); }), "header checksum mismatch");
  expect_refused(edit([](auto& b) { put32(b, 16, 3); reseal(b); }), "non-zero padding byte");
  expect_refused(edit([](auto& b) { put32(b, 16, 64); }), "truncated: 554 bytes, the section table ends at byte 2088");
  expect_refused(edit([](auto& b) { put32(b, 16, 0xFFFFFFFF); }), "section count 4294967295 exceeds the limit");
  expect_refused(edit([](auto& b) { put32(b, 20, 1); reseal(b); }), "reserved header field");
  expect_refused(edit([](auto& b) { put64(b, 24, b.size() + 1); }), "truncated");
  expect_refused(edit([](auto& b) { put64(b, 24, b.size() - 1); }), "trailing data");
  expect_refused(edit([](auto& b) { b.push_back(std::byte{0}); }), "trailing data");
  expect_refused(edit([](auto& b) { put64(b, kHeaderChecksumOffset, 0); }), "header checksum mismatch");
}

TEST(BlobCorruption, TextModeTransferIsNamed) {
  std::vector<std::byte> crlf_to_lf = serialize(small_blob());
  crlf_to_lf.erase(crlf_to_lf.begin() + 5);  // "\r\n" -> "\n"
  expect_refused(crlf_to_lf, "text-mode transfer");
  std::vector<std::byte> lf_to_crlf = serialize(small_blob());
  lf_to_crlf.insert(lf_to_crlf.begin() + 6, std::byte{'\r'});  // "\r\n" -> "\r\r\n"
  expect_refused(lf_to_crlf, "text-mode transfer");
}

TEST(BlobCorruption, SectionEntries) {
  const std::vector<std::byte> good = serialize(small_blob());
  const std::size_t e0 = entry_offset(0), e1 = entry_offset(1);
  auto edit = [&](auto&& change) {
    std::vector<std::byte> b = good;
    change(b);
    reseal(b);
    return b;
  };
  expect_refused(edit([&](auto& b) { put32(b, e1, 77); }), "section 1: unknown section type 77");
  expect_refused(edit([&](auto& b) { put32(b, e1, 1); }), "duplicate nodes section (table entries 0 and 1)");
  expect_refused(edit([&](auto& b) { put32(b, e1 + 4, 0); }), "alignment 0 is not a power of two");
  expect_refused(edit([&](auto& b) { put32(b, e1 + 4, 24); }), "alignment 24 is not a power of two");
  expect_refused(edit([&](auto& b) { put32(b, e1 + 4, 8192); }), "alignment 8192 is not a power of two");
  expect_refused(edit([&](auto& b) { put32(b, e0 + 4, 64); }),
                 "section 0 (nodes): alignment 64 is below the required 128");
  expect_refused(edit([&](auto& b) { put32(b, e1 + 4, 1024); }),
                 "offset 512 is not a multiple of its alignment 1024");
  expect_refused(edit([&](auto& b) { put32(b, entry_offset(2) + 4, 16); }),
                 "section 2 (scene-meta): offset 552 is not a multiple");
  // Out of range and overflowing offsets and sizes.
  expect_refused(edit([&](auto& b) { put64(b, e1 + 8, b.size() + 16); }), "runs past the end of the file");
  expect_refused(edit([&](auto& b) { put64(b, e1 + 8, ~uint64_t{0} - 15); }), "runs past the end of the file");
  expect_refused(edit([&](auto& b) { put64(b, e1 + 16, ~uint64_t{0}); }), "runs past the end of the file");
  expect_refused(edit([&](auto& b) { put64(b, e1 + 16, ~uint64_t{0} - 500); }), "runs past the end of the file");
  expect_refused(edit([&](auto& b) { put64(b, e1 + 16, 38); }), "checksum mismatch");  // eats one padding byte
  expect_refused(edit([&](auto& b) { put64(b, e1 + 16, 36); }), "non-zero padding byte at offset 548");
  expect_refused(edit([&](auto& b) { put64(b, e0 + 8, 0); }), "lies inside the file header or section table");
  expect_refused(edit([&](auto& b) { put64(b, e1 + 8, 384); }), "sections 0 and 1 overlap");
  expect_refused(edit([&](auto& b) { put64(b, e1 + 24, 0); }), "section 1 (geometry): checksum mismatch");
}

TEST(BlobCorruption, EverySectionByteIsCoveredByItsChecksum) {
  std::vector<std::byte> b = serialize(small_blob());
  b[300] ^= std::byte{0x40};  // inside the nodes section (256..511)
  expect_refused(b, "section 0 (nodes): checksum mismatch");
}

TEST(BlobFile, WriteReadRoundTripLeavesOnlyTheFile) {
  test::ScratchDir dir("blob-file");
  const auto path = dir / "out.hwbvh";
  write_file(path, small_blob());
  EXPECT_EQ(dir.files(), std::vector<std::string>{"out.hwbvh"});
  FileLayout layout;
  const Blob back = read_file(path, layout);
  EXPECT_EQ(back.sections.size(), 4u);
  EXPECT_EQ(layout.file_size, std::filesystem::file_size(path));
  // Overwriting replaces the file as a whole.
  Blob smaller;
  write_file(path, smaller);
  EXPECT_TRUE(read_file(path).sections.empty());
  EXPECT_EQ(dir.files(), std::vector<std::string>{"out.hwbvh"});
}

// Written with a listener, the file is serialize()'s bytes, streamed from the sections: "writing" counts them from 0
// to the file's size, piece by piece (a 20 MiB section is three 8 MiB pieces).
TEST(BlobFile, WritingWithProgressCountsTheFilesBytesAndWritesTheSameBytes) {
  test::ScratchDir dir("blob-progress");
  Blob b = small_blob();
  b.sections[0].data = counting_bytes(std::size_t{20} << 20, 3);
  test::ProgressLog log;
  write_file(dir / "heard.hwbvh", b, log.callback());
  write_file(dir / "unheard.hwbvh", b);
  const std::vector<std::byte> expected = serialize(b);
  EXPECT_EQ(read_file_bytes(dir / "heard.hwbvh"), expected);
  EXPECT_EQ(read_file_bytes(dir / "unheard.hwbvh"), expected);
  EXPECT_EQ(log.phases, std::vector<std::string>{"writing"});
  log.expect_counted("writing");
  EXPECT_EQ(log.reports.at("writing").back().second, expected.size());
  EXPECT_GE(log.reports.at("writing").size(), 5u);  // 0, the header and table, the nodes' three pieces, ...
}

TEST(BlobFile, FailedWriteLeavesNoFileAndThrowsRuntime) {
  test::ScratchDir dir("blob-fail");
  const auto path = dir / "missing-dir" / "out.hwbvh";
  try {
    write_file(path, small_blob());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_THAT(e.what(), HasSubstr("out.hwbvh"));
  }
  EXPECT_TRUE(dir.files().empty());
  // A directory in the way: the temporary is written, the rename fails, and the temporary is removed.
  std::filesystem::create_directory(dir / "taken.hwbvh");
  std::filesystem::create_directory(dir / "taken.hwbvh" / "child");
  EXPECT_THROW(write_file(dir / "taken.hwbvh", small_blob()), Error);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"taken.hwbvh"});
}

TEST(BlobFile, ReadErrorsNameTheFile) {
  test::ScratchDir dir("blob-read");
  try {
    (void)read_file(dir / "nope.hwbvh");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), HasSubstr("nope.hwbvh: cannot open"));
  }
  std::ofstream(dir / "garbage.hwbvh") << "v 1 2 3\nf 1 2 3\n";
  try {
    (void)read_file(dir / "garbage.hwbvh");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), HasSubstr("garbage.hwbvh: not an hwbvh blob"));
  }
  try {
    (void)read_file(dir.path());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  }
}

TEST(Bytes, LittleEndianHelpers) {
  std::vector<std::byte> b;
  append_le32(b, 0x11223344u);
  append_le64(b, 0x0102030405060708ull);
  EXPECT_EQ(b, bytes_of({0x44, 0x33, 0x22, 0x11, 8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(load_le32(b, 0), 0x11223344u);
  EXPECT_EQ(load_le64(b, 4), 0x0102030405060708ull);
  const std::vector<uint32_t> dw = {0xDEADBEEFu, 7u};
  EXPECT_EQ(bytes_to_dwords(dwords_to_bytes(dw)), dw);
}

TEST(Blob, TwoLevelSectionsAreWrittenAsVersion3AndRefusedInOlderVersions) {
  Blob b = small_blob();
  b.sections.push_back({SectionType::Levels, 16, std::vector<std::byte>(16, std::byte{0})});
  std::vector<std::byte> bytes = serialize(b);
  FileLayout layout;
  (void)parse(bytes, "mem", layout);
  EXPECT_EQ(layout.version, 3u);
  // The same file claiming version 2 (header checksum redone in version 2's XXH3): section type 8 is unknown there.
  put32(bytes, 8, 2);
  const std::size_t table_end = kFileHeaderBytes + b.sections.size() * kSectionEntryBytes;
  std::vector<std::byte> covered(bytes.begin(), bytes.begin() + kHeaderChecksumOffset);  // docs/blob-format.md §3
  covered.insert(covered.end(), bytes.begin() + kFileHeaderBytes, bytes.begin() + static_cast<std::ptrdiff_t>(table_end));
  store_le64(bytes, kHeaderChecksumOffset, checksum(covered, 2));
  expect_refused(bytes, "unknown section type 8 for format version 2");
}

TEST(Blob, WorldBoundsAreWrittenAsVersion4AndRefusedInOlderVersions) {
  Blob b = small_blob();
  const Aabb box{{-1.5f, 0.0f, 2.0f}, {3.0f, 0.25f, 2.0f}};
  b.sections.push_back({SectionType::WorldBounds, 16, encode_world_bounds(box)});
  std::vector<std::byte> bytes = serialize(b);
  FileLayout layout;
  const Blob back = parse(bytes, "mem", layout);
  EXPECT_EQ(layout.version, 4u);
  EXPECT_EQ(decode_world_bounds(back.require(SectionType::WorldBounds, "mem").data, "mem"), box);
  put32(bytes, 8, 3);
  const std::size_t table_end = kFileHeaderBytes + b.sections.size() * kSectionEntryBytes;
  std::vector<std::byte> covered(bytes.begin(), bytes.begin() + kHeaderChecksumOffset);
  covered.insert(covered.end(), bytes.begin() + kFileHeaderBytes, bytes.begin() + static_cast<std::ptrdiff_t>(table_end));
  store_le64(bytes, kHeaderChecksumOffset, checksum(covered, 3));
  expect_refused(bytes, "unknown section type 9 for format version 3");
}

TEST(Blob, WorldBoundsMustBeAFiniteBoxOf24Bytes) {
  const auto refused = [](std::vector<std::byte> bytes, const std::string& needle) {
    try {
      (void)decode_world_bounds(bytes, "w.hwbvh");
      ADD_FAILURE() << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::vector<std::byte> good = encode_world_bounds(Aabb{{0, 0, 0}, {1, 1, 1}});
  refused(std::vector<std::byte>(good.begin(), good.end() - 4), "20 bytes, not 24");
  std::vector<std::byte> inverted = encode_world_bounds(Aabb{{2, 0, 0}, {1, 1, 1}});
  refused(inverted, "min <= max");
  std::vector<std::byte> infinite = good;
  put32(infinite, 12, 0x7F800000u);
  refused(infinite, "finite");
}

}  // namespace
}  // namespace hwbvh::blob
