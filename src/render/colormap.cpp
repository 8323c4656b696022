#include "hwbvh/render/colormap.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace hwbvh::render {
namespace {

struct Sample {
  float index;  ///< position in the 256-entry table, 0..255
  float r, g, b;
};

// Entries 0, 16, ..., 240 and 255 of matplotlib's _viridis_data (CC0).
constexpr std::array<Sample, 17> kViridis = {{
    {0, 0.267004f, 0.004874f, 0.329415f},   {16, 0.282327f, 0.094955f, 0.417331f},
    {32, 0.278826f, 0.175490f, 0.483397f},  {48, 0.258965f, 0.251537f, 0.524736f},
    {64, 0.229739f, 0.322361f, 0.545706f},  {80, 0.199430f, 0.387607f, 0.554642f},
    {96, 0.172719f, 0.448791f, 0.557885f},  {112, 0.149039f, 0.508051f, 0.557250f},
    {128, 0.127568f, 0.566949f, 0.550556f}, {144, 0.120638f, 0.625828f, 0.533488f},
    {160, 0.157851f, 0.683765f, 0.501686f}, {176, 0.246070f, 0.738910f, 0.452024f},
    {192, 0.369214f, 0.788888f, 0.382914f}, {208, 0.515992f, 0.831158f, 0.294279f},
    {224, 0.678489f, 0.863742f, 0.189503f}, {240, 0.845561f, 0.887322f, 0.099702f},
    {255, 0.993248f, 0.906157f, 0.143936f},
}};

constexpr Rgb kCool{59, 76, 192};
constexpr Rgb kNeutral{221, 221, 221};
constexpr Rgb kWarm{180, 4, 38};
constexpr Rgb kNear{235, 235, 235};
constexpr Rgb kFar{72, 72, 72};  // lighter than the miss colour around it

uint8_t to_byte(float v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); }

float clamp_unit(float t, float lo) { return std::isnan(t) ? 0.0f : std::clamp(t, lo, 1.0f); }

}  // namespace

Rgb mix(Rgb a, Rgb b, float t) {
  const auto lerp = [t](uint8_t x, uint8_t y) {
    return static_cast<uint8_t>(std::lround(static_cast<float>(x) + (static_cast<float>(y) - static_cast<float>(x)) * t));
  };
  return {lerp(a.r, b.r), lerp(a.g, b.g), lerp(a.b, b.b)};
}

Rgb viridis(float t) {
  const float x = clamp_unit(t, 0.0f) * 255.0f;
  std::size_t i = 1;
  while (i + 1 < kViridis.size() && kViridis[i].index < x) ++i;
  const Sample& a = kViridis[i - 1];
  const Sample& b = kViridis[i];
  const float f = (x - a.index) / (b.index - a.index);
  return {to_byte(a.r + (b.r - a.r) * f), to_byte(a.g + (b.g - a.g) * f), to_byte(a.b + (b.b - a.b) * f)};
}

Rgb diverging(float t) {
  const float x = clamp_unit(t, -1.0f);
  return x < 0.0f ? mix(kNeutral, kCool, -x) : mix(kNeutral, kWarm, x);
}

Rgb depth_grey(float t) { return mix(kNear, kFar, clamp_unit(t, 0.0f)); }

}  // namespace hwbvh::render
