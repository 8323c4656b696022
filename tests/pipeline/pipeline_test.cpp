// build_blob on in-code scenes: sections, report round trip, determinism across thread counts.
#include "hwbvh/pipeline/pipeline.h"

#include <cmath>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "blob/scratch_dir.h"
#include "fixtures/random_scene.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/node_section.h"

namespace hwbvh::pipeline {
namespace {

using ::testing::HasSubstr;

// Two geometries of random triangles plus one zero-area triangle at the end of the last geometry.
Scene small_scene() {
  Scene s = test::random_triangle_soup(200, 7, 10.0f, 0.5f, 2);
  s.source = "/some/dir/small.obj";
  Triangle degenerate;
  for (int k = 0; k < 3; ++k) degenerate.v[k] = 0;
  degenerate.geometry = 1;
  degenerate.primitive = s.geometries[1].triangle_count++;
  s.triangles.push_back(degenerate);
  return s;
}

BuildBlobOptions options_with_threads(int threads) {
  BuildBlobOptions o;
  o.build.threads = threads;
  o.encode.threads = threads;
  return o;
}

std::string text_of(const blob::Section& s) {
  return {reinterpret_cast<const char*>(s.data.data()), s.data.size()};
}

TEST(BuildBlob, AssemblesAllSections) {
  const Scene scene = small_scene();
  const BuildBlobResult r = build_blob(scene, options_with_threads(1));
  EXPECT_EQ(r.blob.target, blob::Target::Rtip31);
  ASSERT_EQ(r.blob.sections.size(), 4u);

  // Nodes: whole 128-byte nodes, our section header at offset 0, root at 0x15.
  const blob::Section& nodes = r.blob.require(blob::SectionType::Nodes, "mem");
  EXPECT_EQ(nodes.alignment, blob::kNodesAlignment);
  EXPECT_EQ(nodes.data.size() % 128, 0u);
  EXPECT_EQ(nodes.data.size(), r.report.node_bytes);
  const std::vector<uint32_t> dw = blob::bytes_to_dwords(nodes.data);
  std::string error;
  const auto header = rdna4::read_node_section_header(dw.data(), dw.size(), &error);
  ASSERT_TRUE(header) << error;
  EXPECT_EQ(header->root_pointer, 0x15u);
  EXPECT_EQ(header->box_nodes, r.report.box_nodes);
  EXPECT_EQ(header->primitive_nodes, r.report.primitive_nodes);

  // Geometry: every scene triangle, the degenerate one flagged.
  const blob::GeometrySection g =
      blob::decode_geometry(r.blob.require(blob::SectionType::Geometry, "mem").data, "mem");
  ASSERT_EQ(g.triangles.size(), scene.triangles.size());
  EXPECT_EQ(g.positions.size(), scene.positions.size());
  EXPECT_TRUE(g.triangles.back().degenerate());
  EXPECT_FALSE(g.triangles.front().degenerate());
  EXPECT_EQ(g.triangles.back().primitive, scene.triangles.back().primitive);

  // SceneMeta: geometries with names, counts and bounds.
  const auto meta = nlohmann::json::parse(text_of(r.blob.require(blob::SectionType::SceneMeta, "mem")));
  EXPECT_EQ(meta["source"], "small.obj");
  EXPECT_EQ(meta["triangles"], 201);
  EXPECT_EQ(meta["degenerate_triangles"], 1);
  ASSERT_EQ(meta["geometries"].size(), 2u);
  EXPECT_EQ(meta["geometries"][1]["name"], "g1");
  EXPECT_EQ(meta["geometries"][1]["triangles"], 101);
  EXPECT_EQ(meta["geometries"][0]["bounds"]["min"].size(), 3u);

  // BuildMeta: the report without its run-dependent part.
  const BuildReport stored =
      report_from_json(text_of(r.blob.require(blob::SectionType::BuildMeta, "mem")), "mem");
  BuildReport expected = r.report;
  expected.run.reset();
  EXPECT_EQ(stored, expected);
}

TEST(BuildBlob, ReportFieldsAreConsistent) {
  const BuildBlobResult r = build_blob(small_scene(), options_with_threads(1));
  const BuildReport& rep = r.report;
  EXPECT_EQ(rep.source, "small.obj");
  EXPECT_EQ(rep.target, "rtip31");
  EXPECT_EQ(rep.triangles, 201u);
  EXPECT_EQ(rep.degenerate_triangles, 1u);
  EXPECT_GE(rep.box_nodes, 1u);
  EXPECT_GE(rep.primitive_nodes, 1u);
  EXPECT_EQ(rep.node_bytes, 128u * (1 + rep.box_nodes + rep.primitive_nodes));
  EXPECT_DOUBLE_EQ(rep.bytes_per_triangle, static_cast<double>(rep.node_bytes) / 200.0);
  EXPECT_GE(rep.pairs, 100u);  // 200 triangles, at most 2 per pair
  EXPECT_GT(rep.triangles_per_primitive_node, 1.0);
  EXPECT_LE(rep.triangles_per_primitive_node, 16.0);
  EXPECT_GE(rep.obb_box_share, 0.0);
  EXPECT_LE(rep.obb_box_share, 1.0);
  EXPECT_GT(rep.sah_cost, 0.0);
  EXPECT_EQ(rep.spatial_split_references, 0u);  // medium quality: no spatial splits
  EXPECT_EQ(rep.quality, "medium");
  EXPECT_TRUE(rep.obb);
  EXPECT_DOUBLE_EQ(rep.obb_ratio, 0.9);
  ASSERT_TRUE(rep.run);
  EXPECT_EQ(rep.run->threads, 1);
  EXPECT_GE(rep.run->seconds.bvh, 0.0);
}

TEST(BuildBlob, ByteIdenticalAtAnyThreadCount) {
  const Scene scene = small_scene();
  for (const auto quality : {bvh_build::BuildQuality::Low, bvh_build::BuildQuality::High}) {
    BuildBlobOptions one = options_with_threads(1), two = options_with_threads(2);
    one.build.quality = two.build.quality = quality;
    const auto a = blob::serialize(build_blob(scene, one).blob);
    const auto b = blob::serialize(build_blob(scene, two).blob);
    EXPECT_TRUE(a == b) << "quality " << quality_name(quality);
  }
}

TEST(BuildBlob, OptionsAreRecorded) {
  BuildBlobOptions o = options_with_threads(1);
  o.build.quality = bvh_build::BuildQuality::Low;
  o.encode.obb = false;
  o.encode.obb_accept_ratio = 0.75f;
  const BuildReport rep = build_blob(small_scene(), o).report;
  EXPECT_EQ(rep.quality, "low");
  EXPECT_FALSE(rep.obb);
  EXPECT_DOUBLE_EQ(rep.obb_ratio, 0.75);
  EXPECT_EQ(rep.obb_box_share, 0.0);
}

TEST(ReportJson, RoundTripsEveryField) {
  BuildReport r;
  r.source = "x.obj";
  r.target = "rtip31";
  r.triangles = 1'000'000'000'000ull;
  r.degenerate_triangles = 3;
  r.box_nodes = 5;
  r.primitive_nodes = 7;
  r.node_bytes = 1664;
  r.bytes_per_triangle = 12.5;
  r.triangles_per_primitive_node = 9.25;
  r.pairs = 11;
  r.obb_box_share = 0.125;
  r.sah_cost = 33.0625;
  r.spatial_split_references = 13;
  r.quality = "high";
  r.obb = false;
  r.obb_ratio = 0.8;
  EXPECT_EQ(report_from_json(report_to_json(r), "f"), r);
  r.run = RunInfo{4, {0.5, 1.5, 2.5, 3.5, 4.5, 5.5}};
  const std::string json = report_to_json(r);
  EXPECT_EQ(report_from_json(json, "f"), r);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(json)["run"]["seconds"]["total"].get<double>(), 18.0);
}

TEST(ReportJson, MalformedReportsAreBadInput) {
  const auto expect_bad = [](const std::string& json, const std::string& needle) {
    try {
      (void)report_from_json(json, "b.hwbvh");
      ADD_FAILURE() << json;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_THAT(e.what(), HasSubstr("b.hwbvh: "));
      EXPECT_THAT(e.what(), HasSubstr(needle));
    }
  };
  expect_bad("not json", "not a JSON object");
  expect_bad("[1,2]", "not a JSON object");
  expect_bad("{}", "missing field 'source'");
  auto full = nlohmann::json::parse(report_to_json(BuildReport{}));
  full.erase("pairs");
  expect_bad(full.dump(), "missing field 'pairs'");
  full = nlohmann::json::parse(report_to_json(BuildReport{}));
  full["triangles"] = "many";
  expect_bad(full.dump(), "wrong type");
  full = nlohmann::json::parse(report_to_json(BuildReport{}));
  full["options"] = 3;
  expect_bad(full.dump(), "missing field 'quality'");
}

// One triangle far out and one small one near the origin: box extents, areas and SAH costs of such scenes
// overflow float unless they are scaled first (range_scale).
Scene far_and_near_scene(float far) {
  const std::string obj = "v " + std::to_string(far) + " 0 0\nv 0 " + std::to_string(far) + " 0\nv 0 0 " +
                          std::to_string(-far) + "\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 4 5 6\n";
  return load_obj_from_memory(obj, "far.obj");
}

TEST(BuildBlob, HugeCoordinatesBuildOnEveryTargetAndQuality) {
  for (const float far : {2e19f, 3e38f}) {
    const Scene scene = far_and_near_scene(far);
    for (const blob::Target target : {blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3}) {
      for (const bvh_build::BuildQuality quality :
           {bvh_build::BuildQuality::Low, bvh_build::BuildQuality::Medium, bvh_build::BuildQuality::High}) {
        SCOPED_TRACE(std::to_string(far) + " " + blob::target_name(target) + " " + quality_name(quality));
        BuildBlobOptions options = options_with_threads(1);
        options.target = target;
        options.build.quality = quality;
        if (target == blob::Target::Xe3 && far > 1e38f) {
          // A node spanning 6e38 needs an exponent beyond Xe3's 8 bits: refused as input, not a crash.
          EXPECT_THROW(build_blob(scene, options), Error);
          continue;
        }
        const BuildBlobResult r = build_blob(scene, options);
        EXPECT_EQ(r.report.triangles, 2u);
        EXPECT_TRUE(std::isfinite(r.report.sah_cost));
        EXPECT_GT(r.report.sah_cost, 0.0);
      }
    }
  }
}

TEST(BuildFile, WritesTheBlobAndTimesEveryPhase) {
  test::ScratchDir dir("pipeline-build-file");
  std::ofstream(dir / "quad.obj") << "o quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n";
  const BuildReport r = build_file(dir / "quad.obj", {}, dir / "quad.hwbvh", options_with_threads(1));
  EXPECT_EQ(r.source, "quad.obj");
  EXPECT_EQ(r.triangles, 2u);
  ASSERT_TRUE(r.run);
  EXPECT_GT(r.run->seconds.load, 0.0);
  EXPECT_GT(r.run->seconds.write, 0.0);
  const blob::Blob b = blob::read_file(dir / "quad.hwbvh");
  EXPECT_EQ(b.sections.size(), 4u);
}

TEST(BuildFile, BadSceneLeavesNoOutput) {
  test::ScratchDir dir("pipeline-bad-scene");
  std::ofstream(dir / "bad.obj") << "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 9\n";
  EXPECT_THROW(build_file(dir / "bad.obj", {}, dir / "bad.hwbvh", options_with_threads(1)), Error);
  EXPECT_THROW(build_file(dir / "missing.obj", {}, dir / "missing.hwbvh", options_with_threads(1)), Error);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"bad.obj"});
}

}  // namespace
}  // namespace hwbvh::pipeline
