#pragma once
// VGPR allocation of one SIMD, static and dynamic (docs/machine-model.md §8; RDNA 4 ISA §3.3.3).
//
// Static: every wave holds its kernel's peak VGPR count, rounded up to the granule, for its whole life, so
//   waves per SIMD = min(slots, floor(file / roundup(V, granule)))        (granule 24 for wave32 on RDNA 4)
//
// Dynamic: the SQ_DYN_VGPR wave limit sets the slots; each slot owns one block whether or not a wave occupies it
// (a wave launches holding it). With deadlock avoidance, max_blocks - 1 further blocks are held back as a reserve
// that only one wave at a time may draw on, so that one wave can always reach the maximum. The rest of the file is
// the shared pool. S_ALLOC_VGPR sets a wave's allocation, rounded up to whole blocks; growing is all or nothing
// (SCC = 0 on failure, nothing changes), shrinking never fails, requests above max_blocks fail. The floor is the
// launch block ([UNCERTAIN] in §8.2: the ISA text allows 0 VGPRs, the opcode text says the SPI-granted block stays;
// the model keeps it). A grow takes pool blocks first and reserve blocks only for what the pool lacks; freed blocks
// refill the reserve first, and the wave stops owning the reserve when it holds none of its blocks.
//
//   pool blocks = floor((file - wave_limit x block - (avoidance ? (max_blocks - 1) x block : 0)) / block)
//   (1536 VGPRs, 16 slots: block 16 -> 73 with avoidance, 80 without; block 32 -> 25 / 32)
#include <cstdint>
#include <optional>
#include <vector>

namespace hwbvh::emu {

/// Waves per SIMD under static allocation: min(slots, floor(file_vgprs / roundup(vgprs, granule))); a kernel
/// using no VGPRs still takes one granule. Precondition: granule >= 1.
[[nodiscard]] uint32_t static_waves_per_simd(uint32_t vgprs, uint32_t granule, uint32_t file_vgprs, uint32_t slots);

struct DynamicVgprParams {
  uint32_t file_vgprs = 1536;
  uint32_t block_vgprs = 16;
  uint32_t max_blocks = 8;
  uint32_t wave_limit = 16;
  bool deadlock_avoidance = true;
};

/// One SIMD's register file in dynamic mode: slots, the shared pool and the avoidance reserve.
class DynamicVgprFile {
 public:
  /// Throws hwbvh::Error(BadInput) if a parameter is zero or the slots' blocks plus the reserve exceed the file.
  explicit DynamicVgprFile(const DynamicVgprParams& params);

  /// Blocks an S_ALLOC_VGPR of `vgprs` asks for: ceil(vgprs / block), at least 1 (the launch block).
  [[nodiscard]] uint32_t blocks_for(uint32_t vgprs) const;

  /// Starts a wave in the lowest free slot, holding that slot's block; nullopt if every slot is taken.
  [[nodiscard]] std::optional<uint32_t> launch();
  /// S_ALLOC_VGPR for the wave in `slot`: true (SCC = 1) if its allocation is now blocks_for(vgprs) blocks.
  bool s_alloc_vgpr(uint32_t slot, uint32_t vgprs);
  /// The wave in `slot` ends: all its blocks above the slot's own return, and the slot is free.
  void end_wave(uint32_t slot);

  [[nodiscard]] uint32_t held_blocks(uint32_t slot) const;  ///< including the slot's own block
  [[nodiscard]] uint32_t pool_blocks() const { return pool_blocks_; }
  [[nodiscard]] uint32_t free_pool_blocks() const { return free_pool_; }
  [[nodiscard]] uint32_t reserve_blocks() const { return reserve_blocks_; }
  [[nodiscard]] uint32_t free_reserve_blocks() const { return free_reserve_; }
  /// The slot whose wave holds reserve blocks, if any.
  [[nodiscard]] std::optional<uint32_t> reserve_owner() const { return owner_; }
  [[nodiscard]] uint32_t free_slots() const;
  /// Changes whenever blocks move (a successful grow, a shrink, a wave's end); a failed request leaves it as is.
  [[nodiscard]] uint64_t version() const { return version_; }
  [[nodiscard]] const DynamicVgprParams& params() const { return params_; }

 private:
  struct Slot {
    bool busy = false;
    uint32_t pool = 0;     ///< pool blocks held
    uint32_t reserve = 0;  ///< reserve blocks held
  };
  void release(Slot& s, uint32_t slot, uint32_t blocks);

  DynamicVgprParams params_;
  uint32_t pool_blocks_ = 0;
  uint32_t reserve_blocks_ = 0;
  uint32_t free_pool_ = 0;
  uint32_t free_reserve_ = 0;
  std::optional<uint32_t> owner_;
  std::vector<Slot> slots_;
  uint64_t version_ = 0;
};

}  // namespace hwbvh::emu
