// Rays files (hwbvh::parse_rays, docs/rays.md), text and binary: any bytes are refused with
// hwbvh::Error(BadInput) or give rays that meet the documented contract and survive a round trip through both
// encodings bit for bit.
#include <cmath>
#include <cstring>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/scene/rays_file.h"

namespace hwbvh::fuzz {
namespace {

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

bool same_bits(const std::vector<Ray>& a, const std::vector<Ray>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float fa[8] = {a[i].origin.x, a[i].origin.y, a[i].origin.z, a[i].direction.x, a[i].direction.y,
                         a[i].direction.z, a[i].tmin, a[i].tmax};
    const float fb[8] = {b[i].origin.x, b[i].origin.y, b[i].origin.z, b[i].direction.x, b[i].direction.y,
                         b[i].direction.z, b[i].tmin, b[i].tmax};
    if (std::memcmp(fa, fb, sizeof fa) != 0) return false;
  }
  return true;
}

void check_rays(const std::vector<Ray>& rays) {
  fuzz_check(!rays.empty(), "a rays file has rays");
  for (const Ray& r : rays) {
    fuzz_check(finite(r.origin) && finite(r.direction), "finite origin and direction");
    fuzz_check(r.direction != Vec3{0.0f}, "non-zero direction");
    fuzz_check(std::isfinite(r.tmin) && r.tmin >= 0.0f && r.tmin <= r.tmax, "0 <= tmin <= tmax");
    fuzz_check(!std::isnan(r.tmax), "tmax is not NaN");
  }
  for (const RaysFileFormat format : {RaysFileFormat::Text, RaysFileFormat::Binary})
    fuzz_check(same_bits(parse_rays(serialize_rays(rays, format), "round-trip"), rays), "round trip is exact");
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<hwbvh::Ray> rays;
  try {
    rays = hwbvh::parse_rays(hwbvh::fuzz::input_bytes(data, size), "fuzz.rays");
  } catch (const hwbvh::Error&) {
    return 0;
  }
  hwbvh::fuzz::check_rays(rays);
  return 0;
}
