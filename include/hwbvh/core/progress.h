#pragma once
// Progress of long library work, for a front end to draw (the CLI's indicator: apps/hwbvh/progress.h). The library
// only reports; whether and how to show it is the caller's choice.
#include <cstdint>
#include <functional>
#include <string_view>

namespace hwbvh {

/// Called as work advances: the phase's name ("tracing primary, shadow", "oracle scene"), the units done and the
/// units the phase has in all (rays, waves, nodes: whatever the phase counts; done == total when it ends). Called
/// from the thread that runs the phase, never from two threads at once; an empty function reports nothing.
using ProgressCallback = std::function<void(std::string_view phase, uint64_t done, uint64_t total)>;

}  // namespace hwbvh
