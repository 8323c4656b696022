// QuadLeaf and STOC3 leaf encoders (docs/xe3-format.md §1.1 to §1.4).
#include "hwbvh/formats/xe3/quad_leaf.h"

#include <algorithm>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::xe3 {
namespace {

[[noreturn]] void caller_bug(const std::string& what) { throw Error(ErrorKind::Runtime, "", "Xe3 leaf: " + what); }

bool same_bits(Vec3 a, Vec3 b) {
  return float_bits(a.x) == float_bits(b.x) && float_bits(a.y) == float_bits(b.y) && float_bits(a.z) == float_bits(b.z);
}

// Bit offsets inside the leaf (absolute bit = 32 * dword + bit), from §1.2 and §1.3.
constexpr unsigned kShaderIndex = 0, kGeomMask = 24, kGeomIndex = 32, kSubType = 56, kDisableOpacityCull = 61,
                   kOpaque = 62;
constexpr unsigned kPrimIndex0 = 64, kFlags = 96;
constexpr unsigned kDelta = kFlags + 0, kSwstoc0 = kFlags + 5, kSwstoc1 = kFlags + 6, kOpaque0 = kFlags + 8,
                   kTransparent0 = kFlags + 12, kJ0 = kFlags + 16, kLast = kFlags + 22, kOpaque1 = kFlags + 24,
                   kTransparent1 = kFlags + 28;
constexpr unsigned kVertices = 128;

void check_stoc1(const Stoc1Bits& s, int tri) {
  if (s.opaque > 0xFu || s.transparent > 0xFu || (s.opaque & s.transparent) != 0) {
    caller_bug("triangle " + std::to_string(tri) + " STOC1 masks are not two disjoint 4-bit masks");
  }
}

}  // namespace

std::optional<QuadShape> quad_shape(const QuadTriangle& tri0, const QuadTriangle& tri1) {
  if (tri1.primitive <= tri0.primitive || tri1.primitive - tri0.primitive > kMaxPrimIndexDelta) return std::nullopt;
  QuadShape shape;
  shape.v3 = tri0.v[2];
  int matched = 0;
  for (int k = 0; k < 3; ++k) {
    const auto* hit = std::find_if(tri0.v.begin(), tri0.v.end(), [&](Vec3 p) { return same_bits(p, tri1.v[k]); });
    if (hit != tri0.v.end()) {
      shape.j[k] = static_cast<uint32_t>(hit - tri0.v.begin());
      ++matched;
    } else {
      shape.j[k] = 3;
      shape.v3 = tri1.v[k];
    }
  }
  // j = (0, 0, 0) would read as "no triangle 1"; a non-degenerate tri0 never matches one vertex three times.
  if (matched < 2 || (shape.j[0] == 0 && shape.j[1] == 0 && shape.j[2] == 0)) return std::nullopt;
  return shape;
}

std::optional<BlockDwords> encode_quad_leaf(const QuadInput& in) {
  if (in.geometry > kMaxGeometryIndex || in.shader_index > kMaxGeometryIndex) {
    caller_bug("geometry index " + std::to_string(in.geometry) + " or shader index " +
               std::to_string(in.shader_index) + " exceeds 24 bits");
  }
  check_stoc1(in.stoc1[0], 0);
  check_stoc1(in.stoc1[1], 1);
  QuadShape shape;  // lone triangle: j = (0, 0, 0), v3 = v2
  shape.v3 = in.tri0.v[2];
  uint32_t delta = 0;
  if (in.tri1) {
    const std::optional<QuadShape> s = quad_shape(in.tri0, *in.tri1);
    if (!s) return std::nullopt;
    shape = *s;
    delta = in.tri1->primitive - in.tri0.primitive;
  } else if (in.stoc1[1].opaque != 0 || in.stoc1[1].transparent != 0 || in.stoc1[1].swstoc) {
    caller_bug("a lone triangle has triangle-1 STOC bits");
  }

  BlockDwords dw{};
  set_bits(dw, kShaderIndex, 24, in.shader_index);
  set_bits(dw, kGeomMask, 8, in.geometry_mask);
  set_bits(dw, kGeomIndex, 24, in.geometry);
  set_bits(dw, kSubType, 4, kSubTypeQuad);
  set_bits(dw, kDisableOpacityCull, 1, in.disable_opacity_cull ? 1u : 0u);
  set_bits(dw, kOpaque, 1, in.opaque ? 1u : 0u);
  set_bits(dw, kPrimIndex0, 32, in.tri0.primitive);
  set_bits(dw, kDelta, 5, delta);
  set_bits(dw, kSwstoc0, 1, in.stoc1[0].swstoc ? 1u : 0u);
  set_bits(dw, kSwstoc1, 1, in.stoc1[1].swstoc ? 1u : 0u);
  set_bits(dw, kOpaque0, 4, in.stoc1[0].opaque);
  set_bits(dw, kTransparent0, 4, in.stoc1[0].transparent);
  for (unsigned k = 0; k < 3; ++k) set_bits(dw, kJ0 + 2 * k, 2, shape.j[k]);
  set_bits(dw, kLast, 1, in.last ? 1u : 0u);
  set_bits(dw, kOpaque1, 4, in.stoc1[1].opaque);
  set_bits(dw, kTransparent1, 4, in.stoc1[1].transparent);
  const std::array<Vec3, 4> v{in.tri0.v[0], in.tri0.v[1], in.tri0.v[2], shape.v3};
  for (unsigned k = 0; k < 4; ++k) {
    for (unsigned a = 0; a < 3; ++a) {
      set_bits(dw, kVertices + 96 * k + 32 * a, 32, float_bits(v[k][static_cast<int>(a)]));
    }
  }
  return dw;
}

std::optional<Stoc3Dwords> encode_stoc3_leaf(const QuadInput& quad, const std::array<Stoc3Bits, 2>& stoc3) {
  for (int t = 0; t < 2; ++t) {
    const Stoc3Bits& s = stoc3[static_cast<std::size_t>(t)];
    const std::string name = "triangle " + std::to_string(t);
    if ((s.opaque & s.transparent) != 0) caller_bug(name + " STOC3 masks overlap");
    if (s.full_level != 0 && (s.full_level < 4 || s.full_level > 12)) {
      caller_bug(name + " full-STOC level " + std::to_string(s.full_level) + " is not 4..12");
    }
    if (s.full_level == 0 && s.full_address != 0) caller_bug(name + " has a full-STOC address but no level");
    if (t == 1 && !quad.tri1 && (s.opaque || s.transparent || s.full_level || s.swstoc)) {
      caller_bug("a lone triangle has triangle-1 STOC3 fields");
    }
  }
  const std::optional<BlockDwords> first = encode_quad_leaf(quad);
  if (!first) return std::nullopt;
  Stoc3Dwords dw{};
  std::copy(first->begin(), first->end(), dw.begin());
  const auto set64 = [&](std::size_t byte, uint64_t value) {
    dw[byte / 4] = static_cast<uint32_t>(value);
    dw[byte / 4 + 1] = static_cast<uint32_t>(value >> 32);
  };
  for (std::size_t t = 0; t < 2; ++t) {
    const Stoc3Bits& s = stoc3[t];
    set64(64 + 16 * t, s.opaque);
    set64(72 + 16 * t, s.transparent);
    set64(96 + 16 * t, s.full_address);
    // Byte 104 + 16 t: level; byte 105 + 16 t bit 0: swstoc; the rest of the dword is reserved.
    dw[(104 + 16 * t) / 4] = s.full_level | (s.swstoc ? 1u : 0u) << 8;
  }
  return dw;
}

}  // namespace hwbvh::xe3
