#pragma once
// An 8-bit RGB raster: what the render module draws into and what png.h encodes. Row 0 is the top row, pixels are
// stored row-major as r, g, b bytes. Drawing calls clip to the image, so callers may draw partly outside it.
#include <cstdint>
#include <span>
#include <vector>

namespace hwbvh::render {

struct Rgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

class Image {
 public:
  Image() = default;
  /// A width x height image filled with `fill`.
  Image(uint32_t width, uint32_t height, Rgb fill = {});

  [[nodiscard]] uint32_t width() const { return width_; }
  [[nodiscard]] uint32_t height() const { return height_; }
  /// Pixel (x, y). Precondition: x < width(), y < height().
  [[nodiscard]] Rgb at(uint32_t x, uint32_t y) const;
  /// Sets pixel (x, y); does nothing outside the image.
  void set(int64_t x, int64_t y, Rgb color);
  /// Fills the rectangle [x, x + w) x [y, y + h), clipped to the image.
  void fill_rect(int64_t x, int64_t y, int64_t w, int64_t h, Rgb color);
  /// Copies `src` with its top-left corner at (x, y), clipped to this image.
  void blit(const Image& src, int64_t x, int64_t y);
  /// The pixels as r, g, b bytes, row-major from the top row (3 x width x height bytes).
  [[nodiscard]] std::span<const uint8_t> bytes() const { return pixels_; }

  friend bool operator==(const Image&, const Image&) = default;

 private:
  uint32_t width_ = 0;
  uint32_t height_ = 0;
  std::vector<uint8_t> pixels_;
};

}  // namespace hwbvh::render
