#include "hwbvh/core/parallel.h"

#include <algorithm>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

namespace hwbvh {

Executor::Executor(int threads)
    : threads_(threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {}

void Executor::for_ranges(std::size_t begin, std::size_t end, std::size_t grain,
                          const std::function<void(std::size_t, std::size_t)>& body) const {
  if (begin >= end) return;
  if (threads_ == 1) {
    body(begin, end);
    return;
  }
  tbb::task_arena arena(threads_);
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end, std::max<std::size_t>(grain, 1)),
                      [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
  });
}

void Executor::for_each(std::size_t begin, std::size_t end, const std::function<void(std::size_t)>& body,
                        std::size_t grain) const {
  for_ranges(begin, end, grain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) body(i);
  });
}

void Executor::invoke2(const std::function<void()>& a, const std::function<void()>& b) const {
  if (threads_ == 1) {
    a();
    b();
    return;
  }
  tbb::task_arena arena(threads_);
  arena.execute([&] { tbb::parallel_invoke(a, b); });
}

}  // namespace hwbvh
