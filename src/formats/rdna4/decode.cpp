// RT IP 3.1 node decoder (docs/rtip31-format.md §2.2-2.6, §3.2, §4.2-4.7, Appendix A).
//
// Written from the spec without looking at the encoder's packing code: every field position below is read off
// the spec's tables. Any 32 dwords decode without undefined behaviour; all stream reads are range-checked
// against the 1024-bit node before they happen (for primitive nodes, by validating the section layout first).
#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
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

/// A primitive node's 1024-bit stream, copied with a zero dword after it so that the dword pair around any bit
/// offset below 1024 is in bounds. Reads are not range-checked here: callers read only fields that the layout checks
/// (read_header, valid_vertex_lengths, the vertex-index checks) proved lie inside the node.
class NodeStream {
 public:
  explicit NodeStream(NodeView node) {
    std::copy(node.begin(), node.end(), dw_.begin());
    dw_[kNodeDwords] = 0;
  }
  /// The field of width w (0..32) at `offset`, given mask = mask32(w) (callers compute each mask once).
  [[nodiscard]] uint32_t read(uint32_t offset, uint32_t mask) const {
    return static_cast<uint32_t>(window(offset)) & mask;
  }
  /// Stream bits from `offset` on, at least 33 of them (the rest zero or unrelated).
  [[nodiscard]] uint64_t window(uint32_t offset) const {
    assert(offset < kNodeBits);
    const uint32_t word = offset / 32;
    uint64_t pair;  // dw_[word] | dw_[word + 1] << 32: one 64-bit load on a little-endian host
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&pair, &dw_[word], sizeof pair);
    } else {
      pair = dw_[word] | uint64_t{dw_[word + 1]} << 32;
    }
    return pair >> (offset % 32);
  }

 private:
  std::array<uint32_t, kNodeDwords + 1> dw_;
};

/// low_mask for a width known to be 0..32 (every stream field's): no test for widths of 64 and more.
uint32_t mask32(uint32_t width) { return static_cast<uint32_t>((uint64_t{1} << width) - 1); }

