// Box node encoder and decoder (spec §2): the §2.8 worked example, a node with every field set, and random
// property tests for conservative and tightest quantization.
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "exact_math.h"
#include "formats/rdna4/float_steps.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/box_node.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rdna4 {
namespace {

/// 32-bit results, so raw draws convert to uint32_t without narrowing.
using Rng = std::independent_bits_engine<std::mt19937, 32, uint32_t>;

constexpr std::array<uint32_t, 3> kEmptySlot = {0xFFFFFFFFu, 0x00000FFFu, 0u};

std::array<uint32_t, 3> child_dwords(const NodeDwords& node, int slot) {
  return {node[8 + 3 * slot], node[9 + 3 * slot], node[10 + 3 * slot]};
}

BoxNodeInput worked_example_input() {
  BoxNodeInput in;
  in.child_count = 2;
  in.children[0].box = {Vec3{1.3f, 0.5f, 0.1f}, Vec3{2.7f, 1.0f, 0.4f}};
  in.children[0].box_flags = kBoxFlagOnlyOpaque | kBoxFlagOnlyTriangles;
  in.children[1].box = {Vec3{0.0f}, Vec3{10.0f, 2.0f, 0.5f}};  // makes the node bounds (0,0,0)-(10,2,0.5)
  return in;
}

// §1.1: types 0..3 address a primitive node's pairs (with bit 3, pairs 4..7), 5 a box node, 6 an instance node; 4
// and 7 are not node types.
TEST(NodePointer, KindOfEveryType) {
  const NodeKind expected[8] = {NodeKind::Primitive, NodeKind::Primitive, NodeKind::Primitive, NodeKind::Primitive,
                                NodeKind::Unsupported, NodeKind::Box, NodeKind::Instance, NodeKind::Unsupported};
  for (uint32_t type = 0; type < 16; ++type) {
    for (const uint64_t offset : {uint64_t{0}, uint64_t{128}, uint64_t{0x7FFFFFF80}}) {
      EXPECT_EQ(node_kind(make_node_pointer(offset, type)), expected[type & 7u]) << "type " << type;
    }
  }
  static_assert(node_kind(kRootPointer) == NodeKind::Box);
}

// The inlined float steps of the encoders against std::nextafter: every 257th bit pattern (all exponents, both
// signs, NaNs and infinities among them) and the patterns around zero, the smallest normal and infinity.
TEST(FloatSteps, MatchNextafter) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const auto check = [&](uint32_t bits) {
    const float x = bits_float(bits);
    if (std::isnan(x)) {  // any NaN will do (the encoders never step one)
      ASSERT_TRUE(std::isnan(next_up(x)) && std::isnan(next_down(x))) << bits;
      return;
    }
    ASSERT_EQ(float_bits(next_up(x)), float_bits(std::nextafter(x, kInf))) << bits;
    ASSERT_EQ(float_bits(next_down(x)), float_bits(std::nextafter(x, -kInf))) << bits;
  };
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 257) check(static_cast<uint32_t>(bits));
  for (const uint32_t around : {0x00000000u, 0x00800000u, 0x7F800000u}) {
    for (uint32_t d = 0; d < 4; ++d) {
      check(around + d);
      check((around | 0x80000000u) + d);
      check(around - d);
      check((around | 0x80000000u) - d);
    }
  }
}

TEST(BoxNode, WorkedExampleEncodes) {
  const NodeDwords node = encode_box_node(worked_example_input());
  EXPECT_EQ(child_dwords(node, 0), (std::array<uint32_t, 3>{0x0540014Cu, 0xFF2B3333u, 0x15CCC7FFu}));
  EXPECT_EQ(node[6], 0x107E8083u);
  EXPECT_EQ(node[7], 0x7Fu);
  EXPECT_EQ(node[2], kInvalidNode);
  EXPECT_EQ(node[3], 0u);
  EXPECT_EQ(node[4], 0u);
  EXPECT_EQ(node[5], 0u);
  for (int k = 2; k < 8; ++k) EXPECT_EQ(child_dwords(node, k), kEmptySlot) << "slot " << k;

  const QuantFrame frame = make_quant_frame({Vec3{0.0f}, Vec3{10.0f, 2.0f, 0.5f}});
  EXPECT_EQ(frame.exponent, (std::array<uint32_t, 3>{131, 128, 126}));
  EXPECT_EQ(quantize_box(frame, worked_example_input().children[0].box),
            (std::array<uint32_t, 6>{332, 1024, 819, 691, 2047, 3276}));
}

