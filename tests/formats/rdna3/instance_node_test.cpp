// The RT IP 1.1 / 2.0 instance node (GPURT's InstanceDesc + InstanceSidebandData1_1) and the top level over
// instances: golden bytes, encoder/decoder round trips, and the tree checker on encoded top levels.
#include <gtest/gtest.h>

#include <random>

#include "fixtures/counting_matrix.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna3/instance_node.h"
#include "hwbvh/formats/rdna3/node_section.h"
#include "hwbvh/formats/rdna3/tree_check.h"

namespace hwbvh::rdna3 {
namespace {

TEST(Rdna3InstanceNode, GoldenBytes) {
  InstanceNodeInput in;
  in.world_to_object = test::counting_matrix(1.0f);
  in.instance_id = 0x123456;
  in.instance_mask = 0x81;
  in.contribution = 0xABCDEF;
  in.instance_flags = 0x0A;  // TRIANGLE_FRONT_COUNTERCLOCKWISE | FORCE_NON_OPAQUE
  in.blas_base_pointer = rdna4::make_base_pointer(0x1280, rdna4::kPointerFlagSkipProcedural);
  in.instance_index = 7;
  in.blas_node_pointer = kRootPointer;
  in.blas_metadata_size = 0;
  in.object_to_world = test::counting_matrix(-6.0f);
  const InstanceNodeDwords dw = encode_instance_node(in);
  for (uint32_t k = 0; k < 12; ++k) {
    EXPECT_EQ(dw[k], float_bits(1.0f + static_cast<float>(k))) << "world-to-object dword " << k;
    EXPECT_EQ(dw[20 + k], float_bits(-6.0f + static_cast<float>(k))) << "object-to-world dword " << k;
  }
  EXPECT_EQ(dw[12], 0x81123456u);  // bytes 48..51: id [23:0], mask [31:24]
  EXPECT_EQ(dw[13], 0x0AABCDEFu);  // bytes 52..55: contribution [23:0], flags [31:24]
  EXPECT_EQ(dw[14], 0x250u);       // bytes 56..59: address >> 3
  EXPECT_EQ(dw[15], 0x80000000u);  // bytes 60..63: SKIP_PROCEDURAL is base pointer bit 63
  EXPECT_EQ(dw[16], 7u);           // bytes 64..67: instance index
  EXPECT_EQ(dw[17], 0x15u);        // bytes 68..71: BLAS node pointer
  EXPECT_EQ(dw[18], 0u);           // bytes 72..75: metadata size
  EXPECT_EQ(dw[19], 0u);           // bytes 76..79: padding
}

TEST(Rdna3InstanceNode, RoundTripsThroughTheDecoder) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  auto bits = [&](uint32_t width) { return static_cast<uint32_t>(rng()) & ((1u << width) - 1); };
  for (int trial = 0; trial < 200; ++trial) {
    InstanceNodeInput in;
    for (auto* m : {&in.world_to_object, &in.object_to_world})
      for (auto& row : *m)
        for (float& v : row) v = value(rng);
    in.instance_id = bits(24);
    in.instance_mask = bits(8);
    in.contribution = bits(24);
    in.instance_flags = bits(8);
    in.blas_base_pointer = rdna4::make_base_pointer(uint64_t{rng()} << 3, bits(10));
    in.instance_index = static_cast<uint32_t>(rng());
    in.blas_node_pointer = static_cast<uint32_t>(rng());
    in.blas_metadata_size = static_cast<uint32_t>(rng());
    const DecodedInstanceNode out = decode_instance_node(encode_instance_node(in));
    EXPECT_EQ(out.world_to_object, in.world_to_object);
    EXPECT_EQ(out.object_to_world, in.object_to_world);
    EXPECT_EQ(out.instance_id, in.instance_id);
    EXPECT_EQ(out.instance_mask, in.instance_mask);
    EXPECT_EQ(out.contribution, in.contribution);
    EXPECT_EQ(out.instance_flags, in.instance_flags);
    EXPECT_EQ(out.blas_base_pointer, in.blas_base_pointer);
    EXPECT_EQ(out.instance_index, in.instance_index);
    EXPECT_EQ(out.blas_node_pointer, in.blas_node_pointer);
    EXPECT_EQ(out.blas_metadata_size, in.blas_metadata_size);
  }
}

TEST(Rdna3InstanceNode, FieldsThatDoNotFitAreRefused) {
  InstanceNodeInput in;
  in.instance_id = 1u << 24;
  EXPECT_THROW((void)encode_instance_node(in), Error);
  in = {};
  in.instance_flags = 0x100;
  EXPECT_THROW((void)encode_instance_node(in), Error);
}

// A top level over `count` instances in a row along x, each one unit wide.
struct Tlas {
  bvh_build::WideBuildResult<4> tree;
  EncodedTlas encoded;
};
Tlas encode_row(uint32_t count) {
  std::vector<Aabb> boxes;
  std::vector<InstanceNodeInput> nodes(count);
  for (uint32_t i = 0; i < count; ++i) {
    const auto x = static_cast<float>(2 * i);
    boxes.push_back(Aabb{{x, 0.0f, 0.0f}, {x + 1.0f, 1.0f, 1.0f}});
    nodes[i].instance_index = i;
    nodes[i].blas_base_pointer = rdna4::make_base_pointer(1u << 20, 0);
  }
  Tlas t;
  t.tree = bvh_build::build_box_tree<4>(boxes, bvh_build::BuildOptions{}, "row");
  t.encoded = encode_tlas(t.tree.bvh, nodes);
  return t;
}

TEST(Rdna3Tlas, LayoutHeaderAndChecker) {
  const Tlas t = encode_row(10);
  const std::vector<uint32_t>& dw = t.encoded.dwords;
  EXPECT_EQ(uint64_t{dw.size()} * 4, tlas_bytes(t.tree.bvh));
  std::string error;
  const auto header = read_node_section_header(dw, &error);
  ASSERT_TRUE(header) << error;
  EXPECT_EQ(header->instance_nodes, 10u);
  EXPECT_EQ(header->triangle_nodes, 0u);
  EXPECT_EQ(header->box_nodes, t.encoded.box_nodes);
  EXPECT_EQ(header->node_slots, kHeaderSlots + 2 * (t.encoded.box_nodes + 10));
  ASSERT_EQ(t.encoded.instance_order.size(), 10u);
  // Instance nodes follow the box nodes in node order, each holding the instance index it was given.
  for (uint32_t n = 0; n < 10; ++n) {
    const uint32_t slot = kHeaderSlots + 2 * (t.encoded.box_nodes + n);
    InstanceNodeDwords node;
    std::copy_n(dw.begin() + std::ptrdiff_t{slot} * 16, node.size(), node.begin());
    EXPECT_EQ(decode_instance_node(node).instance_index, t.encoded.instance_order[n]);
  }
  const TreeCheckResult check = check_encoded_tree(dw, nullptr);
  EXPECT_TRUE(check.ok()) << (check.problems.empty() ? "" : check.problems[0]);
  EXPECT_EQ(check.instance_nodes, 10u);
  EXPECT_EQ(check.box_nodes, t.encoded.box_nodes);
}

TEST(Rdna3Tlas, CheckerFindsCorruption) {
  Tlas t = encode_row(3);  // the root holds the three instance nodes
  std::vector<uint32_t> bad = t.encoded.dwords;
  bad[11] = 5;  // the header's instance count
  EXPECT_FALSE(check_encoded_tree(bad, nullptr).ok());
  bad = t.encoded.dwords;
  const DecodedBoxNode root = decode_box_node([&] {
    BoxNodeDwords n;
    std::copy_n(bad.begin() + 32, n.size(), n.begin());
    return n;
  }());
  for (uint32_t k = 0; k < 4; ++k) {
    if (node_type(root.child_pointer[k]) != kTypeInstance) continue;
    bad[32 + k] = root.child_pointer[k] + 8;  // the second half of the instance node
    break;
  }
  EXPECT_FALSE(check_encoded_tree(bad, nullptr).ok());
}

}  // namespace
}  // namespace hwbvh::rdna3
