#pragma once
// DS_BVH_STACK_PUSH8_POP1_RTN_B32 and DS_BVH_STACK_PUSH8_POP2_RTN_B64 as emulated
// (docs/rtip31-format.md §6, GPURT's rtip3_ds_stack_emulation): a per-lane ring of node pointers in LDS
// plus a packed 32-bit stack address that travels in a VGPR.
//
//   packed address:  [31] blas_to_tlas_pop  [30] overflowed  [29] tlas_in_stack  [28:15] base
//                    [14:10] write index  [9:5] entries pushed since entering the BLAS  [4:0] valid entries
//
// A push onto a full ring overwrites the oldest entry and sets `overflowed`; an empty ring then pops
// INVALID_NODE (the traversal walks back through parent pointers) instead of TERMINAL_NODE (done).
// The hardware ring has 16 entries; other sizes (2..64) are for experiments. The packed form is exact only for
// rings of at most 16 entries (the count fields are 5 bits wide).
#include <array>
#include <cstdint>
#include <span>

#include "hwbvh/emu/counters.h"

namespace hwbvh::emu {
namespace detail {
struct StackOps;  // the inline hot path (src/emu/rtip31/stack_ops.h)
}

inline constexpr uint32_t kHardwareStackSize = 16;  ///< entries per lane (GPURT, RADV)
inline constexpr uint32_t kMaxStackSize = 64;

struct StackOptions {
  uint32_t size = kHardwareStackSize;  ///< ring entries per lane, 2..64

  /// Throws hwbvh::Error(BadInput) if size is outside 2..64.
  void validate() const;
};

/// The fields of the packed stack address (§6.2).
struct StackAddress {
  uint32_t valid_count = 0;  ///< live entries, saturates at the ring size
  uint32_t to_tlas = 0;      ///< live entries pushed since the current BLAS was entered (saturating)
  uint32_t write_index = 0;  ///< ring index of the next push
  uint32_t base = 0;         ///< LDS base (14 bits; not used by the emulation)
  bool tlas_in_stack = false;
  bool overflowed = false;
  bool blas_to_tlas_pop = false;  ///< set by the pop of this instruction when it crossed back into the TLAS

  /// The 32-bit VGPR value (fields masked to their widths).
  [[nodiscard]] uint32_t pack() const;
  static StackAddress unpack(uint32_t packed);
  friend bool operator==(const StackAddress&, const StackAddress&) = default;
};

/// Stack traffic since construction (or since the last reset_traffic()).
struct StackTraffic {
  uint64_t pushes = 0;       ///< entries written to the ring
  uint64_t pops = 0;         ///< entries read back (a pop of an empty ring is not counted)
  uint64_t lost = 0;         ///< entries overwritten while still live, or dropped by the nested-instance rule
  uint32_t max_depth = 0;    ///< largest valid_count seen after a push8
};

/// Writes `traffic` into a ray's stack counters (stack_pushes, stack_pops, stack_lost, max_stack_depth).
inline void set_stack_counters(const StackTraffic& traffic, RayCounters& c) {
  c.stack_pushes = traffic.pushes;
  c.stack_pops = traffic.pops;
  c.stack_lost = traffic.lost;
  c.max_stack_depth = traffic.max_depth;
}

/// One lane's stack: the address word and its ring.
class LdsStack {
 public:
  /// Throws hwbvh::Error(BadInput) if the options are invalid.
  explicit LdsStack(const StackOptions& options = {}, uint32_t base = 0);

  /// push8 of §6.3: pushes the result slots of `data` after the walk-back / skip / range-update rules.
  /// `primitive_range` selects the RT IP 3.1 primitive-range behaviour (PUSH8_POP1 "PrimRangeEnabled").
  void push8(uint32_t last_node, const std::array<uint32_t, 8>& data, bool primitive_range);
  /// pop of §6.4, including the TLAS bookkeeping; TERMINAL_NODE or INVALID_NODE when empty.
  uint32_t pop();
  /// The second pop of PUSH8_POP2 (§6.5): INVALID_NODE without any change if the ring is empty, the top entry is
  /// an instance node, or popping would cross into the TLAS.
  uint32_t try_pop();

  [[nodiscard]] const StackAddress& address() const { return address_; }
  [[nodiscard]] uint32_t size() const { return size_; }
  /// Ring entry `i` (0..size-1), for tests and dumps.
  [[nodiscard]] uint32_t entry(uint32_t i) const { return ring_[i]; }
  [[nodiscard]] const StackTraffic& traffic() const { return traffic_; }

 private:
  friend struct detail::StackOps;
  /// push8's skip, walk-back and range-update rules (the cases StackOps::push8 does not take inline).
  void push8_rules(uint32_t last_node, std::span<const uint32_t, 8> data, bool primitive_range);

  uint32_t size_;
  StackAddress address_;
  /// Entries past size() are never read, so the constructor clears only the first size() (a stack is made per ray).
  std::array<uint32_t, kMaxStackSize> ring_;
  StackTraffic traffic_;
};

/// Emulates DS_BVH_STACK_PUSH8_POP1_RTN_B32: push8(last_node, data) then pop; returns the popped pointer,
/// TERMINAL_NODE (done) or INVALID_NODE (empty after an overflow: walk back). `primitive_range` = RT IP 3.1 mode.
uint32_t ds_bvh_stack_push8_pop1(LdsStack& stack, uint32_t last_node, const std::array<uint32_t, 8>& data,
                                 bool primitive_range = true);

/// Emulates DS_BVH_STACK_PUSH8_POP2_RTN_B64 (BVH4x2 traversal, §6.5): push8 without primitive ranges, then two
/// pops. Returns {first, second}; second is INVALID_NODE when only one node could be returned.
std::array<uint32_t, 2> ds_bvh_stack_push8_pop2(LdsStack& stack, uint32_t last_node,
                                                const std::array<uint32_t, 8>& data);

}  // namespace hwbvh::emu
