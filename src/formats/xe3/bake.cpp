// The conservative opacity bake (docs/xe3-format.md §5.2; docs/opacity.md §2).
#include "hwbvh/formats/xe3/bake.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"

namespace hwbvh::xe3 {
namespace {

// Barycentric slack: hit barycentrics may lie this far outside the triangle (or a sub-triangle) through rounding
// in the intersection test, and the texel they sample must still be in the set.
constexpr double kBaryTolerance = 1.0 / 65536.0;
// Texel-space slack for the float arithmetic of AlphaTest::passes (interpolation, wrapping, scaling): a few units
// in the last place of the largest coordinate, and a fixed floor.
constexpr double kFloatTolerance = 8.0 / 16777216.0;
constexpr double kFixedMargin = 1.0 / 1024.0;
// A sub-triangle spanning more texel rows than this is left Unknown (conservative) rather than scanned.
constexpr int64_t kMaxRows = int64_t{1} << 16;
// Texel coordinates beyond this (far outside any sensible UV range) leave the triangle Unknown.
constexpr double kMaxTexelCoordinate = 0x1p40;

int64_t floor_i(double x) { return static_cast<int64_t>(std::floor(x)); }
int64_t wrap_index(int64_t i, int64_t n) { return ((i % n) + n) % n; }

// Passing texels as a summed-area table, so that any (wrapped) rectangle of cells is counted in O(1).
class TexturePasses {
 public:
  TexturePasses(const AlphaTexture& tex, uint32_t threshold) : width_(tex.width), height_(tex.height) {
    // sat_[j * (width + 1) + i]: passing texels in cell rows [0, j) (counted up from v = 0) and columns [0, i).
    sat_.assign(std::size_t{height_ + 1} * (width_ + 1), 0);
    for (uint32_t j = 0; j < height_; ++j) {
      const uint8_t* row = &tex.alpha[std::size_t{height_ - 1 - j} * width_];  // image row 0 is the top
      uint64_t run = 0;
      for (uint32_t i = 0; i < width_; ++i) {
        run += row[i] >= threshold ? 1u : 0u;
        at(j + 1, i + 1) = at(j, i + 1) + run;
      }
    }
  }
  [[nodiscard]] uint32_t width() const { return width_; }
  [[nodiscard]] uint32_t height() const { return height_; }
  [[nodiscard]] bool all_pass() const { return total() == uint64_t{width_} * height_; }
  [[nodiscard]] bool none_pass() const { return total() == 0; }

  /// Passing texels among the cells [i0, i1] x [j0, j1] (inclusive, unwrapped; j counted up from v = 0).
  [[nodiscard]] uint64_t count(int64_t i0, int64_t i1, int64_t j0, int64_t j1) const {
    uint64_t c = 0;
    for (const Piece& x : pieces(i0, i1, width_))
      for (const Piece& y : pieces(j0, j1, height_))
        c += x.times * y.times * (cat(y.end, x.end) - cat(y.begin, x.end) - cat(y.end, x.begin) + cat(y.begin, x.begin));
    return c;
  }

 private:
  // A range [begin, end) of one axis inside the texture, covered `times` times.
  struct Piece {
    uint32_t begin = 0;
    uint32_t end = 0;
    uint64_t times = 0;
  };
  // The unwrapped cells [a, b] of an axis of n texels: whole wraps, then the rest (which may wrap once).
  static std::array<Piece, 3> pieces(int64_t a, int64_t b, uint32_t n) {
    const auto len = static_cast<uint64_t>(b - a + 1);
    const auto start = static_cast<uint32_t>(wrap_index(a, n));
    const auto rest = static_cast<uint32_t>(len % n);
    std::array<Piece, 3> out{Piece{0, n, len / n}, Piece{}, Piece{}};
    if (start + rest <= n) {
      out[1] = Piece{start, start + rest, 1};
    } else {
      out[1] = Piece{start, n, 1};
      out[2] = Piece{0, start + rest - n, 1};
    }
    return out;
  }
  uint64_t& at(uint32_t j, uint32_t i) { return sat_[std::size_t{j} * (width_ + 1) + i]; }
  [[nodiscard]] uint64_t cat(uint32_t j, uint32_t i) const { return sat_[std::size_t{j} * (width_ + 1) + i]; }
  [[nodiscard]] uint64_t total() const { return cat(height_, width_); }

  uint32_t width_;
  uint32_t height_;
  std::vector<uint64_t> sat_;
};

struct P2 {
  double x = 0;
  double y = 0;
};

// One triangle's texture coordinates in texel units (x = u * width, y = v * height, y up) and its margin.
struct TexelTriangle {
  std::array<P2, 3> corner{};
  double margin = 0;
  bool finite = true;  // and small enough to count cells in 64-bit integers

