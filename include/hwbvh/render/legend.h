#pragma once
// The legend strip drawn under a scalar image: a colour bar over [lo, hi] with tick marks and numbers, then
// caption lines (what is shown, where the scale comes from). Drawn with the built-in font (font.h).
//
//   +--------------------------------------+
//   | [########### colour bar ###########] |   bar: kBarHeight pixels, inset kLegendPad on each side
//   |  |        |        |        |        |   ticks at nice_ticks(lo, hi)
//   |  0       50      100      150        |   numbers centred on their ticks, clamped to the bar
//   |  steps per ray                       |   caption lines, wrapped to the strip width
//   |  max 163 (image)                     |
//   +--------------------------------------+
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hwbvh/render/image.h"

namespace hwbvh::render {

inline constexpr int kLegendPad = 3;
inline constexpr int kBarHeight = 8;
inline constexpr int kTickLength = 2;

/// A colour bar: `color(v)` for v from lo (left end) to hi (right end), labelled with ticks.
struct ColorBar {
  double lo = 0.0;
  double hi = 1.0;
  bool integer = false;                 ///< values are counts: ticks at whole numbers only
  std::function<Rgb(double)> color;     ///< the same mapping the image's pixels use
};

struct CaptionLine {
  std::string text;
  Rgb color{225, 225, 225};
};

struct Legend {
  std::optional<ColorBar> bar;        ///< absent: caption only
  std::vector<CaptionLine> caption;   ///< each line is wrapped to the strip width
};

/// Tick values for [lo, hi]: the multiples of a step of 1, 2 or 5 x 10^k inside [lo, hi], the step being the
/// smallest such that at most `max_ticks` ticks result (and at least 1 when `integer`). Empty if hi <= lo or
/// either is not finite.
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, int max_ticks, bool integer);

/// A tick or scale number: integers without a decimal point, others with up to 3 significant digits.
[[nodiscard]] std::string format_number(double value);

/// Height in pixels of the legend drawn `width` pixels wide at text `scale`.
[[nodiscard]] int legend_height(const Legend& legend, int width, int scale = 1);

/// Draws the legend with its top-left corner at (x, y), `width` pixels wide, on `background`.
void draw_legend(Image& image, int64_t x, int64_t y, int width, const Legend& legend, Rgb background, int scale = 1);

}  // namespace hwbvh::render
