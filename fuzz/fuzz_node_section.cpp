// Whole RT IP 3.1 node sections as `hwbvh dump` and the tree check read them (pipeline/inspect.h,
// formats/rdna4/tree_check.h): any section — cycles, shared children, pointers past the end or into the middle
// of a node — is walked in bounded time, every node at most once, with problems reported instead of followed.
// The input is the section itself (little-endian dwords; a trailing partial dword is dropped).
#include "fuzz_common.h"
#include "hwbvh/formats/rdna4/tree_check.h"
#include "hwbvh/pipeline/inspect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hwbvh;
  const std::vector<uint32_t> dwords = blob::bytes_to_dwords(fuzz::input_bytes(data, size));
  const pipeline::NodeDump dump = pipeline::dump_tree(dwords, 0);
  fuzz::fuzz_check(dump.nodes.size() <= dwords.size() / rdna4::kNodeDwords, "each node is dumped at most once");
  fuzz::fuzz_check(dump.problems.size() <= pipeline::kMaxProblems && dump.problems.size() <= dump.problem_count,
                   "problems are capped and counted");
  (void)pipeline::dump_tree(dwords, 3);
  const uint32_t pointer = dwords.empty() ? rdna4::kRootPointer : dwords.back();
  (void)pipeline::dump_pointer(dwords, pointer);
  (void)pipeline::dump_offset(dwords, rdna4::node_byte_offset(pointer));
  const rdna4::TreeCheckResult check = rdna4::check_encoded_tree(dwords, nullptr, 5);
  fuzz::fuzz_check(check.problems.size() <= 5, "tree-check problems are capped");
  return 0;
}
