#pragma once
// The machine model's memory hierarchy (docs/machine-model.md, "Memory"): levels nearest first, each a
// set-associative LRU cache (or, with no capacity, a buffer that only merges requests for lines in flight) in front
// of the next, and the memory last. A level that has a line delivers it `hit_latency` cycles after the request
// reaches it, once its port has served the requests before it (`bytes_per_clock` bytes a cycle, so a port wider
// than a line serves several lines in one cycle); a miss waits for a free miss slot
// (`misses_in_flight`) and asks the next level for the whole line, which every level on the way keeps. A request for
// a line still in flight merges with that fill, as a miss-status register would. Requests are made in cycle order
// (the event loop's), and each one's timing is settled when it is made.
#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"

namespace hwbvh::emu::machine {

class MemoryHierarchy {
 public:
  /// Levels as MachineConfig::validate() accepts them.
  explicit MemoryHierarchy(std::span<const MemoryLevelConfig> levels);

  struct Read {
    uint64_t ready = 0;  ///< cycle the last byte is available
    uint32_t level = 0;  ///< the farthest level that had to serve part of it
  };
  /// Reads [address, address + bytes) at cycle `now` (bytes >= 1): every line of the nearest level it spans.
  Read read(uint64_t address, uint32_t bytes, uint64_t now);

  /// Per level: requests that reached it, hits, merges, misses and first touches, bytes it served.
  [[nodiscard]] const std::vector<MemoryLevelResult>& counts() const { return counts_; }

 private:
  static constexpr uint64_t kNoLine = UINT64_MAX;
  struct Line {
    uint64_t line = kNoLine;
    uint64_t ready = 0;  ///< cycle its data is (or was) available
  };
  struct Level {
    MemoryLevelConfig config;
    uint64_t sets = 0;                                       ///< 0: holds only lines in flight
    std::vector<Line> held;  ///< sets x ways; a set's ways most recently used first, kNoLine when empty
    std::unordered_map<uint64_t, uint64_t> in_flight;        ///< no capacity: line -> fill cycle
    std::unordered_set<uint64_t> ever_held;                  ///< a cache: every line it has held (first touches)
    uint64_t port_free = 0;  ///< when the port is next free, in byte slots (cycle x bytes_per_clock + bytes moved)
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> fills;  ///< outstanding misses' ready
  };

  Read read_level(size_t k, uint64_t address, uint64_t bytes, uint64_t now);
  Read access_line(size_t k, uint64_t line, uint64_t bytes, uint64_t now);
  const uint64_t* find(Level& level, uint64_t line, uint64_t now);
  void keep(Level& level, uint64_t line, uint64_t ready);
  uint64_t serve(Level& level, uint64_t bytes, uint64_t now);
  static uint64_t miss_slot(Level& level, uint64_t now);

  std::vector<Level> levels_;
  std::vector<MemoryLevelResult> counts_;
};

}  // namespace hwbvh::emu::machine
