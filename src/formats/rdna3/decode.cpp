#include "hwbvh/formats/rdna3/decode.h"

#include "hwbvh/core/bits.h"

namespace hwbvh::rdna3 {
namespace {

// Fields are addressed by the byte offsets of the spec's tables (§8.1, §8.3).
template <std::size_t N>
uint32_t dword_at(const std::array<uint32_t, N>& node, std::size_t byte) {
  return node[byte / 4];
}
template <std::size_t N>
Vec3 vec3_at(const std::array<uint32_t, N>& node, std::size_t byte) {
  return {bits_float(dword_at(node, byte)), bits_float(dword_at(node, byte + 4)), bits_float(dword_at(node, byte + 8))};
}

Mat3x4 matrix_at(const BoxNodeDwords& node, std::size_t byte) {
  Mat3x4 m{};
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 4; ++c) m[r][c] = bits_float(dword_at(node, byte + 16 * r + 4 * c));
  return m;
}

}  // namespace

DecodedBoxNode decode_box_node(const BoxNodeDwords& node) {
  DecodedBoxNode out;
  const uint32_t flags = dword_at(node, 112);
  for (std::size_t k = 0; k < 4; ++k) {
    out.child_pointer[k] = dword_at(node, 4 * k);
    out.child_box[k].min = vec3_at(node, 16 + 24 * k);
    out.child_box[k].max = vec3_at(node, 28 + 24 * k);
    out.child_flags[k] = (flags >> (8 * k)) & 0xFFu;
  }
  out.primitive_count = dword_at(node, 116);
  return out;
}

DecodedTriangle decode_triangle(const TriangleNodeDwords& node, uint32_t type) {
  // Byte offsets of the vertices each type tests: v0 = 0, v1 = 12, v2 = 24, v3 = 36, v4 = 48.
  constexpr std::size_t kVertexBytes[4][3] = {{0, 12, 24}, {12, 36, 24}, {24, 36, 48}, {24, 48, 0}};
  const uint32_t t = type & 3u;
  DecodedTriangle out;
  for (std::size_t s = 0; s < 3; ++s) out.vertex[s] = vec3_at(node, kVertexBytes[t][s]);
  const uint32_t id = (dword_at(node, 60) >> (8 * t)) & 0xFFu;
  out.id.i_source = field(id, 1, 0);
  out.id.j_source = field(id, 3, 2);
  out.id.double_sided = field(id, 4, 4) != 0;
  out.id.flip_winding = field(id, 5, 5) != 0;
  out.id.procedural = field(id, 6, 6) != 0;
  out.id.opaque = field(id, 7, 7) != 0;
  const uint32_t geometry = dword_at(node, 48);
  out.geometry_id = field(geometry, 23, 0);
  out.geometry_flags = field(geometry, 25, 24);
  out.primitive_id = t == 0 ? dword_at(node, 52) : t == 1 ? dword_at(node, 56) : 0xFFFFFFFFu;
  return out;
}

std::optional<std::array<Vec3, 3>> source_vertices(const DecodedTriangle& triangle) {
  const uint32_t i = triangle.id.i_source, j = triangle.id.j_source;
  if (i > 2 || j > 2 || i == j) return std::nullopt;
  const uint32_t first = 3 - i - j;
  return std::array<Vec3, 3>{triangle.vertex[first], triangle.vertex[i], triangle.vertex[j]};
}

DecodedInstanceNode decode_instance_node(const BoxNodeDwords& node) {
  DecodedInstanceNode out;
  out.world_to_object = matrix_at(node, 0);
  out.instance_id = field(dword_at(node, 48), 23, 0);
  out.instance_mask = field(dword_at(node, 48), 31, 24);
  out.contribution = field(dword_at(node, 52), 23, 0);
  out.instance_flags = field(dword_at(node, 52), 31, 24);
  out.blas_base_pointer = uint64_t{dword_at(node, 56)} | uint64_t{dword_at(node, 60)} << 32;
  out.instance_index = dword_at(node, 64);
  out.blas_node_pointer = dword_at(node, 68);
  out.blas_metadata_size = dword_at(node, 72);
  out.object_to_world = matrix_at(node, 80);
  return out;
}

}  // namespace hwbvh::rdna3
