// Progress of a build (core/progress.h through pipeline::build_blob, build_instanced_blob and build_file): every
// phase starts at 0, never goes back and ends at its total, the phases come in the build's order, and the blob is
// byte-identical with and without a listener at one and two threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "fixtures/progress_log.h"
#include "fixtures/random_scene.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

using ::testing::ElementsAre;

using test::ProgressLog;

BuildBlobOptions with_threads(int threads) {
  BuildBlobOptions o;
  o.build.threads = threads;
  o.encode.threads = threads;
  return o;
}

TEST(BuildProgress, EveryPhaseOfAOneLevelBuildGoesFromZeroToItsTotal) {
  const Scene scene = test::random_triangle_soup(20000, 3);
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    ProgressLog log;
    const BuildBlobResult with = build_blob(scene, with_threads(threads), log.callback());
    EXPECT_THAT(log.phases, ElementsAre("binary BVH", "collapse", "OBB choice", "encoding", "blob sections"));
    log.expect_counted_but_the_last();
    EXPECT_EQ(blob::serialize(with.blob), blob::serialize(build_blob(scene, with_threads(threads)).blob));
  }
}

TEST(BuildProgress, OtherTargetsReportTheirBuildPhases) {
  const Scene scene = test::random_triangle_soup(2000, 5);
  for (const blob::Target target : {blob::Target::Rtip20, blob::Target::Xe3}) {
    ProgressLog log;
    BuildBlobOptions options = with_threads(2);
    options.target = target;
    const BuildBlobResult with = build_blob(scene, options, log.callback());
    EXPECT_THAT(log.phases, ElementsAre("binary BVH", "collapse", "encoding", "blob sections"));
    log.expect_counted_but_the_last();
    EXPECT_EQ(blob::serialize(with.blob), blob::serialize(build_blob(scene, options).blob));
  }
}

TEST(BuildProgress, ATwoLevelBuildCountsItsBakeAndBlasesThenTheTopLevel) {
  const InstancedScene scene = load_gltf_instanced(test::project_scene("instanced-garden.gltf"));
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    ProgressLog log;
    const BuildBlobResult with = build_instanced_blob(scene, with_threads(threads), log.callback());
    // The garden's leaves are alpha-tested: their opacity is baked first.
    EXPECT_THAT(log.phases, ElementsAre("opacity bake", "BLASes", "top level binary BVH", "top level collapse",
                                        "top level OBB choice", "top level encoding", "blob sections"));
    log.expect_counted_but_the_last();
    uint64_t triangles = 0;
    for (const Scene& mesh : scene.meshes) triangles += mesh.triangles.size();
    EXPECT_EQ(log.reports.at("BLASes").back().second, triangles);
    EXPECT_GT(log.reports.at("BLASes").size(), scene.meshes.size());  // within meshes too, not only between them
    EXPECT_EQ(blob::serialize(with.blob), blob::serialize(build_instanced_blob(scene, with_threads(threads)).blob));
  }
}

TEST(BuildProgress, BuildFileCountsTheLoadingAndTheWriting) {
  test::ScratchDir dir("build-progress");
  const std::string obj = "o quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n";
  std::ofstream(dir / "quad.obj") << obj;
  ProgressLog log;
  build_file(dir / "quad.obj", {}, dir / "quad.hwbvh", with_threads(1), log.callback());
  EXPECT_THAT(log.phases, ElementsAre("loading", "binary BVH", "collapse", "OBB choice", "encoding", "blob sections",
                                      "writing"));
  log.expect_counted("loading");  // the OBJ file's bytes parsed
  EXPECT_EQ(log.reports.at("loading").back().second, obj.size());
  log.expect_counted("writing");  // the file's bytes
  EXPECT_EQ(log.reports.at("writing").back().second, std::filesystem::file_size(dir / "quad.hwbvh"));
}

}  // namespace
}  // namespace hwbvh::pipeline