  TexelTriangle(const AlphaTest::Tri& tri, uint32_t width, uint32_t height) {
    const double w = width, h = height;
    double largest = 0, extent = 0;
    for (int k = 0; k < 3; ++k) {
      corner[k] = {tri.uv[k].x * w, tri.uv[k].y * h};
      finite = finite && std::abs(corner[k].x) < kMaxTexelCoordinate && std::abs(corner[k].y) < kMaxTexelCoordinate;
      largest = std::max({largest, std::abs(double{tri.uv[k].x}) * w + w, std::abs(double{tri.uv[k].y}) * h + h});
      extent += std::abs(corner[k].x - corner[(k + 1) % 3].x) + std::abs(corner[k].y - corner[(k + 1) % 3].y);
    }
    margin = kFixedMargin + kFloatTolerance * largest + kBaryTolerance * extent;
  }
  // The point at barycentrics (u, v).
  [[nodiscard]] P2 at(double u, double v) const {
    const double w = 1.0 - u - v;
    return {w * corner[0].x + u * corner[1].x + v * corner[2].x, w * corner[0].y + u * corner[1].y + v * corner[2].y};
  }
};

// X extent of triangle `t` restricted to lo <= y <= hi (non-empty by the caller's choice of rows).
std::pair<double, double> x_extent(const std::array<P2, 3>& t, double lo, double hi) {
  double x0 = INFINITY, x1 = -INFINITY;
  const auto take = [&](double x) { x0 = std::min(x0, x); x1 = std::max(x1, x); };
  for (int k = 0; k < 3; ++k) {
    const P2 a = t[k], b = t[(k + 1) % 3];
    if (a.y >= lo && a.y <= hi) take(a.x);
    for (double y : {lo, hi}) {
      if ((a.y < y && b.y > y) || (a.y > y && b.y < y)) take(a.x + (b.x - a.x) * (y - a.y) / (b.y - a.y));
    }
  }
  return {x0, x1};
}

// What the cells of a band of rows hold.
enum Cells : uint8_t { kNone = 0, kPass = 1, kFail = 2, kMixed = 3 };

// The cells within `margin` of triangle `t` in cell rows [j0, j1]: the band's rectangle (its rows' x extents
// together) first; a mixed rectangle of several rows is split in halves, down to single rows, whose rectangle is
// exactly the row's cells. Uniform areas of the texture are so decided in a few steps.
uint8_t band_cells(const TexturePasses& tex, const std::array<P2, 3>& t, double ylo, double yhi, double margin,
                   int64_t j0, int64_t j1) {
  // Points of the triangle within `margin` of rows j0..j1 lie in the strip [j0 - margin, j1 + 1 + margin].
  const double lo = std::max(ylo, static_cast<double>(j0) - margin);
  const double hi = std::min(yhi, static_cast<double>(j1 + 1) + margin);
  if (lo > hi) return kNone;
  const auto [x0, x1] = x_extent(t, lo, hi);
  if (x0 > x1) return kNone;
  const int64_t i0 = floor_i(x0 - margin), i1 = floor_i(x1 + margin);
  const uint64_t passing = tex.count(i0, i1, j0, j1);
  const auto cells = static_cast<uint64_t>(i1 - i0 + 1) * static_cast<uint64_t>(j1 - j0 + 1);
  if (passing == cells) return kPass;
  if (passing == 0) return kFail;
  if (j0 == j1) return kMixed;
  const int64_t mid = j0 + (j1 - j0) / 2;
  const uint8_t below = band_cells(tex, t, ylo, yhi, margin, j0, mid);
  if (below == kMixed) return kMixed;
  return static_cast<uint8_t>(below | band_cells(tex, t, ylo, yhi, margin, mid + 1, j1));
}

// The state of the triangle `t` (texel units): Opaque/Transparent when every cell within `margin` of it agrees.
SubTriangleState classify(const TexturePasses& tex, const std::array<P2, 3>& t, double margin) {
  const double ylo = std::min({t[0].y, t[1].y, t[2].y}), yhi = std::max({t[0].y, t[1].y, t[2].y});
  const int64_t j0 = floor_i(ylo - margin), j1 = floor_i(yhi + margin);
  if (j1 - j0 >= kMaxRows) return SubTriangleState::Unknown;
  switch (band_cells(tex, t, ylo, yhi, margin, j0, j1)) {
    case kPass: return SubTriangleState::Opaque;
    case kFail: return SubTriangleState::Transparent;
    default: return SubTriangleState::Unknown;
  }
}

void check_bake_level(uint32_t level) {
  if (level > kMaxStocLevel)
    throw Error(ErrorKind::BadInput, "", "opacity level " + std::to_string(level) + " is above 12");
}

// Bakes with a prepared texture. Top-down on the bird curve: a decided sub-triangle decides all its descendants
// (their points are its points), so only Unknown ones are refined.
std::vector<SubTriangleState> bake_with(const TexturePasses& tex, const AlphaTest::Tri& tri, uint32_t level) {
  std::vector<SubTriangleState> out(sub_triangle_count(level), SubTriangleState::Unknown);
  if (tex.all_pass() || tex.none_pass()) {
    std::fill(out.begin(), out.end(), tex.all_pass() ? SubTriangleState::Opaque : SubTriangleState::Transparent);
    return out;
  }
  const TexelTriangle texel(tri, tex.width(), tex.height());
  if (!texel.finite) return out;
  const auto refine = [&](auto&& self, uint32_t index, uint32_t l) -> void {
    const MicroTriangle m = bird_micro_triangle(index, l);
    const double s = std::ldexp(1.0, -static_cast<int>(l));
    const double u = m.iu * s, v = m.iv * s;
    const std::array<P2, 3> t = m.inverted
                                    ? std::array<P2, 3>{texel.at(u + s, v), texel.at(u, v + s), texel.at(u + s, v + s)}
                                    : std::array<P2, 3>{texel.at(u, v), texel.at(u + s, v), texel.at(u, v + s)};
    const SubTriangleState state = classify(tex, t, texel.margin);
    const uint64_t span = sub_triangle_count(level - l);
    if (state != SubTriangleState::Unknown || l == level) {
      std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(index * span), span, state);
      return;
    }
    for (uint32_t c = 0; c < 4; ++c) self(self, index * 4 + c, l + 1);
  };
  refine(refine, 0, 0);
  return out;
}

}  // namespace

