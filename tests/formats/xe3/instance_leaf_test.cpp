// Xe3 InstanceLeaf (docs/xe3-format.md, "InstanceLeaf") and the top level over it: golden bytes assembled by hand
// from IGC's InstanceLeaf<Xe3>, encoder/decoder round trips, and top levels the tree checker accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "fixtures/counting_matrix.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/instance_leaf.h"
#include "hwbvh/formats/xe3/node_section.h"
#include "hwbvh/formats/xe3/tlas.h"
#include "hwbvh/formats/xe3/tree_check.h"

namespace hwbvh::xe3 {
namespace {

InstanceLeafInput golden_input() {
  return {.contribution = 0x123456,
          .mask = 0xA5,
          .flags = kInstanceFlagDisableStoc | kInstanceFlagTriangleCullDisable,
          .start_node = 0x1122334455667780ull,
          .bvh = 0xBEEF00001000ull,
          .instance_id = 0xCAFE,
          .instance_index = 7,
          .world_to_object = test::counting_matrix(1.0f),    // rows (1 2 3 4) (5 6 7 8) (9 10 11 12)
          .object_to_world = test::counting_matrix(13.0f)};  // rows (13 14 15 16) (17 18 19 20) (21 22 23 24)
}

uint32_t f(float v) { return float_bits(v); }

TEST(Xe3InstanceLeaf, GoldenBytes) {
  const InstanceLeafDwords expected = {
      0xA5123456,  // contribution [23:0], geomMask [31:24]
      0x00000021,  // instFlags DISABLE_STOC | TRIANGLE_CULL_DISABLE; comparison, sub-type, opacity bits 0
      0x55667780, 0x11223344,  // startNodePtr
      f(1), f(5), f(9), f(2), f(6), f(10), f(3), f(7), f(11),  // world-to-object columns vx, vy, vz (bytes 16..51)
      f(16), f(20), f(24),                                    // object-to-world translation (bytes 52..63)
      0x00001000, 0x0000BEEF,                                 // bvhPtr (48 bits), MBZ
      0xCAFE, 7,                                              // instanceID, instanceIndex
      f(13), f(17), f(21), f(14), f(18), f(22), f(15), f(19), f(23),  // object-to-world columns (bytes 80..115)
      f(4), f(8), f(12)};                                             // world-to-object translation (116..127)
  EXPECT_EQ(encode_instance_leaf(golden_input()), expected);
}

TEST(Xe3InstanceLeaf, RefusesFieldsWiderThanTheirBits) {
  for (const auto& change : std::vector<void (*)(InstanceLeafInput&)>{
           [](InstanceLeafInput& in) { in.contribution = 1u << 24; }, [](InstanceLeafInput& in) { in.mask = 0x100; },
           [](InstanceLeafInput& in) { in.flags = 0x100; }, [](InstanceLeafInput& in) { in.bvh = 1ull << 48; }}) {
    InstanceLeafInput in = golden_input();
    change(in);
    EXPECT_THROW((void)encode_instance_leaf(in), Error);
  }
}

TEST(Xe3InstanceLeaf, RoundTripsRandomLeaves) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  const auto bits = [&](uint32_t mask) { return static_cast<uint32_t>(rng()) & mask; };
  const auto qword = [&] { return uint64_t{bits(~0u)} << 32 | bits(~0u); };
  for (int n = 0; n < 500; ++n) {
    InstanceLeafInput in{.contribution = bits(0xFFFFFFu),
                         .mask = bits(0xFFu),
                         .flags = bits(0x3Fu),
                         .start_node = qword() & ~uint64_t{63},
                         .bvh = qword() & 0xFFFFFFFFFFFFull,
                         .instance_id = bits(~0u),
                         .instance_index = bits(~0u)};
    for (auto* m : {&in.world_to_object, &in.object_to_world})
      for (auto& row : *m)
        for (float& x : row) x = value(rng);
    const InstanceLeafDwords dw = encode_instance_leaf(in);
    const DecodedInstanceLeaf out = decode_instance_leaf(dw);
    EXPECT_EQ(out.contribution, in.contribution);
    EXPECT_EQ(out.mask, in.mask);
    EXPECT_EQ(out.flags, in.flags);
    EXPECT_EQ(out.start_node, in.start_node);
    EXPECT_EQ(out.bvh, in.bvh);
    EXPECT_EQ(out.instance_id, in.instance_id);
    EXPECT_EQ(out.instance_index, in.instance_index);
    EXPECT_EQ(out.world_to_object, in.world_to_object);
    EXPECT_EQ(out.object_to_world, in.object_to_world);
    EXPECT_FALSE(out.reserved_nonzero);
    EXPECT_EQ(out.comparison | out.sub_type | out.opacity_bits, 0u);
  }
}

TEST(Xe3InstanceLeaf, DecoderFlagsReservedBits) {
  InstanceLeafDwords dw = encode_instance_leaf(golden_input());
  dw[1] |= 1u << 20;
  EXPECT_TRUE(decode_instance_leaf(dw).reserved_nonzero);
  dw = encode_instance_leaf(golden_input());
  dw[17] |= 1u << 31;  // bvhPtr's MBZ bits
  EXPECT_TRUE(decode_instance_leaf(dw).reserved_nonzero);
  EXPECT_EQ(decode_instance_leaf(dw).bvh, 0xBEEF00001000ull);
}

// A top level over `n` random boxes, instance i with mask 1 << (i % 8).
Xe3EncodedTlas random_top_level(uint32_t n, uint32_t seed, std::vector<TlasInstance>& instances) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> at(-100.0f, 100.0f), size(0.1f, 5.0f);
  std::vector<Aabb> boxes;
  for (uint32_t i = 0; i < n; ++i) {
    const Vec3 lo{at(rng), at(rng), at(rng)};
    boxes.push_back({lo, lo + Vec3{size(rng), size(rng), size(rng)}});
    instances.push_back({boxes.back(), {.mask = 1u << (i % 8), .start_node = 128, .instance_index = i}});
  }
  const auto tree = bvh_build::build_box_tree<6>(boxes, bvh_build::BuildOptions{}, "test");
  Xe3EncodedTlas top = encode_tlas(tree.bvh, instances);
  EXPECT_EQ(uint64_t{top.dwords.size()} * 4, tlas_bytes(tree.bvh));
  return top;
}

