#pragma once
// The machine model's memory hierarchy (docs/machine-model.md, "Memory" and "A whole GPU"): levels nearest first,
// each a set-associative LRU cache (or, with no capacity, a buffer that only merges requests for lines in flight) in
// front of the next, and the memory last. A level has one instance per CU, per shader array or for the whole GPU
// (MemoryLevelConfig::shared_by); each simulated CU reads through its own path of instances, so CUs that share an
// instance share its lines, its port and its miss slots. An instance delivers a line it has `hit_latency` cycles
// after the request reaches it, once its port has served the requests before it (`bytes_per_clock` bytes a cycle,
// so a port wider than a line serves several lines in one cycle); a miss waits for a free miss slot
// (`misses_in_flight`) and asks the next level for the whole line, which every level on the way keeps. A request for
// a line still in flight merges with that fill, as a miss-status register would. When only some of an instance's CUs
// are simulated (GpuConfig::simulated_shader_arrays: a GPU-wide level), it keeps their share of its bandwidth,
// capacity and miss slots. Scalar loads take the scalar cache (when the preset has one) and then levels[1] onwards.
// Requests are made in cycle order (the event loop's), and each one's timing is settled when it is made.
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hwbvh/emu/machine/config.h"
#include "hwbvh/emu/machine/machine.h"

namespace hwbvh::emu::machine {

/// The shader array (engine-major) of dispatch slot `slot`: engine slot mod SE, array (slot / SE) mod SA (docs
/// "Dispatch"). Slots `shader_arrays()` apart share an array.
[[nodiscard]] uint32_t shader_array_of_slot(const GpuConfig& gpu, uint32_t slot);

/// The sample (docs "Sampling"): every CU of the shader arrays of slots floor(i x arrays / simulated arrays), i = 0..
/// simulated arrays - 1, spread evenly over the dispatch order. Simulated CU `cu` (0..simulated_cus() - 1) is the
/// cu-th of their slots in slot order, so that with every array simulated, CU i is slot i.
[[nodiscard]] uint32_t slot_of_simulated_cu(const GpuConfig& gpu, uint32_t cu);
/// The inverse: the simulated CU that is dispatch slot `slot`, if one is.
[[nodiscard]] std::optional<uint32_t> simulated_cu_of_slot(const GpuConfig& gpu, uint32_t slot);

class MemoryHierarchy {
 public:
  /// `memory` and `gpu` as MachineConfig::validate() accepts them; gpu.simulated_cus() CUs are simulated.
  MemoryHierarchy(const MemoryConfig& memory, const GpuConfig& gpu);

  struct Read {
    uint64_t ready = 0;  ///< cycle the last byte is available
    uint32_t level = 0;  ///< the farthest level that had to serve part of it (an index into MemoryConfig::levels)
  };
  /// CU `cu` reads [address, address + bytes) at cycle `now` (bytes >= 1): every line of the nearest level it spans.
  /// `scalar`: through the scalar cache (if any) instead of levels[0].
  Read read(uint32_t cu, uint64_t address, uint32_t bytes, uint64_t now, bool scalar = false);

  /// The same lines as read() without timing or counts: every cache on the way ends up holding them (warm-up).
  void touch(uint32_t cu, uint64_t address, uint32_t bytes, bool scalar = false);

  /// Zeroes the counts (after a warm-up); the lines held stay.
  void reset_counts();

  /// Per level (MemoryConfig::levels order, then the scalar cache if any), summed over its simulated instances:
  /// requests that reached it, hits, merges, misses and first touches, bytes it served.
  [[nodiscard]] const std::vector<MemoryLevelResult>& counts() const { return counts_; }

 private:
  static constexpr uint64_t kNoLine = UINT64_MAX;
  struct Line {
    uint64_t line = kNoLine;
    uint64_t ready = 0;  ///< cycle its data is (or was) available
  };
  /// A port's calendar: the slots used in each cycle of a sliding window. A request takes the earliest free slots
  /// at or after its cycle, so one made for a later cycle (behind a full miss queue) leaves the cycles before it to
  /// requests made for them afterwards, by another CU or another wave.
  struct Port {
    static constexpr uint64_t kWindow = uint64_t{1} << 15;  ///< cycles remembered (a power of two)
    struct Cycle {
      uint64_t cycle = UINT64_MAX;
      uint64_t used = 0;  ///< slots
    };
    std::vector<Cycle> calendar = std::vector<Cycle>(kWindow);
    uint64_t full_from = 0, full_until = 0;  ///< a run of full cycles [full_from, full_until): skipped, not scanned
  };
  struct Level {
    MemoryLevelConfig config;
    size_t counted_as = 0;   ///< index into counts_
    bool memory = false;     ///< the last level: serves every request
    uint64_t sets = 0;       ///< 0: holds only lines in flight
    uint32_t misses_in_flight = 0;
    uint64_t slots_per_cycle = 0;  ///< the port's time unit: a cycle is this many slots and a byte `slots_per_byte`
    uint64_t slots_per_byte = 0;   ///< (bytes_per_clock x share numerator, share denominator)
    std::vector<Line> held;  ///< sets x ways; a set's ways most recently used first, kNoLine when empty
    std::unordered_map<uint64_t, uint64_t> in_flight;  ///< no capacity: line -> fill cycle
    std::unordered_set<uint64_t> ever_held;            ///< a cache: every line it has held (first touches)
    Port port;
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> fills;  ///< outstanding misses' ready
  };
  using Path = std::vector<size_t>;  ///< instances from the nearest level to the memory

  Read read_level(const Path& path, size_t k, uint64_t address, uint64_t bytes, uint64_t now);
  Read access_line(const Path& path, size_t k, uint64_t line, uint64_t bytes, uint64_t now);
  void touch_level(const Path& path, size_t k, uint64_t address, uint64_t bytes);
  const uint64_t* find(Level& level, uint64_t line, uint64_t now);
  void keep(Level& level, uint64_t line, uint64_t ready);
  uint64_t serve(Level& level, uint64_t bytes, uint64_t now);
  static uint64_t miss_slot(Level& level, uint64_t now);
  size_t add_instance(const MemoryLevelConfig& config, size_t counted_as, bool memory, uint64_t share_num,
                      uint64_t share_den);

  std::vector<Level> levels_;  ///< every simulated instance of every level
  std::vector<Path> vector_paths_, scalar_paths_;  ///< per simulated CU
  std::vector<MemoryLevelResult> counts_;
};

}  // namespace hwbvh::emu::machine
