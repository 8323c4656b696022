// The emulator on any blob the reader accepts: emu::load_bvh, then LoadedBvh::trace with the target's emulator
// (RT IP 3.1, RT IP 2.0 or Xe3), and for rtip20 blobs the BVH4x2 loop too. Two waves of rays around the scene bounds
// are traced with a small step limit and options drawn from the input; every ray must stop within the limit, and a
// ray stopped by a malformed node must name that node. The input is resealed first (fuzz_common.h) so that
// mutated node bytes get past the checksums.
#include "emu_trace.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/emu/wavefront.h"

namespace hwbvh::fuzz {
namespace {

void trace(std::span<const std::byte> bytes) {
  trace_blob(bytes, [](const LoadedBvh& bvh, const std::vector<Ray>& rays, const TraceOptions& options,
                       const TraceOutput&) {
    if (bvh.target == blob::Target::Rtip20)
      check(trace_rays_bvh4x2(Bvh4Section::from(bvh.nodes, "fuzz.hwbvh"), rays, options, Executor(1)), options);
  });
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hwbvh::fuzz::trace(hwbvh::fuzz::reseal(hwbvh::fuzz::input_bytes(data, size)));
  return 0;
}