// §4.5: a payload shorter than the anchor replaces only the anchor's low bits.
uint32_t decode_id(uint32_t anchor, uint32_t anchor_bits, uint32_t payload, uint32_t payload_bits) {
  if (payload_bits >= anchor_bits) return payload;
  return (anchor & ~static_cast<uint32_t>(low_mask(payload_bits))) | payload;
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

// Error reporting is out of line and cold: the emulator decodes pairs without an error string, and inlined string
// building would crowd the hot path's registers.
[[gnu::cold, gnu::noinline]] void set_error(std::string* error, const char* message) {
  if (error != nullptr) *error = message;
}
[[gnu::cold, gnu::noinline]] void set_pair_index_error(std::string* error, uint32_t pair, uint32_t pair_count) {
  if (error != nullptr) {
    *error = "primitive node: pair index " + std::to_string(pair) + " >= pair count " + std::to_string(pair_count);
  }
}
[[gnu::cold, gnu::noinline]] void set_vertex_index_error(std::string* error, uint32_t index) {
  if (error != nullptr) {
    *error = "primitive node: vertex index " + std::to_string(index) + " points past the vertex section";
  }
}

/// Header lengths that describe 32-bit coordinates (always true for a header from decode_primitive_header).
bool valid_vertex_lengths(const PrimitiveHeader& h) {
  if (h.trailing_zeros > 31) return false;  // checked apart, so that the sum below cannot wrap around
  for (int a = 0; a < 3; ++a) {
    const uint32_t length = h.payload_bits[a];
    if (length < 1 || length > 32 || h.prefix_bits[a] > 31 || h.prefix_bits[a] + length + h.trailing_zeros != 32) {
      return false;
    }
  }
  return true;
}

/// §4.3 vertex decoding for one node: the three prefixes are shared by every vertex, so they are read once, and so
/// are the per-axis payload positions and masks. Values, not references, so that they stay in registers when inlined.
class VertexReader {
 public:
  /// Precondition: valid_vertex_lengths(h), so the prefixes (at most 3 x 31 bits from bit 52) lie inside the node.
  VertexReader(const NodeStream& stream, const PrimitiveHeader& h) : stream_(stream) {
    uint32_t at = 52;
    for (int a = 0; a < 3; ++a) {
      // The P bits at `at` moved to the top of 32: the truncation drops the bits above them. A 64-bit shift, as
      // P = 0 leaves no prefix bits (a 32-bit shift).
      prefix_[a] = static_cast<uint32_t>(stream.window(at) << (32 - h.prefix_bits[a]));
      at += h.prefix_bits[a];
    }
    first_ = at;
    for (int a = 0; a < 3; ++a) {
      // The payload is read together with the T bits before it, which are masked off: it lands at bit T without a
      // shift. Those T bits still lie inside the node: T <= 31 and the payloads start at bit 52 or later.
      at_[a] = first_ + bits_ - h.trailing_zeros;
      mask_[a] = mask32(h.payload_bits[a]) << h.trailing_zeros;
      bits_ += h.payload_bits[a];
    }
  }
  /// Vertex i lies inside the node (other sections are not considered).
  [[nodiscard]] bool fits(uint32_t i) const { return first_ + (int64_t{i} + 1) * bits_ <= kNodeBits; }
  /// Vertex i; precondition fits(i), which makes its three payload reads in range.
  [[nodiscard]] Vec3 vertex(uint32_t i) const {
    float v[3];  // not Vec3: glm's operator[] is a switch
    for (int a = 0; a < 3; ++a) v[a] = bits_float(prefix_[a] | stream_.read(at_[a] + i * bits_, mask_[a]));
    return {v[0], v[1], v[2]};
  }

 private:
  const NodeStream& stream_;
  std::array<uint32_t, 3> prefix_{};
  std::array<uint32_t, 3> at_{};    ///< of each axis's payload in vertex 0, minus T
  std::array<uint32_t, 3> mask_{};  ///< of each axis's payload, shifted left by T
  uint32_t first_ = 52;
  uint32_t bits_ = 0;
};

/// Reads and validates the header into `h`; false with `error` set when its sections do not fit the node. Inlined
/// so that decode_primitive_pair keeps the fields in registers instead of copying an optional header.
[[gnu::always_inline]] inline bool read_header(NodeView node, PrimitiveHeader& h, std::string* error) {
  const uint32_t dw0 = node[0], dw1 = node[1];
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
    return false;
  }
  for (int a = 0; a < 3; ++a) {
    const int prefix = 32 - static_cast<int>(h.trailing_zeros) - static_cast<int>(h.payload_bits[a]);
    if (prefix < 0) {
      set_error(error, "primitive node: trailing zeros + payload length exceed 32 bits");
      return false;
    }
    h.prefix_bits[a] = static_cast<uint32_t>(prefix);
  }
  const int64_t triangles = 2 * int64_t{h.pair_count} - 1;
  const int64_t descriptors_begin = kNodeBits - 29 * int64_t{h.pair_count};
  const int64_t prim_end = int64_t{h.midpoint} + h.prim_anchor_bits + triangles * h.prim_payload_bits;
  if (prim_end > descriptors_begin) {
    set_error(error, "primitive node: primitive-ID section overlaps the pair descriptors");
    return false;
  }
  if (geo_section_begin(h) < 52 + prefix_total(h)) {
    set_error(error, "primitive node: geometry-ID section overlaps the vertex prefixes");
    return false;
  }
  return true;
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
  PrimitiveHeader h;
  if (!read_header(node, h, error)) return std::nullopt;
  return h;
}

Vec3 decode_primitive_vertex(const NodeDwords& node, const PrimitiveHeader& header, uint32_t i) {
  // The header may come from the caller: refuse lengths that do not describe a 32-bit coordinate.
  if (!valid_vertex_lengths(header)) return Vec3{std::numeric_limits<float>::quiet_NaN()};
  const NodeStream stream(node);
  const VertexReader reader(stream, header);
  return reader.fits(i) ? reader.vertex(i) : Vec3{std::numeric_limits<float>::quiet_NaN()};
}

std::optional<DecodedPair> decode_primitive_pair(const NodeDwords& node, uint32_t pair, std::string* error) {
  return decode_primitive_pair(NodeView(node), pair, error);
}

