#pragma once
// Private: OBB data tables of docs/rtip31-format.md, generated into obb_tables.cpp by gen_obb_tables.py.
#include <array>
#include <cstdint>

namespace hwbvh::rdna4::detail {

/// Appendix A stage 1: nine 6-bit codes per matrix, code of M[row][col] at bit 18*row + 6*col.
extern const std::array<uint64_t, 104> kObbStage1;
/// Appendix A stage 2: binary32 magnitudes indexed by code & 0x1F (entries 26..31 are 0).
extern const std::array<uint32_t, 32> kObbStage2;
/// Appendix B: axis-angle cell -> matrix index (127 = no OBB).
extern const std::array<uint8_t, 4096> kObbAxisAngleLut;

}  // namespace hwbvh::rdna4::detail
