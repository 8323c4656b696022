// encode_tlas: a top-level structure of box nodes over instance nodes, read back with the independent decoder
// (decode_box_node, decode_instance_node) and the tree check.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>
#include <glm/mat4x4.hpp>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/box_node.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/formats/rdna4/node_section.h"
#include "hwbvh/formats/rdna4/tree_check.h"

namespace hwbvh::rdna4 {
namespace {

/// An instance of a BLAS with bounds `blas` placed by `object_to_world`; its BLAS header sits at 0x10000 + i * 0x1000
/// and its user data is i, so the decoded node names the instance it came from.
TlasInstanceInput make_instance(uint32_t i, const glm::mat4& object_to_world, const Aabb& blas, uint32_t mask,
                                uint32_t flags) {
  TlasInstanceInput in;
  for (int c = 0; c < 8; ++c) {
    const glm::vec4 corner{(c & 1) ? blas.max.x : blas.min.x, (c & 2) ? blas.max.y : blas.min.y,
                           (c & 4) ? blas.max.z : blas.min.z, 1.0f};
    in.world_corners[c] = Vec3(object_to_world * corner);
  }
  const glm::mat4 inverse = glm::inverse(object_to_world);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) in.node.world_to_object[r][c] = inverse[c][r];
  in.box_flags = flags;
  in.node.blas_base_pointer = make_base_pointer(0x10000 + uint64_t{i} * 0x1000, kPointerFlagSkipProcedural);
  in.node.user_data = i;
  in.node.instance_mask = mask;
  in.node.filter_boxes[0] = blas;
  return in;
}

Aabb world_box(const TlasInstanceInput& in) {
  Aabb box;
  for (const Vec3& c : in.world_corners) box.grow(c);
  return box;
}

/// Random rotations, non-uniform scales, some mirrored; masks of one or two bits; flags of opaque, non-opaque and
/// mixed BLASes.
std::vector<TlasInstanceInput> random_instances(uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-60.0f, 60.0f), unit(-1.0f, 1.0f), scale(0.3f, 3.0f);
  std::uniform_int_distribution<uint32_t> bit(0, 7);
  const uint32_t flag_choices[] = {kBoxFlagOnlyTriangles | kBoxFlagOnlyOpaque,
                                   kBoxFlagOnlyTriangles | kBoxFlagOnlyNonOpaque, kBoxFlagOnlyTriangles};
  std::vector<TlasInstanceInput> out;
  for (uint32_t i = 0; i < n; ++i) {
    glm::mat4 m = glm::translate(glm::mat4(1.0f), glm::vec3(pos(rng), pos(rng), pos(rng)));
    m = glm::rotate(m, 3.0f * unit(rng), glm::normalize(glm::vec3(unit(rng), unit(rng), unit(rng)) + 0.01f));
    m = glm::scale(m, glm::vec3(scale(rng), scale(rng), (i % 5 == 0 ? -1.0f : 1.0f) * scale(rng)));
    const Aabb blas{{-1.0f, -0.5f, -2.0f}, {1.0f + 0.1f * static_cast<float>(i % 3), 0.5f, 2.0f}};
    out.push_back(make_instance(i, m, blas, 1u << bit(rng) | 1u << bit(rng), flag_choices[i % 3]));
  }
  return out;
}

struct Tlas {
  bvh_build::WideBuildResult<8> tree;
  EncodedTlas encoded;
};

Tlas encode_instances(const std::vector<TlasInstanceInput>& instances, int threads = 0, bool obb = true) {
  std::vector<Aabb> boxes;
  for (const auto& in : instances) boxes.push_back(world_box(in));
  bvh_build::BuildOptions bo;
  bo.threads = threads;
  Tlas t;
  t.tree = bvh_build::build_box_tree<8>(boxes, bo, "instances");
  EncodeOptions eo;
  eo.threads = threads;
  eo.obb = obb;
  t.encoded = encode_tlas(t.tree.bvh, instances, eo);
  return t;
}

