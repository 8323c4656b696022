// Hostile .rra files: each is refused with a clear message (hwbvh::Error, BadInput), never a crash. Built by
// changing bytes of the golden one-triangle file (tests/rra/golden/one-triangle.rra, layout in docs/rra.md), of
// its zstd-compressed export, of its copy with a two-ray history (one-triangle-history.rra), or of a small
// two-level capture (a TLAS and two BLASes).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>

#include <glm/gtc/matrix_transform.hpp>

#include "fixtures/paths.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/rra/rra.h"

namespace hwbvh::rra {
namespace {

std::vector<std::byte> golden(const std::string& file = "one-triangle.rra") {
  std::ifstream in(test::source_dir() / "tests/rra/golden" / file, std::ios::binary);
  EXPECT_TRUE(in) << "missing golden file";
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

// Golden file offsets: the RawAccelStruct chunk's table entry is the third; its data starts at byte 636.
constexpr std::size_t kTable = 2208, kAccelEntry = kTable + 2 * 64, kAccelData = 636;
constexpr std::size_t kAsHeader = kAccelData + 128, kRoot = kAccelData + 256;

void put32(std::vector<std::byte>& b, std::size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(v >> (8 * i));
}

// The golden file exported again with --compress.
std::vector<std::byte> compressed() { return export_blob(to_blob(parse(golden(), "g.rra"), "g.rra"), "g", {true}); }

// Offset of the chunk-table entry named `name`.
std::size_t entry_of(const std::vector<std::byte>& b, const std::string& name) {
  const std::size_t table = blob::load_le32(b, 16), size = blob::load_le32(b, 24);
  for (std::size_t e = table; e < table + size; e += 64)
    if (std::string(reinterpret_cast<const char*>(b.data() + e)) == name) return e;
  ADD_FAILURE() << "no chunk " << name;
  return 0;
}

void expect_refused(const std::function<void(std::vector<std::byte>&)>& change, const std::string& words,
                    std::vector<std::byte> bytes = golden()) {
  change(bytes);
  try {
    (void)to_blob(parse(bytes, "hostile.rra"), "hostile.rra");
    FAIL() << "accepted; expected: " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(HostileRra, GoldenFileIsAccepted) { EXPECT_NO_THROW((void)to_blob(parse(golden(), "g.rra"), "g.rra")); }

TEST(HostileRra, TruncatedFilesAreRefused) {
  for (std::size_t keep : {0ul, 7ul, 20ul, 600ul, 2300ul})
    expect_refused([&](auto& b) { b.resize(keep); }, keep < 8 ? "no \"AMD_RDF \" magic" : keep < 32 ? "truncated" : "outside the file");
}

TEST(HostileRra, OffsetsOutOfRangeAreRefused) {
  expect_refused([](auto& b) { put32(b, 16, 0xFFFFFF00u); }, "chunk table");
  expect_refused([](auto& b) { put32(b, 24, 100); }, "not a multiple of 64");
  expect_refused([](auto& b) { put32(b, kAccelEntry + 40, 0x7FFFFFF0u); }, "outside the file");
  expect_refused([](auto& b) { put32(b, kAccelData - 28 + 16, 0xFFFFFF00u); }, "outside the chunk");
  expect_refused([](auto& b) { put32(b, kAsHeader + 40, 4096); }, "not ascending");
}

TEST(HostileRra, ChunkSizesThatLieAreRefused) {
  expect_refused([](auto& b) { put32(b, kAccelEntry + 48, 200); }, "outside the chunk");  // data smaller than said
  expect_refused([](auto& b) { put32(b, kAccelEntry + 32, 4); }, "chunk header of 4 bytes");
  expect_refused([](auto& b) { put32(b, kAsHeader + 12, 5); }, "need 288 bytes");  // header claims 5 primitives
}

TEST(HostileRra, ChildPointersOutOfRangeAreRefused) {
  // The root's one child is a triangle pair at leaf base 0x20; child info 0's DW2 is at root byte 40.
  expect_refused([](auto& b) { put32(b, kRoot + 4, 0x0FFFFFF0u); }, "points outside the node data");
  expect_refused([](auto& b) { put32(b, kRoot + 40, 0x16000fffu); }, "node type 6");
  expect_refused([](auto& b) { put32(b, kRoot + 40, 0x15000fffu); put32(b, kRoot, 0x10); }, "reached twice");
}

TEST(HostileRra, WrongRtIpLevelIsRefused) {
  expect_refused([](auto& b) { put32(b, kAsHeader + 72, 3); }, "RT IP level 3");
  expect_refused([](auto& b) { put32(b, kAsHeader + 4, 64); }, "metadata size 64");
  expect_refused([](auto& b) { put32(b, kAccelEntry + 20, 0x110000u); }, "major version");
}

TEST(HostileRra, BadCompressedChunksAreRefused) {
  const std::vector<std::byte> zstd = compressed();
  EXPECT_NO_THROW((void)to_blob(parse(zstd, "z.rra"), "z.rra"));
  const std::size_t accel = entry_of(zstd, kAccelStructChunk), sections = entry_of(zstd, kHwbvhSectionsChunk);
  const std::size_t data = blob::load_le32(zstd, accel + 40);
  // A size no zstd frame of these bytes can reach (above 32768 x the stored size) is refused before anything is
  // allocated; the largest size allowed gets as far as the frame's own size.
  const uint64_t most = uint64_t{blob::load_le32(zstd, accel + 48)} * 32768;
  const auto put64 = [](auto& b, std::size_t at, uint64_t v) {
    put32(b, at, static_cast<uint32_t>(v));
    put32(b, at + 4, static_cast<uint32_t>(v >> 32));
  };
  expect_refused([&](auto& b) { put64(b, accel + 56, most + 1); }, "more than zstd can expand", zstd);
  expect_refused([&](auto& b) { put64(b, accel + 56, most); }, "the zstd frame holds", zstd);
  expect_refused([&](auto& b) { put32(b, accel + 60, 0x100); }, "more than zstd can expand", zstd);
  expect_refused([&](auto& b) { put32(b, sections + 56, 5); }, "the zstd frame holds", zstd);
  expect_refused([&](auto& b) { put32(b, accel + 16, 2); }, "compression method 2", zstd);
  expect_refused([&](auto& b) { put32(b, data, 0); }, "not a zstd frame", zstd);  // the frame's magic
  expect_refused([&](auto& b) { put32(b, accel + 48, blob::load_le32(b, accel + 48) - 8); }, "zstd:", zstd);
  expect_refused([&](auto& b) { put32(b, data + 20, 0xFFFFFFFFu); put32(b, data + 24, 0xFFFFFFFFu); }, "zstd",
                 zstd);
}

// The history golden file: two rays of 104 token bytes each (begin: id, control, 16 dwords; end2: id, control,
// 6 dwords), after a 136-byte metadata chunk of three records (docs/rra.md §6).
TEST(HostileRra, BadRayHistoryChunksAreRefused) {
  const std::vector<std::byte> history = golden("one-triangle-history.rra");
  EXPECT_EQ(parse(history, "h.rra").ray_history.at(0).rays.size(), 2u);
  const std::size_t meta_entry = entry_of(history, kHistoryMetadataChunk);
  const std::size_t tokens_entry = entry_of(history, kHistoryTokensChunk);
  const std::size_t meta = blob::load_le32(history, meta_entry + 40);
  const std::size_t tokens = blob::load_le32(history, tokens_entry + 40);
  const auto refused = [&](const std::function<void(std::vector<std::byte>&)>& change, const std::string& words) {
    expect_refused(change, words, history);
  };
  // Metadata: RRA's records and the counter info it reads the dispatch from.
  refused([&](auto& b) { put32(b, meta + 8, 0x10000); }, "past the chunk's end");
  refused([&](auto& b) { put32(b, meta, 7); }, "no counter info record");
  refused([&](auto& b) { put32(b, meta + 16 + 8, 2); }, "dispatch depth 2");
  refused([&](auto& b) { put32(b, meta + 16 + 48, 12); }, "12 token bytes lost");
  refused([&](auto& b) { put32(b, meta + 80 + 16, 3); }, "disagrees with the counter info");
  refused([&](auto& b) { put32(b, meta + 16, 0x40000000u); put32(b, meta + 20, 2); }, "more rays than 30-bit ids");
  refused([&](auto& b) { put32(b, meta_entry + 48, 10); }, "truncated record");
  refused([&](auto& b) { put32(b, tokens_entry + 20, 0x30000); }, "major version");
  refused([&](auto& b) { b[meta_entry] = std::byte{'X'}; }, "need one of each");
  // Tokens: inside the chunk, ids inside the dispatch, each ray begin ... end.
  refused([&](auto& b) { put32(b, tokens_entry + 48, 100); }, "payload dwords, past the chunk's end");
  refused([&](auto& b) { put32(b, tokens_entry + 48, 180); }, "truncated");
  refused([&](auto& b) { put32(b, tokens_entry + 48, 72); }, "1 rays without an end token, the first ray 0");
  refused([&](auto& b) { put32(b, tokens, 0x80000005u); }, "ray id 5 outside the 2x1 dispatch");
  refused([&](auto& b) { put32(b, tokens + 12, 1); }, "begin token at coordinate (1, 0, 0)");
  refused([&](auto& b) { put32(b, tokens + 4, 0x000F0000u); }, "15 payload dwords, the type has 16");
  refused([&](auto& b) { put32(b, tokens + 72, 0x80000001u); }, "ray 1: a token of type 9 before its begin token");
  refused([&](auto& b) { put32(b, tokens + 76, 0x00060006u); put32(b, tokens + 104, 0x80000000u); },
          "ray 0: a begin token before the previous ray's end token");  // ray 0's end made an any-hit status token
  refused([&](auto& b) { put32(b, tokens + 104, 1); }, "ray 1: a node token outside");
}

// A two-level file: three instances of one triangle's BLAS and one of a quad's, exported as a driver would write
// it (no HwbvhSections chunk: the reader takes everything from the TLAS and BLAS chunks).
std::vector<std::byte> instanced() {
  static const std::vector<std::byte> file = [] {
    InstancedScene s;
    s.source = "two-meshes";
    Scene triangle = load_obj_from_memory("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "triangle.obj");
    Scene quad = load_obj_from_memory("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n", "quad.obj");
    s.meshes = {std::move(triangle), std::move(quad)};
    for (uint32_t i = 0; i < 4; ++i) {
      s.instances.push_back({.name = "i",
                             .mesh = i / 3,
                             .world = glm::translate(glm::dmat4(1.0), glm::dvec3(2.0 * i, 0, 0)),
                             .instance_id = i});
    }
    const blob::Blob b = pipeline::build_instanced_blob(s, {}).blob;
    return serialize(accel_structs_from_blob(b, "two-meshes"), {});
  }();
  return file;
}

// Chunk-table entry of the `k`-th RawAccelStruct chunk (0: the TLAS, then the BLASes).
std::size_t accel_entry(const std::vector<std::byte>& b, std::size_t k) {
  const std::size_t table = blob::load_le32(b, 16);
  return table + (2 + k) * 64;
}
std::size_t accel_data(const std::vector<std::byte>& b, std::size_t k) { return blob::load_le32(b, accel_entry(b, k) + 40); }
// File offset of instance node `i`'s byte `byte` in the TLAS chunk.
std::size_t instance_byte(const std::vector<std::byte>& b, uint32_t i, std::size_t byte) {
  const std::size_t data = accel_data(b, 0);
  return data + 128 + blob::load_le32(b, data + 128 + 36) + 128 * i + byte;
}

TEST(HostileRra, InstancedCaptureIsAccepted) {
  const blob::Blob b = to_blob(parse(instanced(), "i.rra"), "i.rra");
  EXPECT_NE(b.find(blob::SectionType::Levels), nullptr);
  EXPECT_NE(b.find(blob::SectionType::InstanceSideband), nullptr);
}

TEST(HostileRra, BadInstanceNodesAreRefused) {
  const auto put64 = [](auto& b, std::size_t at, uint64_t v) {
    put32(b, at, static_cast<uint32_t>(v));
    put32(b, at + 4, static_cast<uint32_t>(v >> 32));
  };
  const std::vector<std::byte> file = instanced();
  const uint64_t base = blob::load_le64(file, instance_byte(file, 1, 48));
  // The BLAS address: one node off, the TLAS itself, nothing.
  expect_refused([&](auto& b) { put64(b, instance_byte(b, 1, 48), base + 16); }, "the header of no BLAS chunk", file);
  expect_refused([&](auto& b) { put64(b, instance_byte(b, 1, 48), (uint64_t{1} << 32 | 128) >> 3); },
                 "the header of no BLAS chunk", file);
  expect_refused([&](auto& b) { put64(b, instance_byte(b, 1, 48), 0); }, "the header of no BLAS chunk", file);
  // The TLAS header: instance nodes not where its offsets say, a sideband too short, a chunk cut short.
  const std::size_t header = accel_data(file, 0) + 128;
  expect_refused([&](auto& b) { put32(b, header + 36, blob::load_le32(b, header + 36) + 128); }, "instance nodes at",
                 file);
  expect_refused([&](auto& b) { put32(b, header + 44, blob::load_le32(b, header + 44) - 64); },
                 "instance sideband of", file);
  expect_refused([&](auto& b) { put32(b, accel_entry(b, 0) + 48, blob::load_le32(b, accel_entry(b, 0) + 48) - 100); },
                 "instance sideband", file);
  // Sideband records: a non-finite matrix, two instances with the same index.
  const std::size_t sideband = header + blob::load_le32(file, header + 40);
  expect_refused([&](auto& b) { put32(b, sideband + 64 + 16, 0x7FC00000u); }, "non-finite", file);
  expect_refused([&](auto& b) { put32(b, sideband + 64, 0); }, "instance index", file);
  // A BLAS chunk flagged top level; the TLAS dropped from the chunk table (several BLASes, nothing placing them).
  expect_refused([&](auto& b) { put32(b, accel_data(b, 1) - 4, 0); }, "disagree on top or bottom level", file);
  expect_refused(
      [&](auto& b) {
        const std::size_t entry = accel_entry(b, 0);
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(entry), b.begin() + static_cast<std::ptrdiff_t>(entry + 64));
        put32(b, 24, blob::load_le32(b, 24) - 64);
      },
      "BLASes and no top-level structure", file);
}

}  // namespace
}  // namespace hwbvh::rra
