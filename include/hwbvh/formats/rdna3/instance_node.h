#pragma once
// RT IP 1.1 / 2.0 (RDNA 2 / RDNA 3) instance node: the top-level leaf, pointer type 6, 128 bytes, as GPURT writes it
// (gpurt src/shadersClean/common/InstanceDesc.hlsli, InstanceDesc; src/shadersClean/common/gfx10/
// InstanceNode1_0.hlsli, InstanceNode = InstanceDesc + InstanceSidebandData1_1). The intersect instruction does not
// read it: the traversal shader does (docs/rdna3-format.md, "Two levels").
//
//   bytes   0..47   world-to-object 3x4 matrix, row-major f32 (column 3 is the translation)
//   bytes  48..51   [23:0] instance id, [31:24] instance mask
//   bytes  52..55   [23:0] hit-group contribution, [31:24] D3D12 instance flags
//   bytes  56..63   BLAS base pointer: (BLAS header address >> 3) | pointer flags << 54 (GPURT's
//                   PackInstanceBasePointer; the same 64-bit form as RT IP 3.1, docs/rtip31-format.md §1.4)
//   bytes  64..67   instance index (DXR InstanceIndex())
//   bytes  68..71   BLAS node pointer: the node the shader enters the BLAS at (its root, 0x15)
//   bytes  72..75   BLAS metadata size (bytes of driver metadata before the BLAS header; 0 here)
//   bytes  76..79   zero
//   bytes  80..127  object-to-world 3x4 matrix, row-major f32
#include <cstdint>

#include "hwbvh/formats/rdna3/node_pointer.h"
#include "hwbvh/formats/rdna4/instance_node.h"

namespace hwbvh::rdna3 {

inline constexpr uint32_t kInstanceNodeBytes = 128;
using InstanceNodeDwords = BoxNodeDwords;  ///< 128 bytes, like an FP32 box node

struct InstanceNodeInput {
  Mat3x4 world_to_object{};
  uint32_t instance_id = 0;      ///< 24 bits
  uint32_t instance_mask = 0xFF;  ///< 8 bits
  uint32_t contribution = 0;     ///< 24 bits: hit-group contribution
  uint32_t instance_flags = 0;   ///< 8 bits: D3D12_RAYTRACING_INSTANCE_FLAGS
  uint64_t blas_base_pointer = 0;  ///< rdna4::make_base_pointer(BLAS header address, pointer flags)
  uint32_t instance_index = 0;
  uint32_t blas_node_pointer = kRootPointer;
  uint32_t blas_metadata_size = 0;
  Mat3x4 object_to_world{};
};

/// Encodes the 128-byte node. Throws hwbvh::Error (Runtime: a caller bug) if a field does not fit its bits.
InstanceNodeDwords encode_instance_node(const InstanceNodeInput& input);

}  // namespace hwbvh::rdna3