// The intersector's ray rotation (§3.3) applied to a point: fma chain z, y, x.
Vec3 rotate_like_hardware(uint32_t obb_index, Vec3 p) {
  if (obb_index == kNoObb) return p;
  const Mat3Rows m = obb_matrix(obb_index);
  Vec3 r;
  for (int i = 0; i < 3; ++i) r[i] = std::fma(p.x, m[i][0], std::fma(p.y, m[i][1], std::fma(p.z, m[i][2], 0.0f)));
  return r;
}

struct Walk {
  std::vector<int> reached;       // per instance
  uint32_t box_nodes = 0;
  uint32_t obb_box_nodes = 0;
};

struct Below {
  uint32_t flags = 0xF;  // AND of box flags
  uint32_t mask = 0;     // OR of instance masks
};

// Walks box node `pointer` with the decoder alone and checks every field that depends on the instances below.
Below walk(const Tlas& t, const std::vector<TlasInstanceInput>& instances, uint32_t pointer, uint32_t parent,
           Walk& w) {
  const std::vector<uint32_t>& dw = t.encoded.bvh.dwords;
  Below below;
  const uint64_t offset = node_byte_offset(pointer);
  EXPECT_LT(offset / kNodeBytes, t.encoded.first_instance_slot) << "box node past the box region";
  NodeDwords raw;
  std::copy_n(dw.begin() + static_cast<std::ptrdiff_t>(offset / 4), kNodeDwords, raw.begin());
  const DecodedBoxNode node = decode_box_node(raw);
  ++w.box_nodes;
  w.obb_box_nodes += node.obb_index != kNoObb ? 1 : 0;
  EXPECT_EQ(node.parent_pointer, parent);
  for (uint32_t k = 0; k < node.child_count; ++k) {
    const uint32_t child = node.child_pointer[k];
    const ChildInfoFields& info = node.info[k];
    Below sub;
    std::vector<Vec3> corners;  // world corners of every instance below
    if (node_kind(child) == NodeKind::Box) {
      sub = walk(t, instances, child, pointer, w);
      // Containment in this node's frame is checked against the instances' corners below, gathered again.
      std::vector<uint32_t> stack{child};
      while (!stack.empty()) {
        NodeDwords r;
        const uint64_t o = node_byte_offset(stack.back());
        stack.pop_back();
        std::copy_n(dw.begin() + static_cast<std::ptrdiff_t>(o / 4), kNodeDwords, r.begin());
        const DecodedBoxNode b = decode_box_node(r);
        for (uint32_t j = 0; j < b.child_count; ++j) {
          if (node_kind(b.child_pointer[j]) == NodeKind::Box) {
            stack.push_back(b.child_pointer[j]);
          } else {
            const DecodedInstanceNode d = decode_instance_node(dw.data() + node_byte_offset(b.child_pointer[j]) / 4);
            const auto& c = instances[d.user_data].world_corners;
            corners.insert(corners.end(), c.begin(), c.end());
          }
        }
      }
    } else {
      EXPECT_EQ(child & 7u, kTypeInstance);
      EXPECT_EQ(info.range_length, 1u);
      const uint64_t slot = node_byte_offset(child) / kNodeBytes;
      EXPECT_GE(slot, t.encoded.first_instance_slot);
      EXPECT_LT(slot, dw.size() / kNodeDwords);
      const DecodedInstanceNode d = decode_instance_node(dw.data() + node_byte_offset(child) / 4);
      const uint32_t i = d.user_data;
      if (i >= instances.size()) {
        ADD_FAILURE() << "instance node " << child << " names instance " << i;
        continue;
      }
      ++w.reached[i];
      const TlasInstanceInput& in = instances[i];
      EXPECT_EQ(t.encoded.instance_order[slot - t.encoded.first_instance_slot], i);
      EXPECT_EQ(d.parent_pointer, pointer);
      EXPECT_EQ(d.blas_base_pointer, in.node.blas_base_pointer);
      EXPECT_EQ(d.instance_mask, in.node.instance_mask);
      EXPECT_EQ(d.world_to_object, in.node.world_to_object);
      sub = {in.box_flags, in.node.instance_mask};
      corners.assign(in.world_corners.begin(), in.world_corners.end());
    }
    EXPECT_EQ(info.box_flags, sub.flags) << "child " << k << " of " << pointer;
    EXPECT_EQ(info.instance_mask, sub.mask) << "child " << k << " of " << pointer;
    for (const Vec3& c : corners) {
      EXPECT_TRUE(node.child_box[k].contains(rotate_like_hardware(node.obb_index, c)))
          << "child " << k << " of " << pointer;
    }
    below.flags &= sub.flags;
    below.mask |= sub.mask;
  }
  return below;
}

