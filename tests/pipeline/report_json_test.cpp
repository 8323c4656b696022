// Regression tests for fuzz findings in report_from_json (the BuildMeta section `hwbvh info` reads back): numbers that
// do not fit their field are refused as bad input instead of being cast (found by fuzz/fuzz_build_meta.cpp: a float
// out of range converted to an integer is undefined behaviour).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwbvh/core/error.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

// The JSON of a report whose box_nodes and run.threads hold marker values, with one marker replaced by `text`.
std::string report_with(const std::string& marker, const std::string& text) {
  BuildReport r;
  r.box_nodes = 123457;
  r.run = RunInfo{7654, {}};
  std::string json = report_to_json(r);
  const std::size_t at = json.find(marker);
  EXPECT_NE(at, std::string::npos) << json;
  return json.replace(at, marker.size(), text);
}

TEST(ReportFromJson, MarkersReadBack) {
  const BuildReport r = report_from_json(report_with("123457", "42"), "meta.json");
  EXPECT_EQ(r.box_nodes, 42u);
  ASSERT_TRUE(r.run.has_value());
  EXPECT_EQ(r.run->threads, 7654);
}

TEST(ReportFromJson, NumbersThatDoNotFitTheirFieldAreBadInput) {
  for (const auto& [marker, text] : std::vector<std::pair<std::string, std::string>>{
           {"123457", "79000000000000000000000000000000000000000000"},  // the fuzzer's input: a float past 2^64
           {"123457", "1e300"},
           {"123457", "-1"},
           {"123457", "2.5"},
           {"7654", "1e20"},
           {"7654", "4294967296"},
           {"7654", "-1.5e30"}}) {
    try {
      (void)report_from_json(report_with(marker, text), "meta.json");
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_THAT(e.what(), ::testing::HasSubstr("meta.json: build-meta section: field '")) << e.what();
    }
  }
}

}  // namespace
}  // namespace hwbvh::pipeline
