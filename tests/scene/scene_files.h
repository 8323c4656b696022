#pragma once
// Test helpers for the OBJ loader: a scratch folder for OBJ/MTL/texture files (blob/scratch_dir.h), and a small PNG
// writer (stored deflate blocks, any of PNG's 8-bit colour types) so tests can make textures with 1 to 4 channels.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "blob/scratch_dir.h"
#include "hwbvh/core/error.h"

namespace hwbvh::test {

/// An 8-bit PNG: channels 1 = grey, 2 = grey + alpha, 3 = RGB, 4 = RGBA; `pixels` row-major, top row first.
inline std::string png_image(uint32_t width, uint32_t height, int channels, const std::vector<uint8_t>& pixels) {
  const auto crc32 = [](std::string_view data) {
    uint32_t crc = 0xFFFFFFFFu;
    for (const char c : data) {
      crc ^= static_cast<uint8_t>(c);
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
  };
  const auto big_endian = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const auto chunk = [&](const std::string& type, const std::string& data) {
    return big_endian(static_cast<uint32_t>(data.size())) + type + data + big_endian(crc32(type + data));
  };

  std::string raw;
  const std::size_t row_bytes = static_cast<std::size_t>(width) * static_cast<std::size_t>(channels);
  for (uint32_t y = 0; y < height; ++y) {
    raw += '\0';  // filter type 0
    raw.append(reinterpret_cast<const char*>(pixels.data()) + y * row_bytes, row_bytes);
  }
  std::string zlib = "\x78\x01";
  for (std::size_t start = 0; start < raw.size() || start == 0; start += 65535) {
    const std::size_t length = std::min<std::size_t>(65535, raw.size() - start);
    const bool last = start + length >= raw.size();
    zlib += static_cast<char>(last ? 1 : 0);
    for (const uint32_t v : {static_cast<uint32_t>(length), static_cast<uint32_t>(length ^ 0xFFFFu)}) {
      zlib += static_cast<char>(v & 0xFF);
      zlib += static_cast<char>((v >> 8) & 0xFF);
    }
    zlib.append(raw, start, length);
  }
  uint32_t a = 1;
  uint32_t b = 0;
  for (const char c : raw) {
    a = (a + static_cast<uint8_t>(c)) % 65521u;
    b = (b + a) % 65521u;
  }
  zlib += big_endian((b << 16) | a);

  constexpr std::array<char, 5> kColourType = {0, 0, 4, 2, 6};  // by channel count
  std::string header = big_endian(width) + big_endian(height);
  header += {8, kColourType[static_cast<std::size_t>(channels)], 0, 0, 0};
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", "");
}

/// Runs `load` and checks that it throws hwbvh::Error of kind BadInput whose file is `file` and whose message
/// names the file and contains `fragment`. Returns the message for further checks.
template <class Load>
std::string expect_bad_input(Load&& load, const std::string& file, const std::string& fragment) {
  try {
    load();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    EXPECT_EQ(e.file(), file) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << "expected '" << fragment << "' in: " << message;
    return message;
  }
  ADD_FAILURE() << "no hwbvh::Error thrown; expected one containing '" << fragment << "'";
  return {};
}

}  // namespace hwbvh::test
