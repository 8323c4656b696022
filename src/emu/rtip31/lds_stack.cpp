#include "hwbvh/emu/rtip31/lds_stack.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/node_pointer.h"
#include "emu/rtip31/stack_ops.h"

namespace hwbvh::emu {
namespace {

using rdna4::is_sentinel;
using rdna4::kInvalidNode;

bool is_primitive_type(uint32_t p) { return (p & 7u) <= 3; }

}  // namespace

void StackOptions::validate() const {
  if (size < 2 || size > kMaxStackSize) {
    throw Error(ErrorKind::BadInput, "", "LDS stack size " + std::to_string(size) + " is outside 2..64");
  }
}

uint32_t StackAddress::pack() const {
  return (valid_count & 31u) | (to_tlas & 31u) << 5 | (write_index & 31u) << 10 | (base & 0x3FFFu) << 15 |
         uint32_t{tlas_in_stack} << 29 | uint32_t{overflowed} << 30 | uint32_t{blas_to_tlas_pop} << 31;
}

StackAddress StackAddress::unpack(uint32_t packed) {
  StackAddress a;
  a.valid_count = field(packed, 4, 0);
  a.to_tlas = field(packed, 9, 5);
  a.write_index = field(packed, 14, 10);
  a.base = field(packed, 28, 15);
  a.tlas_in_stack = field(packed, 29, 29) != 0;
  a.overflowed = field(packed, 30, 30) != 0;
  a.blas_to_tlas_pop = field(packed, 31, 31) != 0;
  return a;
}

LdsStack::LdsStack(const StackOptions& options, uint32_t base) : size_(options.size) {
  options.validate();
  address_.base = base;
  std::fill_n(ring_.begin(), size_, 0u);
}

void LdsStack::push8(uint32_t last, const std::array<uint32_t, 8>& r, bool primitive_range) {
  detail::StackOps::push8(*this, last, r, primitive_range);
}

void LdsStack::push8_rules(uint32_t last, std::span<const uint32_t, 8> r, bool primitive_range) {
  if (detail::StackOps::continues_range(last, primitive_range)) {
    if (const std::optional<uint32_t> next = detail::StackOps::range_next(last, r)) {
      detail::StackOps::push_n(*this, 1, [&] { return *next; });
    }
    return;
  }
  // A real node pointer as `last` means a walk-back re-visit: only the slots sorted after it are pushed. On RT IP
  // 3.1 every primitive slot counts as already visited, because primitives always sort first.
  const bool walkback = !is_sentinel(last);
  std::array<bool, 8> match{};  // only consulted on a walk-back
  bool any_match = false;
  if (walkback) {
    for (int k = 0; k < 8; ++k) {
      match[k] = r[k] == last || (primitive_range && is_primitive_type(r[k]));
      any_match = any_match || match[k];
    }
  }
  bool valid = !walkback || any_match;
  if (primitive_range) valid = valid || is_primitive_type(last);

  // The slots to push, in push order (slot 7 first), chosen without branches: which slots carry pointers varies
  // from step to step, so branches on it would be mispredicted. The pushes follow, in that order.
  std::array<uint32_t, 8> pushed;
  uint32_t count = 0;
  bool skip_lo = false, skip_hi = false;
  for (int k = 7; k >= 4; --k) {
    const uint32_t x = r[k];
    const bool sentinel = is_sentinel(x);
    const bool skip_code = sentinel && valid && !skip_hi;
    skip_lo = skip_lo || (skip_code && (x & 2u) == 0);
    skip_hi = skip_hi || (skip_code && (x & 4u) == 0);
    valid = valid && !(walkback && match[k]);
    pushed[count] = x;
    count += valid && !sentinel && !skip_hi ? 1 : 0;
  }
  for (int k = 3; k >= 0; --k) {
    const uint32_t x = r[k];
    const bool sentinel = is_sentinel(x);
    skip_lo = skip_lo || (sentinel && (x & 2u) == 0 && valid);
    valid = valid && !(walkback && match[k]);
    pushed[count] = x;
    count += valid && !sentinel && !skip_lo ? 1 : 0;
  }
  detail::StackOps::push_n(*this, count, [&, i = 0u]() mutable { return pushed[i++]; });
}

uint32_t LdsStack::pop() { return detail::StackOps::pop(*this); }

uint32_t LdsStack::try_pop() {
  StackAddress& a = address_;
  if ((a.to_tlas == 0 && a.tlas_in_stack) || a.valid_count == 0) return kInvalidNode;
  const uint32_t top = a.write_index == 0 ? size_ - 1 : a.write_index - 1;
  if ((ring_[top] & 7u) == rdna4::kTypeInstance) return kInvalidNode;
  a.to_tlas = a.to_tlas > 0 ? a.to_tlas - 1 : 0;
  --a.valid_count;
  a.write_index = top;
  ++traffic_.pops;
  return ring_[top];
}

uint32_t ds_bvh_stack_push8_pop1(LdsStack& stack, uint32_t last_node, const std::array<uint32_t, 8>& data,
                                 bool primitive_range) {
  return detail::StackOps::push8_pop1(stack, last_node, data, primitive_range);
}

std::array<uint32_t, 2> ds_bvh_stack_push8_pop2(LdsStack& stack, uint32_t last_node,
                                                const std::array<uint32_t, 8>& data) {
  stack.push8(last_node, data, false);
  uint32_t second = stack.pop();
  uint32_t first;
  if ((second & 7u) == 1) {  // triangle 1 of a pair node: also test triangle 0 of the same node
    first = second & ~7u;
  } else {
    first = stack.try_pop();
    if (first == kInvalidNode) std::swap(first, second);
  }
  return {first, second};
}

}  // namespace hwbvh::emu
