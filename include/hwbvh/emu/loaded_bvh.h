#pragma once
// A blob's BVH ready to trace: the node section as dwords with its root and scene bounds (from the node-section
// header), and the Geometry section the oracle and shading read. The emulator itself only ever sees `nodes`.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/intersect.h"

namespace hwbvh::emu {

struct LoadedBvh {
  std::string file;  ///< for messages
  blob::Target target = blob::Target::Rtip31;
  std::vector<uint32_t> nodes;  ///< the Nodes section
  uint32_t root = 0;            ///< root pointer from the node-section header
  Aabb bounds;                  ///< scene bounds from the node-section header
  blob::GeometrySection geometry;

  [[nodiscard]] NodeMemory memory() const { return NodeMemory{nodes}; }
  /// Geometric normal (unnormalised, (v1 - v0) x (v2 - v0)) of the triangle with these ids; zero if unknown.
  [[nodiscard]] Vec3 triangle_normal(uint32_t geometry_id, uint32_t primitive_id) const;

 private:
  friend LoadedBvh load_bvh(const blob::Blob& blob, const std::string& file);
  std::vector<std::vector<uint32_t>> triangle_index_;  ///< [geometry][primitive] -> index into geometry.triangles
};

/// Extracts the BVH of an RT IP 3.1 blob. Throws hwbvh::Error(BadInput) naming `file` when a section is missing
/// or the node-section header is inconsistent.
LoadedBvh load_bvh(const blob::Blob& blob, const std::string& file);
/// Reads the file and extracts its BVH.
LoadedBvh load_bvh_file(const std::filesystem::path& path);

}  // namespace hwbvh::emu
