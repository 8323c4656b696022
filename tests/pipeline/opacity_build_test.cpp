// Opacity in the build pipeline (docs/opacity.md §5): the AlphaTest section in every target's blob of an
// alpha-tested scene, the rtip31 Stoc sideband, STOC bits in xe3 leaves, the report's opacity part, determinism.
#include <gtest/gtest.h>

#include "fixtures/paths.h"
#include "hwbvh/blob/opacity_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/bake.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

const Scene& cards() {
  static const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  return scene;
}

BuildBlobOptions options_for(blob::Target target, int threads) {
  BuildBlobOptions o;
  o.target = target;
  o.build.threads = threads;
  o.encode.threads = threads;
  return o;
}

constexpr blob::Target kTargets[] = {blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3};

TEST(OpacityBuild, EveryTargetCarriesTheAlphaTest) {
  const auto count = static_cast<uint32_t>(cards().triangles.size());
  const AlphaTest expected = make_alpha_test(cards());
  for (blob::Target target : kTargets) {
    SCOPED_TRACE(blob::target_name(target));
    const BuildBlobResult r = build_blob(cards(), options_for(target, 1));
    const blob::Section* section = r.blob.find(blob::SectionType::AlphaTest);
    ASSERT_NE(section, nullptr);
    EXPECT_EQ(section->data, blob::encode_alpha_test(expected));
    const AlphaTest decoded = blob::decode_alpha_test(section->data, "mem", count);
    EXPECT_EQ(decoded.tested_count(), 288u);
    EXPECT_EQ(r.blob.find(blob::SectionType::Stoc) != nullptr, target == blob::Target::Rtip31);
    ASSERT_TRUE(r.report.opacity.has_value());
    const OpacityReport& o = *r.report.opacity;
    EXPECT_EQ(o.alpha_tested_triangles, 288u);
    EXPECT_EQ(o.cutoff, 0.5);
    EXPECT_EQ(o.order, "bird");
    if (target == blob::Target::Rtip20) {
      EXPECT_EQ(o.stoc_level, 0u);
      EXPECT_EQ(o.baked_sub_triangles, 0u);
      EXPECT_EQ(o.stoc_bytes, 0u);
      continue;
    }
    EXPECT_EQ(o.bake_level, BuildBlobOptions::kDefaultOpacityLevel);
    EXPECT_EQ(o.baked_sub_triangles, 288u * xe3::sub_triangle_count(o.bake_level));
    EXPECT_NEAR(o.opaque_share + o.transparent_share + o.unknown_share, 1.0, 1e-12);
    EXPECT_GT(o.opaque_share, 0.0);
    EXPECT_GT(o.transparent_share, 0.0);
  }
}

TEST(OpacityBuild, SidebandHoldsTheBakedStates) {
  BuildBlobOptions options = options_for(blob::Target::Rtip31, 1);
  options.stoc_order = xe3::SubTriangleOrder::Row;
  const BuildBlobResult r = build_blob(cards(), options);
  const blob::Section& section = r.blob.require(blob::SectionType::Stoc, "mem");
  EXPECT_EQ(r.report.opacity->stoc_bytes, section.data.size());
  EXPECT_EQ(r.report.opacity->stoc_level, BuildBlobOptions::kDefaultSidebandLevel);
  const blob::StocSideband sb =
      blob::decode_stoc_sideband(section.data, "mem", static_cast<uint32_t>(cards().triangles.size()));
  EXPECT_EQ(sb.level, BuildBlobOptions::kDefaultSidebandLevel);
  EXPECT_EQ(sb.order, xe3::SubTriangleOrder::Row);
  EXPECT_EQ(sb.listed_count(), 288u);
  // The sideband is the level-4 bake reduced to level 3.
  const AlphaTest alpha = make_alpha_test(cards());
  for (uint32_t t = 0; t < alpha.triangles.size(); ++t) {
    if (!alpha.tested(t)) continue;
    const auto states = xe3::restate(xe3::bake_opacity(alpha, t, 4), 3);
    for (uint32_t b = 0; b < 64; ++b)
      ASSERT_EQ(sb.state_at(t, xe3::row_index(xe3::bird_micro_triangle(b, 3), 3)), states[b]) << t << " " << b;
  }
  options.rtip31_stoc_level = 0;
  EXPECT_EQ(build_blob(cards(), options).blob.find(blob::SectionType::Stoc), nullptr);
}

TEST(OpacityBuild, Xe3LeavesGetStates) {
  for (uint32_t level : {1u, 3u}) {
    BuildBlobOptions options = options_for(blob::Target::Xe3, 1);
    options.xe3_stoc_level = level;
    const BuildBlobResult r = build_blob(cards(), options);
    EXPECT_EQ(r.report.opacity->stoc_level, level);
    // STOC3 leaves add a block each, and level-4 data per alpha-tested triangle; STOC1 adds no bytes.
    if (level == 3) {
      EXPECT_GT(r.report.opacity->stoc_bytes, 288u * 64u);
    } else {
      EXPECT_EQ(r.report.opacity->stoc_bytes, 0u);
    }
    BuildBlobOptions no_stoc = options;
    no_stoc.xe3_stoc_level = 0;
    // The states change the node bytes (STOC1 masks): the bake reached the encoder.
    EXPECT_NE(r.blob.require(blob::SectionType::Nodes, "mem").data,
              build_blob(cards(), no_stoc).blob.require(blob::SectionType::Nodes, "mem").data);
  }
}

TEST(OpacityBuild, DeterministicAcrossThreadCounts) {
  for (blob::Target target : kTargets) {
    SCOPED_TRACE(blob::target_name(target));
    BuildBlobOptions one = options_for(target, 1), two = options_for(target, 2);
    if (target == blob::Target::Xe3) one.xe3_stoc_level = two.xe3_stoc_level = 3;
    EXPECT_EQ(blob::serialize(build_blob(cards(), one).blob), blob::serialize(build_blob(cards(), two).blob));
  }
}

TEST(OpacityBuild, ReportRoundTripsThroughJson) {
  BuildBlobResult r = build_blob(cards(), options_for(blob::Target::Xe3, 1));
  r.report.run.reset();
  EXPECT_EQ(report_from_json(report_to_json(r.report), "mem"), r.report);
}

TEST(OpacityBuild, OpaqueScenesAreUnchanged) {
  const Scene scene = load_obj(test::project_scene("cornell-box.obj"));
  const BuildBlobResult r = build_blob(scene, options_for(blob::Target::Rtip31, 1));
  EXPECT_EQ(r.blob.sections.size(), 4u);
  EXPECT_FALSE(r.report.opacity.has_value());
  EXPECT_EQ(report_to_json(r.report).find("opacity"), std::string::npos);
}

TEST(OpacityBuild, RefusesBadOptions) {
  BuildBlobOptions options = options_for(blob::Target::Rtip31, 1);
  options.alpha_cutoff = 2.0f;
  EXPECT_THROW((void)build_blob(cards(), options), Error);
  options = options_for(blob::Target::Rtip31, 1);
  options.opacity_level = 13;
  EXPECT_THROW((void)build_blob(cards(), options), Error);
  options = options_for(blob::Target::Rtip31, 1);
  options.rtip31_stoc_level = 13;
  EXPECT_THROW((void)build_blob(cards(), options), Error);
}

}  // namespace
}  // namespace hwbvh::pipeline
