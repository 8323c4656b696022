// Progress of a build (core/progress.h through pipeline::build_blob, build_instanced_blob and build_file): every
// phase starts at 0, never goes back and ends at its total, the phases come in the build's order, and the blob is
// byte-identical with and without a listener at one and two threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "fixtures/random_scene.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

using ::testing::ElementsAre;

// Every report heard, by phase, and the phases in the order they started.
struct ProgressLog {
  std::vector<std::string> phases;
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> reports;  // (done, total) in order

  ProgressCallback callback() {
    return [this](std::string_view phase, uint64_t done, uint64_t total) {
      const std::string name(phase);
      if (phases.empty() || phases.back() != name) phases.push_back(name);
      reports[name].emplace_back(done, total);
    };
  }

  // Every phase counted but the last, which is announced only (progress(phase, 0, 0)).
  void expect_counted_but_the_last() const {
    for (std::size_t p = 0; p + 1 < phases.size(); ++p) expect_counted(phases[p]);
    EXPECT_THAT(reports.at(phases.back()), ::testing::ElementsAre(std::pair<uint64_t, uint64_t>(0, 0)));
  }

  // A counted phase: one total above 0, the first report 0, done never decreasing, the last report the total.
  void expect_counted(const std::string& phase) const {
    SCOPED_TRACE(phase);
    const auto it = reports.find(phase);
    ASSERT_NE(it, reports.end());
    const auto& r = it->second;
    const uint64_t total = r.front().second;
    EXPECT_GT(total, 0u);
    EXPECT_EQ(r.front().first, 0u);
    for (std::size_t i = 0; i < r.size(); ++i) {
      EXPECT_EQ(r[i].second, total) << "report " << i;
      if (i > 0) {
        EXPECT_GE(r[i].first, r[i - 1].first) << "report " << i;
      }
    }
    EXPECT_EQ(r.back().first, total);
  }
};

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

TEST(BuildProgress, BuildFileCountsTheLoadingAndAnnouncesTheWriting) {
  test::ScratchDir dir("build-progress");
  const std::string obj = "o quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n";
  std::ofstream(dir / "quad.obj") << obj;
  ProgressLog log;
  build_file(dir / "quad.obj", {}, dir / "quad.hwbvh", with_threads(1), log.callback());
  EXPECT_THAT(log.phases, ElementsAre("loading", "binary BVH", "collapse", "OBB choice", "encoding", "blob sections",
                                      "writing"));
  log.expect_counted("loading");  // the OBJ file's bytes parsed
  EXPECT_EQ(log.reports.at("loading").back().second, obj.size());
  EXPECT_THAT(log.reports.at("writing"), ElementsAre(std::pair<uint64_t, uint64_t>(0, 0)));
}

}  // namespace
}  // namespace hwbvh::pipeline
