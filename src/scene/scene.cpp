#include "hwbvh/scene/scene.h"

#include <glm/geometric.hpp>
#include <glm/vec3.hpp>

namespace hwbvh {

bool Scene::is_degenerate(uint32_t tri) const {
  // Double keeps the test exact for all but extreme coordinates: float differences and their products fit.
  const glm::dvec3 a(vertex(tri, 0));
  const glm::dvec3 n = glm::cross(glm::dvec3(vertex(tri, 1)) - a, glm::dvec3(vertex(tri, 2)) - a);
  return n.x == 0.0 && n.y == 0.0 && n.z == 0.0;
}

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
