#pragma once
// A one-line progress indicator on stderr: the current phase, the elapsed time and, for a phase the library reports
// progress of (core/progress.h), its percentage and the time left; shown only when stderr is a terminal, only after
// the work has run for a second (short builds print nothing), and erased when done.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "hwbvh/core/progress.h"

namespace hwbvh::cli {

class Progress {
 public:
  /// `enabled` false (e.g. --quiet) makes every call a no-op; so does a stderr that is not a terminal.
  Progress(std::string task, bool enabled);
  ~Progress();  ///< stops the display and erases its line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Names the phase now running (its progress unknown until update() tells it).
  void phase(std::string name);
  /// `done` of `total` units of `phase`; a new phase name restarts the time-left estimate.
  void update(std::string_view phase, uint64_t done, uint64_t total);
  /// update() as a library callback; an empty function when the indicator is off.
  [[nodiscard]] ProgressCallback callback();

 private:
  void run();
  [[nodiscard]] std::string line() const;  ///< under mutex_

  std::string task_;
  std::string phase_;
  uint64_t done_ = 0, total_ = 0;  ///< total 0: the phase's progress is unknown
  std::chrono::steady_clock::time_point phase_start_;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::chrono::steady_clock::time_point start_;
  std::thread thread_;  ///< last: started after the members it uses
};

}  // namespace hwbvh::cli
