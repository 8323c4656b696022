#include "hwbvh/emu/wavefront.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "hwbvh/core/error.h"
#include "emu/wave_loop.h"

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

namespace {

// Waves per parallel task (512 rays): small enough for load balance, large enough to make the task overhead
// negligible.
constexpr size_t kWavesPerTask = 16;

// Starts fetching the cache lines of `slots` for writing, a hint that changes no result: a wave's result slots are
// then in the cache when the wave ends (writing 180-odd bytes per ray into memory not yet cached stalled the copy of
// every result). Inlined by force: GCC deletes calls of a function that does nothing but prefetch.
template <class T>
[[gnu::always_inline]] inline void prefetch_for_write(std::span<T> slots) {
  constexpr uintptr_t kLine = 64;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(slots.data()), end = begin + slots.size_bytes();
  for (uintptr_t line = begin & ~(kLine - 1); line < end; line += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(line), 1);
  }
}

// Decode caches lent to the tasks of one call: a task takes one (or gets a new one when none is free) and gives it
// back, so a call uses at most one cache per concurrently running task and a cache keeps its entries from task to
// task. When the call ends its caches go to a store that outlives calls: a later call's new caches are those,
// rebound (emptied) for its node memory, so their entries fill memory that is already mapped instead of taking a
// page fault every few entries. Which cache a task gets changes no result.
class CachePool {
 public:
  explicit CachePool(const NodeMemory& memory) : memory_(memory) {}
  CachePool(const CachePool&) = delete;
  CachePool& operator=(const CachePool&) = delete;
  ~CachePool() {
    const std::lock_guard lock(spare_mutex());
    for (std::unique_ptr<NodeDecodeCache>& cache : free_) spares().push_back(std::move(cache));
  }

  std::unique_ptr<NodeDecodeCache> take() {
    {
      const std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<NodeDecodeCache> cache = std::move(free_.back());
        free_.pop_back();
        return cache;
      }
    }
    std::unique_ptr<NodeDecodeCache> spare;
    {
      const std::lock_guard lock(spare_mutex());
      if (!spares().empty()) {
        spare = std::move(spares().back());
        spares().pop_back();
      }
    }
    if (spare == nullptr) return std::make_unique<NodeDecodeCache>(memory_);
    spare->rebind(memory_);
    return spare;
  }
  void give_back(std::unique_ptr<NodeDecodeCache> cache) {
    const std::lock_guard lock(mutex_);
    free_.push_back(std::move(cache));
  }

 private:
  static std::mutex& spare_mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::vector<std::unique_ptr<NodeDecodeCache>>& spares() {
    static std::vector<std::unique_ptr<NodeDecodeCache>> caches;
    return caches;
  }

  const NodeMemory& memory_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<NodeDecodeCache>> free_;
};

}  // namespace

TraceOutput trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                       const TraceOptions& options, const Executor& executor) {
  return trace_rays(memory, root, rays, detail::consecutive_waves(rays.size()), options, executor);
}

TraceOutput trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                       std::span<const uint32_t> wave_begin, const TraceOptions& options, const Executor& executor) {
  TraceOutput out;
  trace_rays(memory, root, rays, wave_begin, options, executor, out);
  return out;
}

void trace_rays(const NodeMemory& memory, uint32_t root, std::span<const Ray> rays,
                std::span<const uint32_t> wave_begin, const TraceOptions& options, const Executor& executor,
                TraceOutput& out) {
  options.validate();
  detail::check_wave_boundaries(wave_begin, rays.size());
  const size_t wave_count = wave_begin.size();
  // Every ray's slot is written when its wave ends (the waves cover all rays), so a reused output's old results
  // need not be cleared first: clearing tens of megabytes was a few percent of a call.
  out.rays.resize(rays.size());
  out.waves.assign(wave_count, WaveStats{});  // accumulated into
  out.node_sequences.clear();
  if (options.record_node_sequence) out.node_sequences.resize(rays.size());

  // Each wave writes only its own rays' and its own wave's slots. A task runs a range of waves with one decode
  // cache (results do not depend on how waves are split into tasks, nor on the cache).
  CachePool caches(memory);
  const bool default_intersect = RayTraversal::default_intersect(options);
  executor.for_ranges(0, wave_count, kWavesPerTask, [&](size_t wave_first, size_t wave_end) {
    std::unique_ptr<NodeDecodeCache> cache = caches.take();
    std::vector<RayTraversal> lanes;
    lanes.reserve(kWaveSize);
    for (size_t w = wave_first; w < wave_end; ++w) {
      const size_t first = wave_begin[w];
      const size_t count = (w + 1 < wave_count ? wave_begin[w + 1] : rays.size()) - first;
      lanes.clear();
      for (size_t i = 0; i < count; ++i) lanes.emplace_back(memory, root, rays[first + i], options, cache.get());
      prefetch_for_write(std::span(out.rays).subspan(first, count));
      detail::run_rtip31_wave(std::span<RayTraversal>(lanes), out.waves[w],
                              options.record_node_sequence ? &out.node_sequences[first] : nullptr, default_intersect);
      for (size_t i = 0; i < count; ++i) out.rays[first + i] = lanes[i].result();
    }
    caches.give_back(std::move(cache));
  });
}

namespace detail {

void check_wave_boundaries(std::span<const uint32_t> wave_begin, std::size_t ray_count) {
  const size_t wave_count = wave_begin.size();
  for (size_t w = 0; w < wave_count; ++w) {
    const size_t end = w + 1 < wave_count ? wave_begin[w + 1] : ray_count;
    if (wave_begin[w] >= end || end - wave_begin[w] > kWaveSize || (w == 0 && wave_begin[0] != 0)) {
      throw Error(ErrorKind::BadInput, "", "wave boundaries must be ascending, start at 0 and hold 1..32 rays each");
    }
  }
  if (wave_count == 0 && ray_count != 0) throw Error(ErrorKind::BadInput, "", "rays given without wave boundaries");
}

std::vector<uint32_t> consecutive_waves(std::size_t ray_count) {
  std::vector<uint32_t> wave_begin;
  for (size_t first = 0; first < ray_count; first += kWaveSize) wave_begin.push_back(static_cast<uint32_t>(first));
  return wave_begin;
}

}  // namespace detail
}  // namespace hwbvh::emu
