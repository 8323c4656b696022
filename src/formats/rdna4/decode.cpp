// RT IP 3.1 node decoder (shared/spec/rtip31-format.md §2.2-2.6, §3.2, §4.2-4.7, Appendix A).
//
// Written from the spec without looking at the encoder's packing code: every field position below is read off
// the spec's tables. Any 32 dwords decode without undefined behaviour; all stream reads are range-checked
// against the 1024-bit node before they happen.
#include <bit>
#include <cmath>
#include <limits>

#include "formats/rdna4/obb_tables.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rdna4 {
namespace {

constexpr unsigned kNodeBits = 1024;

// --- box node (§2) ---

// §2.6: builds origin + p * 2^(e-139) from bits, flushing offsets below the normal range to 0, then adds the
// origin with the default (round-to-nearest-even) float addition.
float dequantize(float origin, uint32_t exponent, uint32_t plane) {
  uint32_t offset_bits = 0;
  if (plane != 0) {
    const int s = static_cast<int>(bit_length(plane)) - 1 - 12;  // -12 .. 0 for planes 1..4096
    const int se = s + static_cast<int>(exponent);
    if (se > 0) {
      offset_bits = ((plane << (11 - s)) & 0x7FFFFFu) | ((static_cast<uint32_t>(se) << 23) & 0x7FFFFFFFu);
    }
  }
  return bits_float(offset_bits) + origin;
}

ChildInfoFields read_child_info(const NodeDwords& node, unsigned slot) {
  const uint32_t w0 = node[8 + 3 * slot], w1 = node[9 + 3 * slot], w2 = node[10 + 3 * slot];
  ChildInfoFields ci;
  ci.qmin = {field(w0, 11, 0), field(w0, 23, 12), field(w1, 11, 0)};
  ci.qmax_stored = {field(w1, 23, 12), field(w2, 11, 0), field(w2, 23, 12)};
  ci.box_flags = field(w0, 27, 24);
  ci.instance_mask = field(w1, 31, 24);
  ci.node_type = field(w2, 27, 24);
  ci.range_length = field(w2, 31, 28);
  return ci;
}

// --- primitive node (§4) ---

// A stream field of a primitive node, read only if it lies inside the node (callers validated the layout, this
// is the last line of defence).
uint32_t read_field(const NodeDwords& node, int64_t offset, int64_t width) {
  if (width <= 0 || offset < 0 || offset + width > kNodeBits) return 0;
  return get_bits(node, static_cast<unsigned>(offset), static_cast<unsigned>(width));
}

// §4.5: a payload shorter than the anchor replaces only the anchor's low bits.
uint32_t decode_id(uint32_t anchor, uint32_t anchor_bits, uint32_t payload, uint32_t payload_bits) {
  if (payload_bits >= anchor_bits) return payload;
  return (anchor & ~static_cast<uint32_t>(low_mask(payload_bits))) | payload;
}

uint32_t prim_id(const NodeDwords& node, const PrimitiveHeader& h, uint32_t t) {
  const int64_t mid = h.midpoint;
  const uint32_t anchor = read_field(node, mid, h.prim_anchor_bits);
  if (t == 0) return anchor;
  const uint32_t payload = read_field(node, mid + h.prim_anchor_bits + int64_t{t - 1} * h.prim_payload_bits,
                                      h.prim_payload_bits);
  return decode_id(anchor, h.prim_anchor_bits, payload, h.prim_payload_bits);
}

uint32_t geo_id(const NodeDwords& node, const PrimitiveHeader& h, uint32_t t) {
  const int64_t anchor_at = int64_t{h.midpoint} - h.geo_anchor_bits;
  const uint32_t anchor = read_field(node, anchor_at, h.geo_anchor_bits);
  if (t == 0) return anchor;
  const uint32_t payload = read_field(node, anchor_at - int64_t{t} * h.geo_payload_bits, h.geo_payload_bits);
  return decode_id(anchor, h.geo_anchor_bits, payload, h.geo_payload_bits);
}

int64_t prefix_total(const PrimitiveHeader& h) {
  return int64_t{h.prefix_bits[0]} + h.prefix_bits[1] + h.prefix_bits[2];
}
int64_t vertex_bits(const PrimitiveHeader& h) {
  return int64_t{h.payload_bits[0]} + h.payload_bits[1] + h.payload_bits[2];
}
/// First bit of the geometry-ID section, i.e. the end of the space vertices may occupy.
int64_t geo_section_begin(const PrimitiveHeader& h) {
  return int64_t{h.midpoint} - h.geo_anchor_bits - int64_t{2 * h.pair_count - 1} * h.geo_payload_bits;
}
/// Number of whole vertices that fit between the prefixes and the geometry-ID section.
int64_t vertex_capacity(const PrimitiveHeader& h) {
  const int64_t room = geo_section_begin(h) - 52 - prefix_total(h);
  return room < 0 ? 0 : room / vertex_bits(h);
}

void set_error(std::string* error, const std::string& message) {
  if (error != nullptr) *error = message;
}

}  // namespace

