#include "hwbvh/render/legend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hwbvh/render/font.h"

namespace hwbvh::render {
namespace {

constexpr Rgb kTickColor{200, 200, 200};
constexpr int kLabelGap = 4;      // pixels kept free between neighbouring tick numbers
constexpr int kTickSpacing = 48;  // about one tick per this many pixels of bar
constexpr double kSlack = 1e-9;  // in steps: 0.3 / 0.1 must count as 3, not 2.9999999999999996

std::vector<std::string> caption_lines(const CaptionLine& line, int width, int scale) {
  return wrap_text(line.text, width - 2 * kLegendPad * scale, scale);
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int max_ticks, bool integer) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo) return {};
  max_ticks = std::max(max_ticks, 2);
  int e = static_cast<int>(std::floor(std::log10((hi - lo) / max_ticks)));
  if (integer) e = std::max(e, 0);
  // m x 10^e, dividing for negative e so that 3 x 0.1 comes out as 0.3.
  const auto times = [](double k, double m, int exp) {
    return exp >= 0 ? k * m * std::pow(10.0, exp) : k * m / std::pow(10.0, -exp);
  };
  for (;; ++e) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double step = times(1.0, m, e);
      const double first = std::ceil(lo / step - kSlack), last = std::floor(hi / step + kSlack);
      if (last - first + 1 > max_ticks) continue;
      std::vector<double> ticks;
      for (double k = first; k <= last; k += 1.0) ticks.push_back(k == 0.0 ? 0.0 : times(k, m, e));  // no "-0"
      return ticks;
    }
  }
}

std::string format_number(double value) {
  if (value == 0.0) return "0";  // also -0
  char buf[32];
  if (std::abs(value) < 1e15 && (value == std::round(value) || std::abs(value) >= 100.0)) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", value);
  }
  return buf;
}

int legend_height(const Legend& legend, int width, int scale) {
  int h = 2 * kLegendPad;
  if (legend.bar) h += kBarHeight + kTickLength + 1 + kLineHeight;
  for (const CaptionLine& line : legend.caption)
    h += static_cast<int>(caption_lines(line, width, scale).size()) * kLineHeight;
  return h * scale;
}

void draw_legend(Image& image, int64_t x, int64_t y, int width, const Legend& legend, Rgb background, int scale) {
  image.fill_rect(x, y, width, legend_height(legend, width, scale), background);
  const int pad = kLegendPad * scale;
  int64_t cy = y + pad;
  if (legend.bar) {
    const ColorBar& bar = *legend.bar;
    const int64_t x0 = x + pad, bar_width = std::max(width - 2 * pad, 1);
    // The end pixels show exactly lo and hi.
    const double last = static_cast<double>(std::max<int64_t>(bar_width - 1, 1));
    for (int64_t i = 0; i < bar_width; ++i) {
      const double v = bar.lo + (bar.hi - bar.lo) * static_cast<double>(i) / last;
      image.fill_rect(x0 + i, cy, 1, kBarHeight * scale, bar.color(v));
    }
    cy += kBarHeight * scale;
    // Numbers are centred on their ticks but kept inside the bar, and skipped where they would collide.
    const int max_ticks = std::max(3, static_cast<int>(bar_width / (kTickSpacing * scale)));
    int64_t free_from = x0;
    for (const double t : nice_ticks(bar.lo, bar.hi, max_ticks, bar.integer)) {
      const auto tx = x0 + static_cast<int64_t>(std::lround((t - bar.lo) / (bar.hi - bar.lo) * last));
      image.fill_rect(tx, cy, scale, kTickLength * scale, kTickColor);
      const std::string label = format_number(t);
      const int w = text_width(label, scale);
      if (w > bar_width) continue;
      const int64_t lx = std::clamp<int64_t>(tx - w / 2, x0, x0 + bar_width - w);
      if (lx < free_from) continue;
      draw_text(image, lx, cy + (kTickLength + 1) * scale, label, kTickColor, scale);
      free_from = lx + w + kLabelGap * scale;
    }
    cy += (kTickLength + 1 + kLineHeight) * scale;
  }
  for (const CaptionLine& line : legend.caption) {
    for (const std::string& text : caption_lines(line, width, scale)) {
      draw_text(image, x + pad, cy, text, line.color, scale);
      cy += kLineHeight * scale;
    }
  }
}

}  // namespace hwbvh::render
