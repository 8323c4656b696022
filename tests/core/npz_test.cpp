// The .npy/.npz reader and writer (core/npz.h): golden files written by NumPy 1.24 (tests/fixtures/npz), round trips
// of arrays of every supported type and shape, and damaged archives refused with the file named, never a crash.
#include "hwbvh/core/npz.h"

#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFixtures = std::string(HWBVH_SOURCE_DIR) + "/tests/fixtures/npz/";

// The message parse_npz throws for `bytes` (empty if it parses).
std::string npz_refusal(std::span<const std::byte> bytes, uint64_t max_bytes = uint64_t{1} << 36) {
  try {
    (void)parse_npz(bytes, "x.npz", max_bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "";
}

TEST(Npz, ReadsWhatNumpySavezWrites) {
  const auto arrays = read_npz(kFixtures + "savez-int64.npz");
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays[0].first, "children");
  EXPECT_EQ(arrays[0].second.descr(), "<i8");
  EXPECT_THAT(arrays[0].second.shape, ElementsAre(3u, 2u));
  EXPECT_THAT(int_values(arrays[0].second, "f", "children"), ElementsAre(1, 2, -1, -1, -1, -1));
  EXPECT_EQ(arrays[3].first, "primitives");
  EXPECT_THAT(int_values(arrays[3].second, "f", "primitives"), ElementsAre(1, 0));
}

TEST(Npz, ReadsDeflatedArchivesAndEveryIntegerType) {
  const auto arrays = read_npz(kFixtures + "compressed-mixed.npz");
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays[0].second.descr(), "<i2");
  EXPECT_THAT(int_values(arrays[0].second, "f", "children"), ElementsAre(1, 2, -1, -1, -1, -1));
  EXPECT_EQ(arrays[1].second.descr(), "|u1");
  EXPECT_THAT(int_values(arrays[1].second, "f", "prim_begin"), ElementsAre(0, 0, 1));
  EXPECT_EQ(arrays[2].second.descr(), ">u4");  // big-endian
  EXPECT_THAT(int_values(arrays[2].second, "f", "prim_count"), ElementsAre(0, 1, 1));
  EXPECT_EQ(arrays[3].second.descr(), "<u8");
  EXPECT_THAT(int_values(arrays[3].second, "f", "primitives"), ElementsAre(1, 0));
}

TEST(Npz, WritesNpyHeadersByteForByteAsNumpySaveDoes) {
  const std::vector<int64_t> six = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(npy_bytes(make_int_array(six, {3, 2}, 'i', 4)), read_file_bytes(kFixtures + "int32-3x2.npy"));
  EXPECT_EQ(npy_bytes(make_int_array(std::span(six).first(5), {5}, 'u', 4)), read_file_bytes(kFixtures + "uint32-5.npy"));
  const std::vector<int64_t> seven = {7};
  EXPECT_EQ(npy_bytes(make_int_array(seven, {}, 'i', 8)), read_file_bytes(kFixtures + "int64-scalar.npy"));
}

TEST(Npz, RefusesWhatIsNotAPlainCOrderIntegerArray) {
  const auto refusal = [](const std::string& name) {
    try {
      const auto arrays = read_npz(kFixtures + name);
      (void)int_values(arrays.at(0).second, kFixtures + name, "children");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(refusal("fortran.npz"), HasSubstr("fortran.npz: children.npy: Fortran-ordered data is not read"));
  EXPECT_THAT(refusal("structured.npz"), HasSubstr("structured.npz: children.npy: a structured dtype"));
  EXPECT_THAT(refusal("float.npz"), HasSubstr("float.npz: children: dtype '<f4' is not an integer type"));
  EXPECT_THAT(refusal("missing.npz"), HasSubstr("missing.npz"));
}

// Random arrays of every integer type, 0 to 3 dimensions (some empty), written and read back unchanged.
TEST(Npz, RoundTripsRandomArrays) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::pair<std::string, NpyArray>> arrays;
    const int count = 1 + static_cast<int>(rng() % 4);
    for (int a = 0; a < count; ++a) {
      std::vector<uint64_t> shape(rng() % 4);
      uint64_t n = 1;
      for (uint64_t& d : shape) n *= (d = rng() % 5);
      const uint32_t bytes = 1u << (rng() % 4);
      const char kind = rng() % 2 ? 'i' : 'u';
      std::vector<int64_t> values(n);
      for (int64_t& v : values) {
        const uint64_t bits = bytes == 8 ? rng() >> 1 : rng() % (uint64_t{1} << (8 * bytes - 1));
        v = kind == 'i' && rng() % 2 ? -static_cast<int64_t>(bits) : static_cast<int64_t>(bits);
      }
      arrays.emplace_back("a" + std::to_string(a), make_int_array(values, shape, kind, bytes));
      const auto back = parse_npz(npz_bytes(arrays), "r.npz");
      ASSERT_EQ(back.size(), arrays.size());
      EXPECT_EQ(back.back().second.shape, shape);
      EXPECT_EQ(back.back().second.descr(), arrays.back().second.descr());
      EXPECT_EQ(int_values(back.back().second, "r.npz", "a"), values) << trial;
    }
  }
}

