#pragma once
// Scene: what an OBJ file (with its MTL materials and alpha textures) or a flattened glTF file becomes. Indexed
// triangles grouped into geometries; OBJ geometry ids follow the order in which `o`/`g` groups first appear, glTF
// ones are (instance, mesh primitive) pairs (docs/gltf.md); a triangle's primitive id is its index inside its
// geometry (as DXR/Vulkan number them).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <glm/mat4x4.hpp>

#include "hwbvh/core/geometry.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/core/progress.h"

namespace hwbvh {

inline constexpr uint32_t kNoIndex = 0xFFFFFFFFu;

/// An alpha mask used by alpha-tested materials: one 8-bit alpha value per texel, row-major, row 0 = top of
/// the image file (v = 1 in OBJ's texture space). From the map_d image: the alpha channel of an RGBA image, the
/// grey value of a grey or grey+alpha image, the Rec. 709 luminance of an RGB image.
struct AlphaTexture {
  std::string path;  ///< as resolved on disk
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> alpha;  ///< width * height values
};

struct Material {
  std::string name;
  Vec3 diffuse{0.8f};
  uint32_t alpha_texture = kNoIndex;  ///< index into Scene::alpha_textures; MTL map_d or glTF MASK with alpha
  std::optional<float> alpha_cutoff = std::nullopt;  ///< the file's own cutoff (glTF alphaCutoff); none for MTL materials
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

/// A glTF node that references a mesh, flattened into the scene: its primitives with triangles are the geometries
/// first_geometry .. first_geometry + geometry_count - 1, in the mesh's primitive order, transformed by `world`.
struct SceneInstance {
  std::string name;  ///< the node's name, or "node N"
  uint32_t node = 0;  ///< index of the glTF node
  uint32_t mesh = 0;  ///< index of the glTF mesh (the BLAS of an instanced build)
  glm::dmat4 world{1.0};   ///< object to world: the node's matrix composed with its ancestors'
  uint32_t first_geometry = 0;
  uint32_t geometry_count = 0;
  std::vector<uint32_t> primitives;  ///< the mesh primitive of each of those geometries
};

/// True when the triangle has zero area (repeated vertex or collinear): the cross product of two edges, computed
/// in double from the float positions, is exactly zero.
[[nodiscard]] bool zero_area(Vec3 a, Vec3 b, Vec3 c);

struct Scene {
  std::string source;  ///< file the scene was loaded from (for messages)
  std::vector<Vec3> positions;
  std::vector<Vec2> texcoords;
  std::vector<Triangle> triangles;
  std::vector<Geometry> geometries;
  std::vector<Material> materials;
  std::vector<AlphaTexture> alpha_textures;
  std::vector<SceneInstance> instances;  ///< glTF only: where each geometry came from

