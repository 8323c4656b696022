// `hwbvh stats --per-ray`: both encodings read back (the .npy header and rows parsed here, without NumPy) and
// checked against the traversal results, for every target.
#include "hwbvh/stats/per_ray.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <set>
#include <regex>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "hwbvh/core/error.h"
#include "stats/stats_fixture.h"

namespace hwbvh::stats {
namespace {

StatsReport traced(blob::Target target, bool oracle = false) {
  pipeline::BuildBlobOptions build;
  build.target = target;
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_blob(scene, build).blob, "alpha-cards");
  StatsOptions o = test::small_stats_options();
  o.width = 16;
  o.height = 8;
  o.random_rays = 64;
  o.oracle = oracle;
  o.keep_results = true;
  return run_stats(bvh, o);
}

std::string text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Every row's expected values as text, in column order, from the report's own rays and results.
std::vector<std::string> expected_fields(const KindStats& k, std::size_t i) {
  const Ray& ray = k.rays_traced[i];
  const emu::RayResult& r = k.results[i];
  const auto f = [](float v) { return v; };
  std::vector<std::string> out = {ray_kind_name(k.kind), std::to_string(i)};
  for (float v : {f(ray.origin.x), f(ray.origin.y), f(ray.origin.z), f(ray.direction.x), f(ray.direction.y),
                  f(ray.direction.z), f(ray.tmin), f(ray.tmax)}) {
    out.push_back(std::to_string(std::bit_cast<uint32_t>(v)));
  }
  out.push_back(r.hit ? "1" : "0");
  out.push_back(std::to_string(std::bit_cast<uint32_t>(r.t)));
  out.push_back(std::to_string(r.instance_index));
  out.push_back(std::to_string(r.geometry_id));
  out.push_back(std::to_string(r.primitive_id));
  out.push_back(std::to_string(std::bit_cast<uint32_t>(r.barycentrics.x)));
  out.push_back(std::to_string(std::bit_cast<uint32_t>(r.barycentrics.y)));
  out.push_back(k.verdicts.empty() ? "off"
                : k.verdicts[i] == emu::Disagreement::None ? "agree" : emu::disagreement_name(k.verdicts[i]));
  out.push_back(r.fault == emu::NodeFault::None ? "none" : "?");  // faults: PerRayFaults below
  out.push_back(std::to_string(r.fault == emu::NodeFault::None ? 0u : r.fault_node));
  for (const emu::RayCounterField& c : emu::kRayCounterFields) out.push_back(std::to_string(r.counters.*c.member));
  return out;
}

// Column names whose values are floats (compared by their bits).
bool is_float_column(const std::string& name) {
  static const std::set<std::string> floats = {"origin_x", "origin_y", "origin_z", "direction_x", "direction_y",
                                               "direction_z", "tmin", "tmax", "t", "u", "v"};
  return floats.count(name) != 0;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) out.push_back(field);
  return out;
}

class PerRayTest : public ::testing::TestWithParam<blob::Target> {};

// The CSV's header and every row against the report's rays and results.
void expect_csv_reads_back(const StatsReport& report) {
  std::stringstream in(text(per_ray_bytes(report, PerRayFormat::Csv)));
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const std::vector<std::string> names = split(line);
  ASSERT_EQ(names.size(), 20 + std::size(emu::kRayCounterFields));
  EXPECT_EQ(names[0], "ray_type");
  EXPECT_EQ(names.back(), "instance_transitions");
  std::size_t rows = 0, hits = 0;
  for (const KindStats& k : report.kinds) {
    ASSERT_EQ(k.results.size(), k.rays_traced.size());
    for (std::size_t i = 0; i < k.results.size(); ++i, ++rows) {
      ASSERT_TRUE(std::getline(in, line));
      std::vector<std::string> fields = split(line);
      ASSERT_EQ(fields.size(), names.size()) << line;
      for (std::size_t c = 0; c < fields.size(); ++c) {
        if (is_float_column(names[c])) fields[c] = std::to_string(std::bit_cast<uint32_t>(std::stof(fields[c])));
      }
      EXPECT_EQ(fields, expected_fields(k, i)) << line;
      hits += k.results[i].hit ? 1 : 0;
    }
  }
  EXPECT_FALSE(std::getline(in, line)) << "a row too many";
  EXPECT_GT(rows, 100u);
  EXPECT_GT(hits, 0u);
}

TEST_P(PerRayTest, CsvReadsBackToTheTraversalResults) { expect_csv_reads_back(traced(GetParam())); }

// With the oracle on, every row carries its verdict, and the verdicts sum to the counts `hwbvh stats` prints.
TEST_P(PerRayTest, RowsCarryTheOraclesVerdict) {
  const StatsReport report = traced(GetParam(), true);
  expect_csv_reads_back(report);
  for (const KindStats& k : report.kinds) {
    ASSERT_EQ(k.verdicts.size(), k.results.size());
    emu::AgreementStats sum;
    for (const emu::Disagreement d : k.verdicts) ++sum.by_cause[static_cast<std::size_t>(d)];
    EXPECT_EQ(sum.by_cause, k.agreement.by_cause) << ray_kind_name(k.kind);
  }
}