TEST(BoxNode, WorkedExampleDecodesFromSpecDwords) {
  NodeDwords node{};
  node[6] = 0x107E8083u;
  node[7] = 0x7Fu;
  node[8] = 0x0540014Cu;
  node[9] = 0xFF2B3333u;
  node[10] = 0x15CCC7FFu;
  node[11] = 0x0540014Cu;  // slot 1: a copy, so the count of 2 is valid
  node[12] = 0xFF2B3333u;
  node[13] = 0x15CCC7FFu;
  const DecodedBoxNode d = decode_box_node(node);
  EXPECT_EQ(d.child_count, 2u);
  EXPECT_EQ(d.exponent, (std::array<uint32_t, 3>{131, 128, 126}));
  EXPECT_EQ(d.info[0].qmin, (std::array<uint32_t, 3>{332, 1024, 819}));
  EXPECT_EQ(d.info[0].qmax_stored, (std::array<uint32_t, 3>{691, 2047, 3276}));
  EXPECT_EQ(d.info[0].box_flags, 5u);
  EXPECT_EQ(d.info[0].instance_mask, 0xFFu);
  EXPECT_EQ(d.info[0].node_type, 5u);
  EXPECT_EQ(d.info[0].range_length, 1u);
  EXPECT_EQ(d.child_box[0].min, Vec3(1.296875f, 0.5f, 0.0999755859375f));
  EXPECT_EQ(d.child_box[0].max, Vec3(2.703125f, 1.0f, 0.4000244140625f));
  EXPECT_EQ(d.child_pointer[0], 0x5u);
  EXPECT_EQ(d.child_pointer[1], 0x15u);
  for (int k = 2; k < 8; ++k) {
    EXPECT_EQ(d.child_pointer[k], kInvalidNode);
    EXPECT_TRUE(std::isnan(d.child_box[k].min.x) && std::isnan(d.child_box[k].max.z));
  }
}

TEST(BoxNode, EveryFieldRoundTrips) {
  BoxNodeInput in;
  in.internal_base = 0x12340;
  in.leaf_base = 0x56780;
  in.parent_pointer = 0x00ABCDE5u;
  in.index_in_parent = 6;
  in.obb_index = 42;
  in.child_count = 8;
  // slots: 3 box children, then leaf ranges (pair 0 range 0 -> shares a node with pair 9 range 1), an instance,
  // a range starting at pair 3 of the next node spanning 2 nodes, and an inverted (degenerate) leaf.
  const uint32_t types[8] = {5, 5, 5, 0, 9, 6, 3, 10};
  const uint32_t ranges[8] = {1, 1, 1, 0, 1, 1, 2, 15};
  for (uint32_t k = 0; k < 8; ++k) {
    BoxChildInput& c = in.children[k];
    const float f = static_cast<float>(k);
    c.box = {Vec3{-4.0f + f, 1.0f + f, -100.0f}, Vec3{-3.0f + f, 2.5f + f, 100.0f - f}};
    c.node_type = types[k];
    c.range_length = ranges[k];
    c.box_flags = (k * 3 + 1) & 0xF;
    c.instance_mask = 0x11u * (k + 1);
  }
  in.children[7].box = Aabb{};  // empty -> the inverted pattern, but kept inside the valid count

  const NodeDwords node = encode_box_node(in);
  // Raw fields at the bit positions of §2.1-2.3.
  EXPECT_EQ(node[0], 0x12340u);
  EXPECT_EQ(node[1], 0x56780u);
  EXPECT_EQ(node[2], 0x00ABCDE5u);
  EXPECT_EQ(node[3], float_bits(-4.0f));
  EXPECT_EQ(node[4], float_bits(1.0f));
  EXPECT_EQ(node[5], float_bits(-100.0f));
  EXPECT_EQ(node[6] >> 24, (7u << 4) | (6u << 1));  // count-1 = 7, index 6, no_sort 0, bit 31 0
  EXPECT_EQ(node[7], 42u);
  EXPECT_EQ(child_dwords(node, 7)[0] & 0x00FFFFFFu, 0xFFFFFFu);  // inverted planes in the valid slot 7
  EXPECT_EQ(child_dwords(node, 7)[1] & 0x00FFFFFFu, 0xFFFu);
  EXPECT_EQ(child_dwords(node, 7)[2], (15u << 28) | (10u << 24));

  const DecodedBoxNode d = decode_box_node(node);
  EXPECT_EQ(d.internal_base, in.internal_base);
  EXPECT_EQ(d.leaf_base, in.leaf_base);
  EXPECT_EQ(d.parent_pointer, in.parent_pointer);
  EXPECT_EQ(d.index_in_parent, 6u);
  EXPECT_EQ(d.child_count, 8u);
  EXPECT_EQ(d.obb_index, 42u);
  EXPECT_FALSE(d.no_sort);
  for (uint32_t k = 0; k < 8; ++k) {
    EXPECT_EQ(d.info[k].node_type, types[k]);
    EXPECT_EQ(d.info[k].range_length, ranges[k]);
    EXPECT_EQ(d.info[k].box_flags, in.children[k].box_flags);
    EXPECT_EQ(d.info[k].instance_mask, in.children[k].instance_mask);
    if (k < 7) {
      EXPECT_TRUE(d.child_box[k].contains(in.children[k].box)) << "slot " << k;
    }
  }
  EXPECT_TRUE(d.child_box[7].min.x > d.child_box[7].max.x && d.child_box[7].min.y > d.child_box[7].max.y);
  // §2.4 running offsets: box children from internal_base, leaf children from leaf_base.
  const uint32_t expected[8] = {0x12345, 0x12355, 0x12365, 0x56780, 0x56789, 0x56796, 0x567A3, 0x567CA};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(d.child_pointer[k], expected[k]) << "slot " << k;
  EXPECT_EQ(pair_index(d.child_pointer[4]), 5u);
  EXPECT_EQ(pair_index(d.child_pointer[7]), 6u);
}

