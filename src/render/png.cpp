#include "hwbvh/render/png.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>

#include <stb_image.h>
#include <stb_image_write.h>

#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh::render {
namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<std::byte>*>(context);
  const auto* begin = static_cast<const std::byte*>(data);
  out->insert(out->end(), begin, begin + size);
}

// Checks that stb can take the image's size (its sizes are ints).
void check_encodable(const Image& image, const char* format) {
  if (image.width() == 0 || image.height() == 0 || image.width() > INT_MAX / 3 || image.height() > INT_MAX) {
    throw Error(ErrorKind::Runtime, "", std::string("cannot encode a ") + format + " of size " +
                                            std::to_string(image.width()) + "x" + std::to_string(image.height()));
  }
}

}  // namespace

std::vector<std::byte> encode_png(const Image& image) {
  check_encodable(image, "PNG");
  std::vector<std::byte> out;
  const int w = static_cast<int>(image.width()), h = static_cast<int>(image.height());
  if (stbi_write_png_to_func(&append_bytes, &out, w, h, 3, image.bytes().data(), 3 * w) == 0) {
    throw Error(ErrorKind::Runtime, "", "PNG encoding failed");
  }
  return out;
}

std::vector<std::byte> encode_jpeg(const Image& image) {
  check_encodable(image, "JPEG");
  std::vector<std::byte> out;
  const int w = static_cast<int>(image.width()), h = static_cast<int>(image.height());
  if (stbi_write_jpg_to_func(&append_bytes, &out, w, h, 3, image.bytes().data(), kJpegQuality) == 0) {
    throw Error(ErrorKind::Runtime, "", "JPEG encoding failed");
  }
  return out;
}

ImageFormat image_format(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".png") return ImageFormat::Png;
  if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::Jpeg;
  throw_bad_input(path.string(), "the image is written as PNG or JPEG: name a .png, .jpg or .jpeg file");
}

void write_png(const std::filesystem::path& path, const Image& image) { write_file_atomically(path, encode_png(image)); }

void write_image(const std::filesystem::path& path, const Image& image) {
  write_file_atomically(path, image_format(path) == ImageFormat::Png ? encode_png(image) : encode_jpeg(image));
}

Image decode_png(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw_bad_input(name, "file too large for a PNG");
  int w = 0, h = 0, channels = 0;
  const std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()), &w, &h,
                            &channels, 3),
      &stbi_image_free);
  if (!pixels) throw_bad_input(name, std::string("not a readable image: ") + stbi_failure_reason());
  Image image(static_cast<uint32_t>(w), static_cast<uint32_t>(h));
  const stbi_uc* p = pixels.get();
  for (uint32_t y = 0; y < image.height(); ++y)
    for (uint32_t x = 0; x < image.width(); ++x, p += 3) image.set(x, y, {p[0], p[1], p[2]});
  return image;
}

Image read_png(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_bad_input(path.string(), "cannot open");
  const std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return decode_png(std::as_bytes(std::span(chars)), path.string());
}

std::string base64(std::span<const std::byte> bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k)
      group = group << 8 | (k < n ? std::to_integer<uint32_t>(bytes[i + k]) : 0u);
    // n input bytes give n + 1 significant sextets; the rest of the 4 characters are padding.
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63u] : '=';
  }
  return out;
}

std::string png_data_uri(const Image& image) { return "data:image/png;base64," + base64(encode_png(image)); }

}  // namespace hwbvh::render
