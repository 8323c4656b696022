// Colour maps, the bitmap font, and the legend strip (ticks, numbers, layout).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "hwbvh/render/colormap.h"
#include "hwbvh/render/font.h"
#include "hwbvh/render/legend.h"

namespace hwbvh::render {
namespace {

int luma(Rgb c) { return 299 * c.r + 587 * c.g + 114 * c.b; }

TEST(Colormap, ViridisMatchesThePublishedTable) {
  EXPECT_EQ(viridis(0.0f), (Rgb{68, 1, 84}));     // #440154
  EXPECT_EQ(viridis(1.0f), (Rgb{253, 231, 37}));  // #fde725
  EXPECT_EQ(viridis(128.0f / 255.0f), (Rgb{33, 145, 140}));  // #21918c
  EXPECT_EQ(viridis(64.0f / 255.0f), (Rgb{59, 82, 139}));    // #3b528b
  // Between samples: within a unit of the table's entry 200 (0.440137, 0.811138, 0.340967).
  const Rgb mid = viridis(200.0f / 255.0f);
  EXPECT_NEAR(mid.r, 112, 1);
  EXPECT_NEAR(mid.g, 207, 1);
  EXPECT_NEAR(mid.b, 87, 1);
}

TEST(Colormap, ViridisIsOrderedDarkToLightAndClamps) {
  for (int i = 1; i <= 100; ++i)
    EXPECT_GT(luma(viridis(static_cast<float>(i) / 100.0f)), luma(viridis(static_cast<float>(i - 1) / 100.0f))) << i;
  EXPECT_EQ(viridis(-3.0f), viridis(0.0f));
  EXPECT_EQ(viridis(7.0f), viridis(1.0f));
  EXPECT_EQ(viridis(std::numeric_limits<float>::quiet_NaN()), viridis(0.0f));
}

TEST(Colormap, DivergingIsNeutralAtZeroAndSymmetricInLightness) {
  const Rgb zero = diverging(0.0f), lo = diverging(-1.0f), hi = diverging(1.0f);
  EXPECT_EQ(zero.r, zero.g);
  EXPECT_EQ(zero.g, zero.b);
  EXPECT_GT(lo.b, lo.r);  // negative: blue
  EXPECT_GT(hi.r, hi.b);  // positive: red
  EXPECT_EQ(diverging(-5.0f), lo);
  EXPECT_EQ(diverging(5.0f), hi);
  EXPECT_EQ(diverging(std::numeric_limits<float>::quiet_NaN()), zero);
  for (float t : {0.25f, 0.5f, 0.75f}) {
    EXPECT_LT(luma(diverging(t)), luma(zero));
    EXPECT_LT(luma(diverging(-t)), luma(zero));
  }
}

TEST(Colormap, DepthGreyGoesFromLightToDarkAndMixRounds) {
  EXPECT_GT(luma(depth_grey(0.0f)), luma(depth_grey(0.5f)));
  EXPECT_GT(luma(depth_grey(0.5f)), luma(depth_grey(1.0f)));
  EXPECT_EQ(mix({0, 100, 255}, {255, 0, 0}, 0.5f), (Rgb{128, 50, 128}));
  EXPECT_EQ(mix({1, 2, 3}, {9, 9, 9}, 0.0f), (Rgb{1, 2, 3}));
}

TEST(Font, GlyphsAndWidths) {
  const auto one = glyph('1');
  EXPECT_EQ(one[0], 0b00100);
  EXPECT_EQ(one[6], 0b01110);
  EXPECT_EQ(glyph(' '), (std::array<uint8_t, kGlyphHeight>{}));
  EXPECT_EQ(glyph('\x01'), glyph('?'));
  EXPECT_EQ(glyph('\xe9'), glyph('?'));
  EXPECT_NE(glyph('g')[8], 0);  // descender
  // Every printable character but the space has ink, and no two share a bitmap.
  for (int a = 33; a < 127; ++a) {
    int ink = 0;
    for (uint8_t row : glyph(static_cast<char>(a))) ink += row;
    EXPECT_GT(ink, 0) << static_cast<char>(a);
    for (int b = a + 1; b < 127; ++b) EXPECT_NE(glyph(static_cast<char>(a)), glyph(static_cast<char>(b))) << a << " " << b;
  }
  EXPECT_EQ(text_width(""), 0);
  EXPECT_EQ(text_width("a"), 5);
  EXPECT_EQ(text_width("abc"), 17);
  EXPECT_EQ(text_width("abc", 2), 34);
}

TEST(Font, DrawTextPaintsExactlyTheGlyphBits) {
  Image img(20, 12, {0, 0, 0});
  draw_text(img, 1, 2, "L1", {255, 255, 255});
  int painted = 0, bits = 0;
  for (uint32_t y = 0; y < img.height(); ++y)
    for (uint32_t x = 0; x < img.width(); ++x) painted += img.at(x, y).r == 255;
  for (char c : std::string("L1"))
    for (uint8_t row : glyph(c)) bits += __builtin_popcount(row);
  EXPECT_EQ(painted, bits);
  EXPECT_EQ(img.at(1, 2).r, 255);   // top of the L's stem
  EXPECT_EQ(img.at(1, 8).r, 255);   // foot of the L
  EXPECT_EQ(img.at(5, 8).r, 255);
  EXPECT_EQ(img.at(0, 2).r, 0);
  Image big(20, 20);
  draw_text(big, 0, 0, ".", {255, 0, 0}, 2);  // '.' is 2x2 ink at rows 5..6 -> 4x4 at scale 2
  EXPECT_EQ(big.at(2, 10).r, 255);
  EXPECT_EQ(big.at(5, 13).r, 255);
  EXPECT_EQ(big.at(6, 13).r, 0);
  draw_text(big, -100, -100, "clipped", {1, 1, 1});  // off the image: no crash, nothing drawn
}

TEST(Font, FitAndWrap) {
  EXPECT_EQ(fit_text("abc", 17), "abc");
  EXPECT_EQ(fit_text("abcdef", 29), "abc..");  // 5 characters = 29 px
  EXPECT_EQ(fit_text("abcdef", 10), "");       // not even ".." + a character
  EXPECT_EQ(fit_text("abcdef", 11), "..");
  EXPECT_EQ(wrap_text("steps per ray", 60), (std::vector<std::string>{"steps per", "ray"}));
  EXPECT_EQ(wrap_text("max 163 (image)", 200), (std::vector<std::string>{"max 163 (image)"}));
  EXPECT_EQ(wrap_text("  a   b  ", 200), (std::vector<std::string>{"a b"}));
  EXPECT_EQ(wrap_text("abcdefghij x", 29), (std::vector<std::string>{"abc..", "x"}));
  EXPECT_TRUE(wrap_text("", 100).empty());
}

TEST(Legend, NiceTicks) {
  EXPECT_EQ(nice_ticks(0, 163, 6, true), (std::vector<double>{0, 50, 100, 150}));
  EXPECT_EQ(nice_ticks(0, 3, 6, true), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(nice_ticks(0, 1, 6, true), (std::vector<double>{0, 1}));
  EXPECT_EQ(nice_ticks(0, 1, 5, false), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(nice_ticks(0, 0.3, 4, false), (std::vector<double>{0, 0.1, 0.2, 0.3}));
  EXPECT_EQ(nice_ticks(-12, 12, 5, true), (std::vector<double>{-10, -5, 0, 5, 10}));
  EXPECT_EQ(nice_ticks(712, 1654, 4, false), (std::vector<double>{1000, 1500}));
  EXPECT_EQ(nice_ticks(0, 100, 1, true), (std::vector<double>{0, 100}));  // at least two ticks allowed
  EXPECT_TRUE(nice_ticks(5, 5, 4, true).empty());
  EXPECT_TRUE(nice_ticks(0, std::numeric_limits<double>::infinity(), 4, true).empty());
  for (int n = 2; n < 12; ++n)
    for (double hi : {1.0, 7.0, 42.0, 163.0, 999.0, 12345.0}) EXPECT_LE(nice_ticks(0, hi, n, true).size(), n) << hi;
}

TEST(Legend, FormatNumber) {
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(163), "163");
  EXPECT_EQ(format_number(-10), "-10");
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(0.125), "0.125");
  EXPECT_EQ(format_number(0.00012), "0.00012");
  EXPECT_EQ(format_number(1234.56), "1235");
  EXPECT_EQ(format_number(12.345), "12.3");
}

TEST(Legend, HeightAndDrawing) {
  Legend legend;
  legend.bar = ColorBar{0, 100, true, [](double v) { return viridis(static_cast<float>(v / 100)); }};
  legend.caption = {{"steps per ray"}, {"max 100 (image)"}};
  const int pad = 2 * kLegendPad, bar = kBarHeight + kTickLength + 1 + kLineHeight;
  EXPECT_EQ(legend_height(legend, 200), pad + bar + 2 * kLineHeight);
  EXPECT_EQ(legend_height(legend, 60), pad + bar + 4 * kLineHeight);  // both captions wrap
  EXPECT_EQ(legend_height(legend, 200, 2), 2 * (pad + bar + 2 * kLineHeight));
  EXPECT_EQ(legend_height(Legend{}, 200), pad);

  const Rgb bg{10, 20, 30};
  Image img(200, 80, {0, 0, 0});
  draw_legend(img, 0, 5, 200, legend, bg);
  EXPECT_EQ(img.at(0, 5), bg);  // padding
  EXPECT_EQ(img.at(kLegendPad, 5 + kLegendPad), viridis(0.0f));
  EXPECT_EQ(img.at(200 - kLegendPad - 1, 5 + kLegendPad), viridis(1.0f));
  EXPECT_EQ(img.at(100, 4), (Rgb{0, 0, 0}));  // nothing drawn above the strip
  EXPECT_EQ(img.at(100, 5 + legend_height(legend, 200)), (Rgb{0, 0, 0}));  // nor below it
}

}  // namespace
}  // namespace hwbvh::render
