#include "emu/machine/node_cache.h"

#include <algorithm>

namespace hwbvh::emu::machine {

NodeCache::NodeCache(uint32_t lines, uint32_t hit_latency, uint32_t miss_latency)
    : capacity_(lines), hit_latency_(hit_latency), miss_latency_(miss_latency) {
  entries_.reserve(lines);
  index_.reserve(lines);
}

void NodeCache::unlink(uint32_t e) {
  Entry& x = entries_[e];
  (x.prev == kNone ? head_ : entries_[x.prev].next) = x.next;
  (x.next == kNone ? tail_ : entries_[x.next].prev) = x.prev;
  x.prev = x.next = kNone;
}

void NodeCache::push_front(uint32_t e) {
  Entry& x = entries_[e];
  x.prev = kNone;
  x.next = head_;
  (head_ == kNone ? tail_ : entries_[head_].prev) = e;
  head_ = e;
}

uint64_t NodeCache::access(uint64_t line, uint64_t now) {
  if (const auto it = index_.find(line); it != index_.end()) {
    ++hits_;
    const uint32_t e = it->second;
    unlink(e);
    push_front(e);
    return std::max(now + hit_latency_, entries_[e].ready);
  }
  ++misses_;
  uint32_t e;
  if (entries_.size() < capacity_) {
    e = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
  } else {
    e = tail_;
    unlink(e);
    index_.erase(entries_[e].line);
  }
  entries_[e].line = line;
  entries_[e].ready = now + miss_latency_;
  index_.emplace(line, e);
  push_front(e);
  return entries_[e].ready;
}

}  // namespace hwbvh::emu::machine
