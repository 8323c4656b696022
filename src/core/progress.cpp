#include "hwbvh/core/progress.h"

#include <algorithm>
#include <utility>

namespace hwbvh {

void announce(const ProgressCallback& progress, std::string_view phase) {
  if (progress) progress(phase, 0, 0);
}

ProgressCallback prefixed(const ProgressCallback& progress, std::string prefix) {
  if (!progress) return {};
  return [progress, prefix = std::move(prefix)](std::string_view phase, uint64_t done, uint64_t total) {
    progress(prefix + std::string(phase), done, total);
  };
}

ProgressCounter::ProgressCounter(const ProgressCallback& progress, std::string_view phase, uint64_t total)
    : progress_(progress ? &progress : nullptr), phase_(phase), total_(total) {
  if (progress_) (*progress_)(phase_, 0, total_);
}

void ProgressCounter::add(uint64_t units) {
  if (!progress_) return;
  done_.fetch_add(units, std::memory_order_relaxed);
  report();
}

void ProgressCounter::reach(uint64_t done) {
  if (!progress_) return;
  uint64_t seen = done_.load(std::memory_order_relaxed);
  while (seen < done && !done_.compare_exchange_weak(seen, done, std::memory_order_relaxed)) {
  }
  report();
}

void ProgressCounter::report() {
  const std::unique_lock lock(report_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const uint64_t done = std::min(done_.load(std::memory_order_relaxed), total_);
  if (done <= reported_) return;
  reported_ = done;
  (*progress_)(phase_, done, total_);
}

void ProgressCounter::finish() {
  if (!progress_) return;
  const std::lock_guard lock(report_mutex_);
  if (reported_ == total_ && total_ > 0) return;
  reported_ = total_;
  (*progress_)(phase_, total_, total_);
}

void for_ranges_counted(const Executor& executor, std::size_t begin, std::size_t end, std::size_t grain,
                        ProgressCounter& counter, const std::function<uint64_t(std::size_t, std::size_t)>& body) {
  if (!counter.active()) {
    executor.for_ranges(begin, end, grain, [&](std::size_t b, std::size_t e) { body(b, e); });
    return;
  }
  if (begin >= end) return;
  constexpr std::size_t kBlocks = 256;
  const std::size_t block = std::max<std::size_t>({grain, 1, (end - begin + kBlocks - 1) / kBlocks});
  const std::size_t blocks = (end - begin + block - 1) / block;
  executor.for_each(0, blocks, [&](std::size_t k) {
    const std::size_t b = begin + k * block;
    counter.add(body(b, std::min(end, b + block)));
  });
}

void for_each_counted(const Executor& executor, std::size_t begin, std::size_t end, std::size_t grain,
                      ProgressCounter& counter, const std::function<void(std::size_t)>& body) {
  for_ranges_counted(executor, begin, end, grain, counter, [&](std::size_t b, std::size_t e) -> uint64_t {
    for (std::size_t i = b; i < e; ++i) body(i);
    return e - b;
  });
}

}  // namespace hwbvh
