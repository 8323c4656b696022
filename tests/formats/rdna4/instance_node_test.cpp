// The RT IP 3.1 instance node (docs/rtip31-format.md §2.9): golden bytes worked out by hand from the field map, and
// the round trip through decode_instance_node, whose filter node decode_box_children reads like any box node.
#include "hwbvh/formats/rdna4/instance_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rdna4 {
namespace {

InstanceNodeInput example_input() {
  InstanceNodeInput in;
  in.world_to_object = {{{1.0f, 0.0f, 0.0f, -2.0f}, {0.0f, 0.5f, 0.0f, 1.0f}, {0.0f, 0.0f, 2.0f, 3.0f}}};
  in.blas_base_pointer = make_base_pointer(0x1000, kPointerFlagForceOpaque | kPointerFlagSkipProcedural);
  in.parent_pointer = 0x15;
  in.user_data = 0x123456;
  in.instance_mask = 0x5A;
  in.filter_boxes[0] = {{-1.0f, -1.0f, -1.0f}, {1.0f, 2.0f, 3.0f}};
  in.blas_root = kRootPointer;
  return in;
}

TEST(InstanceNode, GoldenBytes) {
  // Matrix rows as f32 bits; base pointer 0x1000 >> 3 = 0x200 with flags bits 54 and 63 (DW13 bits 22 and 31);
  // parent 0x15; mask 0x5A over user data 0x123456. Filter: origin (-1, -1, -1); extents (2, 3, 4) give exponents
  // (128, 129, 129) (§2.5) and child count - 1 = 3 in [29:28]: 0x30818180. Each of the four children spans the whole
  // box: qmin 0, qmax stored (2 * 2^11, 3 * 2^10, 4 * 2^10) - 1 = (4095, 3071, 4095), mask 0xFF, node type
  // 0x15 >> 4 = 1, range length 0 (§2.3).
  constexpr NodeDwords kExpected = {
      0x3F800000, 0x00000000, 0x00000000, 0xC0000000, 0x00000000, 0x3F000000, 0x00000000, 0x3F800000,
      0x00000000, 0x00000000, 0x40000000, 0x40400000, 0x00000200, 0x80400000, 0x00000015, 0x5A123456,
      0xBF800000, 0xBF800000, 0xBF800000, 0x30818180, 0x00000000, 0xFFFFF000, 0x01FFFBFF, 0x00000000,
      0xFFFFF000, 0x01FFFBFF, 0x00000000, 0xFFFFF000, 0x01FFFBFF, 0x00000000, 0xFFFFF000, 0x01FFFBFF};
  EXPECT_EQ(encode_instance_node(example_input()), kExpected);
}

TEST(InstanceNode, GoldenBytesFilterMode) {
  // Two boxes, the halves x < 0 and x > 0 of the example's box: the same origin and exponents (x: 2^11 cells per
  // unit). Child 0 spans x cells 0..2047 (qmax stored 0x7FF), child 1 cells 2048..4095 (qmin 0x800, qmax 0xFFF);
  // children 2 and 3 repeat child 1. Dwords 0..19 are the example's.
  InstanceNodeInput in = example_input();
  in.filter_boxes[0] = {{-1.0f, -1.0f, -1.0f}, {0.0f, 2.0f, 3.0f}};
  in.filter_boxes[1] = {{0.0f, -1.0f, -1.0f}, {1.0f, 2.0f, 3.0f}};
  in.filter_box_count = 2;
  const NodeDwords dw = encode_instance_node(in);
  const NodeDwords pass_through = encode_instance_node(example_input());
  EXPECT_TRUE(std::equal(dw.begin(), dw.begin() + 20, pass_through.begin()));
  constexpr std::array<uint32_t, 12> kChildren = {0x00000000, 0xFF7FF000, 0x01FFFBFF, 0x00000800,
                                                  0xFFFFF000, 0x01FFFBFF, 0x00000800, 0xFFFFF000,
                                                  0x01FFFBFF, 0x00000800, 0xFFFFF000, 0x01FFFBFF};
  EXPECT_TRUE(std::equal(kChildren.begin(), kChildren.end(), dw.begin() + 20));
}

TEST(InstanceNode, GoldenBytesPrimitiveRoot) {
  // The example entering its BLAS at the primitive node in slot 2 (pointer 0x20), GPURT's rebraid form: child 0 holds
  // the invalid box pattern (qmin 0xFFF, qmax stored 0, flags 0, mask 0xFF), node type 2 and range length 1; children
  // 1..3 the example's box with node type 2. Child 0's empty box leaves the frame, so dwords 0..19 are the example's.
  InstanceNodeInput in = example_input();
  in.blas_root = 0x20;
  const NodeDwords dw = encode_instance_node(in);
  const NodeDwords box_root = encode_instance_node(example_input());
  EXPECT_TRUE(std::equal(dw.begin(), dw.begin() + 20, box_root.begin()));
  constexpr std::array<uint32_t, 12> kChildren = {0x00FFFFFF, 0xFF000FFF, 0x12000000, 0x00000000,
                                                  0xFFFFF000, 0x02FFFBFF, 0x00000000, 0xFFFFF000,
                                                  0x02FFFBFF, 0x00000000, 0xFFFFF000, 0x02FFFBFF};
  EXPECT_TRUE(std::equal(kChildren.begin(), kChildren.end(), dw.begin() + 20));
  // Child 0 returns byte 0x02 if hit (it cannot be: its box is inverted), the others 0x10 | 2: the primitive root.
  const BoxChildren children = decode_box_children(decode_instance_node(dw.data()).filter_box);
  EXPECT_EQ(children.pointer[0], 0x02u);
  for (uint32_t k = 1; k < 4; ++k) {
    EXPECT_EQ(children.pointer[k], 0x12u) << k;
    EXPECT_EQ(blas_root_from_filter_result(children.pointer[k]), 0x20u) << k;
  }
  for (int a = 0; a < 3; ++a) EXPECT_GT(children.min[a][0], children.max[a][0]) << a;
}

TEST(InstanceNode, EncodableRoots) {
  for (const uint32_t root : {0x15u, 0x25u, 0x55u, 0xF5u, 0x10u, 0x20u, 0x40u, 0x60u, 0xF0u})
    EXPECT_TRUE(instance_root_encodable(root)) << std::hex << root;
  // Slot 0 (the header), slot 16 and past (the filter's node type has 4 bits), a pair other than 0, a primitive node
  // in slot 5 (node type 5 reads as a box child), an instance node.
  for (const uint32_t root : {0x05u, 0x00u, 0x105u, 0x100u, 0x21u, 0x28u, 0x50u, 0x26u})
    EXPECT_FALSE(instance_root_encodable(root)) << std::hex << root;
}

// decode(encode(x)) gives x's fields back, and a filter of four children that all name the BLAS root's node index
// (pointer 0x15 >> 4 = 1 with leaf_base 0) and whose dequantized boxes contain the filter boxes, the last one
// repeated past the count.
void expect_round_trip(const InstanceNodeInput& in) {
  const NodeDwords dw = encode_instance_node(in);
  const DecodedInstanceNode d = decode_instance_node(dw.data());
  EXPECT_EQ(d.world_to_object, in.world_to_object);
  EXPECT_EQ(d.blas_base_pointer, in.blas_base_pointer);
  EXPECT_EQ(d.parent_pointer, in.parent_pointer);
  EXPECT_EQ(d.user_data, in.user_data);
  EXPECT_EQ(d.instance_mask, in.instance_mask);
  const BoxChildren children = decode_box_children(d.filter_box);
  EXPECT_EQ(children.obb_index, kNoObb);
  for (uint32_t k = 0; k < 8; ++k) {
    if (k >= 4) {
      EXPECT_EQ(children.pointer[k], kInvalidNode) << k;
      continue;
    }
    EXPECT_EQ(children.pointer[k], in.blas_root >> 4) << k;
    EXPECT_EQ(blas_root_from_filter_result(children.pointer[k]), in.blas_root);
    for (int a = 0; a < 3; ++a) {
      const Aabb& box = in.filter_boxes[std::min(k, in.filter_box_count - 1)];
      EXPECT_LE(children.min[a][k], box.min[a]) << "child " << k << " axis " << a;
      EXPECT_GE(children.max[a][k], box.max[a]) << "child " << k << " axis " << a;
    }
  }
}

TEST(InstanceNode, RoundTrip) {
  expect_round_trip(example_input());
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> value(-50.0f, 50.0f), extent(0.0f, 20.0f);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200; ++i) {
    InstanceNodeInput in;
    for (auto& row : in.world_to_object)
      for (float& v : row) v = value(rng);
    in.blas_base_pointer = make_base_pointer(uint64_t{bits(rng)} << 7, bits(rng));
    in.parent_pointer = bits(rng);
    in.user_data = bits(rng) & 0xFFFFFF;
    in.instance_mask = bits(rng) & 0xFF;
    in.filter_box_count = 1 + static_cast<uint32_t>(i % 4);
    for (uint32_t k = 0; k < in.filter_box_count; ++k) {
      const Vec3 lo{value(rng), value(rng), value(rng)};
      in.filter_boxes[k] = {lo, lo + Vec3{extent(rng), extent(rng), i % 5 == 0 ? 0.0f : extent(rng)}};
    }
    in.blas_root = (1 + bits(rng) % 15) << 4 | kTypeBox;  // the filter's 4-bit node type holds root >> 4
    SCOPED_TRACE(i);
    expect_round_trip(in);
  }
}

TEST(InstanceNode, BasePointerHelpers) {
  const uint64_t base = make_base_pointer(0x123456780, kPointerFlagFlipFacedness | kPointerFlagForceNonOpaque);
  EXPECT_EQ(base_pointer_address(base), 0x123456780u);
  EXPECT_EQ(base_pointer_flags(base), kPointerFlagFlipFacedness | kPointerFlagForceNonOpaque);
  EXPECT_EQ(base >> 54, 0xAu);  // bits 55 and 57
}

}  // namespace
}  // namespace hwbvh::rdna4
