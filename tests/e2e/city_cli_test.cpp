// The generated city (scripts/generate_scenes.py --city, scenes/README.md) at a small size: the generator is
// deterministic, and its .glb builds in two levels and traces to Embree's hits.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "e2e/report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;

class CityCli : public test::ReportCliTest {
 protected:
  test::Outcome generate(const std::string& glb) {
    const std::string script = std::string(HWBVH_SOURCE_DIR) + "/scripts/generate_scenes.py";
    return run("python3 " + quote(script) + " --city " + quote(glb) + " --blocks 2 --detail 0.1");
  }
};

TEST_F(CityCli, TheSmallCityIsDeterministicBuildsInTwoLevelsAndAgreesWithEmbree) {
  const std::string glb = path("city.glb");
  test::Outcome r = generate(glb);
  ASSERT_EQ(r.code, 0) << r.err;
  // 2 x 2 blocks: per block a ground, 8 towers, a courtyard of 4 trees and 8 bushes (a fountain in about one
  // block of four), 60 sidewalk props and 40 sidewalk trees; 34 meshes.
  EXPECT_NE(r.out.find("486 instances of 34 meshes"), std::string::npos) << r.out;
  const std::string first = test::slurp(glb);
  ASSERT_EQ(generate(glb).code, 0);
  EXPECT_EQ(test::slurp(glb), first);

  const std::string blob = path("city.hwbvh");
  r = hwbvh("build " + quote(glb) + " -o " + quote(blob) + " --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto built = nlohmann::json::parse(r.out);
  EXPECT_EQ(built["levels"]["instances"], 486) << r.out;
  EXPECT_EQ(built["levels"]["blases"], 32) << r.out;  // a BLAS per mesh placed: two towers are not, in 4 blocks

  r = hwbvh("stats " + quote(blob) + " --rays primary,shadow,random --width 64 --height 48 --random-rays 4096 "
            "--json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  ASSERT_EQ(stats["ray_types"].size(), 3u);
  // Every disagreement is counted here, never rounded. One primary and one random ray are "different-primitive-
  // farther": Embree over the instances finds a closer primitive than the emulator. Traced through the --flatten blob
  // (world-space triangles), the emulator hits the same primitive at the same t and Embree agrees with it, so the
  // closer hit is the two-level oracle's (Embree's float instance transforms), not the emulator's.
  const std::vector<uint64_t> disagreeing{1, 0, 1};
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& kind = stats["ray_types"][k];
    EXPECT_EQ(kind["oracle"]["disagreeing"], disagreeing[k]) << kind["kind"] << kind["oracle"];
    EXPECT_EQ(kind["oracle"]["disagreements"]["different-primitive-farther"], disagreeing[k]) << kind["kind"];
    EXPECT_GT(kind["hits"].get<uint64_t>(), 0u) << kind["kind"];
  }
  // The flattened reference traces the same rays (exact world bounds, issue 30) and agrees with Embree on all.
  const std::string flat = path("city-flat.hwbvh");
  ASSERT_EQ(hwbvh("build " + quote(glb) + " --flatten -o " + quote(flat) + " --quiet").code, 0);
  r = hwbvh("stats " + quote(flat) + " --rays primary,shadow,random --width 64 --height 48 --random-rays 4096 "
            "--json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto flat_stats = nlohmann::json::parse(r.out);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(flat_stats["ray_types"][k]["oracle"]["disagreeing"], 0) << flat_stats["ray_types"][k]["oracle"];
    EXPECT_EQ(flat_stats["ray_types"][k]["rays"], stats["ray_types"][k]["rays"]);
  }
}

}  // namespace
}  // namespace hwbvh