void expect_well_formed(const Tlas& t, const std::vector<TlasInstanceInput>& instances) {
  const std::vector<uint32_t>& dw = t.encoded.bvh.dwords;
  const auto header = read_node_section_header(dw.data(), dw.size(), nullptr);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->root_pointer, kRootPointer);
  EXPECT_EQ(header->box_nodes, t.tree.bvh.nodes.size());
  EXPECT_EQ(header->instance_nodes, instances.size());
  EXPECT_EQ(header->primitive_nodes, 0u);
  EXPECT_EQ(header->node_slots, tlas_slots(t.tree.bvh));
  EXPECT_EQ(dw.size(), std::size_t{tlas_slots(t.tree.bvh)} * kNodeDwords);
  EXPECT_EQ(t.encoded.first_instance_slot, 1 + header->box_nodes);
  EXPECT_EQ(t.encoded.instance_order.size(), instances.size());
  EXPECT_EQ(t.encoded.bvh.stats.instance_nodes, instances.size());
  EXPECT_EQ(t.encoded.bvh.stats.primitive_nodes, 0u);

  Walk w;
  w.reached.assign(instances.size(), 0);
  walk(t, instances, kRootPointer, kInvalidNode, w);
  for (size_t i = 0; i < instances.size(); ++i) EXPECT_EQ(w.reached[i], 1) << "instance " << i;
  EXPECT_EQ(w.box_nodes, t.encoded.bvh.stats.box_nodes);
  EXPECT_EQ(w.obb_box_nodes, t.encoded.bvh.stats.obb_box_nodes);

  const TreeCheckResult check = check_encoded_tree(dw, nullptr);
  for (const auto& p : check.problems) ADD_FAILURE() << p;
  EXPECT_EQ(check.instance_nodes, instances.size());
  EXPECT_EQ(check.box_nodes, header->box_nodes);
}

TEST(Rdna4Tlas, RandomInstanceSets) {
  for (const uint32_t n : {1u, 2u, 9u, 64u, 300u}) {
    for (const bool obb : {false, true}) {
      SCOPED_TRACE(testing::Message() << n << " instances, obb " << obb);
      const std::vector<TlasInstanceInput> instances = random_instances(n, 100 + n);
      const Tlas t = encode_instances(instances, 0, obb);
      expect_well_formed(t, instances);
      if (!obb) {
        EXPECT_EQ(t.encoded.bvh.stats.obb_box_nodes, 0u);
      }
    }
  }
}

TEST(Rdna4Tlas, AlignedRotatedInstancesGetObbs) {
  // A grid of long rods all turned by the same rotation: the instances' own frame fits them far better than axes.
  const glm::mat4 turn = glm::rotate(glm::mat4(1.0f), 0.7f, glm::normalize(glm::vec3(1.0f, 2.0f, 0.5f)));
  std::vector<TlasInstanceInput> instances;
  for (uint32_t i = 0; i < 200; ++i) {
    const glm::vec3 at{static_cast<float>(i % 10) * 3.0f, static_cast<float>(i / 10 % 5) * 3.0f,
                       static_cast<float>(i / 50) * 12.0f};
    instances.push_back(make_instance(i, glm::translate(glm::mat4(1.0f), at) * turn,
                                      {{-5.0f, -0.2f, -0.2f}, {5.0f, 0.2f, 0.2f}}, 0xFF, kBoxFlagOnlyTriangles));
  }
  const Tlas t = encode_instances(instances);
  expect_well_formed(t, instances);
  EXPECT_GT(t.encoded.bvh.stats.obb_box_nodes, t.encoded.bvh.stats.box_nodes / 2);
}

