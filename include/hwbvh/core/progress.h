#pragma once
// Progress of long library work, for a front end to draw (the CLI's indicator: apps/hwbvh/progress.h). The library
// only reports; whether and how to show it is the caller's choice. Reporting never changes what the work computes.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "hwbvh/core/parallel.h"

namespace hwbvh {

/// Called as work advances: the phase's name ("tracing primary, shadow", "oracle scene"), the units done and the
/// units the phase has in all (rays, waves, nodes: whatever the phase counts; done == total when it ends; total 0
/// announces a phase whose work is not counted). Within a phase `done` never decreases. Called from one thread at
/// a time (not necessarily the caller's); an empty function reports nothing.
using ProgressCallback = std::function<void(std::string_view phase, uint64_t done, uint64_t total)>;

/// `progress(phase, 0, 0)` when `progress` is set: a phase starts whose work is not counted.
void announce(const ProgressCallback& progress, std::string_view phase);

/// `progress` with `prefix` put before every phase name (e.g. "top level " for a two-level build's top level); empty
/// when `progress` is.
ProgressCallback prefixed(const ProgressCallback& progress, std::string prefix);

/// The units of one phase done by any number of threads, reported through a ProgressCallback: add() is one atomic
/// add, and a report is skipped while another thread's is under way (the count is then reported by the next one),
/// so that workers tick once per chunk of work without waiting. Reports 0 of `total` on construction and `total`
/// of `total` on finish(); every report in between is larger than the one before. With an empty callback every
/// call does nothing.
class ProgressCounter {
 public:
  ProgressCounter(const ProgressCallback& progress, std::string_view phase, uint64_t total);
  ProgressCounter(const ProgressCounter&) = delete;
  ProgressCounter& operator=(const ProgressCounter&) = delete;

  void add(uint64_t units);
  /// At least `done` units are done (for work that reports where it is rather than what it did, e.g. Embree's).
  void reach(uint64_t done);
  void finish();
  [[nodiscard]] bool active() const { return progress_ != nullptr; }

 private:
  void report();

  const ProgressCallback* progress_;  ///< null: nothing to report to
  std::string_view phase_;
  uint64_t total_;
  std::atomic<uint64_t> done_{0};
  std::mutex report_mutex_;
  uint64_t reported_ = 0;  ///< under report_mutex_
};

/// executor.for_ranges over [begin, end) in blocks of at least `grain` indices (about 1/256 of the range, so that
/// the count moves even on one thread, where for_ranges makes one call), adding to `counter` what each call of
/// `body` returns (the units it did). Without an active counter: executor.for_ranges(begin, end, grain, body).
void for_ranges_counted(const Executor& executor, std::size_t begin, std::size_t end, std::size_t grain,
                        ProgressCounter& counter, const std::function<uint64_t(std::size_t, std::size_t)>& body);

/// for_ranges_counted calling body(i) for every index, each index one unit.
void for_each_counted(const Executor& executor, std::size_t begin, std::size_t end, std::size_t grain,
                      ProgressCounter& counter, const std::function<void(std::size_t)>& body);

}  // namespace hwbvh