TEST(BoxNode, FlatAxisUsesExponentZero) {
  BoxNodeInput in;
  in.child_count = 2;
  in.children[0].box = {Vec3{1.0f, 5.0f, -0.0f}, Vec3{2.0f, 5.0f, 0.0f}};
  in.children[1].box = {Vec3{3.0f, 5.0f, 0.0f}, Vec3{4.0f, 5.0f, 0.0f}};
  const DecodedBoxNode d = decode_box_node(encode_box_node(in));
  EXPECT_EQ(d.exponent[1], 0u);
  EXPECT_EQ(d.exponent[2], 0u);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(d.child_box[k].min.y, 5.0f);
    EXPECT_EQ(d.child_box[k].max.y, 5.0f);
    EXPECT_TRUE(d.child_box[k].contains(in.children[k].box));
  }
}

TEST(BoxNode, ExponentClampAndPowersOfTwo) {
  EXPECT_EQ(make_quant_frame({Vec3{0.0f}, Vec3{1e-38f, 1.0f, 1.0000001f}}).exponent,
            (std::array<uint32_t, 3>{13, 127, 128}));
  // The extent is rounded up: 1 - (-2^-30) is just above 1 in exact arithmetic.
  EXPECT_EQ(make_quant_frame({Vec3{-std::ldexp(1.0f, -30)}, Vec3{1.0f}}).exponent[0], 128u);
}

TEST(BoxNode, InvalidInputsThrow) {
  BoxNodeInput in;
  EXPECT_THROW(encode_box_node(in), Error);  // child_count 0
  in.child_count = 1;
  in.children[0].range_length = 16;
  EXPECT_THROW(encode_box_node(in), Error);
}

// --- random properties ---

float random_scale(Rng& rng) {
  return std::pow(10.0f, std::uniform_real_distribution<float>(-6.0f, 6.0f)(rng));
}

/// A random coordinate around `center` with spread `scale`, sometimes exactly ±0 or the center itself.
float random_coord(Rng& rng, float center, float scale) {
  const int pick = std::uniform_int_distribution<int>(0, 19)(rng);
  if (pick == 0) return 0.0f;
  if (pick == 1) return -0.0f;
  if (pick == 2) return center;
  return center + std::uniform_real_distribution<float>(-scale, scale)(rng);
}

Aabb random_box(Rng& rng, Vec3 center, float scale, int flat_axis) {
  Aabb b;
  for (int a = 0; a < 3; ++a) {
    const float u = random_coord(rng, center[a], scale), v = random_coord(rng, center[a], scale);
    b.min[a] = std::min(u, v);
    b.max[a] = std::max(u, v);
    if (a == flat_axis) b.min[a] = b.max[a] = center[a];
  }
  return b;
}

