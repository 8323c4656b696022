#pragma once
// Rays files (`--rays-file FILE`), specified in docs/rays.md. Two encodings of the same content, a list of
// rays (origin, direction, tmin, tmax):
//   text:   one ray per line, "ox oy oz dx dy dz tmin tmax", whitespace-separated; '#' starts a comment;
//           blank lines are ignored; tmax may be "inf".
//   binary: magic "HWRAYS1\0" (8 bytes), u32 count, then count x 8 little-endian IEEE-754 f32
//           (ox oy oz dx dy dz tmin tmax); the file size must be exactly 12 + 32 * count.
// Readers pick the encoding from the magic. Every ray must have finite origin and direction, a non-zero
// direction, 0 <= tmin <= tmax, finite tmin, and tmax finite or +inf.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/core/geometry.h"

namespace hwbvh {

enum class RaysFileFormat { Text, Binary };

/// Checks the rules above for one ray, whichever encoding (or caller) it came from. Throws hwbvh::Error(BadInput)
/// "NAME: WHERE: problem", `where` being e.g. "line 7" or "ray 7".
void validate_ray(const Ray& ray, const std::string& name, const std::string& where);

/// Parses a rays file held in memory; `name` is used in messages. Throws hwbvh::Error(BadInput) naming the
/// file and the line (text) or ray index (binary) for: unknown magic version, size not matching the count,
/// malformed or wrong number of values, non-finite origin or direction, zero direction, negative or
/// non-finite tmin, NaN or -inf tmax, tmin > tmax, and a file with no rays.
[[nodiscard]] std::vector<Ray> parse_rays(std::span<const std::byte> bytes, const std::string& name);

/// Reads and parses a rays file. Throws hwbvh::Error(BadInput) as parse_rays, or if it cannot be read.
[[nodiscard]] std::vector<Ray> read_rays_file(const std::filesystem::path& path);

/// Encodes rays in either format. Text numbers are shortest round-trip decimals, so both formats give the
/// identical rays back.
[[nodiscard]] std::vector<std::byte> serialize_rays(std::span<const Ray> rays, RaysFileFormat format);

/// Writes atomically (a temporary file in the same directory, then rename). Throws hwbvh::Error(Runtime).
void write_rays_file(const std::filesystem::path& path, std::span<const Ray> rays, RaysFileFormat format);

}  // namespace hwbvh
