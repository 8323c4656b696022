// Xe3 node decoder (docs/xe3-format.md §1.1 to §1.4, §6.1). Fields are addressed by the byte offsets of the
// spec's tables.
#include "hwbvh/formats/xe3/decode.h"

#include <cmath>

#include "hwbvh/core/bits.h"

namespace hwbvh::xe3 {
namespace {

uint32_t byte_at(std::span<const uint32_t> node, std::size_t byte) {
  return (node[byte / 4] >> (8 * (byte % 4))) & 0xFFu;
}
uint32_t dword_at(std::span<const uint32_t> node, std::size_t byte) { return node[byte / 4]; }
uint64_t qword_at(std::span<const uint32_t> node, std::size_t byte) {
  return uint64_t{node[byte / 4]} | uint64_t{node[byte / 4 + 1]} << 32;
}
Vec3 vec3_at(std::span<const uint32_t> node, std::size_t byte) {
  return {bits_float(dword_at(node, byte)), bits_float(dword_at(node, byte + 4)), bits_float(dword_at(node, byte + 8))};
}
int32_t signed_byte(uint32_t b) { return b >= 0x80u ? static_cast<int32_t>(b) - 0x100 : static_cast<int32_t>(b); }

}  // namespace

int64_t DecodedInternalNode::child_block(int64_t node_block, uint32_t i) const {
  int64_t block = node_block + child_offset;
  for (uint32_t k = 0; k < i && k < kNodeWidth; ++k) block += block_incr[k];
  return block;
}

DecodedInternalNode decode_internal_node(std::span<const uint32_t, kBlockDwords> node) {
  DecodedInternalNode out;
  out.lower = vec3_at(node, 0);
  out.child_offset = static_cast<int32_t>(dword_at(node, 12));
  out.node_type = byte_at(node, 16);
  out.reserved = byte_at(node, 17);
  for (std::size_t a = 0; a < 3; ++a) out.exponent[a] = signed_byte(byte_at(node, 18 + a));
  out.node_mask = byte_at(node, 21);
  for (std::size_t i = 0; i < kNodeWidth; ++i) {
    const uint32_t data = byte_at(node, 22 + i);
    out.child_data[i] = data;
    out.block_incr[i] = field(data, 1, 0);
    out.type_or_start[i] = field(data, 5, 2);
    // Planes: lower_x at byte 28, upper_x at 34, lower_y at 40, upper_y at 46, lower_z at 52, upper_z at 58.
    for (std::size_t p = 0; p < 6; ++p) out.q[i][p] = byte_at(node, 28 + 6 * p + i);
    out.valid[i] = (out.q[i][0] & 0x80u) == 0 || (out.q[i][1] & 0x80u) != 0;
    for (int a = 0; a < 3; ++a) {
      const float step = std::ldexp(1.0f, out.exponent[static_cast<std::size_t>(a)] - 8);
      const float lo = out.lower[a], qlo = static_cast<float>(out.q[i][2 * static_cast<std::size_t>(a)]),
                  qhi = static_cast<float>(out.q[i][2 * static_cast<std::size_t>(a) + 1]);
      out.child_box[i].min[a] = lo + qlo * step;
      out.child_box[i].max[a] = lo + qhi * step;
    }
  }
  return out;
}

std::array<Vec3, 3> DecodedQuadLeaf::triangle(int k) const {
  if (k == 0) return {v[0], v[1], v[2]};
  return {v[j[0]], v[j[1]], v[j[2]]};
}

DecodedQuadLeaf decode_quad_leaf(std::span<const uint32_t, kBlockDwords> leaf) {
  DecodedQuadLeaf out;
  const uint32_t d0 = dword_at(leaf, 0), d1 = dword_at(leaf, 4), flags = dword_at(leaf, 12);
  out.shader_index = field(d0, 23, 0);
  out.geometry_mask = field(d0, 31, 24);
  out.geometry_index = field(d1, 23, 0);
  out.sub_type = field(d1, 27, 24);
  out.desc_reserved = field(d1, 28, 28);
  out.disable_opacity_cull = field(d1, 29, 29) != 0;
  out.opaque = field(d1, 30, 30) != 0;
  out.ignore_ray_multiplier = field(d1, 31, 31) != 0;
  out.prim_index0 = dword_at(leaf, 8);
  out.prim_index1_delta = field(flags, 4, 0);
  out.swstoc = {field(flags, 5, 5) != 0, field(flags, 6, 6) != 0};
  out.flags_reserved = field(flags, 7, 7);
  out.stoc1_opaque = {field(flags, 11, 8), field(flags, 27, 24)};
  out.stoc1_transparent = {field(flags, 15, 12), field(flags, 31, 28)};
  out.j = {field(flags, 17, 16), field(flags, 19, 18), field(flags, 21, 20)};
  out.last = field(flags, 22, 22) != 0;
  out.last_in_meshlet = field(flags, 23, 23) != 0;
  for (std::size_t k = 0; k < 4; ++k) out.v[k] = vec3_at(leaf, 16 + 12 * k);
  return out;
}

DecodedStoc3Leaf decode_stoc3_leaf(std::span<const uint32_t, kStoc3LeafDwords> leaf) {
  DecodedStoc3Leaf out;
  out.quad = decode_quad_leaf(leaf.first<kBlockDwords>());
  for (std::size_t t = 0; t < 2; ++t) {
    const std::size_t base = 16 * t;
    out.opaque[t] = qword_at(leaf, 64 + base);
    out.transparent[t] = qword_at(leaf, 72 + base);
    out.full_address[t] = qword_at(leaf, 96 + base);
    out.full_level[t] = byte_at(leaf, 104 + base);
    const uint32_t flag_byte = byte_at(leaf, 105 + base);
    out.swstoc[t] = (flag_byte & 1u) != 0;
    const bool reserved = (flag_byte & ~1u) != 0 || byte_at(leaf, 106 + base) != 0 || byte_at(leaf, 107 + base) != 0 ||
                          dword_at(leaf, 108 + base) != 0;
    out.reserved_nonzero = out.reserved_nonzero || reserved;
  }
  return out;
}

DecodedInstanceLeaf decode_instance_leaf(std::span<const uint32_t, 32> leaf) {
  DecodedInstanceLeaf out;
  const uint32_t d0 = dword_at(leaf, 0), d1 = dword_at(leaf, 4);
  out.contribution = field(d0, 23, 0);
  out.mask = field(d0, 31, 24);
  out.flags = field(d1, 7, 0);
  out.comparison = field(d1, 15, 8);
  out.sub_type = field(d1, 26, 24);
  out.opacity_bits = field(d1, 31, 29);
  const uint64_t bvh_qword = qword_at(leaf, 64);
  out.reserved_nonzero = field(d1, 23, 16) != 0 || field(d1, 28, 27) != 0 || (bvh_qword >> 48) != 0;
  out.start_node = qword_at(leaf, 8);
  out.bvh = bvh_qword & 0xFFFFFFFFFFFFull;
  out.instance_id = dword_at(leaf, 72);
  out.instance_index = dword_at(leaf, 76);
  // Column c of a linear part at byte base + 12 c; the translation elsewhere (bytes 52 and 116).
  for (std::size_t r = 0; r < 3; ++r) {
    for (std::size_t c = 0; c < 3; ++c) {
      out.world_to_object[r][c] = vec3_at(leaf, 16 + 12 * c)[static_cast<int>(r)];
      out.object_to_world[r][c] = vec3_at(leaf, 80 + 12 * c)[static_cast<int>(r)];
    }
    out.world_to_object[r][3] = vec3_at(leaf, 116)[static_cast<int>(r)];
    out.object_to_world[r][3] = vec3_at(leaf, 52)[static_cast<int>(r)];
  }
  return out;
}

}  // namespace hwbvh::xe3
