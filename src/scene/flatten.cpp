// flatten(): a two-level scene as one Scene in world space (scene.h), numbered as the one-level glTF reader did.
#include "scene/flatten.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <glm/matrix.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh {
namespace scene {

void require_area(const std::string& file, uint64_t degenerate, uint64_t total) {
  if (degenerate == total) {
    throw_bad_input(file, "all " + std::to_string(total) + " triangles are degenerate (zero area): nothing to build");
  }
}

}  // namespace scene

namespace {

// An instance's mesh positions in world space, as flatten() places them; refuses one that leaves the float range.
std::vector<Vec3> world_positions(const InstancedScene& in, const MeshInstance& instance) {
  const Scene& mesh = in.meshes[instance.mesh];
  std::vector<Vec3> out;
  out.reserve(mesh.positions.size());
  for (const Vec3& position : mesh.positions) {
    const Vec3 p = scene::to_world(instance.world, position);
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
      throw_bad_input(in.source, instance.name + ": a vertex moves beyond the float range in world space");
    }
    out.push_back(p);
  }
  return out;
}

// Index in the flattened scene's materials of each mesh's materials: the file's list when the scene has origins,
// otherwise each mesh's materials (and their alpha textures) appended in turn.
std::vector<std::vector<uint32_t>> place_materials(const InstancedScene& in, Scene& out) {
  std::vector<std::vector<uint32_t>> placed(in.meshes.size());
  if (!in.origins.empty()) {
    out.materials = in.materials;
    out.alpha_textures = in.alpha_textures;
    for (std::size_t m = 0; m < in.meshes.size(); ++m) placed[m] = in.origins[m].materials;
    return placed;
  }
  for (std::size_t m = 0; m < in.meshes.size(); ++m) {
    const auto first_texture = static_cast<uint32_t>(out.alpha_textures.size());
    const Scene& mesh = in.meshes[m];
    out.alpha_textures.insert(out.alpha_textures.end(), mesh.alpha_textures.begin(), mesh.alpha_textures.end());
    for (Material material : mesh.materials) {
      if (material.alpha_tested()) material.alpha_texture += first_texture;
      placed[m].push_back(static_cast<uint32_t>(out.materials.size()));
      out.materials.push_back(std::move(material));
    }
  }
  return placed;
}

}  // namespace

Scene flatten(const InstancedScene& in) {
  Scene out;
  out.source = in.source;
  const std::vector<std::vector<uint32_t>> materials = place_materials(in, out);
  for (const MeshInstance& instance : in.instances) {
    const Scene& mesh = in.meshes[instance.mesh];
    if (out.triangles.size() + mesh.triangles.size() > scene::kMaxTriangles) {
      throw_bad_input(in.source, "more than " + std::to_string(scene::kMaxTriangles) +
                                     " triangles once every instance is flattened");
    }
    SceneInstance placed{instance.name, instance.node, instance.mesh, instance.world,
                         static_cast<uint32_t>(out.geometries.size()), static_cast<uint32_t>(mesh.geometries.size()),
                         {}};
    if (in.origins.empty()) {
      for (uint32_t g = 0; g < placed.geometry_count; ++g) placed.primitives.push_back(g);
    } else {
      placed.mesh = in.origins[instance.mesh].mesh;
      placed.primitives = in.origins[instance.mesh].primitives;
    }
    const auto first_position = static_cast<uint32_t>(out.positions.size());
    const auto first_texcoord = static_cast<uint32_t>(out.texcoords.size());
    const auto first_triangle = static_cast<uint32_t>(out.triangles.size());
    const std::vector<Vec3> placed_positions = world_positions(in, instance);
    out.positions.insert(out.positions.end(), placed_positions.begin(), placed_positions.end());
    out.texcoords.insert(out.texcoords.end(), mesh.texcoords.begin(), mesh.texcoords.end());
    for (const Geometry& g : mesh.geometries) {
      out.geometries.push_back({instance.name + "/" + g.name, first_triangle + g.first_triangle, g.triangle_count});
    }
    // A mirroring matrix turns counter-clockwise into clockwise: swapping two corners keeps front faces front.
    const bool mirrored = glm::determinant(glm::dmat3(instance.world)) < 0.0;
    for (Triangle t : mesh.triangles) {
      for (int k = 0; k < 3; ++k) {
        t.v[k] += first_position;
        if (t.uv[k] != kNoIndex) t.uv[k] += first_texcoord;
      }
      if (mirrored) {
        std::swap(t.v[1], t.v[2]);
        std::swap(t.uv[1], t.uv[2]);
      }
      t.geometry += placed.first_geometry;
      if (t.material != kNoIndex) t.material = materials[instance.mesh][t.material];
      out.triangles.push_back(t);
    }
    out.instances.push_back(std::move(placed));
  }
  scene::require_area(out.source, out.degenerate_count(), out.triangles.size());
  return out;
}

