// The Geometry section decoder (blob::decode_geometry, docs/blob-format.md §7): any bytes are refused with
// hwbvh::Error(BadInput) — without first allocating what a hostile count asks for — or decode to finite positions
// and in-range vertex indices that encode back to the same bytes.
#include <cmath>

#include "fuzz_common.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::fuzz {
namespace {

void check(const blob::GeometrySection& g, std::span<const std::byte> bytes) {
  std::vector<std::byte> again;
  blob::append_le32(again, static_cast<uint32_t>(g.positions.size()));
  blob::append_le32(again, static_cast<uint32_t>(g.triangles.size()));
  for (const Vec3& p : g.positions) {
    fuzz_check(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z), "finite positions");
    for (int a = 0; a < 3; ++a) blob::append_le32(again, float_bits(p[a]));
  }
  for (const blob::GeometrySection::Tri& t : g.triangles) {
    for (uint32_t v : t.v) {
      fuzz_check(v < g.positions.size(), "vertex index in range");
      blob::append_le32(again, v);
    }
    fuzz_check((t.flags & ~blob::kTriDegenerate) == 0, "only known flags");
    for (uint32_t f : {t.geometry, t.primitive, t.flags}) blob::append_le32(again, f);
  }
  fuzz_check(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()), "decoding loses nothing");
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = hwbvh::fuzz::input_bytes(data, size);
  try {
    hwbvh::fuzz::check(hwbvh::blob::decode_geometry(bytes, "fuzz.geometry"), bytes);
  } catch (const hwbvh::Error&) {
  }
  return 0;
}
