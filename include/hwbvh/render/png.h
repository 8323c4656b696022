#pragma once
// PNG (and JPEG) files and in-memory PNGs (stb_image_write / stb_image, linked privately). Files are written to a temporary
// name in the target's directory and renamed, so a failed write never leaves a partial file. png_data_uri gives a
// PNG as a base64 `data:` URI, for self-contained HTML reports.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/render/image.h"

namespace hwbvh::render {

/// The image as PNG bytes (RGB, 8 bits per channel). Throws hwbvh::Error(Runtime) if encoding fails.
[[nodiscard]] std::vector<std::byte> encode_png(const Image& image);

/// Writes the image as a PNG file atomically (temporary file + rename). Throws hwbvh::Error(Runtime) naming the
/// file if it cannot be written.
void write_png(const std::filesystem::path& path, const Image& image);

/// The image file formats render writes, named by the file's extension.
enum class ImageFormat { Png, Jpeg };

/// The format `path`'s extension names: `.png`, or `.jpg` / `.jpeg` (any case). Throws hwbvh::Error(BadInput) naming
/// the file for any other, before any work is done.
[[nodiscard]] ImageFormat image_format(const std::filesystem::path& path);

/// The image as baseline JPEG bytes (stb_image_write, quality kJpegQuality). Throws hwbvh::Error(Runtime) if encoding
/// fails. Lossy: ids and heatmap levels are exact only in PNG.
[[nodiscard]] std::vector<std::byte> encode_jpeg(const Image& image);
inline constexpr int kJpegQuality = 95;

/// Writes the image atomically in the format of image_format(path).
void write_image(const std::filesystem::path& path, const Image& image);

/// Decodes PNG bytes to RGB (a grey or RGBA PNG is converted). Throws hwbvh::Error(BadInput) naming `name`.
[[nodiscard]] Image decode_png(std::span<const std::byte> bytes, const std::string& name);

/// Reads and decodes a PNG file. Throws hwbvh::Error(BadInput) naming the file.
[[nodiscard]] Image read_png(const std::filesystem::path& path);

/// Standard base64 (RFC 4648 alphabet, '=' padding, no line breaks).
[[nodiscard]] std::string base64(std::span<const std::byte> bytes);

/// "data:image/png;base64,..." for an <img src> attribute.
[[nodiscard]] std::string png_data_uri(const Image& image);

}  // namespace hwbvh::render
