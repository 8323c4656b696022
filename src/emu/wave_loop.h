#pragma once
// The wave layer every target's emulator shares (wavefront.h): 32 lanes step in lockstep, and a wave runs until its
// last lane finishes. `Lane` is any traversal with done(), step() -> StepInfo and result().
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"

namespace hwbvh::emu::detail {

/// Throws hwbvh::Error(BadInput) unless `wave_begin` holds ascending waves of 1..32 rays starting at 0 that cover
/// `ray_count` rays.
void check_wave_boundaries(std::span<const uint32_t> wave_begin, std::size_t ray_count);

/// Runs one wave to completion: in each iteration every lane that has not finished performs one step.
/// `sequences`: one node sequence per lane to append to, or null (each lane type records its step's fetches,
/// the lane's record_fetches). `step_lane(lane)` performs a lane's step.
template <class Lane, class StepLane = decltype([](Lane& lane) { return lane.step(); })>
void run_lockstep_wave(std::span<Lane> lanes, WaveStats& stats, std::vector<NodeFetch>* sequences,
                       StepLane step_lane = {}) {
  stats.lanes = static_cast<uint32_t>(lanes.size());
  // Bit i: lane i has not finished (at most kWaveSize = 32 lanes); lanes step in index order.
  uint32_t pending = 0;
  for (std::size_t i = 0; i < lanes.size(); ++i) pending |= lanes[i].done() ? 0u : 1u << i;
  while (pending != 0) {
    uint32_t active = 0, box = 0, primitive = 0;
    for (uint32_t m = pending; m != 0; m &= m - 1) {
      const auto i = static_cast<std::size_t>(std::countr_zero(m));
      const StepInfo step = step_lane(lanes[i]);
      if (lanes[i].done()) pending &= ~(1u << i);
      if (step.faulted) continue;
      ++active;
      box += step.kind == rdna4::NodeKind::Box ? 1 : 0;
      primitive += step.kind == rdna4::NodeKind::Primitive ? 1 : 0;
      if (sequences != nullptr) lanes[i].record_fetches(step, sequences[i]);
    }
    if (active == 0) continue;
    ++stats.iterations;
    stats.active_lane_steps += active;
    stats.box_lane_steps += box;
    stats.primitive_lane_steps += primitive;
    stats.mixed_iterations += (box > 0 && primitive > 0) ? 1 : 0;
  }
}

/// Rays [0, ray_count) in consecutive waves of 32: the boundaries used when the caller gives none.
std::vector<uint32_t> consecutive_waves(std::size_t ray_count);

/// Traces `rays` in the waves `wave_begin` gives (checked as check_wave_boundaries does), 32 lanes at most per wave
/// in lockstep, each lane made by `make_lane(ray)`. Each wave writes only its own output slots, so results are
/// identical at any thread count. The wave layer of every target except RT IP 3.1, whose loop is specialised
/// (wavefront.cpp).
template <class Lane, class MakeLane>
TraceOutput trace_waves(std::span<const Ray> rays, std::span<const uint32_t> wave_begin, bool record_node_sequence,
                        const Executor& executor, MakeLane make_lane) {
  check_wave_boundaries(wave_begin, rays.size());
  const std::size_t wave_count = wave_begin.size();
  TraceOutput out;
  out.rays.resize(rays.size());
  out.waves.resize(wave_count);
  if (record_node_sequence) out.node_sequences.resize(rays.size());
  executor.for_each(0, wave_count, [&](std::size_t w) {
    const std::size_t first = wave_begin[w];
    const std::size_t count = (w + 1 < wave_count ? wave_begin[w + 1] : rays.size()) - first;
    std::vector<Lane> lanes;
    lanes.reserve(count);
    for (std::size_t i = 0; i < count; ++i) lanes.push_back(make_lane(rays[first + i]));
    run_lockstep_wave(std::span<Lane>(lanes), out.waves[w], record_node_sequence ? &out.node_sequences[first] : nullptr);
    for (std::size_t i = 0; i < count; ++i) out.rays[first + i] = lanes[i].result();
  });
  return out;
}

/// run_lockstep_wave for RT IP 3.1 lanes (rtip31/traversal.cpp), where the steps are compiled into the loop: on a CPU with
/// AVX2 as a copy built for it. `default_intersect`: RayTraversal::default_intersect of the lanes' options.
void run_rtip31_wave(std::span<RayTraversal> lanes, WaveStats& stats, std::vector<NodeFetch>* sequences,
                     bool default_intersect);

}  // namespace hwbvh::emu::detail
