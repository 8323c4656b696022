// Sub-triangle numbering and STOC mask summaries (docs/xe3-format.md §3.3, §3.4, §5.2).
#include "hwbvh/formats/xe3/stoc.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "hwbvh/core/error.h"

namespace hwbvh::xe3 {
namespace {

// A grid point in integer barycentric units.
struct Point {
  int64_t u = 0;
  int64_t v = 0;
};
using Tri = std::array<Point, 3>;

Point midpoint(Point a, Point b) { return {(a.u + b.u) / 2, (a.v + b.v) / 2}; }

// Child c of (A, B, C) on the bird curve, with its vertices in the order the next level recurses with (§3.4 table).
Tri bird_child(const Tri& t, uint32_t c) {
  const Point a = t[0], b = t[1], cc = t[2];
  const Point ab = midpoint(a, b), bc = midpoint(b, cc), ac = midpoint(a, cc);
  switch (c) {
    case 0: return {a, ab, ac};
    case 1: return {ac, bc, ab};
    case 2: return {ab, b, bc};
    default: return {bc, ac, cc};
  }
}

// Twice the signed area of (a, b, c).
int64_t area2(Point a, Point b, Point c) { return (b.u - a.u) * (c.v - a.v) - (b.v - a.v) * (c.u - a.u); }

void check_level(uint32_t level) {
  if (level > kMaxStocLevel) {
    throw Error(ErrorKind::Runtime, "", "sub-triangle level " + std::to_string(level) + " is above 12");
  }
}

}  // namespace

MicroTriangle bird_micro_triangle(uint32_t index, uint32_t level) {
  check_level(level);
  const int64_t n = int64_t{1} << level;
  Tri t{Point{0, 0}, Point{n, 0}, Point{0, n}};
  for (uint32_t d = 0; d < level; ++d) t = bird_child(t, (index >> (2 * (level - 1 - d))) & 3u);
  const int64_t iu = std::min({t[0].u, t[1].u, t[2].u}), iv = std::min({t[0].v, t[1].v, t[2].v});
  // The corner sums u + v of an upright cell's triangle add up to 3 (iu + iv) + 2, of an inverted one to + 4.
  const int64_t sum = t[0].u + t[0].v + t[1].u + t[1].v + t[2].u + t[2].v;
  return {static_cast<uint32_t>(iu), static_cast<uint32_t>(iv), sum - 3 * (iu + iv) == 4};
}

uint32_t bird_index(MicroTriangle m, uint32_t level) {
  check_level(level);
  // Coordinates times 3, so that the micro-triangle's centroid is a grid point strictly inside exactly one child
  // at every level of the descent.
  const int64_t n3 = int64_t{3} << level;
  const Point p = m.inverted ? Point{3 * int64_t{m.iu} + 2, 3 * int64_t{m.iv} + 2}
                             : Point{3 * int64_t{m.iu} + 1, 3 * int64_t{m.iv} + 1};
  Tri t{Point{0, 0}, Point{n3, 0}, Point{0, n3}};
  uint32_t index = 0;
  for (uint32_t d = 0; d < level; ++d) {
    const int64_t total = area2(t[0], t[1], t[2]);
    const int64_t sign = total > 0 ? 1 : -1;
    // Barycentric weight of a vertex above one half: the corner child at that vertex; otherwise the middle one.
    uint32_t c = 1;
    if (2 * sign * area2(p, t[1], t[2]) > sign * total) {
      c = 0;
    } else if (2 * sign * area2(t[0], p, t[2]) > sign * total) {
      c = 2;
    } else if (2 * sign * area2(t[0], t[1], p) > sign * total) {
      c = 3;
    }
    index = index * 4 + c;
    t = bird_child(t, c);
  }
  return index;
}

MicroTriangle row_micro_triangle(uint32_t index, uint32_t level) {
  check_level(level);
  auto r = static_cast<uint32_t>(std::sqrt(static_cast<double>(index)));
  while (r * r > index) --r;
  while ((r + 1) * (r + 1) <= index) ++r;
  const uint32_t offset = index - r * r;
  const bool inverted = (offset & 1u) != 0;
  const uint32_t iv = offset >> 1;
  return {r - iv - (inverted ? 1u : 0u), iv, inverted};
}

uint32_t row_index(MicroTriangle m, uint32_t level) {
  check_level(level);
  const uint32_t inv = m.inverted ? 1u : 0u;
  const uint32_t r = m.iu + m.iv + inv;
  return r * r + 2 * m.iv + inv;
}

uint32_t sub_triangle_index(Vec2 uv, uint32_t level, SubTriangleOrder order) {
  check_level(level);
  const auto clamp01 = [](float x) { return x >= 0.0f ? std::min(x, 1.0f) : 0.0f; };  // NaN -> 0
  const uint32_t n = 1u << level;
  const float su = clamp01(uv.x) * static_cast<float>(n), sv = clamp01(uv.y) * static_cast<float>(n);  // exact
  const float fu = std::floor(su), fv = std::floor(sv);
  MicroTriangle m{std::min(static_cast<uint32_t>(fu), n - 1), std::min(static_cast<uint32_t>(fv), n - 1), false};
  if (m.iu + m.iv >= n) m.iu = n - 1 - m.iv;
  // The fractional parts are exact; their sum rounds in f32, as in the Vulkan reference code.
  m.inverted = (su - fu) + (sv - fv) >= 1.0f && m.iu + m.iv < n - 1;
  return order == SubTriangleOrder::Bird ? bird_index(m, level) : row_index(m, level);
}

int stoc_level_of(std::size_t state_count) {
  for (uint32_t level = 0; level <= kMaxStocLevel; ++level) {
    if (state_count == sub_triangle_count(level)) return static_cast<int>(level);
  }
  return -1;
}

StocMasks summarize(std::span<const SubTriangleState> states, uint32_t target_level, SubTriangleOrder order) {
  const int input_level = stoc_level_of(states.size());
  if (input_level < 0 || target_level > 3) {
    throw Error(ErrorKind::Runtime, "",
                "cannot summarize " + std::to_string(states.size()) + " sub-triangle states at level " +
                    std::to_string(target_level) + " (need 4^L states, L <= 12, and a level <= 3)");
  }
  const auto level = static_cast<uint32_t>(input_level);
  StocMasks out;
  for (uint32_t b = 0; b < sub_triangle_count(target_level); ++b) {
    SubTriangleState state;
    if (level >= target_level) {
      // The descendants of b form one contiguous range in bird order.
      const uint64_t span = sub_triangle_count(level - target_level);
      const auto first = states.begin() + static_cast<std::ptrdiff_t>(b * span);
      const auto last = first + static_cast<std::ptrdiff_t>(span);
      const bool all_opaque =
          std::all_of(first, last, [](SubTriangleState s) { return s == SubTriangleState::Opaque; });
      const bool all_transparent =
          std::all_of(first, last, [](SubTriangleState s) { return s == SubTriangleState::Transparent; });
      state = all_opaque ? SubTriangleState::Opaque
                         : (all_transparent ? SubTriangleState::Transparent : SubTriangleState::Unknown);
      if (state == SubTriangleState::Unknown) {
        out.swstoc = out.swstoc ||
                     std::any_of(first, last, [](SubTriangleState s) { return s != SubTriangleState::Unknown; });
      }
    } else {
      state = states[b >> (2 * (target_level - level))];
    }
    const uint32_t bit =
        order == SubTriangleOrder::Bird ? b : row_index(bird_micro_triangle(b, target_level), target_level);
    if (state == SubTriangleState::Opaque) out.opaque |= uint64_t{1} << bit;
    if (state == SubTriangleState::Transparent) out.transparent |= uint64_t{1} << bit;
  }
  return out;
}

}  // namespace hwbvh::xe3
