// glTF scenes on the command line (docs/gltf.md): build, stats, compare and report work on the shipped instanced
// scene in two levels and, with --flatten, in one, and the emulator agrees with Embree on every ray; bad glTF exits 2
// with no output.
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/report_fixture.h"
#include "scene/gltf_files.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;
using test::quote;

class GltfCli : public test::ReportCliTest {
 protected:
  static std::string garden() { return quote(test::project_scene("instanced-garden.gltf").string()); }

  // Exit 2, one line on stderr naming the file and the problem, and nothing written to the scratch folder.
  void expect_refused(const test::Outcome& r, const std::string& needle) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("hwbvh: error: "));
    EXPECT_THAT(r.err, HasSubstr(needle));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(dir_.files().empty());
  }
};

// docs/blob-format.md §5: a blob does not depend on how its scene file was named. A glTF file's BLAS names and an OBJ
// file's alpha textures are stored without the path the command was given: relative, `./`, `../dir/` and absolute
// spellings of the same files give byte-identical blobs (the BLAS names held the path as typed).
TEST_F(GltfCli, BlobsDoNotDependOnHowTheSceneFileIsNamed) {
  const std::filesystem::path scenes = dir_ / "scenes";
  std::filesystem::create_directories(scenes);
  for (const char* file : {"instanced-garden.gltf", "alpha-cards.obj", "alpha-cards.mtl", "alpha-cards-mask.png"})
    std::filesystem::copy_file(test::project_scene(file), scenes / file);
  const std::string cli = quote(HWBVH_CLI);
  for (const std::string scene : {"instanced-garden.gltf", "alpha-cards.obj"}) {
    const std::vector<std::string> spellings = {scene, "./" + scene, "../scenes/" + scene, (scenes / scene).string()};
    std::vector<std::string> blobs;
    for (std::size_t i = 0; i < spellings.size(); ++i) {
      const std::string out = path("spelling-" + std::to_string(i) + ".hwbvh");
      const test::Outcome r = run("cd " + quote(scenes.string()) + " && " + cli + " build " + quote(spellings[i]) +
                                  " -o " + quote(out) + " --quiet");
      ASSERT_EQ(r.code, 0) << spellings[i] << ": " << r.err;
      blobs.push_back(test::slurp(out));
      ASSERT_FALSE(blobs.back().empty());
      EXPECT_EQ(blobs.back(), blobs.front()) << spellings[i] << " against " << spellings.front();
      EXPECT_EQ(blobs.back().find(scenes.string()), std::string::npos) << spellings[i];
    }
  }
}

