#include "progress.h"

#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace hwbvh::cli {
namespace {

constexpr auto kDelay = std::chrono::seconds(1);
constexpr auto kRefresh = std::chrono::milliseconds(200);

}  // namespace

Progress::Progress(std::string task, bool enabled) : task_(std::move(task)), start_(std::chrono::steady_clock::now()) {
  if (enabled && ::isatty(STDERR_FILENO)) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Progress::phase(std::string name) {
  std::lock_guard lock(mutex_);
  phase_ = std::move(name);
}

void Progress::run() {
  std::unique_lock lock(mutex_);
  if (wake_.wait_until(lock, start_ + kDelay, [this] { return stop_; })) return;
  while (!stop_) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    // \r and "erase to end of line" keep the indicator on one line.
    fmt::print(stderr, "\r\x1b[K{}: {} ... {:.1f} s", task_, phase_, elapsed);
    std::fflush(stderr);
    wake_.wait_for(lock, kRefresh, [this] { return stop_; });
  }
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
}

}  // namespace hwbvh::cli
