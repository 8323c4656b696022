// Two-level builds (pipeline::build_instanced_blob): every BLAS is built and encoded once, however many instances
// use it, so a scene of one mesh placed 1,000 times stores that mesh's nodes once; the blob grows by the top level
// (its box nodes and one 128-byte instance node per instance), the 64-byte sideband record per instance and the
// Levels section only. Builds are byte-identical at any thread count.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "fixtures/paths.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/rdna4/node_section.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

const blob::Section& section(const blob::Blob& b, blob::SectionType type) { return b.require(type, "test"); }

TEST(InstancedBuild, ABlasUsedByAThousandInstancesIsStoredOnce) {
  const InstancedScene scene = load_gltf_instanced(test::project_scene("thousand-rocks.gltf"));
  ASSERT_EQ(scene.meshes.size(), 1u);
  ASSERT_EQ(scene.instances.size(), 1000u);
  BuildBlobOptions options;
  const BuildBlobResult two = build_instanced_blob(scene, options);
  const BuildBlobResult one = build_blob(scene.meshes[0], options);  // the rock alone, one level

  const auto& one_nodes = section(one.blob, blob::SectionType::Nodes).data;
  const auto& two_nodes = section(two.blob, blob::SectionType::Nodes).data;
  const blob::Levels levels = blob::decode_levels(section(two.blob, blob::SectionType::Levels).data, "test",
                                                  two_nodes.size(), 1, 80);
  ASSERT_EQ(levels.blases.size(), 1u);
  // The BLAS is the one-level build's node section, byte for byte, after the top level.
  EXPECT_EQ(levels.blases[0].address, levels.top_bytes);
  EXPECT_EQ(levels.blases[0].bytes, one_nodes.size());
  EXPECT_TRUE(std::equal(one_nodes.begin(), one_nodes.end(),
                         two_nodes.begin() + static_cast<std::ptrdiff_t>(levels.top_bytes)));
  EXPECT_EQ(two_nodes.size(), levels.top_bytes + one_nodes.size());
  // The top level: its header, its box nodes and 1,000 instance nodes; the sideband 64 bytes per instance.
  ASSERT_TRUE(two.report.levels.has_value());
  const LevelsReport& r = *two.report.levels;
  EXPECT_EQ(r.instances, 1000u);
  EXPECT_EQ(r.blases, 1u);
  EXPECT_EQ(r.top_bytes, (1 + r.top_box_nodes + 1000) * 128);
  EXPECT_EQ(r.sideband_bytes, 1000u * 64);
  std::printf("rock alone: %zu node bytes; 1,000 instances: %zu node bytes (top level %llu, %llu box nodes), "
              "sideband %llu, file %zu vs %zu bytes\n",
              one_nodes.size(), two_nodes.size(), static_cast<unsigned long long>(r.top_bytes),
              static_cast<unsigned long long>(r.top_box_nodes), static_cast<unsigned long long>(r.sideband_bytes),
              blob::serialize(two.blob).size(), blob::serialize(one.blob).size());
  EXPECT_EQ(section(two.blob, blob::SectionType::InstanceSideband).data.size(), 1000u * 64);
}

TEST(InstancedBuild, ByteIdenticalAtOneAndTwoThreads) {
  const InstancedScene scene = load_gltf_instanced(test::project_scene("instanced-garden.gltf"));
  BuildBlobOptions options;
  options.build.threads = 1;
  options.encode.threads = 1;
  const std::vector<std::byte> one = blob::serialize(build_instanced_blob(scene, options).blob);
  options.build.threads = 2;
  options.encode.threads = 2;
  EXPECT_EQ(one, blob::serialize(build_instanced_blob(scene, options).blob));
}

TEST(InstancedBuild, EveryBlasIsItsMeshsOneLevelBuild) {
  const InstancedScene scene = load_gltf_instanced(test::project_scene("instanced-garden.gltf"));
  const BuildBlobResult two = build_instanced_blob(scene, {});
  const auto& nodes = section(two.blob, blob::SectionType::Nodes).data;
  const blob::Levels levels = blob::decode_levels(section(two.blob, blob::SectionType::Levels).data, "test",
                                                  nodes.size(), UINT32_MAX, UINT32_MAX);
  ASSERT_EQ(levels.blases.size(), scene.meshes.size());
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const BuildBlobResult built = build_blob(scene.meshes[m], {});
    const auto& alone = section(built.blob, blob::SectionType::Nodes).data;
    ASSERT_EQ(levels.blases[m].bytes, alone.size()) << m;
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(),
                           nodes.begin() + static_cast<std::ptrdiff_t>(levels.blases[m].address)))
        << m;
  }
}

TEST(InstancedBuild, FilterNodesCoverTheirBlas) {
  // Each instance node's filter boxes (object space, decoded from the bytes) hold every triangle of its BLAS, each
  // triangle inside one box (no spatial splits at medium quality), and some instance has more than one box.
  const InstancedScene scene = load_gltf_instanced(test::project_scene("instanced-garden.gltf"));
  BuildBlobOptions options;
  options.build.quality = bvh_build::BuildQuality::Medium;
  const BuildBlobResult two = build_instanced_blob(scene, options);
  const auto& bytes = section(two.blob, blob::SectionType::Nodes).data;
  const blob::Levels levels = blob::decode_levels(section(two.blob, blob::SectionType::Levels).data, "test",
                                                  bytes.size(), UINT32_MAX, UINT32_MAX);
  std::vector<uint32_t> dwords(bytes.size() / 4);
  std::memcpy(dwords.data(), bytes.data(), bytes.size());
  const uint64_t first_slot = 1 + two.report.levels->top_box_nodes;
  std::size_t multi_box = 0;
  for (uint64_t slot = first_slot; slot < levels.top_bytes / rdna4::kNodeBytes; ++slot) {
    const rdna4::DecodedInstanceNode node = rdna4::decode_instance_node(&dwords[slot * rdna4::kNodeDwords]);
    const uint64_t address = rdna4::base_pointer_address(node.blas_base_pointer);
    std::size_t m = 0;
    while (m < levels.blases.size() && levels.blases[m].address != address) ++m;
    ASSERT_LT(m, levels.blases.size()) << "instance slot " << slot;
    const rdna4::DecodedBoxNode filter = rdna4::decode_box_node(node.filter_box);
    ASSERT_EQ(filter.child_count, 4u);
    multi_box += filter.child_box[0].min != filter.child_box[3].min || filter.child_box[0].max != filter.child_box[3].max;
    const Scene& mesh = scene.meshes[m];
    for (uint32_t t = 0; t < mesh.triangles.size(); ++t) {
      if (mesh.is_degenerate(t)) continue;
      bool inside = false;
      for (uint32_t k = 0; k < 4 && !inside; ++k) {
        inside = filter.child_box[k].contains(mesh.vertex(t, 0)) && filter.child_box[k].contains(mesh.vertex(t, 1)) &&
                 filter.child_box[k].contains(mesh.vertex(t, 2));
      }
      EXPECT_TRUE(inside) << "BLAS " << m << " triangle " << t << " outside the filter of instance slot " << slot;
    }
  }
  EXPECT_GT(multi_box, 0u);
}

}  // namespace
}  // namespace hwbvh::pipeline
