#pragma once
// The two sections of a two-level blob (docs/blob-format.md §12, §13), target-independent:
//   InstanceSideband (type 7): per instance node, in node order, the 64-byte record GPURT keeps beside RT IP 3.x
//     instance nodes (gpurt/gpurtAccelStruct.h, InstanceSidebandData): instance index, instance id and flags,
//     BLAS metadata size, object-to-world 3x4 matrix. Hits report the instance index it gives an instance node.
//   Levels (type 8): where each BLAS lies in the Nodes section and which Geometry-section triangles it holds, and per
//     instance node its BLAS and mask, so that tools (the Embree oracle, info, export) need no node decoder.
//   WorldBounds (type 9, format version 4; docs/blob-format.md §14): the exact world-space box of the scene's
//     triangles, the box a flattened build of the scene has, so that rays made from the bounds are the same for both.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/formats/rdna4/instance_node.h"

namespace hwbvh::blob {

inline constexpr std::size_t kSidebandRecordBytes = 64;
/// Levels start and end on whole 128-byte units (one RT IP 3.1 node): targets with 64-byte slots (rtip20, xe3)
/// pad each level's node section with zeros to this unit.
inline constexpr uint64_t kLevelUnitBytes = 128;
/// The bytes a level of `section_bytes` takes in the Nodes section, padding included.
constexpr uint64_t padded_level_bytes(uint64_t section_bytes) {
  return (section_bytes + kLevelUnitBytes - 1) / kLevelUnitBytes * kLevelUnitBytes;
}

/// GPURT's InstanceSidebandData (RT IP 3.x).
struct InstanceSideband {
  uint32_t instance_index = 0;      ///< the instance's index in the build input (DXR InstanceIndex())
  uint32_t instance_id = 0;         ///< 24 bits: DXR InstanceID() / Vulkan instanceCustomIndex
  uint32_t flags = 0;               ///< 8 bits: D3D12_RAYTRACING_INSTANCE_FLAGS
  uint32_t blas_metadata_size = 0;  ///< GPURT: bytes of driver metadata before the BLAS header; 0 here
  Mat3x4 object_to_world{};
  friend bool operator==(const InstanceSideband&, const InstanceSideband&) = default;
};

struct BlasRange {
  uint64_t address = 0;          ///< byte offset of the BLAS header in the Nodes section (128-aligned)
  uint64_t bytes = 0;            ///< its node bytes, header included (a multiple of 128)
  uint32_t first_geometry = 0;   ///< its geometries are SceneMeta / Geometry-section geometries first_geometry...
  uint32_t geometry_count = 0;   ///< ... first_geometry + geometry_count - 1, local ids 0..geometry_count - 1
  uint32_t first_triangle = 0;   ///< its triangles are Geometry-section triangles first_triangle ...
  uint32_t triangle_count = 0;   ///< ... first_triangle + triangle_count - 1
  friend bool operator==(const BlasRange&, const BlasRange&) = default;
};

struct InstanceLevel {
  uint32_t blas = 0;   ///< index into Levels::blases
  uint32_t mask = 0xFF;
  friend bool operator==(const InstanceLevel&, const InstanceLevel&) = default;
};

struct Levels {
  uint64_t top_bytes = 0;                ///< the top level's node bytes at the start of the Nodes section
  std::vector<BlasRange> blases;         ///< ascending by address, after the top level, not overlapping
  std::vector<InstanceLevel> instances;  ///< per instance node, in node order (as the sideband)
  friend bool operator==(const Levels&, const Levels&) = default;
};

std::vector<std::byte> encode_instance_sideband(std::span<const InstanceSideband> records);
/// Decodes and validates: whole records, instance indices a permutation of 0..n-1, ids and flags in range, finite
/// matrices. Throws hwbvh::Error(BadInput) naming `file`.
std::vector<InstanceSideband> decode_instance_sideband(std::span<const std::byte> bytes, const std::string& file);

std::vector<std::byte> encode_levels(const Levels& levels);
/// Decodes and validates against the Nodes section's size and the Geometry section's counts: BLASes 128-aligned,
/// inside the section, after the top level and each other; geometry and triangle ranges inside the Geometry
/// section; instance BLAS indices in range, masks 8-bit. Throws hwbvh::Error(BadInput) naming `file`.
Levels decode_levels(std::span<const std::byte> bytes, const std::string& file, uint64_t node_bytes,
                     uint32_t geometry_count, uint32_t triangle_count);

/// Six f32: min x, y, z, max x, y, z.
std::vector<std::byte> encode_world_bounds(const Aabb& bounds);
/// Decodes and validates: 24 bytes, finite, min <= max on every axis. Throws hwbvh::Error(BadInput) naming `file`.
Aabb decode_world_bounds(std::span<const std::byte> bytes, const std::string& file);

}  // namespace hwbvh::blob
