#include "hwbvh/emu/machine/vgpr.h"

#include <algorithm>
#include <string>

#include "hwbvh/core/error.h"

namespace hwbvh::emu {

uint32_t static_waves_per_simd(uint32_t vgprs, uint32_t granule, uint32_t file_vgprs, uint32_t slots) {
  const uint32_t granules = std::max<uint32_t>(1, (vgprs + granule - 1) / granule);
  return std::min(slots, file_vgprs / (granules * granule));
}

DynamicVgprFile::DynamicVgprFile(const DynamicVgprParams& params) : params_(params), slots_(params.wave_limit) {
  if (params.file_vgprs == 0 || params.block_vgprs == 0 || params.max_blocks == 0 || params.wave_limit == 0) {
    throw_bad_input("", "dynamic VGPRs: file size, block size, max blocks and wave limit must be positive");
  }
  const uint64_t slot_vgprs = uint64_t{params.wave_limit} * params.block_vgprs;
  const uint64_t reserve_vgprs =
      params.deadlock_avoidance ? uint64_t{params.max_blocks - 1} * params.block_vgprs : 0;
  if (slot_vgprs + reserve_vgprs > params.file_vgprs) {
    throw_bad_input("", "dynamic VGPRs: " + std::to_string(params.wave_limit) + " slots of " +
                            std::to_string(params.block_vgprs) + " VGPRs" +
                            (reserve_vgprs > 0 ? " plus the avoidance reserve" : "") + " exceed the " +
                            std::to_string(params.file_vgprs) + "-VGPR file");
  }
  pool_blocks_ = static_cast<uint32_t>((params.file_vgprs - slot_vgprs - reserve_vgprs) / params.block_vgprs);
  reserve_blocks_ = static_cast<uint32_t>(reserve_vgprs / params.block_vgprs);
  free_pool_ = pool_blocks_;
  free_reserve_ = reserve_blocks_;
}

uint32_t DynamicVgprFile::blocks_for(uint32_t vgprs) const {
  return std::max<uint32_t>(1, (vgprs + params_.block_vgprs - 1) / params_.block_vgprs);
}

std::optional<uint32_t> DynamicVgprFile::launch() {
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].busy) {
      slots_[i] = Slot{true, 0, 0};
      return i;
    }
  }
  return std::nullopt;
}

uint32_t DynamicVgprFile::held_blocks(uint32_t slot) const {
  const Slot& s = slots_.at(slot);
  return s.busy ? 1 + s.pool + s.reserve : 0;
}

uint32_t DynamicVgprFile::free_slots() const {
  return static_cast<uint32_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.busy; }));
}

void DynamicVgprFile::release(Slot& s, uint32_t slot, uint32_t blocks) {
  // The reserve refills first, so that the next wave in need can reach the maximum.
  const uint32_t from_reserve = std::min(blocks, s.reserve);
  s.reserve -= from_reserve;
  free_reserve_ += from_reserve;
  s.pool -= blocks - from_reserve;
  free_pool_ += blocks - from_reserve;
  if (s.reserve == 0 && owner_ == slot) owner_.reset();
  if (blocks > 0) ++version_;
}

bool DynamicVgprFile::s_alloc_vgpr(uint32_t slot, uint32_t vgprs) {
  Slot& s = slots_.at(slot);
  if (!s.busy) throw Error(ErrorKind::Runtime, "", "s_alloc_vgpr on an empty slot");
  const uint32_t target = blocks_for(vgprs);
  const uint32_t held = 1 + s.pool + s.reserve;
  if (target <= held) {
    release(s, slot, held - target);
    return true;
  }
  if (target > params_.max_blocks) return false;
  const uint32_t need = target - held;
  if (need <= free_pool_) {
    s.pool += need;
    free_pool_ -= need;
  } else if (params_.deadlock_avoidance && (!owner_ || *owner_ == slot) && need <= free_pool_ + free_reserve_) {
    const uint32_t from_reserve = need - free_pool_;
    s.pool += free_pool_;
    free_pool_ = 0;
    s.reserve += from_reserve;
    free_reserve_ -= from_reserve;
    owner_ = slot;
  } else {
    return false;
  }
  ++version_;
  return true;
}

void DynamicVgprFile::end_wave(uint32_t slot) {
  Slot& s = slots_.at(slot);
  release(s, slot, s.pool + s.reserve);
  s.busy = false;
  ++version_;  // a slot came free
}

}  // namespace hwbvh::emu
