// The generated interior (scripts/generate_scenes.py --interior, scenes/README.md), the stand-in workload of the
// machine model, at a small size: the generator is deterministic, and its .glb builds in two levels with alpha-tested
// foliage and traces to Embree's hits from a camera inside its hall.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/report_fixture.h"

namespace hwbvh {
namespace {

using test::quote;

class InteriorCli : public test::ReportCliTest {
 protected:
  test::Outcome generate(const std::string& glb) {
    const std::string script = std::string(HWBVH_SOURCE_DIR) + "/scripts/generate_scenes.py";
    return run("python3 " + quote(script) + " --interior " + quote(glb) + " --rooms 2 --detail 0.2");
  }
};

TEST_F(InteriorCli, TheSmallInteriorIsDeterministicBuildsInTwoLevelsAndAgreesWithEmbree) {
  const std::string glb = path("interior.glb");
  test::Outcome r = generate(glb);
  ASSERT_EQ(r.code, 0) << r.err;
  // 2 rooms a side on 2 storeys: 8 rooms, each furnished at random (seed 3131), the hall's columns on both storeys,
  // its trees, benches and lamps, the gallery's plants; 14 meshes (2 shells, 8 pieces of furniture, a column,
  // 3 plants).
  EXPECT_NE(r.out.find("121 instances of 14 meshes, 3,672 unique triangles, 17,676 instanced triangles"),
            std::string::npos)
      << r.out;
  const std::string first = test::slurp(glb);
  ASSERT_EQ(generate(glb).code, 0);
  EXPECT_EQ(test::slurp(glb), first);

  const std::string blob = path("interior.hwbvh");
  r = hwbvh("build " + quote(glb) + " -o " + quote(blob) + " --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto built = nlohmann::json::parse(r.out);
  EXPECT_EQ(built["levels"]["instances"], 121) << r.out;
  EXPECT_EQ(built["levels"]["blases"], 14) << r.out;
  EXPECT_GT(built["opacity"]["alpha_tested_triangles"].get<uint64_t>(), 0u) << r.out;  // the plants' leaf cards

  // From the end of the hall on the ground storey, looking down it past the columns into the rooms.
  const std::string camera = "--camera -7.5,1.7,0.5,8,2.2,-1,0,1,0,75";
  r = hwbvh("stats " + quote(blob) + " --rays primary,shadow,random " + camera +
            " --width 64 --height 48 --random-rays 4096 --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  ASSERT_EQ(stats["ray_types"].size(), 3u);
  for (const auto& kind : stats["ray_types"]) {
    EXPECT_EQ(kind["oracle"]["disagreeing"], 0) << kind["ray_type"] << kind["oracle"];
    EXPECT_GT(kind["hits"].get<uint64_t>(), 0u) << kind["ray_type"];
  }
  // An interior: nearly every primary ray hits something (a few at the top of the image leave through the skylight).
  EXPECT_GT(stats["ray_types"][0]["hits"].get<uint64_t>(), 64u * 48u * 99u / 100u);
}

}  // namespace
}  // namespace hwbvh
