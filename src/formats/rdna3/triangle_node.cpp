#include "hwbvh/formats/rdna3/triangle_node.h"

#include <cstddef>

#include "hwbvh/core/bits.h"

namespace hwbvh::rdna3 {
namespace {

bool same_bits(Vec3 a, Vec3 b) {
  return float_bits(a.x) == float_bits(b.x) && float_bits(a.y) == float_bits(b.y) && float_bits(a.z) == float_bits(b.z);
}

// How a pair is laid out: tri0 rotated so that source vertex `e` lands in v0 (its edge e+1 -> e+2 becomes
// v1 -> v2), tri1 rotated so that its vertex f+2 lands in v3 (its edge f -> f+1 is v2 -> v1).
struct PairLayout {
  int e = 0;
  int f = 0;
};

std::optional<PairLayout> pair_layout(const TriangleInput& tri0, const TriangleInput& tri1) {
  if (tri0.geometry_id != tri1.geometry_id || tri0.opaque != tri1.opaque) return std::nullopt;
  for (int e = 0; e < 3; ++e) {
    const Vec3 p = tri0.v[(e + 1) % 3], q = tri0.v[(e + 2) % 3];
    for (int f = 0; f < 3; ++f) {
      if (same_bits(tri1.v[f], q) && same_bits(tri1.v[(f + 1) % 3], p)) return PairLayout{e, f};
    }
  }
  return std::nullopt;
}

// One triangle_id byte. `first_slot_source` is the source vertex in the triangle's slot 0, the others follow in
// rotation order, so source vertex k sits in slot (k - first_slot_source) mod 3.
uint32_t triangle_id_byte(int first_slot_source, bool opaque) {
  const auto slot = [first_slot_source](int k) { return static_cast<uint32_t>((k - first_slot_source + 3) % 3); };
  return slot(1) | slot(2) << 2 | (opaque ? kTriangleIdOpaque : 0u);
}

void put_vertex(TriangleNodeDwords& dw, int index, Vec3 v) {
  for (int a = 0; a < 3; ++a) dw[static_cast<std::size_t>(3 * index + a)] = float_bits(v[a]);
}

}  // namespace

bool can_pair(const TriangleInput& tri0, const TriangleInput& tri1) { return pair_layout(tri0, tri1).has_value(); }

std::optional<TriangleNodeDwords> encode_triangle_node(const TriangleNodeInput& input) {
  const TriangleInput& t0 = input.tri0;
  if (t0.geometry_id > kMaxGeometryId) return std::nullopt;
  TriangleNodeDwords dw{};
  const uint32_t geometry_flags = t0.opaque ? kGeometryFlagOpaque : 0u;
  dw[12] = t0.geometry_id | geometry_flags << 24;
  dw[13] = t0.primitive_id;
  if (!input.tri1) {
    for (int k = 0; k < 3; ++k) put_vertex(dw, k, t0.v[k]);
    dw[15] = triangle_id_byte(0, t0.opaque);
    return dw;
  }
  const TriangleInput& t1 = *input.tri1;
  const std::optional<PairLayout> layout = pair_layout(t0, t1);
  if (!layout) return std::nullopt;
  const int e = layout->e, f = layout->f;
  for (int s = 0; s < 3; ++s) put_vertex(dw, s, t0.v[(e + s) % 3]);  // v0, v1, v2
  put_vertex(dw, 3, t1.v[(f + 2) % 3]);                                // v3
  dw[14] = t1.primitive_id;
  // Triangle 1 is tested as (v1, v3, v2) = its source vertices (f + 1, f + 2, f).
  dw[15] = triangle_id_byte(e, t0.opaque) | triangle_id_byte((f + 1) % 3, t1.opaque) << 8;
  return dw;
}

}  // namespace hwbvh::rdna3
