// A given tree through the whole pipeline: the exported tree of hwbvh's own build, encoded again, gives that build's
// blob byte for byte on every shipped scene (glTF scenes flattened: a tree is one level) and every target.
#include <filesystem>
#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwbvh/blob/blob.h"
#include "hwbvh/bvh_build/given_tree.h"
#include "hwbvh/core/error.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

std::vector<std::filesystem::path> shipped_scenes() {
  std::vector<std::filesystem::path> scenes;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(HWBVH_SOURCE_DIR) + "/scenes")) {
    const auto ext = entry.path().extension();
    if (ext == ".obj" || ext == ".gltf") scenes.push_back(entry.path());
  }
  std::sort(scenes.begin(), scenes.end());
  return scenes;
}

TEST(GivenTreeBuild, TheExportedTreeGivesTheSameBlobOnEveryShippedSceneAndTarget) {
  const auto scenes = shipped_scenes();
  ASSERT_GE(scenes.size(), 6u);
  for (const auto& path : scenes) {
    const AnyScene any = load_any_scene(path, {.flatten = true});
    const Scene& scene = std::get<Scene>(any);
    BuildBlobOptions options;  // the default quality
    const auto tree = std::make_shared<const bvh_build::TreeTopology>(
        bvh_build::export_topology(scene, options.build, path.filename().string()));
    for (const blob::Target target : {blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3}) {
      options.target = target;
      options.build.tree = nullptr;
      const BuildBlobResult own = build_blob(scene, options);
      options.build.tree = tree;
      const BuildBlobResult given = build_blob(scene, options);
      EXPECT_TRUE(blob::serialize(given.blob) == blob::serialize(own.blob))
          << path.filename() << " " << blob::target_name(target);
      ASSERT_TRUE(given.report.tree.has_value());
      EXPECT_EQ(given.report.tree->kind, "binary");
      EXPECT_EQ(given.report.tree->split_leaves, 0u);
      EXPECT_FALSE(own.report.tree.has_value());
    }
  }
}

TEST(GivenTreeBuild, ATwoLevelSceneIsRefused) {
  const AnyScene any = load_any_scene(std::string(HWBVH_SOURCE_DIR) + "/scenes/instanced-garden.gltf", {});
  ASSERT_TRUE(std::holds_alternative<InstancedScene>(any));
  BuildBlobOptions options;
  auto tree = std::make_shared<bvh_build::TreeTopology>();
  tree->source = "garden.npz";
  options.build.tree = tree;
  try {
    (void)build_any_blob(any, options);
    FAIL() << "built";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("garden.npz: a tree describes the triangles of a one-level scene"));
  }
}

}  // namespace
}  // namespace hwbvh::pipeline