TEST(Xe3TopLevel, CheckerAcceptsTopLevelsAndCountsTheirLeaves) {
  for (const uint32_t n : {1u, 2u, 6u, 7u, 40u, 331u}) {
    std::vector<TlasInstance> instances;
    const Xe3EncodedTlas top = random_top_level(n, n, instances);
    const TreeCheckResult check = check_encoded_tree(top.dwords, nullptr);
    EXPECT_TRUE(check.ok()) << n << ": " << (check.problems.empty() ? "" : check.problems[0]);
    EXPECT_EQ(check.instance_leaves, n);
    EXPECT_EQ(check.internal_nodes, top.internal_nodes);
    std::vector<uint32_t> order = top.instance_order;
    std::sort(order.begin(), order.end());
    std::vector<uint32_t> all(n);
    std::iota(all.begin(), all.end(), 0u);
    EXPECT_EQ(order, all);
    const auto header = read_node_section_header(top.dwords, nullptr);
    ASSERT_TRUE(header);
    EXPECT_EQ(header->instance_leaves, n);
    EXPECT_EQ(header->quad_leaves + header->stoc3_leaves, 0u);
  }
}

TEST(Xe3TopLevel, CheckerFindsBrokenLeavesAndMasks) {
  std::vector<TlasInstance> instances;
  const Xe3EncodedTlas top = random_top_level(40, 3, instances);
  // The root's nodeMask byte (21) without bit 0: instances of mask 1 lie below it.
  std::vector<uint32_t> dw = top.dwords;
  dw[2 * kBlockDwords + 5] &= ~(1u << 8);
  EXPECT_FALSE(check_encoded_tree(dw, nullptr).ok());
  // A header that counts one instance leaf fewer than the tree holds (the block count then disagrees too).
  dw = top.dwords;
  --dw[15];
  EXPECT_FALSE(check_encoded_tree(dw, nullptr).ok());
  // An instance leaf with an MBZ bit set: the last blocks hold the deepest node's instance leaves.
  dw = top.dwords;
  dw[dw.size() - kInstanceLeafDwords + 1] |= 1u << 16;
  EXPECT_FALSE(check_encoded_tree(dw, nullptr).ok());
}

TEST(Xe3TopLevel, PaddedLevelsAreWhole128ByteUnits) {
  EXPECT_EQ(blob::padded_level_bytes(64), 128u);
  EXPECT_EQ(blob::padded_level_bytes(128), 128u);
  EXPECT_EQ(blob::padded_level_bytes(192), 256u);
  int padded_levels = 0;
  for (uint32_t n = 1; n <= 8; ++n) {
    std::vector<TlasInstance> instances;
    const Xe3EncodedTlas top = random_top_level(n, n, instances);
    std::vector<uint32_t> padded = top.dwords;
    padded.resize(blob::padded_level_bytes(padded.size() * 4) / 4);
    EXPECT_EQ(unpadded_level(padded).size(), top.dwords.size());
    if (padded.size() == top.dwords.size()) continue;
    ++padded_levels;
    padded.back() = 1;  // non-zero padding: the whole span goes to the header check, which refuses it
    EXPECT_EQ(unpadded_level(padded).size(), padded.size());
    EXPECT_FALSE(read_node_section_header(unpadded_level(padded), nullptr));
  }
  EXPECT_GT(padded_levels, 0);  // an odd internal-node count needs a padding block
}

}  // namespace
}  // namespace hwbvh::xe3
