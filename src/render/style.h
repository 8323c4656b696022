#pragma once
// Colours and spacing shared by the render module's panels and legends (private).
#include <cstdint>

#include "hwbvh/render/image.h"

namespace hwbvh::render::style {

inline constexpr Rgb kBackground{24, 24, 28};   ///< around panels, behind legends and titles
inline constexpr Rgb kMiss{46, 50, 58};          ///< pixels whose ray hit nothing (non-heatmap modes)
inline constexpr Rgb kFault{255, 0, 255};        ///< pixels whose ray was stopped by a node fault
inline constexpr Rgb kText{225, 225, 225};
inline constexpr Rgb kDifferent{255, 60, 50};    ///< hit-difference panel: pixels whose hits differ
inline constexpr int kPanelGap = 4;              ///< pixels between side-by-side panels
inline constexpr int kTitlePad = 2;              ///< pixels above and below a panel title

/// Text scale for images of this width: 1, or 2 from 512 pixels on so the legend stays readable.
inline int text_scale(uint32_t width) { return width >= 512 ? 2 : 1; }

}  // namespace hwbvh::render::style
