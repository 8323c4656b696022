#pragma once
// A blob's BVH ready to trace, whatever its target: the node section as dwords, the scene bounds, and the
// Geometry section the oracle and shading read. trace() runs the target's emulator (RT IP 3.1, RT IP 2.0 or
// Xe3), which only ever sees `nodes`.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/blob/opacity_sections.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/scene/alpha_test.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu {

struct Bvh4Blases;   // rtip20/traversal.h
struct Bvh4Section;

struct LoadedBvh {
  std::string file;  ///< for messages
  blob::Target target = blob::Target::Rtip31;
  std::vector<uint32_t> nodes;  ///< the Nodes section
  uint32_t root = 0;            ///< rtip31: root pointer from the node-section header
  /// The scene's exact world bounds: its non-degenerate triangles' box, the same for a two-level blob and its
  /// flattened build (docs/blob-format.md §14); rays and the default camera derive from it (docs/rays.md).
  Aabb bounds;
  blob::GeometrySection geometry;
  std::optional<AlphaTest> alpha_test;     ///< from the AlphaTest section, if the blob has one
  std::optional<blob::StocSideband> stoc;  ///< rtip31: from the Stoc section, if present
  /// Two-level BVHs (the Levels and InstanceSideband sections): where the BLASes are and what each instance is.
  std::optional<blob::Levels> levels;
  std::vector<blob::InstanceSideband> sideband;  ///< per instance node, in node order

  LoadedBvh() = default;
  LoadedBvh(LoadedBvh&&) = default;
  LoadedBvh& operator=(LoadedBvh&&) = default;
  LoadedBvh(const LoadedBvh&) = delete;  // blas_table_ points into `nodes`
  LoadedBvh& operator=(const LoadedBvh&) = delete;

  /// The nodes a traversal starts in: the whole section, or a two-level BVH's top level with its BLASes.
  [[nodiscard]] NodeMemory memory() const {
    if (!blas_table_) return NodeMemory{nodes};
    return NodeMemory{std::span<const uint32_t>(nodes).first(levels->top_bytes / 4), blas_table_.get()};
  }
  [[nodiscard]] bool two_level() const { return levels.has_value(); }
  /// rtip20: the node section a traversal starts in (a two-level BVH's top level with its BLASes).
  [[nodiscard]] Bvh4Section bvh4_section() const;
  /// Instances of a two-level BVH (0 for a one-level one).
  [[nodiscard]] uint32_t instance_count() const { return static_cast<uint32_t>(sideband.size()); }
  /// The instance node number of instance `instance_index` (sideband order); instance_index itself when one-level.
  [[nodiscard]] uint32_t instance_node(uint32_t instance_index) const;
  /// The Geometry-section geometry id of a hit's (instance, geometry id): the BLAS's first geometry plus the id.
  [[nodiscard]] uint32_t global_geometry(uint32_t instance_index, uint32_t geometry_id) const;
  /// Traces rays with the emulator of this BVH's target, in the given waves (see wavefront.h). RT IP 2.0 groups
  /// rays in consecutive waves of 32 and ignores `wave_begin`.
  [[nodiscard]] TraceOutput trace(std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                                  const TraceOptions& options, const Executor& executor) const;
  /// The scene's vertices in world space (every instance's in a two-level BVH, moved by the sideband's matrices).
  [[nodiscard]] std::vector<Vec3> world_positions() const;
  /// Geometric normal (unnormalised, (v1 - v0) x (v2 - v0)) of the triangle with these ids (geometry ids as the
  /// Geometry section numbers them); zero if unknown. Object space in a two-level BVH.
  [[nodiscard]] Vec3 triangle_normal(uint32_t geometry_id, uint32_t primitive_id) const;
  /// The world-space geometric normal of a hit's triangle: triangle_normal through the instance's object-to-world
  /// matrix (normals transform by its inverse transpose); zero if unknown.
  [[nodiscard]] Vec3 hit_normal(const RayResult& hit) const;
  /// The surfaces secondary rays start from: per ray, its emulated hit's world position and hit_normal (never an
  /// oracle's: what is counted is what the emulator found); invalid for a miss. results[i] belongs to rays[i].
  [[nodiscard]] std::vector<SurfaceHit> surface_hits(std::span<const Ray> rays,
                                                     std::span<const RayResult> results) const;
  /// Index into geometry.triangles (= AlphaTest / StocSideband numbering) of the triangle with these ids; kNoIndex
  /// if unknown.
  [[nodiscard]] uint32_t triangle_index(uint32_t geometry_id, uint32_t primitive_id) const;

 private:
  friend LoadedBvh load_bvh(const blob::Blob& blob, const std::string& file);
  static void load_levels(const blob::Blob& blob, const std::string& file, LoadedBvh& out);
  std::vector<std::vector<uint32_t>> triangle_index_;  ///< [geometry][primitive] -> index into geometry.triangles
  std::unique_ptr<BlasTable> blas_table_;  ///< two-level: the BLASes' node memories inside `nodes`
  std::unique_ptr<Xe3Blases> xe3_blases_;  ///< two-level xe3: the same
  /// xe3: the section a traversal starts in (a two-level BVH's top level, with its BLASes).
  [[nodiscard]] Xe3Section xe3_section() const;
  std::shared_ptr<const Bvh4Blases> bvh4_blases_;  ///< two-level rtip20: the BLAS sections inside `nodes`
  std::vector<uint32_t> instance_node_;    ///< two-level: per instance index, its instance node number
};

/// Extracts the BVH of a blob. Throws hwbvh::Error(BadInput) naming `file` when a section is missing
/// or the node-section header is inconsistent.
LoadedBvh load_bvh(const blob::Blob& blob, const std::string& file);
/// Reads the file and extracts its BVH.
LoadedBvh load_bvh_file(const std::filesystem::path& path);

}  // namespace hwbvh::emu