DecodedBoxNode decode_box_node(const NodeDwords& node) {
  DecodedBoxNode out;
  out.internal_base = node[0];
  out.leaf_base = node[1];
  out.parent_pointer = node[2];
  out.origin = {bits_float(node[3]), bits_float(node[4]), bits_float(node[5])};
  const uint32_t dw6 = node[6];
  out.exponent = {field(dw6, 7, 0), field(dw6, 15, 8), field(dw6, 23, 16)};
  out.no_sort = field(dw6, 24, 24) != 0;
  out.index_in_parent = field(dw6, 27, 25);
  out.child_count = field(dw6, 30, 28) + 1;
  out.obb_index = node[7] & 0x7Fu;

  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint32_t int_ptr = out.internal_base | kTypeBox;
  uint32_t leaf_ptr = out.leaf_base;
  for (unsigned k = 0; k < 8; ++k) {
    out.info[k] = read_child_info(node, k);
    if (k >= out.child_count) {
      out.child_pointer[k] = kInvalidNode;
      out.child_box[k] = Aabb{Vec3{nan}, Vec3{nan}};
      continue;
    }
    const ChildInfoFields& ci = out.info[k];
    const uint32_t advance = ci.range_length << 4;  // 0x10 pointer units per 128-byte node
    if (ci.node_type == kTypeBox) {
      out.child_pointer[k] = int_ptr;
      int_ptr += advance;
    } else {
      out.child_pointer[k] = leaf_ptr | ci.node_type;
      leaf_ptr += advance;
    }
    for (int a = 0; a < 3; ++a) {
      out.child_box[k].min[a] = dequantize(out.origin[a], out.exponent[a], ci.qmin[a]);
      out.child_box[k].max[a] = dequantize(out.origin[a], out.exponent[a], ci.qmax_stored[a] + 1);
    }
  }
  return out;
}

std::optional<PrimitiveHeader> decode_primitive_header(const NodeDwords& node, std::string* error) {
  const uint32_t dw0 = node[0], dw1 = node[1];
  PrimitiveHeader h;
  h.payload_bits = {field(dw0, 4, 0) + 1, field(dw0, 9, 5) + 1, field(dw0, 14, 10) + 1};
  h.trailing_zeros = field(dw0, 19, 15);
  h.geo_anchor_bits = field(dw0, 23, 20) * 2;
  h.geo_payload_bits = field(dw0, 27, 24) * 2;
  h.pair_count = field(dw0, 30, 28) + 1;
  h.vertex_type = field(dw0, 31, 31);
  h.prim_anchor_bits = field(dw1, 4, 0);
  h.prim_payload_bits = field(dw1, 9, 5);
  h.midpoint = field(dw1, 19, 10);

  if (h.vertex_type != 0) {
    set_error(error, "primitive node: vertex type 1 (not float32) is not supported");
    return std::nullopt;
  }
  for (int a = 0; a < 3; ++a) {
    const int prefix = 32 - static_cast<int>(h.trailing_zeros) - static_cast<int>(h.payload_bits[a]);
    if (prefix < 0) {
      set_error(error, "primitive node: trailing zeros + payload length exceed 32 bits");
      return std::nullopt;
    }
    h.prefix_bits[a] = static_cast<uint32_t>(prefix);
  }
  const int64_t triangles = 2 * int64_t{h.pair_count} - 1;
  const int64_t descriptors_begin = kNodeBits - 29 * int64_t{h.pair_count};
  const int64_t prim_end = int64_t{h.midpoint} + h.prim_anchor_bits + triangles * h.prim_payload_bits;
  if (prim_end > descriptors_begin) {
    set_error(error, "primitive node: primitive-ID section overlaps the pair descriptors");
    return std::nullopt;
  }
  if (geo_section_begin(h) < 52 + prefix_total(h)) {
    set_error(error, "primitive node: geometry-ID section overlaps the vertex prefixes");
    return std::nullopt;
  }
  return h;
}

