// InternalNode6 encoder (docs/xe3-format.md §6.1).
#include "hwbvh/formats/xe3/internal_node.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::xe3 {
namespace {

constexpr uint32_t kEmptyLower = 0x80, kEmptyUpper = 0x00;
constexpr int32_t kMinExponent = -128, kMaxExponent = 127;

// The bound that quantized value q stands for, as a reader computes it in f32: the product is exact (8-bit q times a
// power of two), the sum rounds to nearest even.
float dequantize(float lower, int32_t exponent, uint32_t q) {
  return lower + std::ldexp(static_cast<float>(q), exponent - 8);
}

void set_byte(BlockDwords& dw, uint32_t byte, uint32_t value) {
  set_bits(dw, 8 * byte, 8, value);
}

[[noreturn]] void caller_bug(const std::string& what) {
  throw Error(ErrorKind::Runtime, "", "InternalNode6: " + what);
}

}  // namespace

Aabb grow_by_ulp(const Aabb& box) {
  float magnitude = 0.0f;
  for (int a = 0; a < 3; ++a) magnitude = std::fmax(magnitude, std::fmax(std::fabs(box.min[a]), std::fabs(box.max[a])));
  const float ulp = std::nextafter(magnitude, std::numeric_limits<float>::infinity()) - magnitude;
  // x - ulp <= x and x + ulp >= x under any rounding, so the grown box contains the input.
  return {box.min - Vec3(ulp), box.max + Vec3(ulp)};
}

QuantGrid make_quant_grid(const Aabb& grown_union) {
  QuantGrid grid;
  grid.lower = grown_union.min;
  for (int a = 0; a < 3; ++a) {
    const float lower = grown_union.min[a], upper = grown_union.max[a];
    const double extent = static_cast<double>(upper) - static_cast<double>(lower);
    int exponent = 0;
    const double mantissa = std::frexp(extent, &exponent);
    if (mantissa > 255.0 / 256.0) ++exponent;  // 255 steps of 2^(exp-8) must cover the extent
    exponent = std::max(exponent, kMinExponent);
    // The rounded f32 sum decides; the frexp rule is only the starting point.
    while (exponent <= kMaxExponent && dequantize(lower, exponent, 255) < upper) ++exponent;
    if (exponent > kMaxExponent) {
      throw Error(ErrorKind::BadInput, "",
                  "a node's extent is too large for the Xe3 8-bit exponent (beyond about 2^127 = 1.7e38: coordinates near the "
                  "f32 limit)");
    }
    grid.exponent[a] = exponent;
  }
  return grid;
}

BlockDwords encode_internal_node(const InternalNodeInput& input) {
  if (input.child_count < 1 || input.child_count > kNodeWidth) {
    caller_bug("child count " + std::to_string(input.child_count) + " is not 1..6");
  }
  std::array<Aabb, kNodeWidth> grown{};
  Aabb all;
  bool same_leaf_type = true;
  for (uint32_t i = 0; i < input.child_count; ++i) {
    const InternalChildInput& c = input.children[i];
    if (c.box.empty()) caller_bug("child " + std::to_string(i) + " has an empty box");
    if (c.blocks < 1 || c.blocks > 3) caller_bug("child block count " + std::to_string(c.blocks) + " is not 1..3");
    if (c.node_type != kNodeTypeMixed && c.node_type != kNodeTypeInstance && c.node_type != kNodeTypeQuad &&
        c.node_type != kNodeTypeQuad128) {
      caller_bug("child node type " + std::to_string(c.node_type) + " is not 0, 1, 4 or 5");
    }
    same_leaf_type = same_leaf_type && c.node_type != kNodeTypeMixed && c.node_type == input.children[0].node_type;
    grown[i] = grow_by_ulp(c.box);
    all.grow(grown[i]);
  }
  const QuantGrid grid = make_quant_grid(all);

  BlockDwords dw{};
  for (int a = 0; a < 3; ++a) dw[a] = float_bits(grid.lower[a]);
  dw[3] = static_cast<uint32_t>(input.child_offset);
  const uint32_t node_type = same_leaf_type ? input.children[0].node_type : kNodeTypeMixed;
  set_byte(dw, 16, node_type);
  for (uint32_t a = 0; a < 3; ++a) set_byte(dw, 18 + a, static_cast<uint32_t>(grid.exponent[a]) & 0xFFu);
  set_byte(dw, 21, input.node_mask & 0xFFu);
  for (uint32_t i = 0; i < kNodeWidth; ++i) {
    const bool used = i < input.child_count;
    const InternalChildInput& c = input.children[i];
    // A fat leaf's startPrim is 0 for quads; a mixed node names each child's type.
    const uint32_t type_field = used && node_type == kNodeTypeMixed ? c.node_type : 0u;
    set_byte(dw, 22 + i, used ? (c.blocks | type_field << 2) : 0u);
    for (uint32_t a = 0; a < 3; ++a) {
      uint32_t q_lower = kEmptyLower, q_upper = kEmptyUpper;
      if (used) {
        const float lower = grid.lower[a], lo = grown[i].min[a], hi = grown[i].max[a];
        const int32_t e = grid.exponent[a];
        const double step = std::ldexp(1.0, e - 8);
        q_lower = static_cast<uint32_t>(std::clamp(std::floor((static_cast<double>(lo) - lower) / step), 0.0, 255.0));
        q_upper = static_cast<uint32_t>(std::clamp(std::ceil((static_cast<double>(hi) - lower) / step), 0.0, 255.0));
        // Settle on the f32 reading: the largest lower and smallest upper that still enclose the box.
        while (q_lower > 0 && dequantize(lower, e, q_lower) > lo) --q_lower;
        while (q_lower < 255 && dequantize(lower, e, q_lower + 1) <= lo) ++q_lower;
        while (q_upper < 255 && dequantize(lower, e, q_upper) < hi) ++q_upper;
        while (q_upper > 0 && dequantize(lower, e, q_upper - 1) >= hi) --q_upper;
        // Several q can read as one f32 value far from the origin; keep lower <= upper.
        q_lower = std::min(q_lower, q_upper);
      }
      set_byte(dw, 28 + 12 * a + i, q_lower);
      set_byte(dw, 34 + 12 * a + i, q_upper);
    }
  }
  return dw;
}

}  // namespace hwbvh::xe3
