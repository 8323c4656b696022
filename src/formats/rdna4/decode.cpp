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

// §2.6: origin + p * 2^(e-139), with offsets below the normal float range flushed to 0, then added to the origin
// with the default (round-to-nearest-even) float addition. p <= 4096 converts to float exactly, so the offset's
// bits are float(p)'s with e - 139 added to the exponent field; the field it lands on, bit_length(p) - 13 + e, is
// at most 255 (p = 4096, e = 255 gives +inf), and the offset is flushed when that field is <= 0 or p == 0.
float dequantize(float origin, uint32_t exponent, uint32_t plane) {
  const uint32_t p_bits = float_bits(static_cast<float>(plane));
  const bool normal = plane != 0 && (p_bits >> 23) + exponent > 139;
  const uint32_t offset_bits = normal ? p_bits + ((exponent - 139u) << 23) : 0u;
  return bits_float(offset_bits) + origin;
}

ChildInfoFields read_child_info(NodeView node, unsigned slot) {
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
// is the last line of defence). Inlined: the emulator reads some 30 of these per primitive-node step.
[[gnu::always_inline]] inline uint32_t read_field(NodeView node, int64_t offset, int64_t width) {
  if (width <= 0 || offset < 0 || offset + width > kNodeBits) return 0;
  // get_bits without its branch: the dword pair around the field (the second one past the end reads as 0).
  const auto word = static_cast<unsigned>(offset / 32), shift = static_cast<unsigned>(offset % 32);
  const uint64_t pair = node[word] | (word + 1 < kNodeDwords ? uint64_t{node[word + 1]} << 32 : 0);
  return static_cast<uint32_t>((pair >> shift) & low_mask(static_cast<unsigned>(width)));
}

// §4.5: a payload shorter than the anchor replaces only the anchor's low bits.
uint32_t decode_id(uint32_t anchor, uint32_t anchor_bits, uint32_t payload, uint32_t payload_bits) {
  if (payload_bits >= anchor_bits) return payload;
  return (anchor & ~static_cast<uint32_t>(low_mask(payload_bits))) | payload;
}

uint32_t prim_id(NodeView node, const PrimitiveHeader& h, uint32_t t) {
  const int64_t mid = h.midpoint;
  const uint32_t anchor = read_field(node, mid, h.prim_anchor_bits);
  if (t == 0) return anchor;
  const uint32_t payload = read_field(node, mid + h.prim_anchor_bits + int64_t{t - 1} * h.prim_payload_bits,
                                      h.prim_payload_bits);
  return decode_id(anchor, h.prim_anchor_bits, payload, h.prim_payload_bits);
}

uint32_t geo_id(NodeView node, const PrimitiveHeader& h, uint32_t t) {
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

void set_error(std::string* error, const char* message) {
  if (error != nullptr) *error = message;
}

/// Header lengths that describe 32-bit coordinates (always true for a header from decode_primitive_header).
bool valid_vertex_lengths(const PrimitiveHeader& h) {
  for (int a = 0; a < 3; ++a) {
    const uint32_t length = h.payload_bits[a];
    if (length < 1 || length > 32 || h.prefix_bits[a] + length + h.trailing_zeros != 32) return false;
  }
  return true;
}

/// §4.3 vertex decoding for one node: the three prefixes are shared by every vertex, so they are read once.
class VertexReader {
 public:
  /// Precondition: valid_vertex_lengths(h).
  VertexReader(NodeView node, const PrimitiveHeader& h) : node_(node), h_(h), bits_(vertex_bits(h)) {
    int64_t at = 52;
    for (int a = 0; a < 3; ++a) {
      // 64-bit shifts: P = 0 leaves no prefix bits (a 32-bit shift).
      prefix_[a] = (uint64_t{read_field(node, at, h.prefix_bits[a])} << (32 - h.prefix_bits[a])) & 0xFFFFFFFFu;
      at += h.prefix_bits[a];
    }
    first_ = at;
  }
  /// Vertex i lies inside the node (other sections are not considered).
  [[nodiscard]] bool fits(uint32_t i) const { return first_ + (int64_t{i} + 1) * bits_ <= kNodeBits; }
  /// Vertex i; precondition fits(i).
  [[nodiscard]] Vec3 vertex(uint32_t i) const {
    float v[3];  // not Vec3: glm's operator[] is a switch
    int64_t at = first_ + int64_t{i} * bits_;
    for (int a = 0; a < 3; ++a) {
      const uint64_t payload = read_field(node_, at, h_.payload_bits[a]);
      v[a] = bits_float(static_cast<uint32_t>(prefix_[a] | ((payload << h_.trailing_zeros) & 0xFFFFFFFFu)));
      at += h_.payload_bits[a];
    }
    return {v[0], v[1], v[2]};
  }

 private:
  NodeView node_;
  const PrimitiveHeader& h_;
  int64_t bits_;
  int64_t first_ = 52;
  std::array<uint64_t, 3> prefix_{};
};

std::optional<PrimitiveHeader> decode_header(NodeView node, std::string* error) {
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

}  // namespace

BoxChildren decode_box_children(NodeView node) {
  BoxChildren out;
  const uint32_t dw6 = node[6];
  const uint32_t child_count = field(dw6, 30, 28) + 1;
  out.obb_index = node[7] & 0x7Fu;

  // Child info (§2.3), gathered per dword so that each field is extracted for all eight slots in one loop (which
  // the compiler vectorizes). Planes as int32 (at most 4096): a signed conversion to float is one instruction.
  std::array<uint32_t, 8> w0, w1, w2;
  for (unsigned k = 0; k < 8; ++k) w0[k] = node[8 + 3 * k], w1[k] = node[9 + 3 * k], w2[k] = node[10 + 3 * k];
  std::array<std::array<int32_t, 8>, 3> qmin, qmax;
  for (unsigned k = 0; k < 8; ++k) {
    out.box_flags[k] = field(w0[k], 27, 24);
    out.instance_mask[k] = field(w1[k], 31, 24);
    qmin[0][k] = static_cast<int32_t>(field(w0[k], 11, 0));
    qmin[1][k] = static_cast<int32_t>(field(w0[k], 23, 12));
    qmin[2][k] = static_cast<int32_t>(field(w1[k], 11, 0));
    qmax[0][k] = static_cast<int32_t>(field(w1[k], 23, 12) + 1);
    qmax[1][k] = static_cast<int32_t>(field(w2[k], 11, 0) + 1);
    qmax[2][k] = static_cast<int32_t>(field(w2[k], 23, 12) + 1);
  }

  // Pointers (§2.4): box children take consecutive internal offsets, leaves consecutive leaf offsets, each
  // advancing by its range length x 0x10 pointer units. Selected by masks: the child types vary from node to
  // node, so branches would be mispredicted.
  uint32_t int_ptr = node[0] | kTypeBox;
  uint32_t leaf_ptr = node[1];
  for (unsigned k = 0; k < 8; ++k) {
    const uint32_t node_type = field(w2[k], 27, 24);
    const uint32_t advance = field(w2[k], 31, 28) << 4;
    const uint32_t box_mask = 0 - uint32_t{node_type == kTypeBox}, used = 0 - uint32_t{k < child_count};
    const uint32_t pointer = (int_ptr & box_mask) | ((leaf_ptr | node_type) & ~box_mask);
    out.pointer[k] = (pointer & used) | ~used;  // INVALID_NODE (all ones) past the count
    int_ptr += advance & box_mask & used;
    leaf_ptr += advance & ~box_mask & used;
  }

  // §2.6 dequantization of all eight slots; slots past the count become NaN.
  for (int a = 0; a < 3; ++a) {
    const float origin = bits_float(node[3 + a]);
    const uint32_t exponent = field(dw6, 8 * a + 7, 8 * a);
    if (exponent >= 13) {
      // Then no offset is flushed and 2^(e-139) is a normal float: p * 2^(e-139) is one exact multiply (p = 4096,
      // e = 255 overflows to +inf like the bit construction), the same value as dequantize(). Being exact, the
      // product gives the same sum whether or not the compiler fuses it with the addition.
      const float scale = bits_float((exponent - 12) << 23);
      for (unsigned k = 0; k < 8; ++k) {
        out.min[a][k] = static_cast<float>(qmin[a][k]) * scale + origin;
        out.max[a][k] = static_cast<float>(qmax[a][k]) * scale + origin;
      }
    } else {
      for (unsigned k = 0; k < 8; ++k) {
        out.min[a][k] = dequantize(origin, exponent, static_cast<uint32_t>(qmin[a][k]));
        out.max[a][k] = dequantize(origin, exponent, static_cast<uint32_t>(qmax[a][k]));
      }
    }
  }
  for (unsigned k = child_count; k < 8; ++k) {
    for (int a = 0; a < 3; ++a) out.min[a][k] = out.max[a][k] = std::numeric_limits<float>::quiet_NaN();
  }
  return out;
}

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

  const BoxChildren children = decode_box_children(node);
  out.child_pointer = children.pointer;
  for (unsigned k = 0; k < 8; ++k) {
    out.info[k] = read_child_info(node, k);
    for (int a = 0; a < 3; ++a) {
      out.child_box[k].min[a] = children.min[a][k];
      out.child_box[k].max[a] = children.max[a][k];
    }
  }
  return out;
}

std::optional<PrimitiveHeader> decode_primitive_header(const NodeDwords& node, std::string* error) {
  return decode_header(node, error);
}

Vec3 decode_primitive_vertex(const NodeDwords& node, const PrimitiveHeader& header, uint32_t i) {
  // The header may come from the caller: refuse lengths that do not describe a 32-bit coordinate.
  if (!valid_vertex_lengths(header)) return Vec3{std::numeric_limits<float>::quiet_NaN()};
  const VertexReader reader(node, header);
  return reader.fits(i) ? reader.vertex(i) : Vec3{std::numeric_limits<float>::quiet_NaN()};
}

std::optional<DecodedPair> decode_primitive_pair(const NodeDwords& node, uint32_t pair, std::string* error) {
  return decode_primitive_pair(NodeView(node), pair, error);
}

std::optional<DecodedPair> decode_primitive_pair(NodeView node, uint32_t pair, std::string* error) {
  const std::optional<PrimitiveHeader> header = decode_header(node, error);
  if (!header) return std::nullopt;
  if (pair >= header->pair_count) {
    if (error != nullptr) {
      *error = "primitive node: pair index " + std::to_string(pair) + " >= pair count " +
               std::to_string(header->pair_count);
    }
    return std::nullopt;
  }
  // §4.4: pair i occupies bits [1024 - 29(i+1), 1024 - 29i).
  const uint32_t desc = get_bits(node, kNodeBits - 29 * (pair + 1), 29);
  const int64_t capacity = vertex_capacity(*header);
  const VertexReader reader(node, *header);

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
        if (error != nullptr) {
          *error = "primitive node: vertex index " + std::to_string(tri.index[c]) + " points past the vertex section";
        }
        return std::nullopt;
      }
      tri.vertex[c] = reader.vertex(tri.index[c]);
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
