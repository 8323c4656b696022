// Two-level blobs (docs/blob-format.md §6.6, §12, §13): the reader (emu::load_bvh checks the Levels and
// InstanceSideband sections against each other and every instance node against them), then the traversal across
// levels with rays and options drawn from the input as fuzz_emu draws them. Beyond fuzz_emu's checks: a hit names an
// instance that exists, every step is counted in exactly one level, and no ray enters more BLASes than it took
// instance steps. Seeds are instanced blobs (corpus/instanced/); inputs are
// resealed first (fuzz_common.h).
#include "emu_trace.h"

namespace hwbvh::fuzz {
namespace {

void check_levels(const LoadedBvh& bvh, const TraceOutput& out) {
  for (const RayResult& r : out.rays) {
    const RayCounters& c = r.counters;
    fuzz_check(c.tlas_steps + c.blas_steps == c.steps, "every step is in one level");
    fuzz_check(c.instance_transitions <= c.instance_node_steps, "a BLAS is entered only through an instance step");
    if (r.hit && bvh.two_level()) fuzz_check(r.instance_index < bvh.instance_count(), "a hit names an instance");
  }
}

void trace(std::span<const std::byte> bytes) {
  trace_blob(bytes, [](const LoadedBvh& bvh, const std::vector<Ray>&, const TraceOptions&, const TraceOutput& out) {
    check_levels(bvh, out);
  });
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hwbvh::fuzz::trace(hwbvh::fuzz::reseal(hwbvh::fuzz::input_bytes(data, size)));
  return 0;
}
