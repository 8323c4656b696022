#pragma once
// RT IP 3.1 decoder: reads 128-byte nodes exactly as the spec describes (docs/rtip31-format.md §2-§4).
// Written independently of the encoder (its own bit reading, no shared packing code) so that the tests and
// the emulator check the encoder against the spec rather than against itself. Every function is total: any
// 128 bytes decode without undefined behaviour; malformed primitive nodes are reported, never read past.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/rdna4/node_pointer.h"

namespace hwbvh::rdna4 {

inline constexpr uint32_t kNoObb = 0x7F;  ///< DW7 [6:0] value of an axis-aligned box node

/// One 128-byte node read in place (e.g. inside a node section) rather than copied; NodeDwords converts to it.
using NodeView = std::span<const uint32_t, kNodeDwords>;

/// One child-info record (§2.3), raw fields.
struct ChildInfoFields {
  std::array<uint32_t, 3> qmin{};         ///< 12-bit lower planes
  std::array<uint32_t, 3> qmax_stored{};  ///< 12-bit upper planes minus one
  uint32_t box_flags = 0;                 ///< 4 bits: ONLY_OPAQUE, ONLY_NON_OPAQUE, ONLY_TRIANGLES, ONLY_PROCEDURAL
  uint32_t instance_mask = 0;             ///< 8 bits
  uint32_t node_type = 0;                 ///< 4 bits: 5 box, 6 instance, 0..3/8..11 pair index of a leaf range
  uint32_t range_length = 0;              ///< 4 bits: nodes the running leaf/box offset advances
};

/// A decoded quantized BVH8 box node (§2), as the intersector sees it.
struct DecodedBoxNode {
  uint32_t internal_base = 0;   ///< DW0, pointer units
  uint32_t leaf_base = 0;       ///< DW1, pointer units
  uint32_t parent_pointer = 0;  ///< DW2 (software only; the stack walk-back uses it)
  Vec3 origin{0.0f};            ///< DW3..5
  std::array<uint32_t, 3> exponent{};  ///< DW6 biased exponents x, y, z
  bool no_sort = false;                ///< DW6 bit 24
  uint32_t index_in_parent = 0;        ///< DW6 [27:25]
  uint32_t child_count = 0;            ///< DW6 [30:28] + 1
  uint32_t obb_index = kNoObb;         ///< DW7 & 0x7F
  std::array<ChildInfoFields, 8> info{};
  std::array<uint32_t, 8> child_pointer{};  ///< §2.4 running-offset derivation; kInvalidNode for slots >= count
  std::array<Aabb, 8> child_box{};          ///< dequantized (§2.6) in the node's frame; NaN for slots >= count
};

DecodedBoxNode decode_box_node(const NodeDwords& node);

/// Only the per-child fields of a box node that the intersection instruction reads (§2.3, §2.4, §2.6), laid out
/// per axis for the slab test; the same values as decode_box_node's, which is built on this. The members have no
/// initializers so that the intersector's hot path does not clear them first: decode_box_children sets them all.
struct BoxChildren {
  uint32_t obb_index;                       ///< DW7 & 0x7F
  std::array<uint32_t, 8> pointer;          ///< = DecodedBoxNode::child_pointer
  std::array<uint32_t, 8> box_flags;        ///< = info[k].box_flags (all eight slots)
  std::array<uint32_t, 8> instance_mask;    ///< = info[k].instance_mask (all eight slots)
  std::array<std::array<float, 8>, 3> min;  ///< [axis][slot] = child_box[slot].min[axis]; NaN past the count
  std::array<std::array<float, 8>, 3> max;  ///< [axis][slot] = child_box[slot].max[axis]; NaN past the count
};

BoxChildren decode_box_children(NodeView node);

/// 52-bit primitive node header (§4.2), with derived prefix lengths.
struct PrimitiveHeader {
  std::array<uint32_t, 3> payload_bits{};  ///< Lx, Ly, Lz (1..32)
  std::array<uint32_t, 3> prefix_bits{};   ///< Px, Py, Pz = 32 - T - L (a header where one is negative is rejected)
  uint32_t trailing_zeros = 0;             ///< T
  uint32_t geo_anchor_bits = 0;            ///< GA
  uint32_t geo_payload_bits = 0;           ///< GP
  uint32_t pair_count = 0;                 ///< P (1..8)
  uint32_t vertex_type = 0;                ///< 0 = float32
  uint32_t prim_anchor_bits = 0;           ///< PA
  uint32_t prim_payload_bits = 0;          ///< PP
  uint32_t midpoint = 0;                   ///< index-section midpoint (node bit offset)
};

struct DecodedTriangle {
  bool valid = false;       ///< tri1 with indices (0,0,0) is invalid
  bool procedural = false;  ///< i0 == i1 == 15
  std::array<uint32_t, 3> index{};  ///< vertex indices into the node's vertex list
  std::array<Vec3, 3> vertex{};     ///< decoded positions (bit-exact to the encoder's input)
  bool opaque = false;
  bool double_sided = false;
  uint32_t primitive_id = 0;
  uint32_t geometry_id = 0;
};

inline constexpr uint32_t kNavEndOfPair = 0;
inline constexpr uint32_t kNavEndOfNode = 1;
inline constexpr uint32_t kNavEndOfRange = 3;

struct DecodedPair {
  std::array<DecodedTriangle, 2> tri{};
  bool range_stop = false;
  uint32_t navigation = kNavEndOfPair;  ///< §4.7: END_OF_RANGE, END_OF_NODE or END_OF_PAIR
};

/// Reads the header; nullopt with `error` set when its fields describe sections that do not fit 1024 bits
/// (negative prefix, overlapping sections, midpoint out of range, vertex type != 0).
std::optional<PrimitiveHeader> decode_primitive_header(const NodeDwords& node, std::string* error = nullptr);

/// Decodes pair `pair` (0..7) the way the intersector does (§4.7). nullopt with `error` set when the header is
/// malformed, pair >= P, or a vertex index points past the vertex section.
std::optional<DecodedPair> decode_primitive_pair(const NodeDwords& node, uint32_t pair, std::string* error = nullptr);
/// The same, reading the node in place.
std::optional<DecodedPair> decode_primitive_pair(NodeView node, uint32_t pair, std::string* error = nullptr);

/// Decodes vertex `i` of the node's vertex list (for dumps and tests).
Vec3 decode_primitive_vertex(const NodeDwords& node, const PrimitiveHeader& header, uint32_t i);

/// 3x3 rotation of OBB matrix index `index` (0..103) decoded from the hardware tables (§3.2, Appendix A).
/// Row-major: rotated point p' = M * p, p'[r] = dot(M[r], p).
using Mat3Rows = std::array<Vec3, 3>;
Mat3Rows obb_matrix(uint32_t index);
inline constexpr uint32_t kObbMatrixCount = 104;

}  // namespace hwbvh::rdna4
