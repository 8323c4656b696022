#include "emu/machine/memory.h"

#include <algorithm>

namespace hwbvh::emu::machine {

uint32_t shader_array_of_slot(const GpuConfig& gpu, uint32_t slot) {
  const uint32_t engine = slot % gpu.shader_engines;
  const uint32_t array = (slot / gpu.shader_engines) % gpu.shader_arrays_per_engine;
  return engine * gpu.shader_arrays_per_engine + array;
}

// Slot s is at array position s mod arrays (the arrays in dispatch order) and is that array's CU s / arrays; the
// sampled positions are floor(i x arrays / sampled), and the slots of CU c of the sampled arrays come before CU c + 1's.
uint32_t slot_of_simulated_cu(const GpuConfig& gpu, uint32_t cu) {
  const uint64_t arrays = gpu.shader_arrays();
  const uint64_t sampled = gpu.simulated_shader_arrays;
  return static_cast<uint32_t>(cu / sampled * arrays + cu % sampled * arrays / sampled);
}

std::optional<uint32_t> simulated_cu_of_slot(const GpuConfig& gpu, uint32_t slot) {
  const uint64_t arrays = gpu.shader_arrays();
  const uint64_t sampled = gpu.simulated_shader_arrays;
  const uint64_t position = slot % arrays;
  const uint64_t i = (position * sampled + arrays - 1) / arrays;  // the first sampled array not before `position`
  if (i < sampled && i * arrays / sampled == position) return static_cast<uint32_t>(slot / arrays * sampled + i);
  return std::nullopt;
}

MemoryHierarchy::MemoryHierarchy(const MemoryConfig& memory, const GpuConfig& gpu) {
  const uint32_t cus = gpu.simulated_cus();
  const bool scalar_cache = memory.scalar_cache.bytes > 0;
  std::vector<uint32_t> array_of(cus);
  for (uint32_t cu = 0; cu < cus; ++cu) array_of[cu] = shader_array_of_slot(gpu, slot_of_simulated_cu(gpu, cu));
  vector_paths_.resize(cus);
  scalar_paths_.resize(cus);
  for (size_t k = 0; k < memory.levels.size(); ++k) {
    const MemoryLevelConfig& c = memory.levels[k];
    const bool last = k + 1 == memory.levels.size();
    uint32_t instances = 1;
    std::vector<size_t> of_array(gpu.shader_arrays(), SIZE_MAX);
    size_t whole_gpu = SIZE_MAX;
    for (uint32_t cu = 0; cu < cus; ++cu) {
      size_t instance = 0;
      switch (c.shared_by) {
        case SharedBy::ComputeUnit:
          instance = add_instance(c, k, last, 1, 1);
          instances = gpu.compute_units();
          break;
        case SharedBy::ShaderArray: {
          const uint32_t array = array_of[cu];
          // The sample is whole shader arrays: an array's instance is never scaled.
          if (of_array[array] == SIZE_MAX) of_array[array] = add_instance(c, k, last, 1, 1);
          instance = of_array[array];
          instances = gpu.shader_arrays();
          break;
        }
        case SharedBy::Gpu:
          if (whole_gpu == SIZE_MAX) whole_gpu = add_instance(c, k, last, cus, gpu.compute_units());
          instance = whole_gpu;
          break;
      }
      vector_paths_[cu].push_back(instance);
      if (k > 0 || !scalar_cache) scalar_paths_[cu].push_back(instance);
    }
    counts_.push_back(MemoryLevelResult{
        .name = c.name,
        .kind = last ? MemoryLevelResult::Kind::Memory
                     : (c.bytes == 0 ? MemoryLevelResult::Kind::MergeBuffer : MemoryLevelResult::Kind::Cache),
        .port_bytes_per_clock = uint64_t{c.bytes_per_clock} * instances,
        .simulated_share = static_cast<double>(cus) / gpu.compute_units()});
  }
  if (scalar_cache) {
    for (uint32_t cu = 0; cu < cus; ++cu) {
      scalar_paths_[cu].insert(scalar_paths_[cu].begin(), add_instance(memory.scalar_cache, counts_.size(), false, 1, 1));
    }
    counts_.push_back(MemoryLevelResult{.name = memory.scalar_cache.name,
                                        .kind = MemoryLevelResult::Kind::Cache,
                                        .port_bytes_per_clock = uint64_t{memory.scalar_cache.bytes_per_clock} *
                                                                gpu.compute_units(),
                                        .simulated_share = static_cast<double>(cus) / gpu.compute_units()});
  }
}

// An instance of which `share_num` of `share_den` CUs are simulated keeps that share of its bandwidth, of its
// capacity (whole sets, at least one) and of its miss slots (at least one).
size_t MemoryHierarchy::add_instance(const MemoryLevelConfig& c, size_t counted_as, bool memory, uint64_t share_num,
                                     uint64_t share_den) {
  Level l;
  l.config = c;
  l.counted_as = counted_as;
  l.memory = memory;
  const uint64_t sets = c.bytes / (uint64_t{c.line_bytes} * c.ways);
  l.sets = sets == 0 ? 0 : std::max<uint64_t>(1, sets * share_num / share_den);
  l.held.resize(l.sets * c.ways);
  l.misses_in_flight = static_cast<uint32_t>(std::max<uint64_t>(1, c.misses_in_flight * share_num / share_den));
  l.slots_per_cycle = uint64_t{c.bytes_per_clock} * share_num;
  l.slots_per_byte = share_den;
  levels_.push_back(std::move(l));
  return levels_.size() - 1;
}

MemoryHierarchy::Read MemoryHierarchy::read(uint32_t cu, uint64_t address, uint32_t bytes, uint64_t now,
                                            bool scalar) {
  return read_level(scalar ? scalar_paths_[cu] : vector_paths_[cu], 0, address, bytes, now);
}

MemoryHierarchy::Read MemoryHierarchy::read_level(const Path& path, size_t k, uint64_t address, uint64_t bytes,
                                                  uint64_t now) {
  const uint64_t line_bytes = levels_[path[k]].config.line_bytes;
  Read r{now, static_cast<uint32_t>(k)};
  for (uint64_t line = address / line_bytes; line <= (address + bytes - 1) / line_bytes; ++line) {
    const uint64_t begin = std::max(address, line * line_bytes);
    const uint64_t end = std::min(address + bytes, (line + 1) * line_bytes);
    const Read part = access_line(path, k, line, end - begin, now);
    r.ready = std::max(r.ready, part.ready);
    r.level = std::max(r.level, part.level);
  }
  return r;
}

MemoryHierarchy::Read MemoryHierarchy::access_line(const Path& path, size_t k, uint64_t line, uint64_t bytes,
                                                   uint64_t now) {
  Level& level = levels_[path[k]];
  MemoryLevelResult& count = counts_[level.counted_as];
  ++count.requests;
  const uint64_t* held = level.memory ? nullptr : find(level, line, now);
  if (level.memory || held != nullptr) {
    ++(held != nullptr && *held > now ? count.merged : count.hits);
    count.bytes += bytes;
    const uint64_t ready = serve(level, bytes, now) + level.config.hit_latency;
    return {held != nullptr ? std::max(ready, *held) : ready, static_cast<uint32_t>(k)};
  }
  ++count.misses;
  if (level.sets > 0 && level.ever_held.insert(line).second) ++count.first_touches;
  const uint64_t start = miss_slot(level, now);
  const Read below = read_level(path, k + 1, line * level.config.line_bytes, level.config.line_bytes, start);
  keep(level, line, below.ready);
  level.fills.push(below.ready);
  return below;
}

void MemoryHierarchy::touch(uint32_t cu, uint64_t address, uint32_t bytes, bool scalar) {
  touch_level(scalar ? scalar_paths_[cu] : vector_paths_[cu], 0, address, bytes);
}

void MemoryHierarchy::touch_level(const Path& path, size_t k, uint64_t address, uint64_t bytes) {
  Level& level = levels_[path[k]];
  if (level.memory) return;
  const uint64_t line_bytes = level.config.line_bytes;
  for (uint64_t line = address / line_bytes; line <= (address + bytes - 1) / line_bytes; ++line) {
    if (level.sets > 0 && find(level, line, 0) != nullptr) continue;  // held: now the most recently used
    if (level.sets > 0) {
      keep(level, line, 0);
      level.ever_held.insert(line);
    }
    touch_level(path, k + 1, line * line_bytes, line_bytes);
  }
}

void MemoryHierarchy::reset_counts() {
  for (MemoryLevelResult& c : counts_) {
    c = MemoryLevelResult{.name = c.name,
                          .kind = c.kind,
                          .port_bytes_per_clock = c.port_bytes_per_clock,
                          .simulated_share = c.simulated_share};
  }
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

// The port transfers `bytes` in the earliest free slots from cycle `now` on; returns the cycle this transfer starts.
// A cycle holds slots_per_cycle slots and a byte takes slots_per_byte, so requests smaller than the port's width share
// its cycles, and a sampled share of a port (bytes_per_clock x n / N) stays exact.
uint64_t MemoryHierarchy::serve(Level& level, uint64_t bytes, uint64_t now) {
  Port& p = level.port;
  const uint64_t capacity = level.slots_per_cycle;
  uint64_t need = bytes * level.slots_per_byte;
  uint64_t cycle = now >= p.full_from && now < p.full_until ? p.full_until : now;
  uint64_t start = UINT64_MAX;
  for (; need > 0; ++cycle) {
    Port::Cycle& c = p.calendar[cycle & (Port::kWindow - 1)];
    if (c.cycle != cycle) c = {cycle, 0};
    if (c.used < capacity) {
      const uint64_t take = std::min(capacity - c.used, need);
      c.used += take;
      need -= take;
      start = std::min(start, cycle);
    }
    if (c.used < capacity) continue;
    if (cycle == p.full_until) {  // grow the run of full cycles, or start one here
      ++p.full_until;
    } else if (cycle + 1 == p.full_from) {
      p.full_from = cycle;
    } else if (cycle > p.full_until) {
      p.full_from = cycle;
      p.full_until = cycle + 1;
    }
  }
  return start;
}

// A miss needs a free miss slot: at `now` if one is, else when the oldest outstanding fill completes.
uint64_t MemoryHierarchy::miss_slot(Level& level, uint64_t now) {
  while (!level.fills.empty() && level.fills.top() <= now) level.fills.pop();
  if (level.fills.size() < level.misses_in_flight) return now;
  const uint64_t start = level.fills.top();
  level.fills.pop();
  return start;
}

}  // namespace hwbvh::emu::machine