// np.savez() with no arrays writes a zip's end record alone; it reads back as no arrays (found by fuzz_npz).
TEST(Npz, AnArchiveWithoutArraysRoundTrips) {
  const std::vector<std::byte> empty = npz_bytes({});
  EXPECT_EQ(empty.size(), 22u);
  EXPECT_TRUE(parse_npz(empty, "empty.npz").empty());
}

TEST(Npz, TheSameArraysGiveTheSameBytes) {
  const std::vector<int64_t> v = {3, 1, 4};
  const std::vector<std::pair<std::string, NpyArray>> arrays = {{"v", make_int_array(v, {3}, 'u', 4)}};
  EXPECT_EQ(npz_bytes(arrays), npz_bytes(arrays));
}

// Every prefix of a valid archive, and every single flipped byte of it, is refused with the file named or read;
// the reader never crashes or reads past its input (run under ASan in the sanitizer build).
TEST(Npz, DamagedArchivesAreRefusedNamingTheFile) {
  const std::vector<std::byte> good = read_file_bytes(kFixtures + "compressed-mixed.npz");
  for (std::size_t n = 0; n < good.size(); ++n) {
    EXPECT_THAT(npz_refusal(std::span(good).first(n)), HasSubstr("x.npz: ")) << "prefix " << n;
  }
  int refused = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::vector<std::byte> bad = good;
    bad[i] ^= std::byte{0x55};
    const std::string message = npz_refusal(bad);
    refused += message.empty() ? 0 : 1;
    if (!message.empty()) {
      EXPECT_THAT(message, HasSubstr("x.npz: ")) << "byte " << i;
    }
  }
  EXPECT_GT(refused, static_cast<int>(good.size() / 2));  // checksums catch most flips in data
  EXPECT_THAT(npz_refusal(good, 100), HasSubstr("more than the 100 bytes an .npz may hold here"));
  const std::string text = "not a zip";
  EXPECT_THAT(npz_refusal(std::as_bytes(std::span(text))), HasSubstr("x.npz: not an .npz file"));
}

TEST(Npz, RefusesBadNpyHeaders) {
  const auto refusal = [](std::string header, std::string data = "") {
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file += static_cast<char>(header.size() & 0xFF);
    file += static_cast<char>(header.size() >> 8);
    file += header + data;
    try {
      (void)parse_npy(std::as_bytes(std::span(file)), "f.npz", "a.npy");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(refusal("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", "abcd"), "");
  EXPECT_THAT(refusal("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", "abcd"),
              HasSubstr("f.npz: a.npy: holds 4 data bytes; its shape and dtype need 6"));
  EXPECT_THAT(refusal("{'descr': '<i2', 'shape': (2,), }", "abcd"), HasSubstr("lacks one of"));
  EXPECT_THAT(refusal("{'descr': '<c8', 'fortran_order': False, 'shape': (), }", "abcdefgh"),
              HasSubstr("dtype '<c8' is not a plain integer"));
  EXPECT_THAT(refusal("{'descr': '<i2', 'fortran_order': Maybe, 'shape': (2,), }"), HasSubstr("not True or False"));
  EXPECT_THAT(refusal("{'descr': '<i2', 'fortran_order': False, 'shape': (-2,), }"), HasSubstr("non-negative"));
  EXPECT_THAT(refusal("{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }"),
              HasSubstr("overflows"));
  EXPECT_THAT(refusal("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'x': 1}"), HasSubstr("unknown header key"));
  EXPECT_THAT(refusal("{'descr': '<i2"), HasSubstr("unterminated"));
}

}  // namespace
}  // namespace hwbvh
