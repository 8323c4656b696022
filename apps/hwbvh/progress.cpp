#include "progress.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace hwbvh::cli {
namespace {

constexpr auto kDelay = std::chrono::seconds(1);
constexpr auto kRefresh = std::chrono::milliseconds(200);

}  // namespace

Progress::Progress(std::string task, bool enabled) : task_(std::move(task)), start_(std::chrono::steady_clock::now()) {
  phase_start_ = start_;
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
  done_ = total_ = 0;
  phase_start_ = std::chrono::steady_clock::now();
}

void Progress::update(std::string_view phase, uint64_t done, uint64_t total) {
  std::lock_guard lock(mutex_);
  if (phase != phase_ || done < done_) {  // a new phase, or the same name counting again
    phase_ = phase;
    phase_start_ = std::chrono::steady_clock::now();
  }
  done_ = done;
  total_ = total;
}

ProgressCallback Progress::callback() {
  if (!thread_.joinable()) return {};
  return [this](std::string_view phase, uint64_t done, uint64_t total) { update(phase, done, total); };
}

std::string Progress::line() const {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string text = fmt::format("{}: {}", task_, phase_);
  if (total_ > 0) {
    const double fraction = static_cast<double>(std::min(done_, total_)) / static_cast<double>(total_);
    text += fmt::format(" {:3.0f}%", 100.0 * fraction);
    // Time left at the phase's pace so far; nothing until the phase has shown some pace.
    const double in_phase = std::chrono::duration<double>(now - phase_start_).count();
    if (fraction > 0.0 && fraction < 1.0 && in_phase > 0.5)
      text += fmt::format(", {:.0f} s left", in_phase * (1.0 - fraction) / fraction);
  }
  return text + fmt::format(" ... {:.1f} s", elapsed);
}

void Progress::run() {
  std::unique_lock lock(mutex_);
  if (wake_.wait_until(lock, start_ + kDelay, [this] { return stop_; })) return;
  while (!stop_) {
    // \r and "erase to end of line" keep the indicator on one line.
    fmt::print(stderr, "\r\x1b[K{}", line());
    std::fflush(stderr);
    wake_.wait_for(lock, kRefresh, [this] { return stop_; });
  }
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
}

}  // namespace hwbvh::cli
