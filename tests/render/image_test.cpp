// Image raster, PNG encode/decode/write and base64 data URIs.
#include <fstream>
#include <span>

#include <gtest/gtest.h>

#include "blob/scratch_dir.h"
#include "hwbvh/core/error.h"
#include "hwbvh/render/image.h"
#include "hwbvh/render/png.h"

namespace hwbvh::render {
namespace {

// Not memcpy: the empty test vector's data() is null, and memcpy from or to null is undefined even for 0 bytes.
std::vector<std::byte> bytes_of(const std::string& s) {
  const auto bytes = std::as_bytes(std::span(s));
  return {bytes.begin(), bytes.end()};
}

Image test_pattern(uint32_t w, uint32_t h) {
  Image img(w, h);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x)
      img.set(x, y, {static_cast<uint8_t>(x * 7), static_cast<uint8_t>(y * 13), static_cast<uint8_t>(x ^ y)});
  return img;
}

TEST(Image, FillSetAndClippedDrawing) {
  Image img(4, 3, {1, 2, 3});
  EXPECT_EQ(img.width(), 4u);
  EXPECT_EQ(img.height(), 3u);
  EXPECT_EQ(img.bytes().size(), 36u);
  EXPECT_EQ(img.at(3, 2), (Rgb{1, 2, 3}));
  img.set(-1, 0, {9, 9, 9});  // outside: ignored
  img.set(4, 0, {9, 9, 9});
  img.set(1, 1, {9, 9, 9});
  EXPECT_EQ(img.at(1, 1), (Rgb{9, 9, 9}));
  img.fill_rect(-2, -2, 4, 4, {5, 5, 5});  // covers (0..1, 0..1)
  EXPECT_EQ(img.at(0, 0), (Rgb{5, 5, 5}));
  EXPECT_EQ(img.at(1, 1), (Rgb{5, 5, 5}));
  EXPECT_EQ(img.at(2, 1), (Rgb{1, 2, 3}));
  Image dot(2, 2, {7, 7, 7});
  img.blit(dot, 3, 2);  // only (3, 2) lands inside
  EXPECT_EQ(img.at(3, 2), (Rgb{7, 7, 7}));
  EXPECT_EQ(img.at(2, 2), (Rgb{1, 2, 3}));
  // Row-major from the top row, r g b.
  EXPECT_EQ(img.bytes()[3 * (2 * 4 + 3)], 7);
}

TEST(Png, EncodeDecodeRoundTripIsLossless) {
  const Image img = test_pattern(37, 11);
  const std::vector<std::byte> png = encode_png(img);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(std::to_integer<int>(png[1]), 'P');
  EXPECT_EQ(decode_png(png, "mem"), img);
}

TEST(Png, WrittenFileDecodesWithTheRequestedSizeAndLeavesNoTemporary) {
  test::ScratchDir dir("render-png");
  const Image img = test_pattern(96, 64);
  write_png(dir / "out.png", img);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"out.png"});
  const Image back = read_png(dir / "out.png");
  EXPECT_EQ(back.width(), 96u);
  EXPECT_EQ(back.height(), 64u);
  EXPECT_EQ(back, img);
}

TEST(Png, WriteFailureIsARuntimeErrorAndLeavesNothing) {
  test::ScratchDir dir("render-png-fail");
  try {
    write_png(dir / "missing-dir" / "out.png", test_pattern(4, 4));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("out.png"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dir.files().empty());
  EXPECT_THROW((void)encode_png(Image()), Error);
}

TEST(Png, UnreadableInputIsBadInputNamingTheFile) {
  test::ScratchDir dir("render-png-bad");
  std::ofstream(dir / "junk.png", std::ios::binary) << "not a png at all";
  for (const auto& path : {dir / "junk.png", dir / "absent.png"}) {
    try {
      (void)read_png(path);
      FAIL() << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(path.filename().string()), std::string::npos) << e.what();
    }
  }
}

TEST(Base64, Rfc4648TestVectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [in, out] : vectors) EXPECT_EQ(base64(bytes_of(in)), out) << in;
  EXPECT_EQ(base64(bytes_of(std::string("\xff\xfe\x00\x3f", 4))), "//4APw==");
}

TEST(Base64, DataUriHoldsThePng) {
  const Image img = test_pattern(5, 3);
  const std::string uri = png_data_uri(img);
  const std::string prefix = "data:image/png;base64,";
  ASSERT_EQ(uri.compare(0, prefix.size(), prefix), 0);
  EXPECT_EQ(uri.substr(prefix.size()), base64(encode_png(img)));
  EXPECT_EQ(uri.find_first_of("\n\r "), std::string::npos);
}

}  // namespace
}  // namespace hwbvh::render
