// The AlphaTest and Stoc sections (opacity_sections.h, docs/blob-format.md): round trips, the sideband's state
// lookup, and refusal of truncated, oversized and out-of-range bytes.
#include "hwbvh/blob/opacity_sections.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/bake.h"

namespace hwbvh::blob {
namespace {

using ::testing::HasSubstr;
using S = xe3::SubTriangleState;

AlphaTest sample_alpha() {
  AlphaTest a;
  a.cutoff = 0.25f;
  a.textures.push_back(AlphaTexture{"ignored.png", 3, 1, {0, 100, 255}});  // 3 bytes: padded to 4
  a.textures.push_back(AlphaTexture{"", 2, 2, {9, 8, 7, 6}});
  a.triangles.resize(5);
  a.triangles[1] = AlphaTest::Tri{1, {{0.5f, 0.25f}, {-1.0f, 2.0f}, {3.5f, 0.0f}}};
  a.triangles[4] = AlphaTest::Tri{0, {{0.0f, 0.0f}, {1.0f, 0.0f}, {0.0f, 1.0f}}};
  return a;
}

template <class Fn>
void expect_refused(Fn&& decode, const std::string& section, const std::string& needle) {
  try {
    decode();
    ADD_FAILURE() << "accepted; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), HasSubstr("o.hwbvh: " + section + ": "));
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

TEST(AlphaTestSection, RoundTrip) {
  const AlphaTest a = sample_alpha();
  const std::vector<std::byte> bytes = encode_alpha_test(a);
  EXPECT_EQ(bytes.size(), 16u + (8 + 4) + (8 + 4) + 2 * 32);
  const AlphaTest b = decode_alpha_test(bytes, "o.hwbvh", 5);
  EXPECT_EQ(b.cutoff, a.cutoff);
  ASSERT_EQ(b.textures.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(b.textures[i].width, a.textures[i].width);
    EXPECT_EQ(b.textures[i].height, a.textures[i].height);
    EXPECT_EQ(b.textures[i].alpha, a.textures[i].alpha);
    EXPECT_TRUE(b.textures[i].path.empty());  // no paths in blobs
  }
  ASSERT_EQ(b.triangles.size(), 5u);
  for (uint32_t t = 0; t < 5; ++t) {
    EXPECT_EQ(b.triangles[t].texture, a.triangles[t].texture);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(b.triangles[t].uv[k], a.triangles[t].uv[k]);
  }
  EXPECT_EQ(encode_alpha_test(b), bytes);
}

TEST(AlphaTestSection, RefusesBadBytes) {
  const std::vector<std::byte> good = encode_alpha_test(sample_alpha());
  const auto decode = [](std::vector<std::byte> b, uint32_t count = 5) {
    return [b, count] { (void)decode_alpha_test(b, "o.hwbvh", count); };
  };
  const auto edit = [&](std::size_t at, uint32_t value) {
    std::vector<std::byte> b = good;
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(value >> (8 * i));
    return b;
  };
  const std::string s = "alpha-test section";
  for (std::size_t cut : {std::size_t{0}, std::size_t{15}, std::size_t{32}, std::size_t{40}, good.size() - 1})
    expect_refused(decode(std::vector<std::byte>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut))), s,
                   "truncated");
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  expect_refused(decode(longer), s, "content ends at");
  expect_refused(decode(good, 6), s, "5 triangles, but the geometry section has 6");
  expect_refused(decode(edit(0, float_bits(1.5f))), s, "cutoff");
  expect_refused(decode(edit(0, float_bits(NAN))), s, "cutoff");
  expect_refused(decode(edit(4, 0x7fffffff)), s, "textures cannot fit");
  expect_refused(decode(edit(12, 6)), s, "alpha-tested triangles of 5");
  expect_refused(decode(edit(16, 0)), s, "texture 0 is empty");
  expect_refused(decode(edit(16, 0x10000)), s, "truncated");  // a huge texture
  const std::size_t records = 16 + 12 + 12;
  expect_refused(decode(edit(records, 5)), s, "out of range or not ascending");
  expect_refused(decode(edit(records + 32, 1)), s, "out of range or not ascending");  // same triangle twice
  expect_refused(decode(edit(records + 4, 2)), s, "texture 2 is out of range");
  expect_refused(decode(edit(records + 8, float_bits(INFINITY))), s, "non-finite");
}

TEST(StocSection, SidebandFromStatesAndRoundTrip) {
  // Triangle 0 untested, 1 at level 1, 2 at level 3 (restated to the sideband's level 2).
  std::vector<std::vector<S>> states(3);
  states[1] = {S::Opaque, S::Transparent, S::Unknown, S::Opaque};
  states[2].assign(64, S::Transparent);
  states[2][63] = S::Unknown;
  for (auto order : {xe3::SubTriangleOrder::Bird, xe3::SubTriangleOrder::Row}) {
    const StocSideband sb = make_stoc_sideband(states, 2, order);
    EXPECT_EQ(sb.level, 2u);
    EXPECT_EQ(sb.listed_count(), 2u);
    EXPECT_EQ(sb.words_per_triangle(), 1u);
    EXPECT_EQ(sb.state(0, {0.3f, 0.3f}), S::Opaque);  // not listed
    EXPECT_EQ(sb.state(7, {0.3f, 0.3f}), S::Opaque);  // out of range
    for (uint32_t b = 0; b < 16; ++b) {
      const xe3::MicroTriangle m = xe3::bird_micro_triangle(b, 2);
      const uint32_t k = order == xe3::SubTriangleOrder::Bird ? b : xe3::row_index(m, 2);
      EXPECT_EQ(sb.state_at(1, k), states[1][b / 4]);
      EXPECT_EQ(sb.state_at(2, k), b == 15 ? S::Unknown : S::Transparent);
      // The lookup by barycentrics lands in the same sub-triangle.
      const float off = m.inverted ? 2.0f / 3.0f : 1.0f / 3.0f;
      const Vec2 centroid{(static_cast<float>(m.iu) + off) / 4.0f, (static_cast<float>(m.iv) + off) / 4.0f};
      EXPECT_EQ(sb.state(1, centroid), states[1][b / 4]);
    }
    const std::vector<std::byte> bytes = encode_stoc_sideband(sb);
    EXPECT_EQ(bytes.size(), 16u + 8 + 2 * 16);
    const StocSideband back = decode_stoc_sideband(bytes, "o.hwbvh", 3);
    EXPECT_EQ(back.level, sb.level);
    EXPECT_EQ(back.order, sb.order);
    EXPECT_EQ(back.slot, sb.slot);
    EXPECT_EQ(back.opaque, sb.opaque);
    EXPECT_EQ(back.transparent, sb.transparent);
    EXPECT_EQ(encode_stoc_sideband(back), bytes);
  }
}

TEST(StocSection, DeepLevelsUseSeveralWords) {
  std::vector<std::vector<S>> states(2);
  states[0].assign(xe3::sub_triangle_count(4), S::Unknown);
  states[0][200] = S::Opaque;
  states[0][255] = S::Transparent;
  const StocSideband sb = make_stoc_sideband(states, 4, xe3::SubTriangleOrder::Bird);
  EXPECT_EQ(sb.words_per_triangle(), 4u);
  EXPECT_EQ(sb.state_at(0, 200), S::Opaque);
  EXPECT_EQ(sb.state_at(0, 255), S::Transparent);
  EXPECT_EQ(sb.state_at(0, 0), S::Unknown);
  const StocSideband back = decode_stoc_sideband(encode_stoc_sideband(sb), "o.hwbvh", 2);
  EXPECT_EQ(back.opaque, sb.opaque);
  EXPECT_THROW((void)make_stoc_sideband(states, 0, xe3::SubTriangleOrder::Bird), Error);
  EXPECT_THROW((void)make_stoc_sideband(states, 13, xe3::SubTriangleOrder::Bird), Error);
}

TEST(StocSection, RefusesBadBytes) {
  std::vector<std::vector<S>> states(4);
  states[1] = {S::Opaque, S::Transparent, S::Unknown, S::Opaque};
  const std::vector<std::byte> good = encode_stoc_sideband(make_stoc_sideband(states, 1, xe3::SubTriangleOrder::Bird));
  ASSERT_EQ(good.size(), 16u + 8 + 16);  // one listed triangle, padded list
  const auto decode = [](std::vector<std::byte> b, uint32_t count = 4) {
    return [b, count] { (void)decode_stoc_sideband(b, "o.hwbvh", count); };
  };
  const auto edit = [&](std::size_t at, uint32_t value) {
    std::vector<std::byte> b = good;
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(value >> (8 * i));
    return b;
  };
  const std::string s = "stoc section";
  expect_refused(decode(std::vector<std::byte>(good.begin(), good.begin() + 10)), s, "truncated");
  expect_refused(decode(std::vector<std::byte>(good.begin(), good.end() - 8)), s, "need 40");
  expect_refused(decode(edit(0, 0)), s, "level 0 is outside 1..12");
  expect_refused(decode(edit(0, 13)), s, "level 13 is outside 1..12");
  expect_refused(decode(edit(4, 2)), s, "unknown sub-triangle order 2");
  expect_refused(decode(good, 3), s, "4 triangles, but the geometry section has 3");
  expect_refused(decode(edit(12, 5)), s, "5 listed triangles of 4");
  expect_refused(decode(edit(12, 2)), s, "need");
  expect_refused(decode(edit(16, 4)), s, "out of range or not ascending");
  expect_refused(decode(edit(24, 0x10)), s, "mask bits past sub-triangle 4");      // opaque bit 4 at level 1
  expect_refused(decode(edit(32, 0x1)), s, "both opaque and transparent");         // transparent bit 0 = opaque bit 0
}

}  // namespace
}  // namespace hwbvh::blob
