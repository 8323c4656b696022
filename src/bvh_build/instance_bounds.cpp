#include "hwbvh/bvh_build/instance_bounds.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>

#include <glm/common.hpp>

namespace hwbvh::bvh_build {
namespace {

constexpr int kGrid = 4;
constexpr std::size_t kPointsPerCell = 8;

int cell_of(float v, float lo, float extent) {
  if (!(extent > 0.0f)) return 0;
  const int c = static_cast<int>((static_cast<double>(v) - lo) / extent * kGrid);
  return std::clamp(c, 0, kGrid - 1);
}

}  // namespace

std::vector<Vec3> cover_points(const Scene& mesh) {
  // Each used vertex once, in index order, so the points do not depend on how triangles share them.
  std::vector<uint32_t> used;
  used.reserve(mesh.triangles.size() * 3);
  for (const Triangle& t : mesh.triangles) used.insert(used.end(), std::begin(t.v), std::end(t.v));
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());

  const Aabb box = mesh.bounds();
  const Vec3 extent = box.extent();
  struct Cell {
    std::vector<Vec3> points;  // up to kPointsPerCell distinct positions, then cleared in favour of `bounds`
    Aabb bounds;
    bool overflowed = false;
  };
  std::array<Cell, kGrid * kGrid * kGrid> cells;
  for (uint32_t v : used) {
    const Vec3 p = mesh.positions[v];
    Cell& cell = cells[(cell_of(p.z, box.min.z, extent.z) * kGrid + cell_of(p.y, box.min.y, extent.y)) * kGrid +
                       cell_of(p.x, box.min.x, extent.x)];
    cell.bounds.grow(p);
    if (cell.overflowed || std::find(cell.points.begin(), cell.points.end(), p) != cell.points.end()) continue;
    if (cell.points.size() < kPointsPerCell) {
      cell.points.push_back(p);
    } else {
      cell.overflowed = true;
      cell.points.clear();
    }
  }
  std::vector<Vec3> out;
  for (const Cell& cell : cells) {
    if (!cell.overflowed) {
      out.insert(out.end(), cell.points.begin(), cell.points.end());
      continue;
    }
    const std::array<Vec3, 8> corners = cell.bounds.corners();
    out.insert(out.end(), corners.begin(), corners.end());
  }
  return out;
}

std::vector<Aabb> coarsen_boxes(std::vector<Aabb> boxes, std::size_t count) {
  Aabb all;
  for (const Aabb& b : boxes) all.grow(b);
  const float scale = range_scale(all);  // areas stay finite near the float range
  while (boxes.size() > std::max<std::size_t>(count, 1)) {
    std::size_t best_i = 0, best_j = 1;
    float best = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      for (std::size_t j = i + 1; j < boxes.size(); ++j) {
        Aabb merged = boxes[i];
        merged.grow(boxes[j]);
        if (const float area = merged.surface_area(scale); area < best) {
          best = area;
          best_i = i;
          best_j = j;
        }
      }
    }
    boxes[best_i].grow(boxes[best_j]);
    boxes.erase(boxes.begin() + static_cast<std::ptrdiff_t>(best_j));
  }
  return boxes;
}

Aabb transformed_bounds(std::span<const Vec3> points, const glm::dmat4& object_to_world) {
  // Rounding outward is monotonic, so the extremes are found in double and rounded once per side.
  constexpr double kInfD = std::numeric_limits<double>::infinity();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  glm::dvec3 lo(kInfD), hi(-kInfD);
  for (const Vec3& p : points) {
    const glm::dvec3 w = glm::dvec3(object_to_world * glm::dvec4(p.x, p.y, p.z, 1.0));
    lo = glm::min(lo, w);
    hi = glm::max(hi, w);
  }
  Aabb out;
  if (points.empty()) return out;
  for (int a = 0; a < 3; ++a) {
    out.min[a] = round_toward(lo[a], -kInf);
    out.max[a] = round_toward(hi[a], kInf);
  }
  return out;
}

}  // namespace hwbvh::bvh_build
