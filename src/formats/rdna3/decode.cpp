#include "hwbvh/formats/rdna3/decode.h"

#include "hwbvh/core/bits.h"

namespace hwbvh::rdna3 {
namespace {

// A float triple at dword `first` of a node.
template <std::size_t N>
Vec3 read_vec3(const std::array<uint32_t, N>& dw, std::size_t first) {
  return {bits_float(dw[first]), bits_float(dw[first + 1]), bits_float(dw[first + 2])};
}

}  // namespace

DecodedBoxNode decode_box_node(const BoxNodeDwords& node) {
  DecodedBoxNode out;
  for (std::size_t k = 0; k < 4; ++k) {
    out.child_pointer[k] = node[k];                // bytes 0, 4, 8, 12
    out.child_box[k].min = read_vec3(node, 4 + 6 * k);  // byte 16 + 24k
    out.child_box[k].max = read_vec3(node, 7 + 6 * k);  // byte 28 + 24k
    out.child_flags[k] = field(node[28], static_cast<unsigned>(8 * k + 7), static_cast<unsigned>(8 * k));
  }
  out.primitive_count = node[29];  // byte 116
  return out;
}

DecodedTriangle decode_triangle(const TriangleNodeDwords& node, uint32_t type) {
  // Vertex slots per type, as byte offsets / 12: v0 = 0, v1 = 1, v2 = 2, v3 = 3, v4 = 4 (bytes 48..59).
  constexpr std::size_t kSlots[4][3] = {{0, 1, 2}, {1, 3, 2}, {2, 3, 4}, {2, 4, 0}};
  const uint32_t t = type & 3u;
  DecodedTriangle out;
  for (std::size_t s = 0; s < 3; ++s) out.vertex[s] = read_vec3(node, 3 * kSlots[t][s]);
  const uint32_t id = field(node[15], 8 * t + 7, 8 * t);  // byte 60, one byte per type
  out.id.i_source = field(id, 1, 0);
  out.id.j_source = field(id, 3, 2);
  out.id.double_sided = field(id, 4, 4) != 0;
  out.id.flip_winding = field(id, 5, 5) != 0;
  out.id.procedural = field(id, 6, 6) != 0;
  out.id.opaque = field(id, 7, 7) != 0;
  out.geometry_id = field(node[12], 23, 0);    // byte 48
  out.geometry_flags = field(node[12], 25, 24);
  out.primitive_id = t == 0 ? node[13] : t == 1 ? node[14] : 0xFFFFFFFFu;  // bytes 52 / 56
  return out;
}

std::optional<std::array<Vec3, 3>> source_vertices(const DecodedTriangle& triangle) {
  const uint32_t i = triangle.id.i_source, j = triangle.id.j_source;
  if (i > 2 || j > 2 || i == j) return std::nullopt;
  const uint32_t first = 3 - i - j;
  return std::array<Vec3, 3>{triangle.vertex[first], triangle.vertex[i], triangle.vertex[j]};
}

}  // namespace hwbvh::rdna3