Vec3 decode_primitive_vertex(const NodeDwords& node, const PrimitiveHeader& header, uint32_t i) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int a = 0; a < 3; ++a) {
    // The header may come from the caller: refuse lengths that do not describe a 32-bit coordinate.
    if (header.payload_bits[a] < 1 || header.payload_bits[a] > 32 ||
        header.prefix_bits[a] + header.payload_bits[a] + header.trailing_zeros != 32) {
      return Vec3{nan};
    }
  }
  const int64_t begin = 52 + prefix_total(header) + int64_t{i} * vertex_bits(header);
  if (begin + vertex_bits(header) > kNodeBits) return Vec3{nan};

  Vec3 v{0.0f};
  int64_t prefix_at = 52, payload_at = begin;
  for (int a = 0; a < 3; ++a) {
    const uint32_t p = header.prefix_bits[a], l = header.payload_bits[a];
    const uint64_t prefix = read_field(node, prefix_at, p);
    const uint64_t payload = read_field(node, payload_at, l);
    // 64-bit shifts: P = 0 leaves no prefix bits (a 32-bit shift), L = 32 needs the whole word.
    const uint64_t bits = ((prefix << (32 - p)) | (payload << header.trailing_zeros)) & 0xFFFFFFFFu;
    v[a] = bits_float(static_cast<uint32_t>(bits));
    prefix_at += p;
    payload_at += l;
  }
  return v;
}

std::optional<DecodedPair> decode_primitive_pair(const NodeDwords& node, uint32_t pair, std::string* error) {
  const std::optional<PrimitiveHeader> header = decode_primitive_header(node, error);
  if (!header) return std::nullopt;
  if (pair >= header->pair_count) {
    set_error(error, "primitive node: pair index " + std::to_string(pair) + " >= pair count " +
                         std::to_string(header->pair_count));
    return std::nullopt;
  }
  // §4.4: pair i occupies bits [1024 - 29(i+1), 1024 - 29i).
  const uint32_t desc = get_bits(node, kNodeBits - 29 * (pair + 1), 29);
  const int64_t capacity = vertex_capacity(*header);

  DecodedPair out;
  for (unsigned k = 0; k < 2; ++k) {
    DecodedTriangle& tri = out.tri[k];
    const unsigned base = k == 0 ? 15 : 1;  // tri0 flags start at bit 15, tri1 flags at bit 1
    tri.double_sided = field(desc, base, base) != 0;
    tri.opaque = field(desc, base + 1, base + 1) != 0;
    tri.index = {field(desc, base + 5, base + 2), field(desc, base + 9, base + 6), field(desc, base + 13, base + 10)};
    tri.valid = k == 0 || tri.index != std::array<uint32_t, 3>{0, 0, 0};
    tri.procedural = tri.index[0] == 15 && tri.index[1] == 15;
    const uint32_t t = 2 * pair + k;
    tri.primitive_id = prim_id(node, *header, t);
    tri.geometry_id = geo_id(node, *header, t);
    if (!tri.valid || tri.procedural) continue;
    for (int c = 0; c < 3; ++c) {
      if (tri.index[c] >= capacity) {
        set_error(error, "primitive node: vertex index " + std::to_string(tri.index[c]) +
                             " points past the vertex section");
        return std::nullopt;
      }
      tri.vertex[c] = decode_primitive_vertex(node, *header, tri.index[c]);
    }
  }
  out.range_stop = field(desc, 0, 0) != 0;
  out.navigation = out.range_stop ? kNavEndOfRange : pair == header->pair_count - 1 ? kNavEndOfNode : kNavEndOfPair;
  return out;
}

Mat3Rows obb_matrix(uint32_t index) {
  // 104..127 are not rotations (127 = axis-aligned; the spec treats 104..126 as invalid too).
  if (index >= kObbMatrixCount) return {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};
  Mat3Rows m{};
  const uint64_t entry = detail::kObbStage1[index];
  for (unsigned row = 0; row < 3; ++row) {
    for (unsigned col = 0; col < 3; ++col) {
      const auto code = static_cast<uint32_t>((entry >> (18 * row + 6 * col)) & 0x3F);
      const uint32_t magnitude = detail::kObbStage2[code & 0x1F];
      m[row][static_cast<int>(col)] = bits_float(magnitude | ((code >> 5) << 31));
    }
  }
  return m;
}

}  // namespace hwbvh::rdna4
