#pragma once
// What the three whole-tree checks (rdna3/, rdna4/, xe3/ tree_check.cpp) share: the section and scene they walk, the
// capped problem list, the scene-side check of every decoded triangle (ids the scene has, vertices bit-identical in
// source order, reference counts), and the containment check of child boxes, which runs after the walk because it
// depends on the reference counts.
#include <array>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/tree_check.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::formats {

/// `v` as 0x%08X: how the checks print node pointers and raw dwords.
inline std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

/// Base of a format's tree walker; `Result` derives from TreeCheckSummary and adds the format's node counts.
template <class Result>
class TreeWalker {
 public:
  TreeWalker(std::span<const uint32_t> dwords, const Scene* scene, std::size_t max_problems)
      : dw_(dwords), scene_(scene), max_problems_(max_problems) {
    if (scene_) result_.triangle_references.assign(scene_->triangles.size(), 0);
  }

 protected:

  void problem(const std::string& what) {
    if (!full()) result_.problems.push_back(what);
  }
  [[nodiscard]] bool full() const { return result_.problems.size() >= max_problems_; }
  /// The result of a walk that cannot start: `error`, the section header's problem, alone.
  Result refuse(const std::string& error) {
    problem(error);
    return std::move(result_);
  }

  /// With a scene: the scene triangle that `geometry_id` and `primitive_id` name, counted as one more reference, if
  /// the scene has it and `vertices` are bit-identical to its vertices in source order. kNoIndex otherwise, with a
  /// problem that starts with `where`, and always kNoIndex without a scene.
  uint32_t scene_triangle(const std::string& where, uint32_t geometry_id, uint32_t primitive_id,
                          const std::array<Vec3, 3>& vertices) {
    if (!scene_) return kNoIndex;
    if (geometry_id >= scene_->geometries.size() || primitive_id >= scene_->geometries[geometry_id].triangle_count) {
      problem(where + " names geometry " + std::to_string(geometry_id) + " primitive " + std::to_string(primitive_id) +
              ", which the scene does not have");
      return kNoIndex;
    }
    const uint32_t tri = scene_->geometries[geometry_id].first_triangle + primitive_id;
    ++result_.triangle_references[tri];
    for (int k = 0; k < 3; ++k) {
      const Vec3 expected = scene_->vertex(tri, k), v = vertices[static_cast<std::size_t>(k)];
      if (float_bits(v.x) != float_bits(expected.x) || float_bits(v.y) != float_bits(expected.y) ||
          float_bits(v.z) != float_bits(expected.z)) {
        problem(where + ": triangle " + std::to_string(tri) + " does not decode bit-identically in source order");
        return kNoIndex;
      }
    }
    return tri;
  }

  /// With a scene, records for check_containment that child `slot` of the node named `node` has the box `box`, in
  /// the frame numbered `frame`, and the scene triangles `triangles` below it.
  void add_child(const std::string& node, uint32_t slot, const Aabb& box, std::vector<uint32_t> triangles,
                 uint32_t frame = 0) {
    if (scene_) children_.push_back({node, slot, frame, box, std::move(triangles)});
  }

  /// After the walk: every child box contains every triangle below it that is referenced once, its vertices taken
  /// into the box's frame by `to_frame(frame, vertex)` (none: the scene's frame). A triangle split by spatial splits
  /// is referenced several times, each time with a clipped box, so it need only overlap the box. Stops at the first
  /// problem.
  void check_containment(const std::function<Vec3(uint32_t frame, Vec3 vertex)>& to_frame = nullptr) {
    for (const ChildContents& c : children_) {
      for (const uint32_t tri : c.triangles) {
        Aabb tri_box;
        for (int k = 0; k < 3; ++k) {
          const Vec3 v = scene_->vertex(tri, k);
          tri_box.grow(to_frame ? to_frame(c.frame, v) : v);
        }
        const bool split = result_.triangle_references[tri] > 1;
        const bool overlaps = !Aabb{glm::max(tri_box.min, c.box.min), glm::min(tri_box.max, c.box.max)}.empty();
        if (split ? !overlaps : !c.box.contains(tri_box)) {
          problem(c.node + " child " + std::to_string(c.slot) + " does not contain triangle " + std::to_string(tri) +
                  (split ? " (split reference: no overlap)" : ""));
          return;
        }
      }
    }
  }

  std::span<const uint32_t> dw_;
  const Scene* scene_;
  Result result_;

 private:
  struct ChildContents {
    std::string node;
    uint32_t slot;
    uint32_t frame;
    Aabb box;
    std::vector<uint32_t> triangles;
  };
  std::size_t max_problems_;
  std::vector<ChildContents> children_;
};

}  // namespace hwbvh::formats
