#pragma once
// A small parallel executor: TBB underneath (linked privately), or plain sequential loops when threads == 1.
// Everything parallel in hwbvh goes through it so that tests can force single-threaded runs and results stay
// identical at any thread count (work is split into index ranges; callers write to per-index slots).
#include <cstddef>
#include <functional>

namespace hwbvh {

class Executor {
 public:
  /// threads = 0 means "all hardware threads".
  explicit Executor(int threads = 0);
  [[nodiscard]] int threads() const { return threads_; }

  /// Calls body(begin_i, end_i) on disjoint sub-ranges covering [begin, end), each at most `grain` long
  /// (except when running sequentially, where one call covers everything).
  void for_ranges(std::size_t begin, std::size_t end, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& body) const;

  /// Calls body(i) for every i in [begin, end).
  void for_each(std::size_t begin, std::size_t end, const std::function<void(std::size_t)>& body,
                std::size_t grain = 1) const;

  /// Runs a and b, possibly concurrently.
  void invoke2(const std::function<void()>& a, const std::function<void()>& b) const;

 private:
  int threads_;
};

}  // namespace hwbvh
