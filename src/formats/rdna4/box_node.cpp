// RT IP 3.1 box node encoder (docs/rtip31-format.md §2.2-2.5, Appendix D items 2, 5).
#include "hwbvh/formats/rdna4/box_node.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "formats/rdna4/float_steps.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::rdna4 {
namespace {

constexpr uint32_t kQuantMax = 4095;  // largest 12-bit plane

enum class Round { Down, Up };

// a - b rounded toward -inf or +inf, without touching the FP environment. The double difference of two floats
// may itself be rounded (exponents far apart), so its exact error is recovered with TwoSum to break the tie
// when the nearest float equals that double.
float sub_directed(float a, float b, Round dir) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const double da = a, db = b;
  const double d = da - db;
  if (std::isnan(d)) return std::numeric_limits<float>::quiet_NaN();
  if (d > kFloatMax) return dir == Round::Up ? kInf : std::numeric_limits<float>::max();
  if (d < -kFloatMax) return dir == Round::Up ? -std::numeric_limits<float>::max() : -kInf;
  const double b_virtual = d - da;
  const double err = (da - (d - b_virtual)) + (-db - b_virtual);  // exact: a - b == d + err
  float f = static_cast<float>(d);
  const double fd = f;
  if (dir == Round::Up && (fd < d || (fd == d && err > 0))) f = next_up(f);
  if (dir == Round::Down && (fd > d || (fd == d && err < 0))) f = next_down(f);
  return f;
}

/// A box the hardware must never hit: inverted on some axis, or NaN (GPURT tests only min.x > max.x).
bool is_invalid_box(const Aabb& box) {
  return !(box.min.x <= box.max.x && box.min.y <= box.max.y && box.min.z <= box.max.z);
}

void require(bool ok, const char* what) {
  if (!ok) throw Error(ErrorKind::Runtime, "", std::string("rdna4 box node: ") + what);
}

}  // namespace

QuantFrame make_quant_frame(const Aabb& node_bounds) {
  QuantFrame frame;
  if (is_invalid_box(node_bounds)) return frame;
  frame.origin = node_bounds.min;
  for (int a = 0; a < 3; ++a) {
    const float extent = sub_directed(node_bounds.max[a], node_bounds.min[a], Round::Up);
    // Exponent of the smallest power of two >= extent. The spec's "& 0xFF" would wrap an infinite extent to 0
    // (a flat axis); saturating at 255 keeps such a node conservative instead.
    uint32_t e = std::min<uint32_t>((float_bits(extent) + 0x7FFFFFu) >> 23, 255u);
    if (e != 0) e = std::max(e, 13u);  // 13 = 12 quantization bits + 1 keeps every decoded plane normal
    frame.exponent[static_cast<size_t>(a)] = e;
  }
  return frame;
}

std::array<uint32_t, 6> quantize_box(const QuantFrame& frame, const Aabb& box) {
  if (is_invalid_box(box)) return {kQuantMax, kQuantMax, kQuantMax, 0, 0, 0};
  std::array<uint32_t, 6> planes{};
  for (int a = 0; a < 3; ++a) {
    const uint32_t e = frame.exponent[static_cast<size_t>(a)];
    if (e == 0) continue;  // flat axis: every plane decodes to the origin; qmin = qmax_stored = 0
    // rcp = 2^(139 - e) is exact in double, so the products below are exact and floor/ceil of them equal the
    // spec's floor/ceil of the directed-rounded float products. Made from its exponent bits (e is 13..255, so
    // 2^-116..2^126, all normal): std::ldexp is a library call, and this runs for every plane of every child.
    const double rcp = std::bit_cast<double>(uint64_t{1023u + 139u - e} << 52);
    const double lo = static_cast<double>(sub_directed(box.min[a], frame.origin[a], Round::Down)) * rcp;
    const double hi = static_cast<double>(sub_directed(box.max[a], frame.origin[a], Round::Up)) * rcp;
    // qmin = floor(lo) and qmax = ceil(hi), clamped to 0..4095 and 1..4096 (NaN: 0 and 4096). Taken by truncation,
    // which is exact for the positive values below the clamps: without SSE4.1, std::floor and std::ceil are a
    // dozen instructions each, and this runs for every plane of every child.
    const uint32_t qmin = !(lo >= 0.0) ? 0u : lo < kQuantMax ? static_cast<uint32_t>(lo) : kQuantMax;
    uint32_t qmax = kQuantMax + 1;
    if (hi <= 1.0) {
      qmax = 1;
    } else if (hi <= kQuantMax + 1.0) {
      qmax = static_cast<uint32_t>(hi);
      if (qmax < hi) ++qmax;
    }
    planes[static_cast<size_t>(a)] = qmin;
    planes[static_cast<size_t>(a) + 3] = qmax - 1;  // stored minus one
  }
  return planes;
}

NodeDwords encode_box_node(const BoxNodeInput& input) {
  require(input.child_count >= 1 && input.child_count <= 8, "child_count must be 1..8");
  require(input.index_in_parent <= 7, "index_in_parent must be 0..7");
  require(input.obb_index <= 0x7F, "obb_index must be 0..127 (127 = axis-aligned)");
  Aabb bounds;
  for (uint32_t k = 0; k < input.child_count; ++k) {
    const BoxChildInput& child = input.children[k];
    require(child.node_type <= 15 && child.range_length <= 15 && child.box_flags <= 15 &&
                child.instance_mask <= 0xFF,
            "child field out of range");
    if (!is_invalid_box(child.box)) bounds.grow(child.box);
  }
  const QuantFrame frame = make_quant_frame(bounds);

  NodeDwords node{};
  node[0] = input.internal_base;
  node[1] = input.leaf_base;
  node[2] = input.parent_pointer;
  node[3] = float_bits(frame.origin.x);
  node[4] = float_bits(frame.origin.y);
  node[5] = float_bits(frame.origin.z);
  node[6] = frame.exponent[0] | frame.exponent[1] << 8 | frame.exponent[2] << 16 | input.index_in_parent << 25 |
            (input.child_count - 1) << 28;
  node[7] = input.obb_index;
  for (uint32_t k = 0; k < 8; ++k) {
    uint32_t* ci = &node[8 + 3 * k];
    if (k >= input.child_count) {
      ci[0] = 0xFFFFFFFFu;  // §2.3 empty slot: qmin 0xFFF, qmax 0, flags 0xF, mask 0, type 0, range 0
      ci[1] = 0x00000FFFu;
      ci[2] = 0;
      continue;
    }
    const BoxChildInput& child = input.children[k];
    const std::array<uint32_t, 6> q = quantize_box(frame, child.box);
    ci[0] = q[0] | q[1] << 12 | child.box_flags << 24;
    ci[1] = q[2] | q[3] << 12 | child.instance_mask << 24;
    ci[2] = q[4] | q[5] << 12 | child.node_type << 24 | child.range_length << 28;
  }
  return node;
}

}  // namespace hwbvh::rdna4
