// Hostile node sections inside well-sealed blobs: child pointers that form a cycle, point into the middle of a
// node or past the end, parent pointers that point to themselves, invalid node types, and primitive nodes whose
// header claims more than fits. The container is valid, so the reader accepts them; the emulator then bounds its
// work (the per-ray step limit, reported as step_limit_hits) or stops the ray on the bad node and names it
// (RayResult::fault, fault_node), and `hwbvh dump`'s walk and the tree check report the node instead of following it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "hostile/hostile_blobs.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/formats/rdna4/tree_check.h"
#include "hwbvh/pipeline/inspect.h"

namespace hwbvh {
namespace {

using emu::NodeFault;
using ::testing::HasSubstr;

constexpr uint32_t kStepLimit = 3000;

struct Traced {
  std::vector<emu::RayResult> rays;
  pipeline::NodeDump dump;
  rdna4::TreeCheckResult check;

  [[nodiscard]] std::size_t count(NodeFault fault) const {
    return std::count_if(rays.begin(), rays.end(), [&](const emu::RayResult& r) { return r.fault == fault; });
  }
  [[nodiscard]] std::size_t limit_hits() const {
    return std::count_if(rays.begin(), rays.end(),
                         [](const emu::RayResult& r) { return r.counters.step_limit_hits == 1; });
  }
};

// Reads the hostile node section back through the blob reader and load_bvh, as `hwbvh stats` does, traces the
// sample rays with a small stack (so that overflow and walk-back are exercised too), then dumps and checks it.
Traced trace_hostile(const std::vector<uint32_t>& nodes, uint32_t stack_size = 16) {
  const emu::LoadedBvh bvh = emu::load_bvh(blob::parse(test::with_nodes(nodes), "hostile.hwbvh"), "hostile.hwbvh");
  emu::TraceOptions options;
  options.step_limit = kStepLimit;
  options.stack.size = stack_size;
  Traced t;
  t.rays = emu::trace_rays(bvh.memory(), bvh.root, test::sample_rays(), options, Executor(1)).rays;
  for (const emu::RayResult& r : t.rays) {
    EXPECT_LE(r.counters.steps, kStepLimit);
    EXPECT_EQ(r.counters.step_limit_hits == 1, r.counters.steps == kStepLimit && r.fault == NodeFault::None);
    if (r.fault != NodeFault::None) {
      EXPECT_NE(r.fault_node, rdna4::kInvalidNode);
    }
  }
  t.dump = pipeline::dump_tree(bvh.nodes, 0);
  t.check = rdna4::check_encoded_tree(bvh.nodes, nullptr);
  return t;
}

std::string all_problems(const pipeline::NodeDump& d) {
  std::string s;
  for (const std::string& p : d.problems) s += p + "\n";
  return s;
}

TEST(HostileNodes, TheSampleIsWellFormed) {
  const Traced t = trace_hostile(test::sample_nodes());
  EXPECT_EQ(t.count(NodeFault::None), t.rays.size());
  EXPECT_EQ(t.limit_hits(), 0u);
  EXPECT_GT(std::count_if(t.rays.begin(), t.rays.end(), [](const emu::RayResult& r) { return r.hit; }), 50);
  EXPECT_EQ(t.dump.problem_count, 0u);
  EXPECT_TRUE(t.check.ok());
  const test::SampleTree tree = test::sample_tree();
  ASSERT_GT(tree.boxes.size(), 2u) << "the sample needs box children under the root";
  ASSERT_GT(tree.primitives.size(), 2u);
}

TEST(HostileNodes, ChildPointersThatFormACycleHitTheStepLimit) {
  // The root's internal base points at the root itself: its first box child is the root.
  std::vector<uint32_t> nodes = test::sample_nodes();
  test::node_at(nodes, rdna4::kRootPointer)[0] = rdna4::kRootPointer & ~0xFu;
  const Traced t = trace_hostile(nodes);
  EXPECT_GT(t.limit_hits(), 0u);
  EXPECT_THAT(all_problems(t.dump), HasSubstr("box node @0x80 is reached a second time"));
  EXPECT_FALSE(t.check.ok());
}

TEST(HostileNodes, EveryBoxChildPointingAtItsParentHitsTheStepLimit) {
  // Each box node's internal base points at the node itself: every box child is a self-loop.
  std::vector<uint32_t> nodes = test::sample_nodes();
  for (uint32_t box : test::sample_tree().boxes) test::node_at(nodes, box)[0] = box & ~0xFu;
  const Traced t = trace_hostile(nodes, 4);
  EXPECT_GT(t.limit_hits(), 0u);
  EXPECT_GT(t.dump.problem_count, 0u);
}

TEST(HostileNodes, ChildPointerIntoTheMiddleOfANodeIsMisaligned) {
  // Box child pointers with bit 3 set address byte 64 of a 128-byte node.
  std::vector<uint32_t> nodes = test::sample_nodes();
  test::node_at(nodes, rdna4::kRootPointer)[0] |= 0x8u;
  const Traced t = trace_hostile(nodes);
  ASSERT_GT(t.count(NodeFault::Misaligned), 0u);
  for (const emu::RayResult& r : t.rays) {
    if (r.fault != NodeFault::Misaligned) continue;
    EXPECT_EQ(r.fault_node & 0xFu, 0xDu) << std::hex << r.fault_node;  // box type 5 with bit 3 set
    EXPECT_EQ(r.counters.steps, 1u);  // the root, then the bad child
  }
  EXPECT_GT(t.dump.problem_count, 0u);
  EXPECT_FALSE(t.check.ok());
}

TEST(HostileNodes, ChildPointersPastTheEndAreOutOfRange) {
  std::vector<uint32_t> nodes = test::sample_nodes();
  test::node_at(nodes, rdna4::kRootPointer)[0] = 0x0FFFFFF0u;  // box children
  test::node_at(nodes, rdna4::kRootPointer)[1] = 0x7FFFFFF0u;  // leaf children
  const Traced t = trace_hostile(nodes);
  ASSERT_GT(t.count(NodeFault::OutOfRange), 0u);
  for (const emu::RayResult& r : t.rays) {
    if (r.fault == NodeFault::OutOfRange) {
      EXPECT_GE(rdna4::node_byte_offset(r.fault_node), nodes.size() * 4);
    }
  }
  EXPECT_THAT(all_problems(t.dump), HasSubstr("past the end of the node section"));
}

TEST(HostileNodes, ParentPointersThatPointToThemselvesAreBounded) {
  // The stackless walk-back after a stack overflow follows parent pointers (DW2); here each names its own node.
  std::vector<uint32_t> nodes = test::sample_nodes();
  for (uint32_t box : test::sample_tree().boxes) test::node_at(nodes, box)[2] = box;
  const Traced good = trace_hostile(test::sample_nodes(), 2);
  ASSERT_GT(std::count_if(good.rays.begin(), good.rays.end(),
                          [](const emu::RayResult& r) { return r.counters.walk_back_steps > 0; }),
            0)
      << "a 2-entry stack must overflow on the sample";
  const Traced t = trace_hostile(nodes, 2);  // bounded: checked per ray in trace_hostile
  EXPECT_GT(t.limit_hits(), 0u);
  EXPECT_FALSE(t.check.ok());  // parent pointers disagree with the tree
}

TEST(HostileNodes, InvalidChildNodeTypesStopTheRayOnThatPointer) {
  for (const uint32_t type : {4u, 6u, 7u, 12u, 15u}) {
    std::vector<uint32_t> nodes = test::sample_nodes();
    uint32_t* root = test::node_at(nodes, rdna4::kRootPointer);
    const uint32_t children = ((root[6] >> 28) & 7u) + 1;
    for (uint32_t k = 0; k < children; ++k) root[10 + 3 * k] = (root[10 + 3 * k] & ~0x0F000000u) | type << 24;
    const Traced t = trace_hostile(nodes);
    ASSERT_GT(t.count(NodeFault::UnsupportedNode), 0u) << "type " << type;
    for (const emu::RayResult& r : t.rays) {
      if (r.fault == NodeFault::None) continue;
      EXPECT_EQ(r.fault, NodeFault::UnsupportedNode);
      EXPECT_EQ(r.fault_node & 7u, type & 7u);
    }
    EXPECT_GT(t.dump.problem_count, 0u) << "type " << type;
  }
}

TEST(HostileNodes, RootPointerOfAnInvalidTypeFaultsEveryRay) {
  std::vector<uint32_t> nodes = test::sample_nodes();
  nodes[1] = rdna4::kRootPointer | 7u;  // DW1 of the section header: type 7 at the root's address
  const Traced t = trace_hostile(nodes);
  EXPECT_EQ(t.count(NodeFault::UnsupportedNode), t.rays.size());
  for (const emu::RayResult& r : t.rays) EXPECT_EQ(r.fault_node, nodes[1]);
}

TEST(HostileNodes, PrimitiveHeaderThatClaimsMoreThanFits) {
  // Every primitive node: 32-bit payloads for x, y and z, 8 pairs, and 32-bit IDs from a midpoint near the end.
  std::vector<uint32_t> nodes = test::sample_nodes();
  const test::SampleTree tree = test::sample_tree();
  for (uint32_t p : tree.primitives) {
    uint32_t* node = test::node_at(nodes, p);
    node[0] = 31u | 31u << 5 | 31u << 10 | 15u << 20 | 15u << 24 | 7u << 28;
    node[1] = 31u | 31u << 5 | 1000u << 10;
  }
  const Traced t = trace_hostile(nodes);
  ASSERT_GT(t.count(NodeFault::MalformedPrimitive), 100u);
  for (const emu::RayResult& r : t.rays) {
    if (r.fault == NodeFault::None) continue;
    EXPECT_EQ(r.fault, NodeFault::MalformedPrimitive);
    EXPECT_NE(std::find(tree.primitives.begin(), tree.primitives.end(), r.fault_node & ~0xFu), tree.primitives.end())
        << std::hex << r.fault_node;
    EXPECT_FALSE(r.hit);
  }
  EXPECT_THAT(all_problems(t.dump), HasSubstr("primitive node @"));
  EXPECT_FALSE(t.check.ok());
}

TEST(HostileNodes, PairIndexBeyondThePairCount) {
  // Primitive nodes that claim one pair while the pointers into them address pairs 1..7.
  std::vector<uint32_t> nodes = test::sample_nodes();
  for (uint32_t p : test::sample_tree().primitives) test::node_at(nodes, p)[0] &= ~(7u << 28);
  const Traced t = trace_hostile(nodes);
  EXPECT_GT(t.count(NodeFault::MalformedPrimitive), 0u);
  EXPECT_GT(t.dump.problem_count, 0u);
}

TEST(HostileNodes, BoxPointerOntoAPrimitiveNodeIsBounded) {
  // Type confusion: the root's box children are redirected onto the primitive nodes' bytes.
  std::vector<uint32_t> nodes = test::sample_nodes();
  test::node_at(nodes, rdna4::kRootPointer)[0] = test::sample_tree().primitives.front() & ~0xFu;
  const Traced t = trace_hostile(nodes);  // whatever those bytes decode to, every ray stops in bounds
  EXPECT_GT(t.dump.problem_count, 0u);
}

}  // namespace
}  // namespace hwbvh
