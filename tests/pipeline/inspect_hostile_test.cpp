// Regression tests for the node walk behind `hwbvh dump`, found by the hostile-blob tests (tests/hostile): the
// emulator faults on these pointers, so the dump must report them too instead of reading past them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures/random_scene.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/pipeline/inspect.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

const std::vector<uint32_t>& sample() {
  static const std::vector<uint32_t> dwords = [] {
    BuildBlobOptions o;
    o.build.threads = o.encode.threads = 1;
    const BuildBlobResult r = build_blob(test::random_triangle_soup(300, 3), o);
    return blob::bytes_to_dwords(r.blob.require(blob::SectionType::Nodes, "mem").data);
  }();
  return dwords;
}

TEST(DumpHostile, BoxPointerIntoTheMiddleOfANode) {
  // Bit 3 of a box pointer addresses byte 64 of a node; the emulator faults (Misaligned), the dump used to read
  // the aligned node instead.
  std::vector<uint32_t> dw = sample();
  ASSERT_TRUE(dump_tree(dw, 0).problems.empty());
  dw[32 + 0] |= 0x8u;  // the root's internal base
  const NodeDump d = dump_tree(dw, 0);
  EXPECT_THAT(d.problems, Contains(HasSubstr("child 0 of box node @0x80: box pointer")));
  EXPECT_THAT(d.problems, Contains(HasSubstr("has bit 3 set: it addresses the middle of a 128-byte node")));
}

TEST(DumpHostile, SecondPointerIntoAPrimitiveNodeBeyondItsPairs) {
  // Two leaf children of one box node that address the same primitive node (the first with range length 0): the
  // second is turned into a pair-7 pointer. The node was decoded at its first pointer, so the second one used to
  // pass unchecked.
  std::vector<uint32_t> dw = sample();
  const NodeDump good = dump_tree(dw, 0);
  bool edited = false;
  for (const DumpedNode& n : good.nodes) {
    if (!n.box || edited) continue;
    for (uint32_t k = 0; k + 1 < n.box->child_count && !edited; ++k) {
      const auto& first = n.box->info[k];
      const auto& second = n.box->info[k + 1];
      const bool leaves = first.node_type != rdna4::kTypeBox && second.node_type != rdna4::kTypeBox;
      if (!leaves || first.range_length != 0) continue;
      uint32_t& w2 = dw[n.offset / 4 + 10 + 3 * (k + 1)];
      w2 = (w2 & ~0x0F000000u) | 11u << 24;  // node type 11: pair 7
      edited = true;
    }
  }
  ASSERT_TRUE(edited) << "the sample has no two leaf children sharing a primitive node";
  EXPECT_THAT(dump_tree(dw, 0).problems, Contains(HasSubstr("enters pair 7 but primitive node @")));
}

}  // namespace
}  // namespace hwbvh::pipeline
