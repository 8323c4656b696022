#pragma once
// World bounds of an instance of a BLAS. The BLAS root box moved by the instance's matrix is loose under rotation
// (up to sqrt(3) per axis for a cube turned 45 degrees about two axes), and every extra box a ray enters in the top
// level costs an instance-node step and often a BLAS descent. GPURT bounds RT IP 3.1 instances the tight way too:
// from a k-DOP kept in the BLAS's metadata (`ComputeInstanceBoundsFromKdop`, src/shaders/KDOP.hlsl, used by
// EncodeTopLevelBuild.hlsl when tlasRefittingMode is Early). hwbvh keeps a small set of points per BLAS whose
// image under any affine map bounds the mesh's image, and bounds each instance by moving those.
#include <span>
#include <vector>

#include <glm/mat4x4.hpp>

#include "hwbvh/core/geometry.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

/// At most this many cover points per mesh: 64 grid cells of 8 points each.
inline constexpr std::size_t kMaxCoverPoints = 512;

/// Points whose bounds under any affine map contain the image of every vertex the mesh's triangles use (degenerate
/// triangles included): a 4x4x4 grid over the mesh's box sorts the vertices into cells, and a cell gives its
/// vertices when it has at most 8 distinct ones, else the eight corners of their bounds (an affine image of a box
/// lies in the bounds of its corners' images). Exact for small meshes, within a cell's size for large ones, and
/// never more than kMaxCoverPoints. Deterministic. Empty for a mesh without triangles.
std::vector<Vec3> cover_points(const Scene& mesh);

/// At most `count` boxes whose union covers `boxes`: the pair whose union has the least surface area is merged
/// until `count` remain (ties: the first pair in index order). For an RT IP 3.1 instance's filter node, from its
/// BLAS root's children: GPURT's filter mode takes the four nodes of the top two levels of the BLAS's binary tree
/// (`WriteBlasInstanceFilterNode`, EncodeHwBvh3_1.hlsl); the binary tree is gone once collapsed, so hwbvh groups
/// the wide root's children instead. Deterministic; `boxes` as they are when there are at most `count`.
std::vector<Aabb> coarsen_boxes(std::vector<Aabb> boxes, std::size_t count);

/// Bounds of `points` mapped by the affine `object_to_world`, computed in double and rounded outward to float, so
/// that they contain the exact image of every point.
Aabb transformed_bounds(std::span<const Vec3> points, const glm::dmat4& object_to_world);

}  // namespace hwbvh::bvh_build
