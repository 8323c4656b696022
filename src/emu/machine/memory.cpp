#include "emu/machine/memory.h"

#include <algorithm>

namespace hwbvh::emu::machine {

MemoryHierarchy::MemoryHierarchy(std::span<const MemoryLevelConfig> levels) {
  for (const MemoryLevelConfig& c : levels) {
    Level l;
    l.config = c;
    l.sets = c.bytes / (uint64_t{c.line_bytes} * c.ways);
    l.held.resize(l.sets * c.ways);
    levels_.push_back(std::move(l));
    const bool memory = counts_.size() + 1 == levels.size();
    counts_.push_back(MemoryLevelResult{
        .name = c.name,
        .kind = memory ? MemoryLevelResult::Kind::Memory
                       : (c.bytes == 0 ? MemoryLevelResult::Kind::MergeBuffer : MemoryLevelResult::Kind::Cache),
        .port_bytes_per_clock = c.bytes_per_clock});
  }
}

MemoryHierarchy::Read MemoryHierarchy::read(uint64_t address, uint32_t bytes, uint64_t now) {
  return read_level(0, address, bytes, now);
}

MemoryHierarchy::Read MemoryHierarchy::read_level(size_t k, uint64_t address, uint64_t bytes, uint64_t now) {
  const uint64_t line_bytes = levels_[k].config.line_bytes;
  Read r{now, static_cast<uint32_t>(k)};
  for (uint64_t line = address / line_bytes; line <= (address + bytes - 1) / line_bytes; ++line) {
    const uint64_t begin = std::max(address, line * line_bytes);
    const uint64_t end = std::min(address + bytes, (line + 1) * line_bytes);
    const Read part = access_line(k, line, end - begin, now);
    r.ready = std::max(r.ready, part.ready);
    r.level = std::max(r.level, part.level);
  }
  return r;
}

MemoryHierarchy::Read MemoryHierarchy::access_line(size_t k, uint64_t line, uint64_t bytes, uint64_t now) {
  Level& level = levels_[k];
  MemoryLevelResult& count = counts_[k];
  ++count.requests;
  const bool memory = k + 1 == levels_.size();
  const uint64_t* held = memory ? nullptr : find(level, line, now);
  if (memory || held != nullptr) {
    ++(held != nullptr && *held > now ? count.merged : count.hits);
    count.bytes += bytes;
    const uint64_t ready = serve(level, bytes, now) + level.config.hit_latency;
    return {held != nullptr ? std::max(ready, *held) : ready, static_cast<uint32_t>(k)};
  }
  ++count.misses;
  if (level.sets > 0 && level.ever_held.insert(line).second) ++count.first_touches;
  const uint64_t start = miss_slot(level, now);
  const Read below = read_level(k + 1, line * level.config.line_bytes, level.config.line_bytes, start);
  keep(level, line, below.ready);
  level.fills.push(below.ready);
  return below;
}

// The line's fill cycle if the level has it (a cache: held, made the most recently used; no capacity: in flight).
const uint64_t* MemoryHierarchy::find(Level& level, uint64_t line, uint64_t now) {
  if (level.sets == 0) {
    const auto it = level.in_flight.find(line);
    if (it == level.in_flight.end()) return nullptr;
    if (it->second > now) return &it->second;
    level.in_flight.erase(it);
    return nullptr;
  }
  const auto set = level.held.begin() + static_cast<std::ptrdiff_t>((line % level.sets) * level.config.ways);
  const auto end = set + level.config.ways;
  const auto it = std::find_if(set, end, [&](const Line& l) { return l.line == line; });
  if (it == end) return nullptr;
  std::rotate(set, it, it + 1);
  return &set->ready;
}

void MemoryHierarchy::keep(Level& level, uint64_t line, uint64_t ready) {
  if (level.sets == 0) {
    level.in_flight[line] = ready;
    return;
  }
  // The least recently used way (or an empty one) goes; the new line is the most recently used.
  const auto set = level.held.begin() + static_cast<std::ptrdiff_t>((line % level.sets) * level.config.ways);
  std::rotate(set, set + level.config.ways - 1, set + level.config.ways);
  *set = Line{line, ready};
}

// The port transfers `bytes` in arrival order, `bytes_per_clock` a cycle; returns the cycle this transfer starts.
// Time on the port is kept in byte slots, so requests smaller than the port's width share its cycles.
uint64_t MemoryHierarchy::serve(Level& level, uint64_t bytes, uint64_t now) {
  const uint64_t width = level.config.bytes_per_clock;
  const uint64_t start = std::max(now * width, level.port_free);
  level.port_free = start + bytes;
  return start / width;
}

// A miss needs a free miss slot: at `now` if one is, else when the oldest outstanding fill completes.
uint64_t MemoryHierarchy::miss_slot(Level& level, uint64_t now) {
  while (!level.fills.empty() && level.fills.top() <= now) level.fills.pop();
  if (level.fills.size() < level.config.misses_in_flight) return now;
  const uint64_t start = level.fills.top();
  level.fills.pop();
  return start;
}

}  // namespace hwbvh::emu::machine
