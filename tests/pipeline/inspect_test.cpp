// The node walk behind `hwbvh dump`: complete on good trees, and safe and specific on hostile ones.
#include "hwbvh/pipeline/inspect.h"

#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures/random_scene.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Built {
  std::vector<uint32_t> dwords;
  BuildReport report;
};

const Built& built() {
  static const Built b = [] {
    BuildBlobOptions o;
    o.build.threads = o.encode.threads = 1;
    const BuildBlobResult r = build_blob(test::random_triangle_soup(300, 3), o);
    return Built{blob::bytes_to_dwords(r.blob.require(blob::SectionType::Nodes, "mem").data), r.report};
  }();
  return b;
}

TEST(DumpTree, VisitsEveryNodeOnceBreadthFirst) {
  const NodeDump d = dump_tree(built().dwords, 0);
  EXPECT_THAT(d.problems, IsEmpty());
  EXPECT_EQ(d.problem_count, 0u);
  ASSERT_TRUE(d.header);
  EXPECT_EQ(d.root_pointer, 0x15u);
  EXPECT_EQ(d.nodes.size(), built().report.box_nodes + built().report.primitive_nodes);
  EXPECT_EQ(d.not_shown, 0u);
  ASSERT_FALSE(d.nodes.empty());
  EXPECT_EQ(d.nodes[0].offset, 128u);
  EXPECT_TRUE(d.nodes[0].box);
  uint64_t triangles = 0;
  for (const DumpedNode& n : d.nodes) {
    if (n.kind != rdna4::NodeKind::Primitive) continue;
    ASSERT_TRUE(n.primitive_header);
    EXPECT_EQ(n.pairs.size(), n.primitive_header->pair_count);
    for (const auto& p : n.pairs) {
      ASSERT_TRUE(p);
      triangles += (p->tri[0].valid ? 1 : 0) + (p->tri[1].valid ? 1 : 0);
    }
  }
  EXPECT_EQ(triangles, 300u);
}

TEST(DumpTree, MaxNodesLimitsOutput) {
  const NodeDump d = dump_tree(built().dwords, 1);
  ASSERT_EQ(d.nodes.size(), 1u);
  EXPECT_EQ(d.nodes[0].pointer, 0x15u);
  // Every other node of the tree is left out, not only the root's children waiting in the queue.
  const uint64_t nodes = built().report.box_nodes + built().report.primitive_nodes;
  EXPECT_EQ(d.not_shown, nodes - 1);
  EXPECT_EQ(dump_tree(built().dwords, 4).not_shown, nodes - 4);
}

TEST(DumpOne, ByPointerAndByOffset) {
  const NodeDump root = dump_pointer(built().dwords, 0x15);
  ASSERT_EQ(root.nodes.size(), 1u);
  EXPECT_TRUE(root.nodes[0].box);
  const std::optional<NodeDump> same = dump_offset(built().dwords, 128);
  ASSERT_TRUE(same);
  ASSERT_EQ(same->nodes.size(), 1u);
  EXPECT_EQ(same->nodes[0].pointer, 0x15u);

  const NodeDump all = dump_tree(built().dwords, 0);
  const DumpedNode& last = all.nodes.back();
  const std::optional<NodeDump> by_offset = dump_offset(built().dwords, last.offset);
  ASSERT_TRUE(by_offset);
  ASSERT_EQ(by_offset->nodes.size(), 1u);
  EXPECT_EQ(by_offset->nodes[0].kind, last.kind);

  EXPECT_FALSE(dump_offset(built().dwords, 130));
  EXPECT_FALSE(dump_offset(built().dwords, 0));
  EXPECT_FALSE(dump_offset(built().dwords, 1u << 30));
  EXPECT_THAT(dump_pointer(built().dwords, 0x7FFFFFF5).problems, Contains(HasSubstr("past the end")));
  EXPECT_THAT(dump_pointer(built().dwords, 0x5).problems, Contains(HasSubstr("node-section header")));
  EXPECT_THAT(dump_pointer(built().dwords, 0x16).problems, Contains(HasSubstr("node type 6")));
  EXPECT_THAT(dump_pointer(built().dwords, 0xFFFFFFFF).problems, Contains(HasSubstr("sentinel")));
}

TEST(DumpHostile, PointerPastTheEndNamesTheNode) {
  std::vector<uint32_t> dw = built().dwords;
  dw[32 + 0] = 0x0FFFFFF0;  // root's internal_base
  const NodeDump d = dump_tree(dw, 0);
  EXPECT_THAT(d.problems, Contains(HasSubstr("child 0 of box node @0x80: pointer")));
  EXPECT_THAT(d.problems, Contains(HasSubstr("past the end of the node section")));
}

TEST(DumpHostile, CycleTerminates) {
  std::vector<uint32_t> dw = built().dwords;
  dw[32 + 0] = 0x10;  // root's box children now start at the root itself
  const NodeDump d = dump_tree(dw, 0);
  EXPECT_THAT(d.problems, Contains(HasSubstr("box node @0x80 is reached a second time")));
}

TEST(DumpHostile, BrokenSectionHeaderFallsBackToTheRoot) {
  std::vector<uint32_t> dw = built().dwords;
  dw[0] = 0;
  const NodeDump d = dump_tree(dw, 0);
  EXPECT_FALSE(d.header);
  EXPECT_THAT(d.problems, Contains(HasSubstr("node section header")));
  EXPECT_EQ(d.nodes.size(), built().report.box_nodes + built().report.primitive_nodes);
}

TEST(DumpHostile, RandomBytesNeverCrash) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint32_t> dw = built().dwords;
    const int flips = 1 + round % 16;
    for (int i = 0; i < flips; ++i) dw[rng() % dw.size()] ^= 1u << (rng() % 32);
    if (round % 4 == 0) dw.resize(32 * (1 + rng() % (dw.size() / 32)));  // truncated section
    const NodeDump d = dump_tree(dw, 0);
    EXPECT_LE(d.nodes.size(), dw.size() / 32);
    EXPECT_LE(d.problems.size(), kMaxProblems);
    EXPECT_EQ(d.problems.size(), std::min<uint64_t>(d.problem_count, kMaxProblems));
  }
  for (std::size_t n = 0; n < 64; ++n) {
    std::vector<uint32_t> garbage(n);
    for (uint32_t& v : garbage) v = static_cast<uint32_t>(rng());
    (void)dump_tree(garbage, 0);
    (void)dump_offset(garbage, 128);
  }
}

}  // namespace
}  // namespace hwbvh::pipeline
