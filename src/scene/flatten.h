#pragma once
// What the glTF reader and flatten() share: the bound on triangles, the one way a vertex moves into world space,
// and the refusal of scenes without area.
#include <cstdint>
#include <string>

#include <glm/mat4x4.hpp>

#include "hwbvh/core/geometry.h"

namespace hwbvh::scene {

/// Bound on the triangles of a flattened scene, and on the meshes' triangles of an instanced one: a small file can
/// place a mesh many times.
inline constexpr uint64_t kMaxTriangles = uint64_t{1} << 27;

/// `p` moved by `world` in double and rounded to float once; not finite where it leaves the float range.
inline Vec3 to_world(const glm::dmat4& world, const Vec3& p) {
  const glm::dvec4 w = world * glm::dvec4(glm::dvec3(p), 1.0);
  return {static_cast<float>(w.x), static_cast<float>(w.y), static_cast<float>(w.z)};
}

/// Throws hwbvh::Error (BadInput) naming `file` when all `total` triangles are degenerate: nothing to build.
void require_area(const std::string& file, uint64_t degenerate, uint64_t total);

}  // namespace hwbvh::scene
