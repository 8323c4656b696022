// Hostile containers: offsets and sizes out of range and huge counts in the blob header, the section table, the
// Geometry section, the node-section header and rays files. Each is refused with hwbvh::Error(BadInput) naming the
// file and the problem — before anything is allocated for the count it claims.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "../fuzz/reseal.h"
#include "hostile/hostile_blobs.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/scene/rays_file.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;

// Section-table entry i, field at `field` bytes into it (docs/blob-format.md §3).
constexpr std::size_t entry(std::size_t i, std::size_t field) { return blob::kFileHeaderBytes + 32 * i + field; }
constexpr std::size_t kOffsetField = 8, kSizeField = 16;

template <class F>
void expect_bad_input(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("hostile.hwbvh")) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

void expect_refused(std::vector<std::byte> bytes, const std::string& needle) {
  const std::vector<std::byte> sealed = fuzz::reseal(bytes);
  expect_bad_input([&] { (void)blob::parse(sealed, "hostile.hwbvh"); }, needle);
}

TEST(HostileContainer, SectionOffsetPastTheEnd) {
  std::vector<std::byte> bytes = test::sample_bytes();
  test::put64(bytes, entry(0, kOffsetField), bytes.size() + 128);
  expect_refused(bytes, "runs past the end of the file");
}

TEST(HostileContainer, SectionOffsetAndSizeThatWrapAround) {
  std::vector<std::byte> bytes = test::sample_bytes();
  // offset + size overflows 64 bits to a small number: must not pass as "inside the file".
  test::put64(bytes, entry(1, kSizeField), std::numeric_limits<uint64_t>::max() - 15);
  expect_refused(bytes, "runs past the end of the file");
  bytes = test::sample_bytes();
  test::put64(bytes, entry(1, kOffsetField), uint64_t{1} << 63);
  expect_refused(bytes, "runs past the end of the file");
}

TEST(HostileContainer, SectionOffsetInsideTheHeader) {
  std::vector<std::byte> bytes = test::sample_bytes();
  test::put64(bytes, entry(1, kOffsetField), 0);
  expect_refused(bytes, "lies inside the file header or section table");
}

TEST(HostileContainer, SectionsThatOverlap) {
  std::vector<std::byte> bytes = test::sample_bytes();
  test::put64(bytes, entry(1, kOffsetField), blob::load_le64(bytes, entry(0, kOffsetField)));
  expect_refused(bytes, "overlap");
}

TEST(HostileContainer, HugeSectionCounts) {
  std::vector<std::byte> bytes = test::sample_bytes();
  test::put32(bytes, 16, 0xFFFFFFFFu);
  expect_refused(bytes, "section count 4294967295 exceeds the limit of 64");
  bytes = test::sample_bytes();
  test::put32(bytes, 16, blob::kMaxSections);  // allowed, but the table would run past the file
  bytes.resize(blob::kFileHeaderBytes + 32 * 8);
  expect_refused(bytes, "the section table ends at byte 2088");
}

// A blob whose Geometry section holds just two counts.
std::vector<std::byte> with_geometry_counts(uint32_t positions, uint32_t triangles) {
  blob::Blob b = test::sample_build().blob;
  for (blob::Section& s : b.sections) {
    if (s.type != blob::SectionType::Geometry) continue;
    s.data.clear();
    blob::append_le32(s.data, positions);
    blob::append_le32(s.data, triangles);
  }
  return blob::serialize(b);
}

TEST(HostileContainer, HugeGeometryCountsAreRefusedBeforeAllocating) {
  // 2^32 - 1 positions and triangles would be ~150 GB: a reader that allocated first would throw bad_alloc.
  const std::vector<std::byte> bytes = with_geometry_counts(0xFFFFFFFFu, 0xFFFFFFFFu);
  expect_bad_input([&] { (void)emu::load_bvh(blob::parse(bytes, "hostile.hwbvh"), "hostile.hwbvh"); },
                   "geometry section: 8 bytes, but 4294967295 positions and 4294967295 triangles need");
}

TEST(HostileContainer, GeometryVertexIndexOutOfRange) {
  blob::Blob b = test::sample_build().blob;
  for (blob::Section& s : b.sections)
    if (s.type == blob::SectionType::Geometry) test::put32(s.data, 8 + 12 * blob::load_le32(s.data, 0), 0xFFFFFFF0u);
  const std::vector<std::byte> bytes = blob::serialize(b);
  expect_bad_input([&] { (void)emu::load_bvh(blob::parse(bytes, "hostile.hwbvh"), "hostile.hwbvh"); },
                   "triangle 0 vertex index 4294967280 is out of range");
}

void expect_nodes_refused(const std::vector<uint32_t>& nodes, const std::string& needle) {
  const std::vector<std::byte> bytes = test::with_nodes(nodes);
  expect_bad_input([&] { (void)emu::load_bvh(blob::parse(bytes, "hostile.hwbvh"), "hostile.hwbvh"); }, needle);
}

TEST(HostileContainer, NodeSectionHeaderCountsOutOfRange) {
  std::vector<uint32_t> nodes = test::sample_nodes();
  nodes[2] = 0xFFFFFFFFu;  // node slots
  expect_nodes_refused(nodes, "slot count disagrees with its size");
  nodes = test::sample_nodes();
  nodes[3] = 0xFFFFFFFFu;  // box nodes: with 32-bit arithmetic the counts would wrap around and add up
  nodes[4] = nodes[2];
  expect_nodes_refused(nodes, "node counts do not add up");
}

TEST(HostileContainer, RootPointerOutOfRange) {
  for (const uint32_t root : {0x5u, 0xFFFFFFF5u, static_cast<uint32_t>(test::sample_nodes().size() / 2) | 5u}) {
    std::vector<uint32_t> nodes = test::sample_nodes();
    nodes[1] = root;
    expect_nodes_refused(nodes, "root pointer is outside the section");
  }
}

TEST(HostileContainer, NodeSectionThatIsNotWholeNodes) {
  for (const std::size_t extra : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{64}}) {
    blob::Blob b = test::sample_build().blob;
    for (blob::Section& s : b.sections)
      if (s.type == blob::SectionType::Nodes) s.data.resize(s.data.size() + extra, std::byte{0});
    const std::vector<std::byte> bytes = blob::serialize(b);
    expect_bad_input([&] { (void)emu::load_bvh(blob::parse(bytes, "hostile.hwbvh"), "hostile.hwbvh"); },
                     "node section is not a whole number of");
  }
}

TEST(HostileContainer, RaysFileWithAHugeCount) {
  std::vector<std::byte> bytes;
  for (char c : std::string("HWRAYS1", 8)) bytes.push_back(static_cast<std::byte>(c));
  blob::append_le32(bytes, 0xFFFFFFFFu);
  for (int i = 0; i < 8; ++i) blob::append_le32(bytes, 0);
  expect_bad_input([&] { (void)parse_rays(bytes, "hostile.hwbvh"); }, "4294967295");
}

}  // namespace
}  // namespace hwbvh
