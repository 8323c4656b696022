#pragma once
// Wave32 lockstep model: rays are grouped into waves of 32 in the order given; in each wave iteration every
// still-running lane performs one traversal step (rtip31/traversal.h), and a wave runs until its last lane finishes.
// Per-iteration active-lane and node-type counts give SIMD efficiency and node-type divergence. Waves are
// independent, run in parallel through hwbvh::Executor, and each writes only its own output slots, so results are
// identical at any thread count. This is a functional model: it counts work, not cycles.
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/rtip31/traversal.h"

namespace hwbvh::emu {

inline constexpr uint32_t kWaveSize = 32;

struct WaveStats {
  uint32_t lanes = 0;                  ///< rays in this wave (32, fewer for the last wave)
  uint64_t iterations = 0;             ///< wave iterations = largest step count of its lanes
  uint64_t active_lane_steps = 0;      ///< sum over iterations of lanes that stepped
  uint64_t box_lane_steps = 0;         ///< sum over iterations of lanes that stepped on a box node
  uint64_t primitive_lane_steps = 0;   ///< sum over iterations of lanes that stepped on a primitive node
  uint64_t mixed_iterations = 0;       ///< iterations in which both box and primitive lanes were active

  /// Active lane-steps / (32 x iterations); 1 for an empty wave.
  [[nodiscard]] double simd_efficiency() const;
  WaveStats& operator+=(const WaveStats& o);
  friend bool operator==(const WaveStats&, const WaveStats&) = default;
};

struct TraceOutput {
  std::vector<RayResult> rays;                       ///< one per input ray, same order
  std::vector<WaveStats> waves;                      ///< one per wave
  std::vector<std::vector<uint32_t>> node_sequences;  ///< per ray, if options.record_node_sequence; else empty

  /// Sum of all rays' counters.
  [[nodiscard]] RayCounters total_counters() const;
  /// Sum of all waves' statistics (lanes sums to the ray count).
  [[nodiscard]] WaveStats total_waves() const;
};

/// Traces `rays` through the BLAS at `root` in `memory`, 32 lanes per wave. Throws hwbvh::Error(BadInput) for
/// invalid options; node faults are reported per ray, never thrown.
TraceOutput trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                       const TraceOptions& options, const Executor& executor);

/// Same, with explicit waves: wave i is rays [wave_begin[i], wave_begin[i + 1]) (the last one ends at
/// rays.size()), each 1..32 rays — e.g. the partial 8x4 pixel tiles of scene/ray_gen.h's RayBatch. Throws
/// hwbvh::Error(BadInput) for boundaries that are not ascending from 0 or hold more than 32 rays.
TraceOutput trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                       std::span<const uint32_t> wave_begin, const TraceOptions& options, const Executor& executor);

/// Same, into `out`, whose vectors are refilled in their existing storage: for callers that trace batch after
/// batch, which then skip allocating (and page-faulting) fresh output memory each time. `out` is replaced whole
/// (its previous contents are gone) and left untouched if the options or boundaries are invalid.
void trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                std::span<const uint32_t> wave_begin, const TraceOptions& options, const Executor& executor,
                TraceOutput& out);

}  // namespace hwbvh::emu
