#pragma once
// Colour maps for scalar images. Heatmaps use viridis (van der Walt and Smith, matplotlib 1.5, 2015; CC0):
// perceptually uniform, ordered dark to light, readable in greyscale and by colour-blind viewers. It is
// interpolated linearly between 17 samples of the published 256-entry table. Differences use a diverging map
// after Moreland's cool-warm (2009): blue for negative, light grey at zero, red for positive.
#include "hwbvh/render/image.h"

namespace hwbvh::render {

/// viridis(t) for t in [0, 1] (clamped; NaN gives the t = 0 colour).
[[nodiscard]] Rgb viridis(float t);

/// Diverging map for t in [-1, 1] (clamped; NaN gives the t = 0 colour): -1 blue, 0 light grey, +1 red.
[[nodiscard]] Rgb diverging(float t);

/// Grey ramp for depth images: t = 0 (near) light, t = 1 (far) dark (clamped; NaN gives the t = 0 colour).
[[nodiscard]] Rgb depth_grey(float t);

/// Linear interpolation between two colours, t in [0, 1], rounded to nearest.
[[nodiscard]] Rgb mix(Rgb a, Rgb b, float t);

}  // namespace hwbvh::render
