// The Xe3 node decoders (formats/xe3/decode.h): any 64 bytes decode as an InternalNode6 and as a QuadLeaf, and any
// 128 bytes as a STOC3 leaf, without undefined behaviour; the accessors the emulator uses (child_type, child_block,
// triangle) stay inside their arrays. Inputs shorter than 128 bytes are zero-padded.
#include "fuzz_common.h"
#include "hwbvh/formats/xe3/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hwbvh;
  const auto bytes = fuzz::input_bytes(data, size);
  const auto block = fuzz::leading_dwords<xe3::kBlockDwords>(bytes);

  const xe3::DecodedInternalNode node = xe3::decode_internal_node(block);
  for (uint32_t i = 0; i < xe3::kNodeWidth; ++i) {
    fuzz::fuzz_check(node.block_incr[i] < 4 && node.type_or_start[i] < 16, "childData fields are 2 and 4 bits");
    fuzz::fuzz_check(node.child_type(i) < 256, "a node type is one byte");
    // Block offsets are 32-bit signed plus six 2-bit increments: far from the int64 limits from any node block.
    (void)node.child_block(int64_t{1} << 40, i);
  }

  const xe3::DecodedQuadLeaf leaf = xe3::decode_quad_leaf(block);
  fuzz::fuzz_check(leaf.j[0] < 4 && leaf.j[1] < 4 && leaf.j[2] < 4, "vertex selectors are 2 bits");
  fuzz::fuzz_check(leaf.prim_index1_delta < 32, "primIndex1Delta is 5 bits");
  (void)leaf.triangle(0);
  if (leaf.has_tri1()) (void)leaf.triangle(1);
  (void)leaf.primitive(1);

  const xe3::DecodedStoc3Leaf stoc3 = xe3::decode_stoc3_leaf(fuzz::leading_dwords<xe3::kStoc3LeafDwords>(bytes));
  fuzz::fuzz_check(stoc3.full_level[0] < 256 && stoc3.full_level[1] < 256, "full levels are one byte");
  return 0;
}
