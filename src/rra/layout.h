#pragma once
// Byte layout of the chunks written and read here (docs/rra.md §2), shared by the writer and the reader.
#include <cstddef>
#include <cstdint>
#include <span>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/formats/rdna4/instance_node.h"

namespace hwbvh::rra::layout {

inline constexpr uint64_t kFileHeaderBytes = 32;  ///< magic, version, reserved, table offset, table size
inline constexpr uint64_t kChunkEntryBytes = 64;  ///< name[16], compression, version, 4 x u64, reserved u64
inline constexpr uint64_t kChunkNameBytes = 16;

// RawAccelStruct chunk header (RRA bvh/ibvh.h RawAccelStructRdfChunkHeader; RADV rra_accel_struct_chunk_header).
inline constexpr uint32_t kChunkHeaderBytes = 28;  ///< va lo, va hi, metadata offset, size, header offset, size, flags
inline constexpr uint32_t kChunkFlagBottomLevel = 1;

// Payload: driver metadata, then the GPURT AccelStructHeader, then the nodes (root at header byte 128).
inline constexpr uint32_t kMetadataBytes = 128;
/// The metadata bytes RRA is told to read: VA and size. RADV writes this much because older RRA versions
/// overwrote their own pointers when given more (radv_rra.c).
inline constexpr uint32_t kMetadataUsedBytes = 12;
inline constexpr uint32_t kHeaderBytes = 128;  ///< RRA dxr_definitions.h kAccelerationStructureHeaderSize
inline constexpr uint32_t kGeometryInfoBytes = 12;

// AccelStructHeader dwords (RRA bvh/rtip_common/gpurt_accel_struct.h).
inline constexpr int kHdrInfo = 0;  ///< bit 0: bottom level; [31:16] build flags
inline constexpr int kHdrMetadataSize = 1;
inline constexpr int kHdrSize = 2;  ///< bytes from the header to the end of the leaf-node list
inline constexpr int kHdrPrimitives = 3;
inline constexpr int kHdrActivePrimitives = 4;
inline constexpr int kHdrDescs = 6;
inline constexpr int kHdrGeometryType = 7;
inline constexpr uint32_t kGeometryTriangles = 0;  ///< Vulkan's VkGeometryTypeKHR, as RADV writes it
inline constexpr uint32_t kGeometryInstances = 2;
inline constexpr int kHdrInteriorNodes = 8;  ///< offsets from the header start, ascending
inline constexpr int kHdrLeafNodes = 9;
inline constexpr int kHdrGeometryInfo = 10;
inline constexpr int kHdrLeafPointers = 11;
inline constexpr int kHdrBoxNodes = 12;      ///< numInternalNodesFp32: the quantized BVH8 box nodes
inline constexpr int kHdrFp16Nodes = 13;
inline constexpr int kHdrLeafNodeCount = 14;  ///< RT IP 3.1: primitive nodes
inline constexpr int kHdrVersion = 15;
inline constexpr int kHdrRtIpLevel = 18;
inline constexpr int kHdrBounds = 19;  ///< six f32: min xyz, max xyz
inline constexpr int kHdrInfo2 = 25;   ///< bit 1: BVH8 box nodes
inline constexpr uint32_t kInfo2Bvh8 = 2;
/// accelStructVersion as RADV writes it (rt_driver_interface_version 8.0).
inline constexpr uint32_t kAccelStructVersion = 8u << 16;

/// Byte of an instance node's 64-bit BLAS base pointer (docs/rtip31-format.md §2.9).
inline constexpr uint32_t kInstanceBasePointer = 48;
inline constexpr uint32_t kInstanceMaskByte = 63;

/// Points the instance node at byte `node` of `bytes` at the BLAS header `address`, its instance flags kept: the
/// writer re-bases each to its BLAS chunk, the reader back to the BLAS's place in the node section.
inline void set_instance_blas_address(std::span<std::byte> bytes, std::size_t node, uint64_t address) {
  const uint64_t base_pointer = blob::load_le64(bytes, node + kInstanceBasePointer);
  blob::store_le64(bytes, node + kInstanceBasePointer,
                   rdna4::make_base_pointer(address, rdna4::base_pointer_flags(base_pointer)));
}

inline constexpr uint32_t kApiVulkan = 3;  ///< RADV's rra_file_api
inline constexpr uint32_t kApiInfoBytes = 8;
inline constexpr uint32_t kAsicInfoVersion = 1;  ///< RRA asic_info.cpp reads version 1 in RADV's layout
inline constexpr uint32_t kAsicInfoBytes = 568;

}  // namespace hwbvh::rra::layout
