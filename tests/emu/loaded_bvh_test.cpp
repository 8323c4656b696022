// load_bvh on hostile node sections (regression for tests/hostile: a Nodes section with a trailing partial dword
// was accepted, the stray bytes silently dropped when the section became dwords).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/formats/rdna4/node_section.h"

namespace hwbvh::emu {
namespace {

// A blob holding the smallest node section the loader accepts (header + an all-zero root) and one triangle.
blob::Blob minimal_blob(std::size_t extra_node_bytes) {
  rdna4::NodeSectionHeader header;
  header.node_slots = 2;
  header.box_nodes = 1;
  header.bounds = Aabb{Vec3{0.0f}, Vec3{1.0f}};
  std::vector<uint32_t> dwords(2 * rdna4::kNodeDwords, 0);
  const rdna4::NodeDwords h = rdna4::write_node_section_header(header);
  std::copy(h.begin(), h.end(), dwords.begin());
  std::vector<std::byte> nodes = blob::dwords_to_bytes(dwords);
  nodes.resize(nodes.size() + extra_node_bytes, std::byte{0});

  Scene scene;
  scene.positions = {Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};
  scene.triangles.push_back(Triangle{{0, 1, 2}});
  scene.geometries.push_back({"g", 0, 1});
  blob::Blob b;
  b.sections.push_back({blob::SectionType::Nodes, blob::kNodesAlignment, nodes});
  b.sections.push_back({blob::SectionType::Geometry, 16, blob::encode_geometry(scene)});
  return b;
}

TEST(LoadBvh, MinimalBlobLoads) {
  const LoadedBvh bvh = load_bvh(minimal_blob(0), "min.hwbvh");
  EXPECT_EQ(bvh.nodes.size(), 2 * rdna4::kNodeDwords);
  EXPECT_EQ(bvh.root, rdna4::kRootPointer);
}

TEST(LoadBvh, NodeSectionWithPartialNodesIsRefused) {
  for (const std::size_t extra : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{127}}) {
    try {
      (void)load_bvh(minimal_blob(extra), "min.hwbvh");
      ADD_FAILURE() << extra << " extra bytes accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_THAT(e.what(), ::testing::HasSubstr("min.hwbvh: node section is not a whole number of"));
    }
  }
}

}  // namespace
}  // namespace hwbvh::emu
