#include "hwbvh/blob/geometry_section.h"

#include <cmath>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "message.h"

namespace hwbvh::blob {
namespace {

constexpr uint64_t kCountsBytes = 8;
constexpr uint64_t kPositionBytes = 12;
constexpr uint64_t kTriangleBytes = 24;

}  // namespace

std::vector<std::byte> encode_geometry(const Scene& scene) {
  std::vector<std::byte> out;
  out.reserve(kCountsBytes + kPositionBytes * scene.positions.size() + kTriangleBytes * scene.triangles.size());
  append_le32(out, static_cast<uint32_t>(scene.positions.size()));
  append_le32(out, static_cast<uint32_t>(scene.triangles.size()));
  for (const Vec3& p : scene.positions)
    for (int a = 0; a < 3; ++a) append_le32(out, float_bits(p[a]));
  for (uint32_t i = 0; i < scene.triangles.size(); ++i) {
    const Triangle& t = scene.triangles[i];
    for (uint32_t v : t.v) append_le32(out, v);
    append_le32(out, t.geometry);
    append_le32(out, t.primitive);
    append_le32(out, scene.is_degenerate(i) ? kTriDegenerate : 0u);
  }
  return out;
}

GeometrySection decode_geometry(std::span<const std::byte> bytes, const std::string& file) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, "geometry section: " + problem); };
  if (bytes.size() < kCountsBytes) fail(detail::cat(bytes.size(), " bytes, too short for its counts"));
  const uint32_t position_count = load_le32(bytes, 0);
  const uint32_t triangle_count = load_le32(bytes, 4);
  // 64-bit arithmetic: 32-bit counts times 24 bytes cannot overflow it.
  const uint64_t expected = kCountsBytes + kPositionBytes * position_count + kTriangleBytes * triangle_count;
  if (bytes.size() != expected)
    fail(detail::cat(bytes.size(), " bytes, but ", position_count, " positions and ", triangle_count,
                     " triangles need ", expected));

  GeometrySection g;
  g.positions.resize(position_count);
  std::size_t at = kCountsBytes;
  for (uint32_t i = 0; i < position_count; ++i) {
    for (int a = 0; a < 3; ++a, at += 4) {
      const float c = bits_float(load_le32(bytes, at));
      if (!std::isfinite(c)) fail(detail::cat("position ", i, " has a non-finite coordinate"));
      g.positions[i][a] = c;
    }
  }
  g.triangles.resize(triangle_count);
  for (uint32_t i = 0; i < triangle_count; ++i, at += kTriangleBytes) {
    GeometrySection::Tri& t = g.triangles[i];
    for (int k = 0; k < 3; ++k) {
      t.v[k] = load_le32(bytes, at + 4 * k);
      if (t.v[k] >= position_count)
        fail(detail::cat("triangle ", i, " vertex index ", t.v[k], " is out of range (", position_count,
                         " positions)"));
    }
    t.geometry = load_le32(bytes, at + 12);
    t.primitive = load_le32(bytes, at + 16);
    t.flags = load_le32(bytes, at + 20);
    if ((t.flags & ~kTriDegenerate) != 0) fail(detail::cat("triangle ", i, " has unknown flag bits ", t.flags));
  }
  return g;
}

}  // namespace hwbvh::blob
