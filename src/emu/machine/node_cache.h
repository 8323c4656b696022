#pragma once
// The machine model's per-CU node cache: fully associative, LRU, fixed hit latency, misses filled from a
// fixed-latency backing store. A lookup of a line whose fill is still in flight merges with it (it counts as a
// hit and returns when the fill does), as a miss-status register would.
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hwbvh::emu::machine {

class NodeCache {
 public:
  NodeCache(uint32_t lines, uint32_t hit_latency, uint32_t miss_latency);

  /// Looks up `line` at cycle `now`, makes it the most recently used (filling it on a miss, evicting the least
  /// recently used line when full) and returns the cycle its data is available.
  uint64_t access(uint64_t line, uint64_t now);

  [[nodiscard]] uint64_t hits() const { return hits_; }
  [[nodiscard]] uint64_t misses() const { return misses_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Entry {
    uint64_t line = 0;
    uint64_t ready = 0;  ///< cycle the line's data is (or was) available
    uint32_t prev = kNone;
    uint32_t next = kNone;
  };
  void unlink(uint32_t e);
  void push_front(uint32_t e);

  uint32_t capacity_;
  uint32_t hit_latency_;
  uint32_t miss_latency_;
  std::vector<Entry> entries_;
  std::unordered_map<uint64_t, uint32_t> index_;  ///< line -> entry
  uint32_t head_ = kNone;                          ///< most recently used
  uint32_t tail_ = kNone;                          ///< least recently used
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace hwbvh::emu::machine
