#pragma once
// A one-line progress indicator on stderr: the current phase and the elapsed time, shown only when stderr is a
// terminal, only after the work has run for a second (short builds print nothing), and erased when done.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace hwbvh::cli {

class Progress {
 public:
  /// `enabled` false (e.g. --quiet) makes every call a no-op; so does a stderr that is not a terminal.
  Progress(std::string task, bool enabled);
  ~Progress();  ///< stops the display and erases its line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Names the phase now running.
  void phase(std::string name);

 private:
  void run();

  std::string task_;
  std::string phase_;
  bool stop_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::chrono::steady_clock::time_point start_;
  std::thread thread_;  ///< last: started after the members it uses
};

}  // namespace hwbvh::cli
