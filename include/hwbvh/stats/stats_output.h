#pragma once
// `hwbvh stats` output: an aligned text table per ray kind, or one JSON document with the same figures plus
// histograms. Wall-clock figures (emulation seconds, rays per second) are labelled as such; everything else is
// deterministic.
#include <cstdio>
#include <string>

#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::stats {

/// The report as JSON text (indented).
std::string stats_to_json(const StatsReport& report);
/// The report as a human-readable table.
std::string stats_to_text(const StatsReport& report);

}  // namespace hwbvh::stats
