#pragma once
// The hot parts of the LDS stack (lds_stack.h), inline so that the traversal loop (traversal.cpp) compiles them into
// its own step; LdsStack's members are built on the same code. Internal to the emu module.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>

#include "hwbvh/emu/rtip31/lds_stack.h"
#include "hwbvh/formats/rdna4/node_pointer.h"
#include "emu/simd4.h"

namespace hwbvh::emu::detail {

struct StackOps {
  /// push8's common case, a box node's result outside walk-back: with last = INVALID_NODE there is no walk-back and
  /// no range update, and when no slot holds a sentinel other than INVALID_NODE (0xFFFFFFF8..0xFFFFFFFE) no skip
  /// rule fires either, so the general rules push exactly the slots that are not INVALID_NODE, slot 7 first. Gives
  /// those slots (bit k: slot k holds a pointer), or nothing when the general rules are needed.
  static std::optional<unsigned> plain_box_slots(uint32_t last, std::span<const uint32_t, 8> r) {
    if (last != rdna4::kInvalidNode || simd4::in_range_bits8(r.data(), rdna4::kEndSearch, 7) != 0) return {};
    return ~simd4::equal_bits8(r.data(), rdna4::kInvalidNode) & 0xFFu;
  }

  /// The pointers of the `live` slots, one per call, the highest slot first (push8's order); clears their bits.
  static auto highest_slot_first(unsigned& live, std::span<const uint32_t, 8> r) {
    return [&live, r] {
      const int k = 31 - std::countl_zero(live);
      live ^= 1u << k;
      return r[static_cast<unsigned>(k)];
    };
  }

  /// Stores `count` values of next() in the ring from index w on; gives the index after the last one.
  template <class Values>
  static uint32_t write_ring(LdsStack& s, uint32_t w, uint32_t count, Values next) {
    for (uint32_t i = 0; i < count; ++i) {
      s.ring_[w] = next();
      w = w + 1 == s.size_ ? 0 : w + 1;
    }
    return w;
  }

  /// `count` single pushes of the values next() returns, with the bookkeeping of as many single pushes.
  template <class Values>
  static void push_n(LdsStack& s, uint32_t count, Values next) {
    // A push onto a full ring loses the oldest live entry, and the TLAS entries are gone once a push finds
    // to_tlas == size (push i finds min(to_tlas + i, size)).
    StackAddress& a = s.address_;
    const uint32_t size = s.size_;
    const uint32_t room = size - a.valid_count;
    if (count > room) {
      a.overflowed = true;
      s.traffic_.lost += count - room;
    }
    if (count > size - a.to_tlas) a.tlas_in_stack = false;
    a.to_tlas = std::min(a.to_tlas + count, size);
    a.valid_count = std::min(a.valid_count + count, size);
    a.write_index = write_ring(s, a.write_index, count, next);
    s.traffic_.pushes += count;
    s.traffic_.max_depth = std::max(s.traffic_.max_depth, a.valid_count);
  }

  /// push8 of §6.3 (LdsStack::push8).
  static void push8(LdsStack& s, uint32_t last, std::span<const uint32_t, 8> r, bool primitive_range) {
    if (std::optional<unsigned> live = plain_box_slots(last, r)) {
      push_plain(s, r, *live);
      return;
    }
    s.push8_rules(last, r, primitive_range);
  }

  /// push8 in its common case (plain_box_slots): the `live` slots, the highest first.
  static void push_plain(LdsStack& s, std::span<const uint32_t, 8> r, unsigned live) {
    push_n(s, popcount8(live), highest_slot_first(live, r));
  }

  /// pop of §6.4 (LdsStack::pop).
  static uint32_t pop(LdsStack& s) {
    StackAddress& a = s.address_;
    a.blas_to_tlas_pop = a.to_tlas == 0 && a.tlas_in_stack;
    if (a.blas_to_tlas_pop) a.tlas_in_stack = false;
    if (a.valid_count == 0) {
      a.blas_to_tlas_pop = false;
      a.tlas_in_stack = false;
      return a.overflowed ? rdna4::kInvalidNode : rdna4::kTerminalNode;
    }
    a.to_tlas = a.to_tlas > 0 ? a.to_tlas - 1 : 0;
    --a.valid_count;
    a.write_index = a.write_index == 0 ? s.size_ - 1 : a.write_index - 1;
    const uint32_t x = s.ring_[a.write_index];
    ++s.traffic_.pops;
    if ((x & 7u) == rdna4::kTypeInstance) {  // entering a BLAS next
      if (a.tlas_in_stack) {                  // nested: the parent level's entries are dropped
        s.traffic_.lost += a.valid_count - std::min(a.valid_count, a.to_tlas);
        a.valid_count = a.to_tlas;
        a.overflowed = true;
      }
      a.tlas_in_stack = true;
      a.to_tlas = 0;
    }
    return x;
  }

