#include "hwbvh/scene/rays_file.h"

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<std::byte> bytes_of(std::string_view s) {
  const auto b = std::as_bytes(std::span<const char>(s.data(), s.size()));
  return {b.begin(), b.end()};
}

bool same_rays(const std::vector<Ray>& a, const std::vector<Ray>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Ray)) == 0;
}

/// Rays with awkward values: inf tmax, -0, a denormal, values needing all 9 significant digits.
std::vector<Ray> sample_rays() {
  return {Ray{{0, 0, 0}, {0, 0, 1}, 0.0f, kInf},
          Ray{{-0.0f, 1e-40f, 3.4e38f}, {0.1f, -0.2f, 1.0f / 3.0f}, 1e-3f, 100.0f},
          Ray{{123456.789f, -7.0f, 2.5f}, {-1, 0, 0}, 2.0f, 2.0f}};
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hwbvh_rays_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

using RaysFileIo = TempDir;

TEST_F(RaysFileIo, TextAndBinaryRoundTripExactly) {
  const auto rays = sample_rays();
  for (RaysFileFormat format : {RaysFileFormat::Text, RaysFileFormat::Binary}) {
    const auto path = dir_ / (format == RaysFileFormat::Text ? "rays.txt" : "rays.bin");
    write_rays_file(path, rays, format);
    EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
    EXPECT_TRUE(same_rays(read_rays_file(path), rays));
  }
}

TEST_F(RaysFileIo, MissingFileNamesTheFile) {
  try {
    (void)read_rays_file(dir_ / "nope.rays");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("nope.rays"), std::string::npos);
  }
}

TEST_F(RaysFileIo, UnwritableDirectoryIsARuntimeError) {
  try {
    write_rays_file(dir_ / "missing_dir" / "rays.txt", sample_rays(), RaysFileFormat::Text);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
}

TEST(RaysFile, BinaryLayoutIsAsDocumented) {
  const std::vector<Ray> rays{Ray{{1, 2, 3}, {4, 5, 6}, 7, 8}};
  const auto b = serialize_rays(rays, RaysFileFormat::Binary);
  ASSERT_EQ(b.size(), 12u + 32u);
  EXPECT_EQ(std::memcmp(b.data(), "HWRAYS1\0", 8), 0);
  EXPECT_EQ(std::to_integer<int>(b[8]), 1);  // count, little-endian
  EXPECT_EQ(std::to_integer<int>(b[11]), 0);
  // 1.0f = 0x3F800000 little-endian at offset 12; 8.0f = 0x41000000 at offset 40.
  EXPECT_EQ(std::to_integer<int>(b[15]), 0x3F);
  EXPECT_EQ(std::to_integer<int>(b[14]), 0x80);
  EXPECT_EQ(std::to_integer<int>(b[43]), 0x41);
}

TEST(RaysFile, TextAcceptsCommentsBlankLinesCrLfAndInf) {
  const auto rays = parse_rays(bytes_of("# header\r\n\n  1 2 3  0 0 -1 0 inf # trailing\r\n"
                                        "\t+1e1 -2 3.5 1 0 0 0.5 Infinity\n"
                                        "0 0 0 0 1 0 0 10"),  // no final newline
                               "t.rays");
  ASSERT_EQ(rays.size(), 3u);
  EXPECT_EQ(rays[0].origin, Vec3(1, 2, 3));
  EXPECT_EQ(rays[0].direction, Vec3(0, 0, -1));
  EXPECT_EQ(rays[0].tmax, kInf);
  EXPECT_EQ(rays[1].origin.x, 10.0f);
  EXPECT_EQ(rays[1].tmin, 0.5f);
  EXPECT_EQ(rays[1].tmax, kInf);
  EXPECT_EQ(rays[2].tmax, 10.0f);
}

void expect_bad(const std::vector<std::byte>& bytes, const std::string& problem) {
  try {
    (void)parse_rays(bytes, "bad.rays");
    ADD_FAILURE() << "accepted, expected: " << problem;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("bad.rays: ", 0), 0u) << what;
    EXPECT_NE(what.find(problem), std::string::npos) << what << "\nexpected: " << problem;
  }
}

TEST(RaysFile, TextErrorsNameTheLine) {
  const std::string good = "0 0 0 0 0 1 0 1\n";
  expect_bad(bytes_of(good + "# c\n0 0 0 0 0 1 0\n"),
             "line 3: expected 8 numbers (ox oy oz dx dy dz tmin tmax), found 7");
  expect_bad(bytes_of(good + "0 0 0 0 0 1 0 1 9\n"), "line 2: expected 8 numbers");
  expect_bad(bytes_of(good + "0 0 zero 0 0 1 0 1\n"), "line 2: \"zero\" is not a number");
  expect_bad(bytes_of("0 0 0 0 0 1 0 1e\n"), "line 1: \"1e\" is not a number");
  expect_bad(bytes_of("nan 0 0 0 0 1 0 1\n"), "line 1: origin is not finite");
  expect_bad(bytes_of("0 0 0 inf 0 1 0 1\n"), "line 1: direction is not finite");
  expect_bad(bytes_of("0 0 0 0 0 0 0 1\n"), "line 1: direction is zero");
  expect_bad(bytes_of("0 0 0 0 0 1 2 1\n"), "line 1: tmin > tmax");
  expect_bad(bytes_of("0 0 0 0 0 1 -1 1\n"), "line 1: tmin must be finite and >= 0");
  expect_bad(bytes_of("0 0 0 0 0 1 inf inf\n"), "line 1: tmin must be finite and >= 0");
  expect_bad(bytes_of("0 0 0 0 0 1 0 nan\n"), "line 1: tmax is NaN");
  expect_bad(bytes_of("0 0 0 0 0 1 0 -inf\n"), "line 1: tmin > tmax");
  expect_bad(bytes_of("# only a comment\n\n"), "contains no rays");
  expect_bad({}, "contains no rays");
}

std::vector<std::byte> binary(std::span<const Ray> rays) { return serialize_rays(rays, RaysFileFormat::Binary); }

TEST(RaysFile, BinaryErrors) {
  const auto rays = sample_rays();
  auto b = binary(rays);
  expect_bad(std::vector<std::byte>(b.begin(), b.begin() + 10), "truncated header (10 bytes)");
  expect_bad(std::vector<std::byte>(b.begin(), b.begin() + 7), "truncated header (7 bytes)");
  expect_bad(std::vector<std::byte>(b.begin(), b.end() - 4),
             "size 104 bytes does not match the header's count of 3 rays (expected 108 bytes)");
  auto longer = b;
  longer.push_back(std::byte{0});
  expect_bad(longer, "size 109 bytes");
  auto huge = b;
  huge[11] = std::byte{0xFF};  // count 0xFF000003: must not allocate before checking the size
  expect_bad(huge, "does not match");
  expect_bad(binary({}), "contains no rays");
  auto version = b;
  version[6] = std::byte{'2'};
  expect_bad(version, "unknown binary rays file version (magic \"HWRAYS2?\"");

  std::vector<Ray> bad = rays;
  bad[1].direction = {0, kNaN, 0};
  expect_bad(binary(bad), "ray 1: direction is not finite");
  bad = rays;
  bad[2].direction = {0, 0, 0};
  expect_bad(binary(bad), "ray 2: direction is zero");
  bad = rays;
  bad[0].tmin = 5.0f;
  bad[0].tmax = 4.0f;
  expect_bad(binary(bad), "ray 0: tmin > tmax");
}

}  // namespace
}  // namespace hwbvh