std::vector<SubTriangleState> bake_opacity(const AlphaTest& alpha, uint32_t tri, uint32_t level) {
  check_bake_level(level);
  if (tri >= alpha.triangles.size())
    throw Error(ErrorKind::BadInput, "", "bake_opacity: triangle " + std::to_string(tri) + " is out of range");
  if (!alpha.tested(tri)) return std::vector<SubTriangleState>(sub_triangle_count(level), SubTriangleState::Opaque);
  const TexturePasses tex(alpha.textures[alpha.triangles[tri].texture], alpha.alpha_threshold());
  return bake_with(tex, alpha.triangles[tri], level);
}

std::vector<std::vector<SubTriangleState>> bake_all(const AlphaTest& alpha, uint32_t level, int threads,
                                                    const ProgressCallback& progress) {
  check_bake_level(level);
  const Executor executor(threads);
  std::vector<bool> used(alpha.textures.size(), false);
  for (const AlphaTest::Tri& t : alpha.triangles)
    if (t.texture != kNoIndex) used[t.texture] = true;
  std::vector<std::optional<TexturePasses>> textures(alpha.textures.size());
  executor.for_each(0, textures.size(), [&](std::size_t i) {
    if (used[i]) textures[i].emplace(alpha.textures[i], alpha.alpha_threshold());
  });
  std::vector<std::vector<SubTriangleState>> out(alpha.triangles.size());
  ProgressCounter baked(progress, "opacity bake", out.size());
  for_each_counted(executor, 0, out.size(), 16, baked, [&](std::size_t i) {
    const AlphaTest::Tri& t = alpha.triangles[i];
    if (t.texture != kNoIndex) out[i] = bake_with(*textures[t.texture], t, level);
  });
  baked.finish();
  return out;
}

std::vector<SubTriangleState> restate(std::span<const SubTriangleState> states, uint32_t level) {
  const int from = stoc_level_of(states.size());
  if (from < 0 || level > kMaxStocLevel)
    throw Error(ErrorKind::Runtime, "", "restate: " + std::to_string(states.size()) + " states to level " +
                                            std::to_string(level));
  const auto l = static_cast<uint32_t>(from);
  std::vector<SubTriangleState> out(sub_triangle_count(level));
  if (level >= l) {
    const uint32_t shift = 2 * (level - l);
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = states[k >> shift];
    return out;
  }
  const std::size_t span = sub_triangle_count(l - level);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const auto first = states.begin() + static_cast<std::ptrdiff_t>(k * span);
    const bool uniform = std::all_of(first, first + static_cast<std::ptrdiff_t>(span),
                                     [&](SubTriangleState s) { return s == *first; });
    out[k] = uniform ? *first : SubTriangleState::Unknown;
  }
  return out;
}

}  // namespace hwbvh::xe3
