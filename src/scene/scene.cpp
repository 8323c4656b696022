#include "hwbvh/scene/scene.h"

#include <glm/geometric.hpp>
#include <glm/vec3.hpp>

#include "hwbvh/core/error.h"
#include "scene/text_lines.h"

namespace hwbvh {

using scene::lower_extension;

bool is_scene_file(const std::filesystem::path& path) {
  return is_instanced_scene_file(path) || lower_extension(path) == ".obj";
}

bool is_instanced_scene_file(const std::filesystem::path& path) {
  const std::string ext = lower_extension(path);
  return ext == ".gltf" || ext == ".glb";
}

AnyScene load_any_scene(const std::filesystem::path& path, const SceneLoadOptions& options, const WarningFn& warn,
                        const ProgressCallback& progress) {
  if (!is_instanced_scene_file(path)) return load_obj(path, warn, progress);
  announce(progress, "loading");
  if (options.flatten) return load_gltf(path, warn);
  return load_gltf_instanced(path, warn);
}

bool zero_area(Vec3 a, Vec3 b, Vec3 c) {
  // Double keeps the test exact for all but extreme coordinates: float differences and their products fit.
  const glm::dvec3 n = glm::cross(glm::dvec3(b) - glm::dvec3(a), glm::dvec3(c) - glm::dvec3(a));
  return n.x == 0.0 && n.y == 0.0 && n.z == 0.0;
}

bool Scene::is_degenerate(uint32_t tri) const { return zero_area(vertex(tri, 0), vertex(tri, 1), vertex(tri, 2)); }

uint32_t Scene::degenerate_count() const {
  uint32_t count = 0;
  for (uint32_t t = 0; t < triangles.size(); ++t) count += is_degenerate(t) ? 1u : 0u;
  return count;
}

Aabb Scene::bounds() const {
  Aabb box;
  for (uint32_t t = 0; t < triangles.size(); ++t) box.grow(triangle_bounds(vertex(t, 0), vertex(t, 1), vertex(t, 2)));
  return box;
}

}  // namespace hwbvh