std::optional<DecodedPair> decode_primitive_pair(NodeView node, uint32_t pair, std::string* error) {
  // Every path returns this object (emptied on errors), so the pair is built in place rather than copied, and it
  // is zeroed once (an empty std::optional's construction clears the whole payload too).
  std::optional<DecodedPair> result(std::in_place);
  PrimitiveHeader h;
  if (!read_header(node, h, error)) {
    result.reset();
    return result;
  }
  if (pair >= h.pair_count) {
    set_pair_index_error(error, pair, h.pair_count);
    result.reset();
    return result;
  }
  // From here on every read is in range: the descriptor of pair < P <= 8 lies in the top 232 bits, read_header
  // proved 52 + prefixes <= geometry-ID section <= midpoint and midpoint + primitive-ID section <= descriptors, and
  // vertices are read only once they are known to end before the geometry-ID section.
  const NodeStream stream(node);
  // §4.4: pair i occupies bits [1024 - 29(i+1), 1024 - 29i).
  const uint32_t desc = stream.read(kNodeBits - 29 * (pair + 1), mask32(29));

  // §4.5 IDs of triangles t = 2 pair and 2 pair + 1, read before the vertex reader is set up so that fewer values
  // are live at once. The anchors sit at the midpoint; primitive IDs grow up from it, geometry IDs down.
  std::array<uint32_t, 2> prim_ids, geo_ids;
  {
    const uint32_t mid = h.midpoint, pa = h.prim_anchor_bits, pp = h.prim_payload_bits, pp_mask = mask32(pp);
    const uint32_t ga = h.geo_anchor_bits, gp = h.geo_payload_bits, gp_mask = mask32(gp), geo_anchor_at = mid - ga;
    const uint32_t prim_anchor = stream.read(mid, mask32(pa)), geo_anchor = stream.read(geo_anchor_at, mask32(ga));
    for (unsigned k = 0; k < 2; ++k) {
      const uint32_t t = 2 * pair + k;
      prim_ids[k] = t == 0 ? prim_anchor
                           : decode_id(prim_anchor, pa, stream.read(mid + pa + (t - 1) * pp, pp_mask), pp);
      geo_ids[k] = t == 0 ? geo_anchor : decode_id(geo_anchor, ga, stream.read(geo_anchor_at - t * gp, gp_mask), gp);
    }
  }
  // Whole vertices that fit between the prefixes and the geometry-ID section (read_header made this >= 0).
  const auto capacity = static_cast<uint32_t>((geo_section_begin(h) - 52 - prefix_total(h)) / vertex_bits(h));
  const VertexReader reader(stream, h);

  DecodedPair& out = *result;
#pragma GCC unroll 2  // constant field positions per triangle
  for (unsigned k = 0; k < 2; ++k) {
    DecodedTriangle& tri = out.tri[k];
    const unsigned base = k == 0 ? 15 : 1;  // tri0 flags start at bit 15, tri1 flags at bit 1
    tri.double_sided = field(desc, base, base) != 0;
    tri.opaque = field(desc, base + 1, base + 1) != 0;
    tri.index = {field(desc, base + 5, base + 2), field(desc, base + 9, base + 6), field(desc, base + 13, base + 10)};
    tri.valid = k == 0 || tri.index != std::array<uint32_t, 3>{0, 0, 0};
    tri.procedural = tri.index[0] == 15 && tri.index[1] == 15;
    tri.primitive_id = prim_ids[k];
    tri.geometry_id = geo_ids[k];
    if (!tri.valid || tri.procedural) continue;
    for (int c = 0; c < 3; ++c) {
      if (tri.index[c] >= capacity) {
        set_vertex_index_error(error, tri.index[c]);
        result.reset();
        return result;
      }
      tri.vertex[c] = reader.vertex(tri.index[c]);
    }
  }
  out.range_stop = field(desc, 0, 0) != 0;
  out.navigation = out.range_stop ? kNavEndOfRange : pair == h.pair_count - 1 ? kNavEndOfNode : kNavEndOfPair;
  return result;
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