TEST(Rdna4Tlas, ByteIdenticalAtOneAndTwoThreads) {
  const std::vector<TlasInstanceInput> instances = random_instances(500, 7);
  const Tlas a = encode_instances(instances, 1);
  const Tlas b = encode_instances(instances, 2);
  EXPECT_EQ(a.encoded.bvh.dwords, b.encoded.bvh.dwords);
  EXPECT_EQ(a.encoded.instance_order, b.encoded.instance_order);
}

// Two instances of a BLAS with bounds (-1,-1,-1)..(1,1,1): one at the origin (mask 0x01, non-opaque), one turned
// 90 degrees about z and moved to x = 5 (mask 0x02, opaque). Pinned once from the encoder and checked by hand against
// the field maps of §2.1-§2.3 and §2.9 (the comments say what each node's fields hold).
TEST(Rdna4Tlas, TwoInstanceGoldenBytes) {
  const Aabb blas{{-1.0f, -1.0f, -1.0f}, {1.0f, 1.0f, 1.0f}};
  const glm::mat4 turn{{0, 1, 0, 0}, {-1, 0, 0, 0}, {0, 0, 1, 0}, {5, 0, 0, 1}};  // columns
  const std::vector<TlasInstanceInput> instances = {
      make_instance(0, glm::mat4(1.0f), blas, 0x01, kBoxFlagOnlyTriangles | kBoxFlagOnlyNonOpaque),
      make_instance(1, turn, blas, 0x02, kBoxFlagOnlyTriangles | kBoxFlagOnlyOpaque)};
  const Tlas t = encode_instances(instances);
  expect_well_formed(t, instances);
  const std::vector<uint32_t> kExpected = {
      // slot 0, section header: magic, root 0x15, 4 slots, 1 box node, 0 primitive nodes, bounds (-1,-1,-1)..(6,1,1),
      // DW11 2 instance nodes
      0x314E5748, 0x00000015, 0x00000004, 0x00000001, 0x00000000, 0xBF800000, 0xBF800000, 0xBF800000,
      0x40C00000, 0x3F800000, 0x3F800000, 0x00000002, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
      0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
      0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
      // slot 1, root box node: bases slot 2 (0x20), no parent, origin (-1,-1,-1), DW6 2 children, exponents
      // (130, 128, 128), no OBB; child 0 = instance 0 (flags 0x6, mask 0x01, qmax x 1023), child 1 = instance 1 (flags
      // 0x5, mask 0x02, x planes 2560..3583), both type 6, range 1; six unused slots
      0x00000020, 0x00000020, 0xFFFFFFFF, 0xBF800000, 0xBF800000, 0xBF800000, 0x10808082, 0x0000007F,
      0x06000000, 0x013FF000, 0x16FFFFFF, 0x05000A00, 0x02DFF000, 0x16FFFFFF, 0xFFFFFFFF, 0x00000FFF,
      0x00000000, 0xFFFFFFFF, 0x00000FFF, 0x00000000, 0xFFFFFFFF, 0x00000FFF, 0x00000000, 0xFFFFFFFF,
      0x00000FFF, 0x00000000, 0xFFFFFFFF, 0x00000FFF, 0x00000000, 0xFFFFFFFF, 0x00000FFF, 0x00000000,
      // slot 2, instance 0: identity world-to-object (glm's inverse writes some -0), base 0x10000 >> 3 with
      // SKIP_PROCEDURAL (bit 63), parent 0x15, mask 0x01 user data 0; filter origin (-1,-1,-1), 4 children,
      // exponents 128, each the whole box with node type 1 (0x15 >> 4)
      0x3F800000, 0x80000000, 0x00000000, 0x80000000, 0x80000000, 0x3F800000, 0x80000000, 0x00000000,
      0x00000000, 0x80000000, 0x3F800000, 0x80000000, 0x00002000, 0x80000000, 0x00000015, 0x01000000,
      0xBF800000, 0xBF800000, 0xBF800000, 0x30808080, 0x00000000, 0xFFFFF000, 0x01FFFFFF, 0x00000000,
      0xFFFFF000, 0x01FFFFFF, 0x00000000, 0xFFFFF000, 0x01FFFFFF, 0x00000000, 0xFFFFF000, 0x01FFFFFF,
      // slot 3, instance 1: rows (0, 1, 0, 0), (-1, 0, 0, 5), (0, 0, 1, 0); base 0x11000 >> 3; mask 0x02, user data 1
      0x00000000, 0x3F800000, 0x00000000, 0x80000000, 0xBF800000, 0x00000000, 0x80000000, 0x40A00000,
      0x00000000, 0x80000000, 0x3F800000, 0x80000000, 0x00002200, 0x80000000, 0x00000015, 0x02000001,
      0xBF800000, 0xBF800000, 0xBF800000, 0x30808080, 0x00000000, 0xFFFFF000, 0x01FFFFFF, 0x00000000,
      0xFFFFF000, 0x01FFFFFF, 0x00000000, 0xFFFFF000, 0x01FFFFFF, 0x00000000, 0xFFFFF000, 0x01FFFFFF,
  };
  EXPECT_EQ(t.encoded.bvh.dwords, kExpected);
  EXPECT_EQ(t.encoded.instance_order, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(t.encoded.first_instance_slot, 2u);
}

TEST(Rdna4Tlas, TreeCheckFindsBrokenInstanceNodes) {
  const std::vector<TlasInstanceInput> instances = random_instances(2, 5);
  const Tlas t = encode_instances(instances);
  ASSERT_EQ(t.tree.bvh.nodes.size(), 1u);  // header, root, instance nodes in slots 2 and 3
  const auto problems = [&](auto&& corrupt) {
    std::vector<uint32_t> dw = t.encoded.bvh.dwords;
    corrupt(dw);
    std::string all;
    for (const auto& p : check_encoded_tree(dw, nullptr).problems) all += p + "\n";
    return all;
  };
  EXPECT_EQ(problems([](std::vector<uint32_t>&) {}), "");
  EXPECT_NE(problems([](auto& dw) { dw[2 * kNodeDwords + 14] = 0x25; }).find("has parent pointer 0x00000025"),
            std::string::npos);
  // Leaf base on the root itself: child 0 names slot 1 as an instance node, and slot 3 is never reached.
  const std::string moved = problems([](auto& dw) { dw[kNodeDwords + 1] = 0x10; });
  EXPECT_NE(moved.find("instance node 0x00000016 is outside the instance region (slots 2..3)"), std::string::npos)
      << moved;
  EXPECT_NE(moved.find("node slot 3 (byte 384) is not reachable"), std::string::npos) << moved;
  // The filter's first child made the invalid pattern of §2.3.
  const std::string filter = problems([](auto& dw) {
    dw[3 * kNodeDwords + 20] = 0xFFFFFFFF;
    dw[3 * kNodeDwords + 21] = 0x00000FFF;
  });
  EXPECT_NE(filter.find("filter child 0 has no valid box"), std::string::npos) << filter;
}

TEST(Rdna4Tlas, RefusesLeavesThatNameNoInstance) {
  const std::vector<TlasInstanceInput> instances = random_instances(4, 3);
  const Tlas t = encode_instances(instances);
  EXPECT_THROW(encode_tlas(t.tree.bvh, std::span(instances).first(3), {}), Error);
}

}  // namespace
}  // namespace hwbvh::rdna4
