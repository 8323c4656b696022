#pragma once
// Scene: what an OBJ file (with its MTL materials and alpha textures) becomes. Indexed triangles grouped into
// geometries; geometry ids follow the order in which `o`/`g` groups first appear, and a triangle's primitive
// id is its index inside its geometry (as DXR/Vulkan number them).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hwbvh/core/geometry.h"

namespace hwbvh {

inline constexpr uint32_t kNoIndex = 0xFFFFFFFFu;

/// An alpha mask used by alpha-tested materials: one 8-bit alpha value per texel, row-major, row 0 = top of
/// the image file (v = 1 in OBJ's texture space).
struct AlphaTexture {
  std::string path;  ///< as resolved on disk
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> alpha;  ///< width * height values
};

struct Material {
  std::string name;
  Vec3 diffuse{0.8f};
  uint32_t alpha_texture = kNoIndex;  ///< index into Scene::alpha_textures; set only when the MTL has map_d
  [[nodiscard]] bool alpha_tested() const { return alpha_texture != kNoIndex; }
};

struct Geometry {
  std::string name;
  uint32_t first_triangle = 0;  ///< triangles of a geometry are contiguous in Scene::triangles
  uint32_t triangle_count = 0;
};

struct Triangle {
  uint32_t v[3]{};                                   ///< indices into Scene::positions
  uint32_t uv[3]{kNoIndex, kNoIndex, kNoIndex};     ///< indices into Scene::texcoords, or kNoIndex
  uint32_t geometry = 0;                             ///< index into Scene::geometries
  uint32_t primitive = 0;                            ///< index of this triangle inside its geometry
  uint32_t material = kNoIndex;                      ///< index into Scene::materials, or kNoIndex
};

struct Scene {
  std::string source;  ///< file the scene was loaded from (for messages)
  std::vector<Vec3> positions;
  std::vector<Vec2> texcoords;
  std::vector<Triangle> triangles;
  std::vector<Geometry> geometries;
  std::vector<Material> materials;
  std::vector<AlphaTexture> alpha_textures;

  [[nodiscard]] Vec3 vertex(uint32_t tri, int k) const { return positions[triangles[tri].v[k]]; }
  /// True for zero-area triangles (repeated vertex or collinear); they are counted but kept out of the BVH.
  [[nodiscard]] bool is_degenerate(uint32_t tri) const;
  [[nodiscard]] Aabb bounds() const;
  [[nodiscard]] bool is_alpha_tested(uint32_t tri) const {
    const uint32_t m = triangles[tri].material;
    return m != kNoIndex && materials[m].alpha_tested();
  }
};

/// Loads an OBJ file (and its MTL and map_d textures). Throws hwbvh::Error (BadInput) naming the file and the
/// problem for: missing/unreadable file, binary garbage, malformed lines, face index out of range, NaN or
/// infinite coordinates, a scene with no triangles, an unreadable alpha texture.
Scene load_obj(const std::filesystem::path& path);

/// Same, from memory (used by the fuzz targets). `name` is used in messages; `base_dir` resolves mtllib and
/// texture paths (empty: materials are ignored).
Scene load_obj_from_memory(std::string_view obj_text, const std::string& name,
                           const std::filesystem::path& base_dir = {});

}  // namespace hwbvh
