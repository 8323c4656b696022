#include "hwbvh/emu/rtip20/stack.h"

#include <algorithm>
#include <utility>

#include "hwbvh/formats/rdna3/node_pointer.h"

namespace hwbvh::emu {

using rdna3::kInvalidNode;

Rdna3Stack::Rdna3Stack(const StackOptions& options, uint32_t base_dwords) : size_(options.size), base_(base_dwords) {
  options.validate();
  ring_.fill(kInvalidNode);
}

void Rdna3Stack::push(uint32_t value) {
  uint32_t& slot = ring_[index_ % size_];
  if (slot != kInvalidNode) {
    ++traffic_.lost;  // the ring wrapped onto a live entry
  } else {
    ++live_;
  }
  slot = value;
  if (index_ != kRdna3StackIndexMax) ++index_;
  ++traffic_.pushes;
}

uint32_t Rdna3Stack::pop() {
  if (index_ == 0) return rdna3::kTerminalNode;
  --index_;
  const uint32_t value = std::exchange(ring_[index_ % size_], kInvalidNode);
  if (value != kInvalidNode) {
    --live_;
    ++traffic_.pops;
  }
  return value;
}

void Rdna3Stack::undo_invalid_pop() {
  if (index_ != kRdna3StackIndexMax) ++index_;
}

uint32_t Rdna3Stack::push4_pop1(uint32_t last, const std::array<uint32_t, 4>& data) {
  const bool no_last = last == kInvalidNode;
  bool enabled = no_last || std::find(data.begin(), data.end(), last) != data.end();
  for (int k = 3; k >= 1; --k) {  // w, z, y
    enabled = enabled && (no_last || data[k] != last);
    if (enabled && data[k] != kInvalidNode) push(data[k]);
  }
  traffic_.max_depth = std::max(traffic_.max_depth, live_);
  enabled = enabled && (no_last || data[0] != last);
  return enabled && data[0] != kInvalidNode ? data[0] : pop();
}

uint32_t ds_bvh_stack_rtn(Rdna3Stack& stack, uint32_t last_node, const std::array<uint32_t, 4>& data) {
  return stack.push4_pop1(last_node, data);
}

}  // namespace hwbvh::emu