double plane_offset(uint32_t exponent, uint32_t plane) { return std::ldexp(double(plane), int(exponent) - 139); }

TEST(BoxNodeProperty, DecodedBoxesContainInputsAndPlanesAreTightest) {
  Rng rng(20250501);
  int checked_tight = 0, skipped_tight = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    const float scale = random_scale(rng);
    const float offset = iter % 3 == 0 ? 0.0f : random_scale(rng) * (iter % 2 ? -1.0f : 1.0f) * 10.0f;
    const Vec3 center{offset, -offset * 0.5f, offset * 0.25f};
    const int flat_axis = iter % 7 == 0 ? iter % 3 : -1;
    BoxNodeInput in;
    in.child_count = std::uniform_int_distribution<uint32_t>(1, 8)(rng);
    for (uint32_t k = 0; k < in.child_count; ++k) in.children[k].box = random_box(rng, center, scale, flat_axis);

    const NodeDwords node = encode_box_node(in);
    const DecodedBoxNode d = decode_box_node(node);
    for (uint32_t k = 0; k < in.child_count; ++k) {
      const Aabb& box = in.children[k].box;
      ASSERT_TRUE(d.child_box[k].contains(box)) << "iter " << iter << " slot " << k;
      for (int a = 0; a < 3; ++a) {
        const uint32_t e = d.exponent[a];
        if (e == 0) continue;
        const float o = d.origin[a];
        const uint32_t qmin = d.info[k].qmin[a], qmax = d.info[k].qmax_stored[a] + 1;
        // Exactly: origin + qmin*step <= min, and one step inward would exclude part of the box.
        const auto lo_ok = test::exact_sign({test::dyadic(plane_offset(e, qmin)), test::dyadic(o), test::dyadic(-box.min[a])});
        const auto lo_in = test::exact_sign({test::dyadic(plane_offset(e, qmin + 1)), test::dyadic(o), test::dyadic(-box.min[a])});
        const auto hi_ok = test::exact_sign({test::dyadic(plane_offset(e, qmax)), test::dyadic(o), test::dyadic(-box.max[a])});
        const auto hi_in = test::exact_sign({test::dyadic(plane_offset(e, qmax - 1)), test::dyadic(o), test::dyadic(-box.max[a])});
        if (!lo_ok || !lo_in || !hi_ok || !hi_in) {
          ++skipped_tight;
          continue;
        }
        ++checked_tight;
        EXPECT_LE(*lo_ok, 0) << "iter " << iter;
        EXPECT_GE(*hi_ok, 0) << "iter " << iter;
        if (qmin < 4095) {
          EXPECT_GT(*lo_in, 0) << "iter " << iter << " axis " << a << " qmin " << qmin;
        }
        if (qmax > 1) {
          EXPECT_LT(*hi_in, 0) << "iter " << iter << " axis " << a << " qmax " << qmax;
        }
      }
    }
  }
  EXPECT_GT(checked_tight, 20 * skipped_tight) << "too few cases could be checked exactly";
}

TEST(BoxNodeProperty, ExtremeMagnitudesStayConservative) {
  Rng rng(7);
  const float values[] = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), 1e-30f, -1e-30f, 1.0f,
                          -3.0e38f, 3.0e38f, 1e20f, -1e20f, 16777216.0f, 16777218.0f};
  for (int iter = 0; iter < 3000; ++iter) {
    BoxNodeInput in;
    in.child_count = std::uniform_int_distribution<uint32_t>(1, 8)(rng);
    std::uniform_int_distribution<int> pick(0, std::size(values) - 1);
    for (uint32_t k = 0; k < in.child_count; ++k) {
      Aabb b;
      for (int a = 0; a < 3; ++a) {
        const float u = values[pick(rng)], v = values[pick(rng)];
        b.min[a] = std::min(u, v);
        b.max[a] = std::max(u, v);
      }
      in.children[k].box = b;
    }
    const DecodedBoxNode d = decode_box_node(encode_box_node(in));
    for (uint32_t k = 0; k < in.child_count; ++k) {
      ASSERT_TRUE(d.child_box[k].contains(in.children[k].box)) << "iter " << iter << " slot " << k;
    }
  }
}

}  // namespace
}  // namespace hwbvh::rdna4