  /// push8 then pop (ds_bvh_stack_push8_pop1). Always inline: the traversal step is its hot caller.
  [[gnu::always_inline]] static uint32_t push8_pop1(LdsStack& s, uint32_t last, std::span<const uint32_t, 8> r,
                                                    bool primitive_range) {
    if (std::optional<unsigned> live = plain_box_slots(last, r)) return push8_pop1_plain(s, r, *live);
    // A primitive node's result outside walk-back: push8 pushes at most the range's next pair, which the pop takes
    // right back. With room in the ring, and the pointer not an instance node (a pair never is), that is one store
    // and the counts of one push and one pop; without a next pair, the pop alone.
    if (continues_range(last, primitive_range)) {
      const std::optional<uint32_t> next = range_next(last, r);
      if (!next) return pop(s);  // push8 pushes nothing
      StackAddress& a = s.address_;
      if (a.valid_count < s.size_ && a.to_tlas < s.size_ && (*next & 7u) != rdna4::kTypeInstance) {
        s.ring_[a.write_index] = *next;
        s.traffic_.max_depth = std::max(s.traffic_.max_depth, a.valid_count + 1);
        a.blas_to_tlas_pop = false;
        ++s.traffic_.pushes;
        ++s.traffic_.pops;
        return *next;
      }
    }
    // An instance node's result outside walk-back (§7.3): the BLAS root or INVALID_NODE in slot 7, SKIP_0_7 in slot
    // 6 and nothing below, of which push8 pushes the root alone, if any (the skip code stops the rest).
    if (last == rdna4::kInvalidNode && r[6] == rdna4::kSkip0To7 &&
        (simd4::equal_bits8(r.data(), rdna4::kInvalidNode) & 0x3Fu) == 0x3Fu) {
      if (!rdna4::is_sentinel(r[7])) push_n(s, 1, [root = r[7]] { return root; });
      return pop(s);
    }
    push8(s, last, r, primitive_range);
    return pop(s);
  }

  /// push8_pop1 in push8's common case, a box node's result outside walk-back, with its pointer slots `live`
  /// known (plain_box_slots, or the intersector's IntersectResult::pointer_slots).
  [[gnu::always_inline]] static uint32_t push8_pop1_plain(LdsStack& s, std::span<const uint32_t, 8> r,
                                                          unsigned live) {
    // The pushes of the pointers and the pop takes the last one pushed, the lowest slot, right back. While the
    // ring has room for all of them, they leave the TLAS entries alone and the popped one is not an instance
    // node, that is the stores of the pushes plus the bookkeeping of n pushes and one pop, with none of the
    // full-ring and TLAS cases of push_n and pop.
    if (live == 0) return pop(s);  // nothing to push: push8 changes nothing
    const uint32_t n = popcount8(live);
    StackAddress& a = s.address_;
    const uint32_t size = s.size_;
    const uint32_t top = r[static_cast<unsigned>(std::countr_zero(live))];
    if (n <= size - a.valid_count && n <= size - a.to_tlas && (top & 7u) != rdna4::kTypeInstance) {
      const uint32_t w = write_ring(s, a.write_index, n, highest_slot_first(live, r));
      a.write_index = w == 0 ? size - 1 : w - 1;
      s.traffic_.max_depth = std::max(s.traffic_.max_depth, a.valid_count + n);
      a.valid_count += n - 1;
      a.to_tlas += n - 1;
      a.blas_to_tlas_pop = false;
      s.traffic_.pushes += n;
      ++s.traffic_.pops;
      return top;
    }
    push_plain(s, r, live);
    return pop(s);
  }

  /// push8's primitive-range case (§6.3): last = 0xFFFFFFF8 | nav, outside walk-back, continues the primitive
  /// range of the node in slot 7, and every other slot is skipped.
  static bool continues_range(uint32_t last, bool primitive_range) {
    return primitive_range && rdna4::is_sentinel(last) && (last & 4u) == 0;
  }

  /// What that case pushes (§6.3 advance): the next pair of the same node (pair 3 -> 4 is type 3 -> 8), or pair 0
  /// of the next 128-byte node; nothing when nav says END_OF_RANGE or slot 7 holds a sentinel.
  static std::optional<uint32_t> range_next(uint32_t last, std::span<const uint32_t, 8> r) {
    if ((last & 2u) != 0 || rdna4::is_sentinel(r[7])) return {};
    const uint32_t p = r[7];
    if ((last & 1u) != 0) return (p & ~0xFu) + 0x10u;  // END_OF_NODE
    return (p & 0xFu) == 3 ? (p ^ 0xBu) : p + 1;
  }

  /// Set bits of an 8-bit mask (std::popcount is a library call on x86-64 without POPCNT).
  static uint32_t popcount8(unsigned v) {
    v = v - ((v >> 1) & 0x55u);
    v = (v & 0x33u) + ((v >> 2) & 0x33u);
    return (v + (v >> 4)) & 0x0Fu;
  }
};

}  // namespace hwbvh::emu::detail
