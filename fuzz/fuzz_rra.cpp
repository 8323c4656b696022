// The .rra reader (rra::parse, rra::to_blob; docs/rra.md §4): any bytes are refused with hwbvh::Error(BadInput)
// or read into a blob. An accepted file's blob is exported again and must read back to the same sections, both
// uncompressed and zstd-compressed. Files without a HwbvhSections chunk take the driver-capture path (triangles
// decoded from the primitive nodes); the seeds include such files (fuzz/make_corpus.cpp), one-level and two-level
// (a TLAS chunk whose instance nodes name the BLAS chunks), and one with a ray history, whose dispatches must be
// written again and read back to the same tokens.
#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/rra/rra.h"

namespace hwbvh::fuzz {
namespace {

void read(std::span<const std::byte> bytes) {
  blob::Blob read;
  rra::File file;
  try {
    file = rra::parse(bytes, "fuzz.rra");
    for (const rra::ReadAccelStruct& as : file.accel_structs)
      fuzz_check(as.box_nodes > 0 && as.nodes.size() % 128 == 0 && as.active_primitives <= as.primitives,
                 "an accepted structure has a root and whole nodes");
    read = rra::to_blob(file, "fuzz.rra");
  } catch (const Error&) {
    return;
  }
  for (const bool compress : {false, true}) {
    std::vector<std::byte> again;
    try {
      again = rra::export_blob(read, "fuzz.rra", {compress}, file.ray_history);
    } catch (const Error&) {
      continue;  // sections the writer refuses to pair with these nodes (e.g. a Geometry section that misses ids)
    }
    const rra::File back = rra::parse(again, "again.rra");
    fuzz_check(same_content(rra::to_blob(back, "again.rra"), read),
               "an accepted file exports and reads back to the same sections");
    // Compared as written bytes: a ray read back may hold NaNs, which no == matches.
    fuzz_check(back.ray_history.size() == file.ray_history.size(), "every ray-history dispatch is written again");
    for (std::size_t i = 0; i < back.ray_history.size(); ++i)
      fuzz_check(rra::history_tokens(back.ray_history[i]) == rra::history_tokens(file.ray_history[i]) &&
                     rra::history_metadata(back.ray_history[i]) == rra::history_metadata(file.ray_history[i]),
                 "a ray-history dispatch reads back to the same tokens");
  }
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hwbvh::fuzz::read(hwbvh::fuzz::input_bytes(data, size));
  return 0;
}