// A faulted ray is not a miss in the output: its fault and node pointer have columns of their own, and a
// disagreement is named by its cause.
TEST(PerRayFaults, FaultAndVerdictColumns) {
  StatsReport report;
  KindStats& k = report.kinds.emplace_back();
  k.kind = RayKind::Random;
  k.rays_traced.resize(3);
  k.results.resize(3);
  k.results[1].fault = emu::NodeFault::OutOfRange;
  k.results[1].fault_node = 0xF0;
  k.results[2].fault = emu::NodeFault::MalformedPrimitive;
  k.results[2].fault_node = 0x1234;
  k.verdicts = {emu::Disagreement::None, emu::Disagreement::EmuMissEmbreeHit, emu::Disagreement::EdgeCrack};
  const std::string csv = text(per_ray_bytes(report, PerRayFormat::Csv));
  std::stringstream in(csv);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const std::vector<std::string> names = split(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  ASSERT_LT(column("fault_node"), names.size());
  const std::vector<std::array<std::string, 4>> expected = {{"0", "agree", "none", "0"},
                                                            {"0", "emu-miss-embree-hit", "out-of-range", "240"},
                                                            {"0", "edge-crack", "malformed-primitive", "4660"}};
  for (const auto& want : expected) {
    ASSERT_TRUE(std::getline(in, line));
    const std::vector<std::string> fields = split(line);
    EXPECT_EQ(fields[column("hit")], want[0]);
    EXPECT_EQ(fields[column("oracle")], want[1]);
    EXPECT_EQ(fields[column("fault")], want[2]);
    EXPECT_EQ(fields[column("fault_node")], want[3]);
  }
  const std::string npy = text(per_ray_bytes(report, PerRayFormat::Npy));
  EXPECT_NE(npy.find("('oracle', '|S28'), ('fault', '|S20'), ('fault_node', '<u4')"), std::string::npos);
  EXPECT_NE(npy.find(std::string("out-of-range\0", 13)), std::string::npos);
}

// A two-level blob's rows carry the hit's instance index (the sideband's) in `instance_id`.
TEST(PerRayTwoLevel, InstanceIdIsTheHitsInstanceIndex) {
  const InstancedScene scene = std::get<InstancedScene>(load_any_scene(test::project_scene("instanced-garden.gltf"), {}));
  const emu::LoadedBvh bvh = emu::load_bvh(pipeline::build_instanced_blob(scene, {}).blob, "garden");
  StatsOptions o = test::small_stats_options();
  o.oracle = false;
  o.keep_results = true;
  const StatsReport report = run_stats(bvh, o);
  expect_csv_reads_back(report);
  std::set<uint32_t> instances;
  for (const emu::RayResult& r : report.kinds[0].results) {
    if (r.hit) instances.insert(r.instance_index);
  }
  EXPECT_GT(instances.size(), 10u);  // the primary rays see many of the 331 instances
}

TEST_P(PerRayTest, NpyIsAStructuredArrayOfTheTraversalResults) {
  const StatsReport report = traced(GetParam());
  const std::string bytes = text(per_ray_bytes(report, PerRayFormat::Npy));
  ASSERT_GT(bytes.size(), 10u);
  ASSERT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_bytes = static_cast<uint8_t>(bytes[8]) | static_cast<std::size_t>(static_cast<uint8_t>(bytes[9])) << 8;
  const std::size_t data = 10 + header_bytes;
  EXPECT_EQ(data % 64, 0u) << "NumPy wants the data aligned to 64 bytes";
  const std::string header = bytes.substr(10, header_bytes);
  EXPECT_EQ(header.back(), '\n');
  std::size_t rows = 0;
  for (const KindStats& k : report.kinds) rows += k.results.size();
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (" + std::to_string(rows) + ",)"), std::string::npos) << header;

  // The fields, their types and offsets, from the descr list.
  struct Field {
    std::string name, type;
    std::size_t offset, size;
  };
  std::vector<Field> fields;
  std::size_t row_bytes = 0;
  const std::regex field_re(R"(\('(\w+)', '([<|])([uifS])(\d+)'\))");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), field_re); it != std::sregex_iterator(); ++it) {
    const std::size_t size = std::stoul((*it)[4]);
    EXPECT_TRUE((*it)[2] == "<" || size == 1 || (*it)[3] == "S") << "little-endian";
    fields.push_back({(*it)[1], (*it)[3], row_bytes, size});
    row_bytes += size;
  }
  ASSERT_EQ(fields.size(), 20 + std::size(emu::kRayCounterFields));
  ASSERT_EQ(bytes.size(), data + rows * row_bytes);

  std::size_t row = 0;
  for (const KindStats& k : report.kinds) {
    for (std::size_t i = 0; i < k.results.size(); ++i, ++row) {
      std::vector<std::string> values;
      for (const Field& f : fields) {
        const char* p = bytes.data() + data + row * row_bytes + f.offset;
        if (f.type == "S") {
          values.emplace_back(p, strnlen(p, f.size));
        } else {
          uint64_t v = 0;
          for (std::size_t b = 0; b < f.size; ++b) v |= uint64_t{static_cast<uint8_t>(p[b])} << (8 * b);
          values.push_back(std::to_string(v));  // floats as their bits, as expected_fields gives them
        }
      }
      EXPECT_EQ(values, expected_fields(k, i)) << "row " << row;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, PerRayTest,
                         ::testing::Values(blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3),
                         [](const auto& info) { return std::string(blob::target_name(info.param)); });

TEST(PerRayFormatTest, ByExtension) {
  EXPECT_EQ(per_ray_format("rays.csv"), PerRayFormat::Csv);
  EXPECT_EQ(per_ray_format("out/rays.npy"), PerRayFormat::Npy);
  for (const char* bad : {"rays.txt", "rays", "rays.CSV", "rays.npz"}) {
    try {
      (void)per_ray_format(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(PerRayFormatTest, NeedsTheResultsKept) {
  StatsReport report;
  report.kinds.emplace_back();
  report.kinds.back().results.resize(3);
  EXPECT_THROW((void)per_ray_bytes(report, PerRayFormat::Csv), Error);
}

}  // namespace
}  // namespace hwbvh::stats
