#pragma once
// Xe3 InstanceLeaf encoder (docs/xe3-format.md, "InstanceLeaf"): the top level's leaf, node type 1, 128 bytes, laid
// out as IGC's `InstanceLeaf<Xe3>` (IGC/AdaptorCommon/RayTracing/RTStackFormat.h). The unit reads bytes 0..63 while
// traversing; bytes 64..127 are for shaders.
//
//   DW0    [23:0] instanceContributionToHitGroupIndex   [31:24] geomMask (the instance mask)
//   DW1    [7:0] instFlags   [8] ComparisonMode   [15:9] ComparisonValue   [23:16] MBZ   [26:24] subType
//          [28:27] MBZ   [29] DisableOpacityCull   [30] OpaqueGeometry   [31] IgnoreRayMultiplier
//   8..15    startNodePtr (u64): the BLAS node traversal continues at; node type in [3:0]
//   16..51   world-to-object linear part, columns vx, vy, vz (3 x f32 each)
//   52..63   object-to-world translation
//   64..71   [47:0] bvhPtr: the BLAS the start node belongs to   [63:48] MBZ
//   72..75   instanceID (user value)   76..79 instanceIndex (the instance's number in the scene)
//   80..115  object-to-world linear part, columns vx, vy, vz
//   116..127 world-to-object translation
//
// IGC notes that the hardware keeps the translations swapped ("on purpose in first 64 bytes"): the unit maps a ray
// into the instance with bytes 16..63 alone, as o' = L (o - p), d' = L d (L = world-to-object linear part, p =
// object-to-world translation).
#include <array>
#include <cstdint>
#include <span>

#include "hwbvh/core/geometry.h"
#include "hwbvh/formats/xe3/layout.h"

namespace hwbvh::xe3 {

inline constexpr uint32_t kInstanceLeafBytes = 128;
inline constexpr uint32_t kInstanceLeafDwords = kInstanceLeafBytes / 4;
inline constexpr uint32_t kInstanceLeafBlocks = kInstanceLeafBytes / kBlockBytes;
using InstanceLeafDwords = std::array<uint32_t, kInstanceLeafDwords>;

/// instFlags (IGC's InstanceFlags): the DXR / Vulkan instance flags, bit for bit.
inline constexpr uint32_t kInstanceFlagTriangleCullDisable = 0x01;
inline constexpr uint32_t kInstanceFlagFrontCounterClockwise = 0x02;
inline constexpr uint32_t kInstanceFlagForceOpaque = 0x04;
inline constexpr uint32_t kInstanceFlagForceNonOpaque = 0x08;
inline constexpr uint32_t kInstanceFlagForce2StateStoc = 0x10;
inline constexpr uint32_t kInstanceFlagDisableStoc = 0x20;

struct InstanceLeafInput {
  uint32_t contribution = 0;   ///< 24 bits: instanceContributionToHitGroupIndex
  uint32_t mask = 0xFF;        ///< 8 bits
  uint32_t flags = 0;          ///< 8 bits: kInstanceFlag*
  uint64_t start_node = 0;     ///< startNodePtr: the BLAS root's address, its node type in [3:0]
  uint64_t bvh = 0;            ///< 48 bits: bvhPtr
  uint32_t instance_id = 0;
  uint32_t instance_index = 0;
  Mat3x4 world_to_object{};
  Mat3x4 object_to_world{};
};

/// Encodes the 128 bytes. Throws hwbvh::Error (Runtime: a caller bug) for a contribution above 24 bits, a mask or
/// flags above 8 bits, or a bvh pointer above 48 bits.
InstanceLeafDwords encode_instance_leaf(const InstanceLeafInput& input);

}  // namespace hwbvh::xe3
