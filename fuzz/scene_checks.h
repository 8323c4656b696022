#pragma once
// The invariants of a loaded Scene, shared by the scene-reading fuzz targets (fuzz_obj, fuzz_gltf).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "hwbvh/scene/scene.h"
#include "scene/text_lines.h"

namespace hwbvh::fuzz {

/// What every loaded scene promises: indices in range, finite positions, geometries that tile the triangles,
/// names valid UTF-8; for glTF, instances that tile the geometries.
inline void check_scene(const Scene& scene) {
  fuzz_check(!scene.triangles.empty(), "a loaded scene has triangles");
  for (const Vec3& p : scene.positions)
    fuzz_check(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z), "positions are finite");
  uint32_t next = 0;
  for (const Geometry& g : scene.geometries) {
    fuzz_check(g.first_triangle == next && g.triangle_count > 0, "geometries are contiguous and non-empty");
    next += g.triangle_count;
    fuzz_check(scene::valid_utf8(g.name) == g.name, "geometry names are valid UTF-8");
  }
  fuzz_check(next == scene.triangles.size(), "geometries cover every triangle");
  for (const Triangle& t : scene.triangles) {
    for (int k = 0; k < 3; ++k) {
      fuzz_check(t.v[k] < scene.positions.size(), "vertex index in range");
      fuzz_check(t.uv[k] == kNoIndex || t.uv[k] < scene.texcoords.size(), "texcoord index in range");
    }
    fuzz_check(t.geometry < scene.geometries.size(), "geometry id in range");
    fuzz_check(t.primitive < scene.geometries[t.geometry].triangle_count, "primitive id in range");
    fuzz_check(t.material == kNoIndex || t.material < scene.materials.size(), "material in range");
  }
  for (const Material& m : scene.materials) {
    fuzz_check(m.alpha_texture == kNoIndex || m.alpha_texture < scene.alpha_textures.size(), "alpha texture in range");
  }
  for (const AlphaTexture& t : scene.alpha_textures) {
    fuzz_check(t.alpha.size() == std::size_t{t.width} * t.height, "alpha textures hold width x height texels");
  }
  uint32_t geometry = 0;
  for (const SceneInstance& instance : scene.instances) {
    fuzz_check(instance.first_geometry == geometry && instance.primitives.size() == instance.geometry_count,
               "instances tile the geometries, one primitive each");
    geometry += instance.geometry_count;
  }
  fuzz_check(scene.instances.empty() || geometry == scene.geometries.size(), "instances cover every geometry");
}

}  // namespace hwbvh::fuzz
