#include "hwbvh/emu/wavefront.h"

#include <algorithm>

#include "hwbvh/core/error.h"

namespace hwbvh::emu {

double WaveStats::simd_efficiency() const {
  if (iterations == 0) return 1.0;
  return static_cast<double>(active_lane_steps) / (static_cast<double>(kWaveSize) * static_cast<double>(iterations));
}

WaveStats& WaveStats::operator+=(const WaveStats& o) {
  lanes += o.lanes;
  iterations += o.iterations;
  active_lane_steps += o.active_lane_steps;
  box_lane_steps += o.box_lane_steps;
  primitive_lane_steps += o.primitive_lane_steps;
  mixed_iterations += o.mixed_iterations;
  return *this;
}

RayCounters TraceOutput::total_counters() const {
  RayCounters total;
  for (const RayResult& r : rays) total += r.counters;
  return total;
}

WaveStats TraceOutput::total_waves() const {
  WaveStats total;
  for (const WaveStats& w : waves) total += w;
  return total;
}

TraceOutput trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                       const TraceOptions& options, const Executor& executor) {
  std::vector<uint32_t> wave_begin;
  for (size_t first = 0; first < rays.size(); first += kWaveSize) wave_begin.push_back(static_cast<uint32_t>(first));
  return trace_rays(memory, root, rays, wave_begin, options, executor);
}

TraceOutput trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                       std::span<const uint32_t> wave_begin, const TraceOptions& options, const Executor& executor) {
  options.validate();
  const size_t wave_count = wave_begin.size();
  for (size_t w = 0; w < wave_count; ++w) {
    const size_t end = w + 1 < wave_count ? wave_begin[w + 1] : rays.size();
    if (wave_begin[w] >= end || end - wave_begin[w] > kWaveSize || (w == 0 && wave_begin[0] != 0)) {
      throw Error(ErrorKind::BadInput, "", "wave boundaries must be ascending, start at 0 and hold 1..32 rays each");
    }
  }
  if (wave_count == 0 && !rays.empty()) throw Error(ErrorKind::BadInput, "", "rays given without wave boundaries");
  TraceOutput out;
  out.rays.resize(rays.size());
  out.waves.resize(wave_count);
  if (options.record_node_sequence) out.node_sequences.resize(rays.size());

  // Each wave writes only its own rays' and its own wave's slots.
  executor.for_each(0, wave_count, [&](size_t w) {
    const size_t first = wave_begin[w];
    const size_t count = (w + 1 < wave_count ? wave_begin[w + 1] : rays.size()) - first;
    std::vector<RayTraversal> lanes;
    lanes.reserve(count);
    for (size_t i = 0; i < count; ++i) lanes.emplace_back(memory, root, rays[first + i], options);

    WaveStats& stats = out.waves[w];
    stats.lanes = static_cast<uint32_t>(count);
    bool running = true;
    while (running) {
      // One wave iteration: every lane that has not finished performs one step.
      running = false;
      uint32_t active = 0, box = 0, primitive = 0;
      for (size_t i = 0; i < count; ++i) {
        if (lanes[i].done()) continue;
        const StepInfo step = lanes[i].step();
        running = running || !lanes[i].done();
        if (step.faulted) continue;
        ++active;
        box += step.kind == rdna4::NodeKind::Box ? 1 : 0;
        primitive += step.kind == rdna4::NodeKind::Primitive ? 1 : 0;
        if (options.record_node_sequence) out.node_sequences[first + i].push_back(step.node);
      }
      if (active == 0) continue;
      ++stats.iterations;
      stats.active_lane_steps += active;
      stats.box_lane_steps += box;
      stats.primitive_lane_steps += primitive;
      stats.mixed_iterations += (box > 0 && primitive > 0) ? 1 : 0;
    }
    for (size_t i = 0; i < count; ++i) out.rays[first + i] = lanes[i].result();
  });
  return out;
}

}  // namespace hwbvh::emu
