#include "hwbvh/render/image.h"

#include <algorithm>

namespace hwbvh::render {

Image::Image(uint32_t width, uint32_t height, Rgb fill)
    : width_(width), height_(height), pixels_(std::size_t{3} * width * height) {
  for (std::size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = fill.r;
    pixels_[i + 1] = fill.g;
    pixels_[i + 2] = fill.b;
  }
}

Rgb Image::at(uint32_t x, uint32_t y) const {
  const std::size_t i = 3 * (std::size_t{y} * width_ + x);
  return {pixels_[i], pixels_[i + 1], pixels_[i + 2]};
}

void Image::set(int64_t x, int64_t y, Rgb color) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  const std::size_t i = 3 * (static_cast<std::size_t>(y) * width_ + static_cast<std::size_t>(x));
  pixels_[i] = color.r;
  pixels_[i + 1] = color.g;
  pixels_[i + 2] = color.b;
}

void Image::fill_rect(int64_t x, int64_t y, int64_t w, int64_t h, Rgb color) {
  const int64_t x0 = std::max<int64_t>(x, 0), x1 = std::min<int64_t>(x + w, width_);
  const int64_t y0 = std::max<int64_t>(y, 0), y1 = std::min<int64_t>(y + h, height_);
  for (int64_t py = y0; py < y1; ++py)
    for (int64_t px = x0; px < x1; ++px) set(px, py, color);
}

void Image::blit(const Image& src, int64_t x, int64_t y) {
  for (uint32_t sy = 0; sy < src.height(); ++sy)
    for (uint32_t sx = 0; sx < src.width(); ++sx) set(x + sx, y + sy, src.at(sx, sy));
}

}  // namespace hwbvh::render
