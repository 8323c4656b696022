// Two-level blobs on the command line: `hwbvh build` of a glTF without --flatten writes one, `hwbvh info` lists its
// BLASes and instances, `hwbvh dump` shows the top level with its instance nodes and, with --blas N, one BLAS.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/report_fixture.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;
using test::quote;

class InstancedCli : public test::ReportCliTest {
 protected:
  std::string build_garden() {
    const std::string blob = path("garden.hwbvh");
    const test::Outcome r =
        hwbvh("build " + quote(test::project_scene("instanced-garden.gltf").string()) + " -o " + quote(blob));
    EXPECT_EQ(r.code, 0) << r.err;
    return blob;
  }
};

TEST_F(InstancedCli, InfoListsTheBlasesAndInstances) {
  const std::string blob = build_garden();
  test::Outcome r = hwbvh("info " + quote(blob) + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["format_version"], 4);
  EXPECT_EQ(info["report"]["levels"]["instances"], 331);
  EXPECT_EQ(info["report"]["levels"]["blases"], 4);
  EXPECT_EQ(info["report"]["levels"]["sideband_bytes"], 331 * 64);
  ASSERT_EQ(info["scene"]["blases"].size(), 4u);
  ASSERT_EQ(info["scene"]["instances"].size(), 331u);
  r = hwbvh("info " + quote(blob));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("331 over 4 BLASes"));
  EXPECT_THAT(r.out, HasSubstr("'rock': 1 geometries, 80 triangles"));
  EXPECT_THAT(r.out, HasSubstr("the first 16 of 331 (--json lists all)"));
}

TEST_F(InstancedCli, DumpShowsTheTopLevelAndOneBlas) {
  const std::string blob = build_garden();
  test::Outcome r = hwbvh("dump " + quote(blob) + " --max-nodes 0 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto top = nlohmann::json::parse(r.out);
  EXPECT_EQ(top["header"]["instance_nodes"], 331);
  // The first BLAS (the ground) follows the top level's node slots.
  const uint64_t ground_address = top["header"]["node_slots"].get<uint64_t>() * 128;
  std::size_t instances = 0, ground = 0;
  for (const auto& node : top["nodes"]) {
    if (node["kind"] != "instance") continue;
    ++instances;
    EXPECT_EQ(node["filter_children"].size(), 4u);
    if (node["blas_address"] == ground_address) {
      // The ground's BLAS is one pair behind its root box: the instance enters at that primitive node
      // (slot 2), GPURT's form with child 0 never hit and range length 1.
      ++ground;
      EXPECT_EQ(node["blas_root"], 0x20);
      EXPECT_EQ(node["filter_children"][0]["range_length"], 1);
      EXPECT_EQ(node["filter_children"][1]["blas_root_index"], 2);
      continue;
    }
    EXPECT_EQ(node["blas_root"], 0x15);
    EXPECT_EQ(node["filter_children"][0]["blas_root_index"], 1);  // root 0x15 >> 4
    EXPECT_EQ(node["filter_children"][0]["range_length"], 0);
  }
  EXPECT_EQ(instances, 331u);
  EXPECT_EQ(ground, 1u);
  r = hwbvh("dump " + quote(blob) + " --blas 3 --max-nodes 0 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rock = nlohmann::json::parse(r.out);
  EXPECT_EQ(rock["header"]["instance_nodes"], 0);
  EXPECT_GT(rock["header"]["primitive_nodes"], 0);
  r = hwbvh("dump " + quote(blob) + " --blas 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--blas 4: the blob has 4 BLASes (0..3)"));
}

}  // namespace
}  // namespace hwbvh
