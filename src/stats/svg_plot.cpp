#include "stats/svg_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stats/html_escape.h"

namespace hwbvh::stats::svg {

AxisRange axis_range(double lo, double hi) {
  const double span = std::max(hi - lo, std::max(std::abs(hi) * 0.02, 1e-9));
  const double power = std::pow(10.0, std::floor(std::log10(span / kTicks)));
  for (const double m : {1.0, 2.0, 5.0, 10.0, 20.0}) {
    const double start = std::floor(lo / (m * power)) * (m * power);
    if (start + kTicks * m * power >= hi) return {start, m * power};
  }
  return {lo, span / kTicks};  // unreachable: (kTicks - 1) x 20 x power exceeds the span
}

std::string open(double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"11\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
      width, height);
}

double legend_entry(std::string& out, double x, double y, const char* colour, const char* dash, const std::string& text) {
  out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{2:.1f}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
                     "<text x=\"{5:.1f}\" y=\"{6}\">{7}</text>\n",
                     x, y, x + 22, colour, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "", x + 26, y + 4,
                     escape(text));
  return x + 40 + 6.2 * static_cast<double>(text.size());
}

}  // namespace hwbvh::stats::svg
