#pragma once
// What the machine model's SVG plots share (`machine sweep`'s line plot, `machine sensitivity`'s tornado plot):
// the document's opening, a colour per series, axis ranges with round ticks, legend entries.
#include <string>

namespace hwbvh::stats::svg {

inline constexpr int kTicks = 5;
inline constexpr const char* kColours[] = {"#1f4e9a", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#5d6d7e"};

/// An axis range that holds [lo, hi] with kTicks ticks at multiples of 1, 2 or 5 times a power of ten. With lo = 0
/// the axis starts at zero.
struct AxisRange {
  double start = 0.0, step = 1.0;
  [[nodiscard]] double end() const { return start + kTicks * step; }
};
[[nodiscard]] AxisRange axis_range(double lo, double hi);

/// The <svg> element's opening and a white background.
[[nodiscard]] std::string open(double width, double height);

/// One legend entry at (x, y): a line sample (dashed when `dash` is not empty) and its text; returns the x after it.
double legend_entry(std::string& out, double x, double y, const char* colour, const char* dash, const std::string& text);

}  // namespace hwbvh::stats::svg
