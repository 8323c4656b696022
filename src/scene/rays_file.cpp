#include "hwbvh/scene/rays_file.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string_view>

#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh {
namespace {

constexpr std::array<char, 8> kMagic{'H', 'W', 'R', 'A', 'Y', 'S', '1', '\0'};
constexpr std::string_view kMagicFamily{"HWRAYS"};  // any version: lets us name an unknown one
constexpr std::size_t kHeaderBytes = 12;             // magic + u32 count
constexpr std::size_t kRayBytes = 8 * sizeof(float);

Ray ray_from(const std::array<float, 8>& v) {
  return Ray{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, v[6], v[7]};
}

std::array<float, 8> values_of(const Ray& r) {
  return {r.origin.x, r.origin.y, r.origin.z, r.direction.x, r.direction.y, r.direction.z, r.tmin, r.tmax};
}

/// A token as it can appear in a one-line message: at most 24 characters, non-printables replaced.
std::string printable(std::string_view token) {
  std::string out;
  for (char c : token.substr(0, 24)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (token.size() > 24) out += "...";
  return out;
}

uint32_t load_u32(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

void store_u32(std::vector<std::byte>& out, uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::byte>(v >> (8 * k)));
}

std::vector<Ray> parse_binary(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() < kHeaderBytes) {
    throw_bad_input(name, "truncated header (" + std::to_string(bytes.size()) + " bytes)");
  }
  const uint32_t count = load_u32(bytes.data() + kMagic.size());
  const uint64_t expected = kHeaderBytes + uint64_t{count} * kRayBytes;
  if (bytes.size() != expected) {
    throw_bad_input(name, "size " + std::to_string(bytes.size()) + " bytes does not match the header's count of " +
                              std::to_string(count) + " rays (expected " + std::to_string(expected) + " bytes)");
  }
  if (count == 0) throw_bad_input(name, "contains no rays");
  std::vector<Ray> rays(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::array<float, 8> v{};
    for (std::size_t k = 0; k < v.size(); ++k) {
      v[k] = std::bit_cast<float>(load_u32(bytes.data() + kHeaderBytes + i * kRayBytes + 4 * k));
    }
    rays[i] = ray_from(v);
    validate_ray(rays[i], name, "ray " + std::to_string(i));
  }
  return rays;
}

std::vector<Ray> parse_text(std::string_view text, const std::string& name) {
  std::vector<Ray> rays;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    line = line.substr(0, line.find('#'));
    const std::string where = "line " + std::to_string(line_no);

    std::array<float, 8> v{};
    std::size_t count = 0;
    constexpr std::string_view kSpace{" \t\r\v\f"};
    for (std::size_t t = line.find_first_not_of(kSpace); t != std::string_view::npos;
         t = line.find_first_not_of(kSpace, t)) {
      const std::size_t end = std::min(line.find_first_of(kSpace, t), line.size());
      std::string_view token = line.substr(t, end - t);
      t = end;
      if (count < v.size()) {
        // from_chars takes no leading '+', which people do write.
        const std::string_view digits = token.size() > 1 && token[0] == '+' && token[1] != '-' ? token.substr(1)
                                                                                                  : token;
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v[count]);
        if (ec != std::errc{} || ptr != digits.data() + digits.size()) {
          throw_bad_input(name, where + ": \"" + printable(token) + "\" is not a number");
        }
      }
      ++count;
    }
    if (count == 0) continue;
    if (count != v.size()) {
      throw_bad_input(name, where + ": expected 8 numbers (ox oy oz dx dy dz tmin tmax), found " +
                                std::to_string(count));
    }
    rays.push_back(ray_from(v));
    validate_ray(rays.back(), name, where);
  }
  if (rays.empty()) throw_bad_input(name, "contains no rays");
  return rays;
}

}  // namespace

void validate_ray(const Ray& r, const std::string& name, const std::string& where) {
  const auto fail = [&](const char* problem) { throw_bad_input(name, where + ": " + problem); };
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(r.origin[k])) fail("origin is not finite");
    if (!std::isfinite(r.direction[k])) fail("direction is not finite");
  }
  if (r.direction.x == 0.0f && r.direction.y == 0.0f && r.direction.z == 0.0f) fail("direction is zero");
  if (!std::isfinite(r.tmin) || r.tmin < 0.0f) fail("tmin must be finite and >= 0");
  if (std::isnan(r.tmax)) fail("tmax is NaN");
  if (r.tmin > r.tmax) fail("tmin > tmax");
}

std::vector<Ray> parse_rays(std::span<const std::byte> bytes, const std::string& name) {
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()), std::min(bytes.size(), kMagic.size()));
  if (head.starts_with(kMagicFamily)) {
    if (head != std::string_view(kMagic.data(), head.size())) {
      throw_bad_input(name, "unknown binary rays file version (magic \"" + printable(head) +
                                "\"; this version reads HWRAYS1)");
    }
    return parse_binary(bytes, name);
  }
  return parse_text({reinterpret_cast<const char*>(bytes.data()), bytes.size()}, name);
}

std::vector<Ray> read_rays_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_bad_input(path.string(), "cannot open rays file");
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw_bad_input(path.string(), "cannot read rays file");
  return parse_rays(std::as_bytes(std::span<const char>(chars)), path.string());
}

std::vector<std::byte> serialize_rays(std::span<const Ray> rays, RaysFileFormat format) {
  std::vector<std::byte> out;
  if (format == RaysFileFormat::Binary) {
    out.reserve(kHeaderBytes + rays.size() * kRayBytes);
    for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
    store_u32(out, static_cast<uint32_t>(rays.size()));
    for (const Ray& r : rays) {
      for (float f : values_of(r)) store_u32(out, std::bit_cast<uint32_t>(f));
    }
    return out;
  }
  std::string text = "# hwbvh rays, one per line: ox oy oz dx dy dz tmin tmax\n";
  for (const Ray& r : rays) {
    const auto v = values_of(r);
    for (std::size_t k = 0; k < v.size(); ++k) {
      std::array<char, 32> buf{};
      const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), v[k]);
      text.append(buf.data(), result.ptr);
      text += k + 1 < v.size() ? ' ' : '\n';
    }
  }
  const auto bytes = std::as_bytes(std::span<const char>(text));
  return {bytes.begin(), bytes.end()};
}

void write_rays_file(const std::filesystem::path& path, std::span<const Ray> rays, RaysFileFormat format) {
  write_file_atomically(path, serialize_rays(rays, format));
}

}  // namespace hwbvh