TEST_F(GltfCli, FlattenedGardenAgreesWithTheOracleOnEveryRayType) {
  const std::string blob = path("garden.hwbvh");
  test::Outcome r = hwbvh("build " + garden() + " --flatten -o " + quote(blob) + " --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto built = nlohmann::json::parse(r.out);
  EXPECT_EQ(built["triangles"], 23162);
  EXPECT_EQ(built["opacity"]["alpha_tested_triangles"], 600);
  EXPECT_EQ(built["opacity"]["cutoff"], 0.5);
  r = hwbvh("stats " + quote(blob) + " --rays primary,ao,shadow,random --width 64 --height 48 --random-rays 4096 "
            "--json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  ASSERT_EQ(stats["ray_types"].size(), 4u);
  for (const auto& kind : stats["ray_types"]) {
    EXPECT_EQ(kind["oracle"]["agreement_rate"], 1.0) << kind["kind"];
    EXPECT_GT(kind["hits"].get<uint64_t>(), 0u) << kind["kind"];
  }
}

// The instanced build: Embree traces the same instances (instance ids counted in the agreement), and the rays'
// instance mask reaches both; a mask outside 0..255 is refused by every command that traces.
TEST_F(GltfCli, InstancedGardenAgreesWithTheOracleAndTakesAnInstanceMask) {
  const std::string blob = path("garden.hwbvh");
  test::Outcome r = hwbvh("build " + garden() + " -o " + quote(blob) + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string stats = "stats " + quote(blob) + " --rays primary,ao,shadow,random --width 64 --height 48 "
                            "--random-rays 4096 --json --quiet";
  r = hwbvh(stats);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = nlohmann::json::parse(r.out);
  ASSERT_EQ(all["ray_types"].size(), 4u);
  for (const auto& kind : all["ray_types"]) {
    EXPECT_GE(kind["oracle"]["agreement_rate"].get<double>(), 0.9999) << kind["kind"];
    EXPECT_GT(kind["hits"].get<uint64_t>(), 0u) << kind["kind"];
  }
  // The garden's instances all have mask 0xFF: any bit sees them all, no bit none.
  r = hwbvh(stats + " --instance-mask 16");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto masked = nlohmann::json::parse(r.out);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(masked["ray_types"][k]["hits"], all["ray_types"][k]["hits"]);
    EXPECT_EQ(masked["ray_types"][k]["oracle"], all["ray_types"][k]["oracle"]);
  }
  r = hwbvh("stats " + quote(blob) + " --rays primary,random --width 16 --height 16 --random-rays 256 --json --quiet "
            "--instance-mask 0");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto none = nlohmann::json::parse(r.out);  // kept alive: the loop runs over one of its members
  for (const auto& kind : none["ray_types"]) {
    EXPECT_EQ(kind["hits"], 0) << kind["kind"];
    EXPECT_EQ(kind["oracle"]["agreement_rate"], 1.0) << kind["kind"];
  }
  for (const std::string& command :
       {"stats " + quote(blob), "render " + quote(blob) + " -o " + quote(path("g.png")),
        "compare " + garden() + " --flatten", "report " + quote(blob) + " -o " + quote(path("g.html"))}) {
    for (const char* mask : {"256", "-1", "x"}) {
      r = hwbvh(command + " --instance-mask " + mask);
      EXPECT_EQ(r.code, 2) << command << " " << mask;
      EXPECT_THAT(r.err, HasSubstr("--instance-mask")) << command << " " << mask;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path("g.png")));
  EXPECT_FALSE(std::filesystem::exists(path("g.html")));
}

// One-level BVHs have no instances, and the targets disagree on what a mask would mean there (RT IP 2.0 box nodes
// carry none): --instance-mask is refused for them, before any output.
TEST_F(GltfCli, InstanceMaskIsRefusedForOneLevelInput) {
  const std::string flat = path("flat.hwbvh");
  ASSERT_EQ(hwbvh("build " + garden() + " --flatten --quiet -o " + quote(flat)).code, 0);
  const std::string needed = "--instance-mask applies to two-level blobs only";
  for (const std::string& command :
       {"stats " + quote(flat) + " --quiet", "render " + quote(flat) + " --mode steps -o " + quote(path("f.png")),
        "report " + quote(flat) + " -o " + quote(path("f.html")) + " --quiet", "compare " + garden() + " --flatten"}) {
    const test::Outcome r = hwbvh(command + " --instance-mask 1");
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_THAT(r.err, HasSubstr(needed)) << command;
  }
  EXPECT_FALSE(std::filesystem::exists(path("f.png")));
  EXPECT_FALSE(std::filesystem::exists(path("f.html")));
}

TEST_F(GltfCli, FlattenedBuildsAreByteIdenticalAtAnyThreadCountAndTakeTheCutoffOption) {
  for (const char* threads : {"1", "2"}) {
    const test::Outcome r = hwbvh("build " + garden() + " --flatten --quiet --threads " + threads + " -o " +
                                  quote(path(std::string("t") + threads + ".hwbvh")));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(test::slurp(path("t1.hwbvh")), test::slurp(path("t2.hwbvh")));
  const test::Outcome r =
      hwbvh("build " + garden() + " --flatten --alpha-cutoff 0.25 --json --quiet -o " + quote(path("c.hwbvh")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["opacity"]["cutoff"], 0.25);  // the option replaces alphaCutoff 0.5
}

TEST_F(GltfCli, CompareAndReportTakeFlattenedGltf) {
  test::Outcome r = hwbvh("compare " + garden() + " --flatten --rays primary --width 16 --height 16 --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rtip20"));
  EXPECT_THAT(r.out, HasSubstr("xe3"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("per level")));  // one level: no per-level counters
  r = hwbvh("report " + garden() + " --flatten --rays primary --width 16 --height 16 -o " + quote(path("g.html")) +
            " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(test::slurp(path("g.html")), HasSubstr("instanced-garden.gltf"));
}

// Without --flatten, compare and report take the glTF in two levels: every compare row is its target's TLAS over
// BLASes, agrees with Embree tracing the same instances and shows the per-level counters, with the machine model
// too, identically at any thread count; the instance mask reaches every row and the oracle.
TEST_F(GltfCli, CompareAndReportTakeInstancedGltf) {
  const std::string compare = "compare " + garden() + " --rays primary,shadow --width 16 --height 16 --quiet";
  test::Outcome r = hwbvh(compare + " --json --machine rdna4 --threads 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(hwbvh(compare + " --json --machine rdna4 --threads 2").out, r.out);  // the same at any thread count
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["two_level"], true);
  ASSERT_EQ(j["variants"].size(), 5u);
  for (const auto& v : j["variants"]) {
    EXPECT_EQ(v["oracle_agreeing"], v["oracle_rays"]) << v["variant"];
    EXPECT_NEAR(v["tlas_steps_per_ray"].get<double>() + v["blas_steps_per_ray"].get<double>(),
                v["steps_per_ray"].get<double>(), 1e-9) << v["variant"];
    EXPECT_GT(v["instance_transitions_per_ray"].get<double>(), 0.0) << v["variant"];
    EXPECT_GT(v["machine_model_cycles"].get<uint64_t>(), 0u) << v["variant"];
  }
  r = hwbvh(compare + " --json --instance-mask 0");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto masked = nlohmann::json::parse(r.out);  // kept alive: the loop runs over one of its members
  for (const auto& v : masked["variants"]) {
    EXPECT_EQ(v["oracle_agreeing"], v["oracle_rays"]) << v["variant"];
    EXPECT_EQ(v["instance_transitions_per_ray"], 0.0) << v["variant"];  // every instance culled by its mask
  }
  r = hwbvh(compare);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("BLASes"));
  EXPECT_THAT(r.out, HasSubstr("per level, per ray:"));
  r = hwbvh("report " + garden() + " --rays primary --width 16 --height 16 --compare -o " + quote(path("g.html")) +
            " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = test::slurp(path("g.html"));
  EXPECT_THAT(page, HasSubstr("Comparison across targets"));
  EXPECT_THAT(page, HasSubstr("Two levels:"));
  EXPECT_THAT(page, HasSubstr("TLAS steps"));
}

TEST_F(GltfCli, BadGltfExitsTwoWithoutOutput) {
  test::GltfFile f = test::one_triangle_file();
  f.node("\"mesh\":0,\"children\":[0]");
  const std::string bad = (dir_.path().parent_path() / "gltf-cli-cycle.gltf").string();  // outside the scratch folder
  std::ofstream(bad) << f.json();
  expect_refused(hwbvh("build " + quote(bad) + " --flatten -o " + quote(path("bad.hwbvh"))),
                 "gltf-cli-cycle.gltf: the node graph has a cycle: node 0 is its own ancestor");
  std::filesystem::remove(bad);

  // A .glb that is not GLB, and a glTF 1.0 file: named as such, not as a JSON syntax error or a file without scene.
  const std::string garbage = (dir_.path().parent_path() / "gltf-cli-garbage.glb").string();
  std::ofstream(garbage) << "PK\x03\x04 not a glTF binary at all";
  expect_refused(hwbvh("build " + quote(garbage) + " -o " + quote(path("bad.hwbvh"))),
                 "gltf-cli-garbage.glb: not a glTF binary: a .glb file starts with the magic 'glTF'");
  std::filesystem::remove(garbage);
  const std::string old = (dir_.path().parent_path() / "gltf-cli-version1.gltf").string();
  std::ofstream(old) << test::gltf1_box();
  expect_refused(hwbvh("build " + quote(old) + " -o " + quote(path("bad.hwbvh"))),
                 "gltf-cli-version1.gltf: glTF 1.0 is not supported (asset.version '1.0'): hwbvh reads glTF 2.0");
  std::filesystem::remove(old);
}

}  // namespace
}  // namespace hwbvh
