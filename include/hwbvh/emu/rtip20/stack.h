#pragma once
// DS_BVH_STACK_RTN_B32 of RDNA 3 (RT IP 2.0; RDNA 4 calls it DS_BVH_STACK_PUSH4_POP1_RTN_B32) as GPURT's software
// emulation models it (docs/rtip31-format.md §6.6; docs/rdna3-format.md, `ds_bvh_stack_rtn`): one instruction
// takes the four results of a BVH4 intersect, pushes up to three of them and returns the fourth, or pops.
//
//   packed address: [31:18] stack base in dwords   [17:0] stack index (counts pushes minus pops, saturating at
//                   2^18 - 1); entry of index i at LDS base + (i mod size) x 128 bytes (the lanes of a wave interleave)
//
//   push4_pop1(last, x, y, z, w):
//     pushing is enabled if last == INVALID_NODE or last equals one of x, y, z, w;
//     for w, z, y in that order: a slot equal to `last` disables pushing from there on (stackless walk-back: only
//     the slots sorted after the node we came back from are re-pushed); otherwise a slot that is not INVALID_NODE
//     is written at index mod size and the index grows by one;
//     x is then returned directly if pushing is still enabled and x is not INVALID_NODE; otherwise pop:
//     index 0 -> TERMINAL_NODE; else the index shrinks by one and that entry is read and replaced by INVALID_NODE.
//
// A push onto a full ring silently overwrites the oldest entry. Because every pop leaves INVALID_NODE behind, popping
// down into the overwritten region returns INVALID_NODE, which tells the traversal to walk back through parent
// pointers. `last` = TERMINAL_NODE (never among the data) means "push nothing, just pop". The stack size is an
// instruction field (8, 16, 32 or 64 entries; GPURT uses 16); other sizes (2..64) are for experiments.
#include <array>
#include <cstdint>

#include "hwbvh/emu/rtip31/lds_stack.h"

namespace hwbvh::emu {

inline constexpr uint32_t kRdna3StackIndexMax = (1u << 18) - 1;

/// One lane's RDNA 3 stack: the packed address and its ring.
class Rdna3Stack {
 public:
  /// Throws hwbvh::Error(BadInput) if the options are invalid. `base_dwords` only fills the packed address.
  explicit Rdna3Stack(const StackOptions& options = {}, uint32_t base_dwords = 0);

  /// The instruction: pushes of `data` under the rules above, then the direct return of data[0] or a pop.
  uint32_t push4_pop1(uint32_t last_node, const std::array<uint32_t, 4>& data);
  /// The traversal's `stack address + 1` after a pop returned INVALID_NODE (GPURT, RADV): the index goes back up,
  /// so the overwritten region stays below it and every later drained stack reports INVALID_NODE again.
  void undo_invalid_pop();

  /// The 32-bit VGPR value: base << 18 | index.
  [[nodiscard]] uint32_t packed_address() const { return (base_ & 0x3FFFu) << 18 | index_; }
  [[nodiscard]] uint32_t index() const { return index_; }
  [[nodiscard]] uint32_t size() const { return size_; }
  /// Ring entry `i` (0..size-1), for tests and dumps.
  [[nodiscard]] uint32_t entry(uint32_t i) const { return ring_[i]; }
  /// pushes = entries written; pops = live entries read back (reading a replaced INVALID_NODE is not a pop);
  /// lost = pushes that overwrote a live entry; max_depth = most live entries after the pushes of one instruction.
  [[nodiscard]] const StackTraffic& traffic() const { return traffic_; }

 private:
  void push(uint32_t value);
  uint32_t pop();

  uint32_t size_;
  uint32_t base_;
  uint32_t index_ = 0;
  uint32_t live_ = 0;  ///< ring entries that are not INVALID_NODE
  std::array<uint32_t, kMaxStackSize> ring_;
  StackTraffic traffic_;
};

/// Emulates DS_BVH_STACK_RTN_B32 (push4_pop1): returns the next node, TERMINAL_NODE (done) or INVALID_NODE (popped
/// into entries lost to an overflow: walk back).
uint32_t ds_bvh_stack_rtn(Rdna3Stack& stack, uint32_t last_node, const std::array<uint32_t, 4>& data);

}  // namespace hwbvh::emu