namespace {

// The instance's exact world box: the vertices of its triangles that are not degenerate in world space.
Aabb exact_bounds(const InstancedScene& in, const MeshInstance& instance) {
  Aabb box;
  const std::vector<Vec3> world = world_positions(in, instance);
  for (const Triangle& t : in.meshes[instance.mesh].triangles) {
    const Vec3 a = world[t.v[0]], b = world[t.v[1]], c = world[t.v[2]];
    if (zero_area(a, b, c)) continue;
    box.grow(a);
    box.grow(b);
    box.grow(c);
  }
  return box;
}

// A box around every vertex of the mesh once to_world has moved it: the mesh box's corners moved in double, widened
// by far more than the double rounding of to_world's four-term sums (about 4 x 2^-53 of the terms' magnitudes), then
// rounded outward to float. Not finite when the instance may reach beyond the float range.
Aabb outer_bounds(const Aabb& mesh_box, const glm::dmat4& world) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Aabb out;
  for (int a = 0; a < 3; ++a) {
    double lo = world[3][a], hi = world[3][a], magnitude = std::abs(world[3][a]);
    for (int j = 0; j < 3; ++j) {
      const double m = world[j][a], p = m * mesh_box.min[j], q = m * mesh_box.max[j];
      lo += std::min(p, q);
      hi += std::max(p, q);
      magnitude += std::max(std::abs(p), std::abs(q));
    }
    const double margin = 1e-14 * magnitude;
    out.min[a] = round_toward(lo - margin, -kInf);
    out.max[a] = round_toward(hi + margin, kInf);
  }
  return out;
}

}  // namespace

Aabb world_bounds(const InstancedScene& in, const Executor& executor) {
  // The exact box is the union of the instances' exact boxes, but an instance whose outer box lies inside the union
  // of some exact boxes cannot change it. So: the exact boxes of the instances reaching furthest towards each side,
  // then the exact box of every instance poking out of their union (those near the scene's faces). A few thousand
  // instances of a million are then moved vertex by vertex instead of all of them.
  std::vector<Aabb> mesh_boxes(in.meshes.size());
  for (std::size_t m = 0; m < in.meshes.size(); ++m) mesh_boxes[m] = in.meshes[m].bounds();
  const std::size_t n = in.instances.size();
  std::vector<Aabb> outer(n);
  executor.for_each(0, n, [&](std::size_t i) { outer[i] = outer_bounds(mesh_boxes[in.instances[i].mesh], in.instances[i].world); },
                    256);
  // Each instance's exact box, once: `moved` marks those computed. Instances that may leave the float range go
  // first, in order, so that the first of them that does is the one the error names, as in flatten().
  std::vector<Aabb> exact_of(n);
  std::vector<char> moved(n, 0);
  const auto move = [&](std::size_t i) {
    exact_of[i] = exact_bounds(in, in.instances[i]);
    moved[i] = 1;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_finite(outer[i].min) || !is_finite(outer[i].max)) move(i);
  }
  if (n == 0) return {};
  for (int a = 0; a < 3; ++a) {
    std::size_t lowest = 0, highest = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (outer[i].min[a] < outer[lowest].min[a]) lowest = i;
      if (outer[i].max[a] > outer[highest].max[a]) highest = i;
    }
    if (!moved[lowest]) move(lowest);
    if (!moved[highest]) move(highest);
  }
  Aabb exact;
  for (std::size_t i = 0; i < n; ++i) exact.grow(exact_of[i]);
  executor.for_each(0, n, [&](std::size_t i) {
    if (!moved[i] && !exact.contains(outer[i])) exact_of[i] = exact_bounds(in, in.instances[i]);
  }, 64);
  for (const Aabb& box : exact_of) exact.grow(box);
  return exact;
}

}  // namespace hwbvh
