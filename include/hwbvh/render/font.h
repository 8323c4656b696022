#pragma once
// A built-in 5 x 9 bitmap font for legends and titles, so images need no font files. Printable ASCII (32..126);
// other characters draw as '?'. Capitals and digits are 7 pixels tall (rows 0..6), descenders use rows 7..8.
// Characters advance 6 pixels and lines 10 pixels, times an integer scale.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hwbvh/render/image.h"

namespace hwbvh::render {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 9;
inline constexpr int kGlyphAdvance = 6;  ///< horizontal distance between character origins
inline constexpr int kLineHeight = 10;   ///< vertical distance between text lines

/// The rows of the glyph drawn for `ch`, top first; bit 4 is the leftmost column.
[[nodiscard]] std::array<uint8_t, kGlyphHeight> glyph(char ch);

/// Width in pixels of `text` at `scale` (no spacing after the last character); 0 for empty text.
[[nodiscard]] int text_width(std::string_view text, int scale = 1);

/// Draws `text` with the top-left corner of its first glyph at (x, y), clipped to the image.
void draw_text(Image& image, int64_t x, int64_t y, std::string_view text, Rgb color, int scale = 1);

/// `text` if it fits in `max_width` pixels at `scale`, else its longest prefix that fits with ".." appended
/// (just ".." or "" when even that does not fit).
[[nodiscard]] std::string fit_text(std::string_view text, int max_width, int scale = 1);

/// Splits `text` at spaces into lines of at most `max_width` pixels at `scale`; a word longer than a line is
/// shortened with fit_text. Empty text gives no lines.
[[nodiscard]] std::vector<std::string> wrap_text(std::string_view text, int max_width, int scale = 1);

}  // namespace hwbvh::render
