#pragma once
// The binary Geometry section (docs/blob-format.md §7): the scene's positions and every triangle with its
// vertex indices, geometry id, primitive id and flags. Degenerate (zero-area) triangles are kept and flagged so
// that triangle numbering and ids match the source scene. Tools that need the scene without the nodes — the
// emulator's Embree oracle, `hwbvh dump` — read this section; nothing here depends on a hardware format.
//
//   u32 position_count P, u32 triangle_count T,
//   P x { f32 x, y, z },
//   T x { u32 v0, v1, v2, u32 geometry, u32 primitive, u32 flags }      (flags bit 0: degenerate; others 0)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::blob {

inline constexpr uint32_t kTriDegenerate = 1u;  ///< GeometrySection::Tri::flags bit: zero-area, kept out of the BVH

struct GeometrySection {
  struct Tri {
    uint32_t v[3]{};         ///< indices into positions
    uint32_t geometry = 0;   ///< geometry id (index into SceneMeta's geometries)
    uint32_t primitive = 0;  ///< primitive id inside its geometry
    uint32_t flags = 0;      ///< kTriDegenerate
    [[nodiscard]] bool degenerate() const { return (flags & kTriDegenerate) != 0; }
  };
  std::vector<Vec3> positions;
  std::vector<Tri> triangles;
};

/// Encodes all triangles of `scene` (degenerate ones included and flagged) with all its positions.
std::vector<std::byte> encode_geometry(const Scene& scene);

/// Decodes and validates a Geometry section: exact size, vertex indices in range, finite coordinates, no unknown
/// flag bits. Throws hwbvh::Error(BadInput) naming `file` and the problem.
GeometrySection decode_geometry(std::span<const std::byte> bytes, const std::string& file);

}  // namespace hwbvh::blob