  [[nodiscard]] Vec3 vertex(uint32_t tri, int k) const { return positions[triangles[tri].v[k]]; }
  /// True for zero-area triangles (repeated vertex or collinear); they are counted but kept out of the BVH.
  /// Exact: the cross product of two edges, computed in double from the float positions, is zero.
  [[nodiscard]] bool is_degenerate(uint32_t tri) const;
  /// Number of triangles for which is_degenerate() holds.
  [[nodiscard]] uint32_t degenerate_count() const;
  /// Box around the vertices of all triangles (degenerate ones included; unreferenced positions are not).
  [[nodiscard]] Aabb bounds() const;
  [[nodiscard]] bool is_alpha_tested(uint32_t tri) const {
    const uint32_t m = triangles[tri].material;
    return m != kNoIndex && materials[m].alpha_tested();
  }
};

/// One placement of a BLAS in a two-level scene (a glTF node that references a mesh with triangles).
struct MeshInstance {
  std::string name;        ///< the node's name, or "node N"
  uint32_t node = 0;       ///< index of the glTF node
  uint32_t mesh = 0;       ///< index into InstancedScene::meshes (the BLAS)
  glm::dmat4 world{1.0};   ///< object to world: the node's matrix composed with its ancestors'
  /// DXR InstanceID / Vulkan instanceCustomIndex (24 bits): what hits report. glTF has none: the instance index.
  uint32_t instance_id = 0;
  uint8_t mask = 0xFF;     ///< instance mask, AND-ed with the ray's
  /// DXR instance flags (D3D12_RAYTRACING_INSTANCE_FLAGS: 1 triangle cull disable, 2 front counter-clockwise,
  /// 4 force opaque, 8 force non-opaque); glTF gives none.
  uint32_t flags = 0;
};

/// Where a mesh of an InstancedScene comes from in its file, so that flatten() numbers what it makes as the file
/// does.
struct MeshOrigin {
  uint32_t mesh = 0;                 ///< index of the glTF mesh
  std::string name;                  ///< "mesh INDEX" and the glTF name if it has one: names the BLAS in blobs
  std::vector<uint32_t> primitives;  ///< the glTF primitive of each geometry (primitives without triangles make none)
  std::vector<uint32_t> materials;   ///< the index in InstancedScene::materials of each of the mesh's materials
};

/// A two-level scene: every mesh is a BLAS in object space (its primitives with triangles are its geometries,
/// numbered from 0 in the mesh; its materials and alpha textures are those its triangles use; it has triangles and
/// at least one instance), and instances place them in the world. glTF files load as this (load_gltf_instanced);
/// flatten() turns it into the one-level Scene that load_gltf returns.
struct InstancedScene {
  std::string source;          ///< file the scene was loaded from (for messages)
  std::vector<Scene> meshes;   ///< one per BLAS; Scene::source names the file and the mesh
  std::vector<MeshInstance> instances;  ///< in the glTF's depth-first node order
  /// The file's side of the meshes, for flatten(): one origin per mesh, and every material of the file in file order
  /// (also those no triangle uses) with the alpha textures of those in use. Empty for scenes made in code: flatten()
  /// then numbers meshes and primitives by their index and lists each mesh's materials in turn.
  std::vector<MeshOrigin> origins;
  std::vector<Material> materials;
  std::vector<AlphaTexture> alpha_textures;
};

/// Every instance's triangles transformed into world space (in double, rounded to float once), one Scene:
/// geometries are (instance, mesh geometry) in instance order, named "INSTANCE/GEOMETRY", and Scene::instances keeps
/// the mapping (winding reversed where the world matrix mirrors, so front faces stay front faces). Throws
/// hwbvh::Error (BadInput) naming the file when the result would exceed 2^27 triangles, a vertex leaves the float
/// range or every triangle is degenerate.
Scene flatten(const InstancedScene& scene);

/// The exact world bounds of the scene: the box of the vertices of flatten(scene)'s triangles that are not
/// degenerate in world space, bit for bit what a flattened build's blob gives (emu::LoadedBvh::bounds), without
/// building the flattened scene. Empty for a scene without area. Throws as flatten() for a vertex beyond the float
/// range. Only instances that can widen the box are moved vertex by vertex, on `executor`'s threads; the box is the
/// same at any thread count.
[[nodiscard]] Aabb world_bounds(const InstancedScene& scene, const Executor& executor = Executor(1));

/// Receives the loader's warnings, one line each, naming the file (and the line when there is one); the CLI prints
/// them on stderr unless --quiet.
using WarningFn = std::function<void(const std::string&)>;

/// Loads an OBJ file (and its MTL and map_d textures). Throws hwbvh::Error (BadInput) naming the file and the
/// problem for: missing/unreadable file, binary garbage, malformed lines, vertex index out of range, NaN or
/// infinite coordinates, a scene with no triangles, an unreadable alpha texture of a material that faces use.
/// What it accepts but cannot use is reported to `warn`, once per kind with the first line and a count.
///
/// Reading rules (the OBJ is checked line by line; messages give the line):
/// - A `#` at the start of a line or after a blank starts a comment; a line ending in `\` continues on the next;
///   a Ctrl-Z as the last byte of the file is ignored.
/// - Triangles and quads are fan-triangulated: (0, k, k+1); so are larger polygons when the fan covers them exactly
///   (every convex one), other simple ones are ear-clipped, degenerate and self-intersecting ones fanned with a
///   warning. Negative indices count back from the last element defined so far; positive indices may point
///   further down the file. `l`, `p`, `vn`, `vp` are checked, then ignored.
/// - Normal indices out of range are warnings (normals are not used); so are texture coordinate indices out of
///   range, unless the face's material is alpha-tested (then an error). Such faces get no texture coordinates.
/// - `g a b` names the geometry "a b"; `o name` takes the rest of the line; a bare `g`/`o`, or faces before any
///   group, mean "default". Groups that never get a face make no geometry.
/// - Group and material names are made valid UTF-8 (bytes that are not, e.g. Latin-1 names, become U+FFFD) so that
///   the blob and JSON can carry them; groups are still told apart by their original bytes.
/// - A triangle has texture coordinates only when all three corners give one.
/// - `usemtl` takes the rest of the line as the material name, which may be empty (no material, unless an MTL
///   defines a `newmtl` without a name). Materials come from every `mtllib` in order (the first definition of a
///   name wins); an MTL file that does not exist is skipped with a warning naming it (its materials are unknown and
///   triangles using them get no material). Only `map_d` makes a material alpha-tested; `d` and `Tr` do not. Texture names are
///   relative to the MTL's folder and may use backslashes. Materials sharing a map_d file share one AlphaTexture.
///   A map_d texture that cannot be loaded on a material no face uses is a warning, and that material is not
///   alpha-tested.
/// - Accepted but ignored: `s`, `mg`, `lod`, display attributes; skipped with a warning: free-form geometry,
///   `vw`, `t`, `call`, `csh`, and statements the format does not define (exporters' own), one warning per
///   keyword for the first 8 keywords and one for the rest. In MTL files only `newmtl`, `Kd` (also `Kd xyz`,
///   converted to linear sRGB, and `Kd spectral`, which leaves the default colour) and `map_d` are checked; other
///   statements are ignored.
/// `progress` hears "loading" (the file's bytes parsed).
Scene load_obj(const std::filesystem::path& path, const WarningFn& warn = {}, const ProgressCallback& progress = {});

/// Same, from memory (used by the fuzz targets). `name` is used in messages; `base_dir` resolves mtllib and
/// texture paths (empty: materials are ignored).
Scene load_obj_from_memory(std::string_view obj_text, const std::string& name,
                           const std::filesystem::path& base_dir = {}, const WarningFn& warn = {});

/// Loads a glTF 2.0 file, `.gltf` (buffers and images external or data URIs) or `.glb`, as a two-level scene:
/// every mesh that a node of the default scene (scene 0 when none is named) references is a BLAS, read once in
/// object space, and every such node is an instance with its world matrix (TRS or matrix, composed with its
/// ancestors' in double). Triangles, strips and fans are read; points and lines are refused. Materials with
/// alphaMode MASK whose base-colour texture has an alpha channel are alpha-tested as MTL map_d is, with their
/// alphaCutoff. Throws hwbvh::Error (BadInput) naming the file and the problem for anything it cannot read exactly
/// (docs/gltf.md lists the checks).
InstancedScene load_gltf_instanced(const std::filesystem::path& path, const WarningFn& warn = {});

/// Same, from memory (used by the fuzz target): `name` is used in messages; GLB is told from JSON by its magic;
/// `base_dir` resolves external buffers and images (empty: only data URIs and the GLB chunk are read).
InstancedScene load_gltf_instanced_from_memory(std::string_view bytes, const std::string& name,
                                               const std::filesystem::path& base_dir = {},
                                               const WarningFn& warn = {});

/// flatten(load_gltf_instanced(path)): geometries are the mesh primitives of each instance, in instance order
/// (depth-first over the node tree).
Scene load_gltf(const std::filesystem::path& path, const WarningFn& warn = {});

/// flatten(load_gltf_instanced_from_memory(...)).
Scene load_gltf_from_memory(std::string_view bytes, const std::string& name,
                            const std::filesystem::path& base_dir = {}, const WarningFn& warn = {});

struct SceneLoadOptions {
  /// glTF: load one level, every instance's triangles in world space (flatten()), instead of two.
  bool flatten = false;
};

/// True for the file names load_any_scene reads: `.obj`, `.gltf`, `.glb` (any case).
bool is_scene_file(const std::filesystem::path& path);
/// True for the files that load as two-level scenes unless flattened: `.gltf`, `.glb` (any case).
bool is_instanced_scene_file(const std::filesystem::path& path);

/// A scene file loaded: one level (OBJ, or glTF with SceneLoadOptions::flatten) or two (glTF).
using AnyScene = std::variant<Scene, InstancedScene>;
/// load_obj, load_gltf (flatten) or load_gltf_instanced, by the file's extension. `progress` hears "loading": an
/// OBJ file's bytes parsed, a glTF file's announced only (core/progress.h announce()).
AnyScene load_any_scene(const std::filesystem::path& path, const SceneLoadOptions& options,
                        const WarningFn& warn = {}, const ProgressCallback& progress = {});

}  // namespace hwbvh
