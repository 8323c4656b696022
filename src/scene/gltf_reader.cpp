// glTF 2.0 reading into a two-level scene: one object-space Scene per mesh, one instance per node that places it
// (docs/gltf.md); load_gltf flattens it. tinygltf parses the JSON or GLB and fetches buffers;
// it trusts the offsets, counts and indices it reads, so everything the scene is built from is checked here before
// it is used. Images are handed over undecoded and decoded only when an alpha-tested material reads them.
#include <tiny_gltf.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <glm/gtc/quaternion.hpp>
#include <glm/gtc/type_ptr.hpp>
#include <glm/mat3x3.hpp>
#include <glm/matrix.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/scene/scene.h"
#include "scene/alpha_image.h"
#include "scene/flatten.h"
#include "scene/text_lines.h"

namespace hwbvh {
namespace {

using scene::quote;
using scene::valid_utf8;

// Bound on what a small file can ask for: node graphs that share subtrees expand exponentially.
constexpr uint64_t kMaxNodeVisits = uint64_t{1} << 20;

constexpr std::array<std::string_view, 7> kModeNames = {"points",    "lines",          "line loop",   "line strip",
                                                        "triangles", "triangle strip", "triangle fan"};
constexpr int kModeTriangles = TINYGLTF_MODE_TRIANGLES;
constexpr int kModeStrip = TINYGLTF_MODE_TRIANGLE_STRIP;
constexpr int kModeFan = TINYGLTF_MODE_TRIANGLE_FAN;

// tinygltf's callbacks: images kept as their file bytes; names inside the file taken literally (tinygltf's own
// ExpandFilePath runs wordexp on them); nothing is ever written.
bool keep_image_bytes(tinygltf::Image* image, const int, std::string*, std::string*, int, int,
                      const unsigned char* bytes, int size, void*) {
  image->image.assign(bytes, bytes + size);
  return true;
}
std::string literal_path(const std::string& path, void*) { return path; }
bool never_writes(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
  *err = "hwbvh does not write glTF files";
  return false;
}
bool no_file(const std::string&, void*) { return false; }
bool no_read(std::vector<unsigned char>*, std::string* err, const std::string& path, void*) {
  *err = "external file '" + path + "' is not read when loading from memory";
  return false;
}

// A data URI quoted in a message, shortened: it can be the whole buffer.
std::string shorten_data_uris(std::string line) {
  constexpr std::size_t kKeep = 48;
  for (std::size_t at = line.find("data:"); at != std::string::npos; at = line.find("data:", at + 1)) {
    const std::size_t end = std::min(line.find_first_of(" '\"", at), line.size());
    if (end - at > kKeep) line.replace(at + kKeep, end - at - kKeep, "...");
  }
  return line;
}

// tinygltf's multi-line messages as one line.
std::string one_line(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = scene::trim(std::string_view(text).substr(start, end - start));
    if (!line.empty()) out += (out.empty() ? "" : "; ") + shorten_data_uris(std::string(line));
    start = end + 1;
  }
  return valid_utf8(out);
}

// A checked accessor: `count` elements of `components` values each, `stride` bytes apart from `data` (null: all
// zeros, an accessor without a buffer view).
struct AccessorView {
  const unsigned char* data = nullptr;
  std::size_t count = 0;
  std::size_t stride = 0;
  int component_type = 0;
  int components = 0;
  bool normalized = false;

  [[nodiscard]] double value(std::size_t element, int component) const {
    if (data == nullptr) return 0.0;
    const unsigned char* p = data + element * stride;
    const auto load = [&]<typename T>(T) {
      T v{};
      std::memcpy(&v, p + static_cast<std::size_t>(component) * sizeof(T), sizeof(T));
      return v;
    };
    switch (component_type) {
      case TINYGLTF_COMPONENT_TYPE_FLOAT:
        return load(float{});
      case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
        return normalized ? load(uint8_t{}) / 255.0 : load(uint8_t{});
      case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT:
        return normalized ? load(uint16_t{}) / 65535.0 : load(uint16_t{});
      default:  // TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT (only for indices)
        return load(uint32_t{});
    }
  }
};

// One mesh primitive in object space, read once however many instances use it.
struct Primitive {
  std::vector<Vec3> positions;
  std::vector<Vec2> texcoords;  // empty when the material is not alpha-tested or the primitive has none
  std::vector<std::array<uint32_t, 3>> triangles;
  uint32_t material = kNoIndex;
};

class GltfReader {
 public:
  GltfReader(const tinygltf::Model& model, std::string file, const WarningFn& warn)
      : model_(model), file_(std::move(file)), warn_(warn) {}

  InstancedScene read() && {
    // glTF 1.0 keeps its scenes, nodes and meshes in objects keyed by name, which tinygltf skips: without this
    // check such a file would read as one without a scene. A 2.x file loads in a 2.0 reader unless its minVersion
    // asks for more (the glTF 2.0 specification, "Asset").
    const std::string& version = model_.asset.version;
    if (!version.starts_with("2.")) {
      fail("glTF " + valid_utf8(version) + " is not supported (asset.version '" + valid_utf8(version) +
           "'): hwbvh reads glTF 2.0");
    }
    const std::string& min_version = model_.asset.minVersion;
    if (!min_version.empty() && min_version != "2.0") {
      fail("requires glTF " + valid_utf8(min_version) + " (asset.minVersion): hwbvh reads glTF 2.0");
    }
    if (!model_.extensionsRequired.empty()) {
      std::string names;
      for (const std::string& e : model_.extensionsRequired) names += (names.empty() ? "" : ", ") + quote(e);
      fail("requires extension " + names + ", which hwbvh does not support");
    }
    scene_.source = file_;
    read_materials();
    if (model_.scenes.empty()) fail("no scene: the file has no nodes to build");
    const int default_scene = model_.defaultScene;
    if (default_scene >= static_cast<int>(model_.scenes.size())) {
      fail("scene " + std::to_string(default_scene) + " is named the default but the file has " +
           std::to_string(model_.scenes.size()) + " scenes");
    }
    const tinygltf::Scene& gltf_scene = model_.scenes[static_cast<std::size_t>(std::max(default_scene, 0))];
    for (const int root : gltf_scene.nodes) visit_tree(root);
    uint64_t triangles = 0;
    uint64_t degenerate = 0;
    for (const MeshInstance& instance : scene_.instances) {
      triangles += scene_.meshes[instance.mesh].triangles.size();
      degenerate += degenerate_counts_[instance.mesh];
    }
    if (scene_.instances.empty()) fail("no triangles: no node of the default scene references a mesh with triangles");
    scene::require_area(file_, degenerate, triangles);
    load_alpha_textures();
    for (std::size_t m = 0; m < scene_.meshes.size(); ++m) give_materials(scene_.meshes[m], scene_.origins[m]);
    for (const auto& [kind, message] : warnings_) {
      if (warn_) warn_(file_ + ": " + message);
    }
    return std::move(scene_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw_bad_input(file_, problem); }
  void warn_once(const std::string& kind, const std::string& message) { warnings_.try_emplace(kind, message); }

  template <typename T>
  const T& element(const std::vector<T>& list, int index, const std::string& what) const {
    if (index < 0 || static_cast<std::size_t>(index) >= list.size()) {
      fail(what + " " + std::to_string(index) + " does not exist (the file has " + std::to_string(list.size()) + ")");
    }
    return list[static_cast<std::size_t>(index)];
  }

  static std::string named(const std::string& kind, int index, const std::string& name) {
    return kind + " " + std::to_string(index) + (name.empty() ? "" : " " + quote(valid_utf8(name)));
  }

  // Materials in file order; alpha-tested ones (MASK with a base-colour texture) get their texture once it is
  // known which materials triangles use.
  void read_materials() {
    for (std::size_t m = 0; m < model_.materials.size(); ++m) {
      const tinygltf::Material& gltf = model_.materials[m];
      const std::vector<double>& colour = gltf.pbrMetallicRoughness.baseColorFactor;
      Material material;
      material.name = gltf.name.empty() ? "material " + std::to_string(m) : valid_utf8(gltf.name);
      if (colour.size() >= 3) material.diffuse = Vec3(glm::dvec3(colour[0], colour[1], colour[2]));
      if (gltf.alphaMode == "MASK") material.alpha_cutoff = static_cast<float>(gltf.alphaCutoff);
      scene_.materials.push_back(std::move(material));
    }
  }

  // A mesh's own materials, those its triangles use in the order they first do, with their alpha textures; the
  // origin keeps where each came from.
  void give_materials(Scene& mesh, MeshOrigin& origin) const {
    std::map<uint32_t, uint32_t> local;  // file material -> mesh material
    std::map<uint32_t, uint32_t> local_texture;
    for (Triangle& t : mesh.triangles) {
      if (t.material == kNoIndex) continue;
      const auto [it, added] = local.try_emplace(t.material, static_cast<uint32_t>(mesh.materials.size()));
      if (added) {
        Material material = scene_.materials[t.material];
        if (material.alpha_tested()) {
          const auto [texture, new_texture] =
              local_texture.try_emplace(material.alpha_texture, static_cast<uint32_t>(mesh.alpha_textures.size()));
          if (new_texture) mesh.alpha_textures.push_back(scene_.alpha_textures[material.alpha_texture]);
          material.alpha_texture = texture->second;
        }
        mesh.materials.push_back(std::move(material));
        origin.materials.push_back(t.material);
      }
      t.material = it->second;
    }
  }

  // Depth-first over the node tree below `root`, without recursion (the depth is the file's to choose); a node
  // met again on the path to itself is a cycle.
  void visit_tree(int root) {
    struct Frame {
      int node;
      glm::dmat4 world;
      std::size_t next_child = 0;
    };
    std::vector<bool> on_path(model_.nodes.size(), false);
    std::vector<Frame> stack;
    const auto enter = [&](int node, const glm::dmat4& parent) {
      const tinygltf::Node& n = element(model_.nodes, node, "node");
      if (on_path[static_cast<std::size_t>(node)]) {
        fail("the node graph has a cycle: " + named("node", node, n.name) + " is its own ancestor");
      }
      if (++node_visits_ > kMaxNodeVisits) {
        fail("the node graph expands to more than " + std::to_string(kMaxNodeVisits) + " nodes");
      }
      on_path[static_cast<std::size_t>(node)] = true;
      const glm::dmat4 world = parent * local_matrix(node, n);
      check_world(node, n, world);
      if (n.mesh >= 0) add_instance(node, n, world);
      stack.push_back({node, world});
    };
    enter(root, glm::dmat4(1.0));
    while (!stack.empty()) {
      Frame& top = stack.back();
      const tinygltf::Node& n = model_.nodes[static_cast<std::size_t>(top.node)];
      if (top.next_child == n.children.size()) {
        on_path[static_cast<std::size_t>(top.node)] = false;
        stack.pop_back();
        continue;
      }
      const int child = n.children[top.next_child++];
      enter(child, top.world);
    }
  }

  glm::dmat4 local_matrix(int node, const tinygltf::Node& n) const {
    const auto check = [&](const std::vector<double>& values, std::size_t size, const char* what) {
      if (!values.empty() && values.size() != size) {
        fail(named("node", node, n.name) + ": " + what + " has " + std::to_string(values.size()) + " numbers, not " +
             std::to_string(size));
      }
      for (const double v : values) {
        if (!std::isfinite(v)) fail(named("node", node, n.name) + ": " + what + " is not finite");
      }
    };
    check(n.matrix, 16, "matrix");
    check(n.translation, 3, "translation");
    check(n.rotation, 4, "rotation");
    check(n.scale, 3, "scale");
    if (!n.matrix.empty()) return glm::make_mat4(n.matrix.data());  // column-major, as glTF stores it
    glm::dmat4 m(1.0);
    if (!n.translation.empty()) m[3] = glm::dvec4(n.translation[0], n.translation[1], n.translation[2], 1.0);
    if (!n.rotation.empty()) {
      const glm::dquat q(n.rotation[3], n.rotation[0], n.rotation[1], n.rotation[2]);  // glTF order: x, y, z, w
      const double length = glm::length(q);
      if (!(length > 0.0)) fail(named("node", node, n.name) + ": rotation is a zero quaternion");
      m = m * glm::dmat4(glm::mat3_cast(q / length));
    }
    if (!n.scale.empty()) {
      glm::dmat4 scale(1.0);
      for (int axis = 0; axis < 3; ++axis) scale[axis][axis] = n.scale[static_cast<std::size_t>(axis)];
      m = m * scale;
    }
    return m;
  }

  void check_world(int node, const tinygltf::Node& n, const glm::dmat4& world) const {
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(world[c][r])) fail(named("node", node, n.name) + ": world matrix is not finite");
      }
    }
    if (world[0][3] != 0.0 || world[1][3] != 0.0 || world[2][3] != 0.0 || world[3][3] != 1.0) {
      fail(named("node", node, n.name) + ": world matrix is not affine (last row is not 0 0 0 1)");
    }
    if (glm::determinant(glm::dmat3(world)) == 0.0) {
      fail(named("node", node, n.name) + ": world matrix is singular (determinant 0)");
    }
  }

  void add_instance(int node, const tinygltf::Node& n, const glm::dmat4& world) {
    element(model_.meshes, n.mesh, named("node", node, n.name) + ": mesh");
    if (n.skin >= 0) warn_once("skin", "skins are ignored: skinned meshes are placed by their node's matrix");
    MeshInstance instance;
    instance.mesh = mesh_slot(n.mesh);
    if (instance.mesh == kNoIndex) return;  // places nothing
    instance.name = n.name.empty() ? "node " + std::to_string(node) : valid_utf8(n.name);
    instance.node = static_cast<uint32_t>(node);
    instance.world = world;
    instance.instance_id = static_cast<uint32_t>(scene_.instances.size());
    if (!far_inside_float_range(mesh_boxes_[instance.mesh], world)) {
      for (const Vec3& position : scene_.meshes[instance.mesh].positions) {
        const Vec3 p = scene::to_world(world, position);
        if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
          fail(named("node", node, n.name) + ": a vertex moves beyond the float range in world space");
        }
      }
    }
    scene_.instances.push_back(std::move(instance));
  }

  // True when every point of `box` stays within half the float range once moved by `world`: an affine map takes its
  // extremes at the corners, and the margin covers the rounding of the double products, so no vertex inside can
  // leave the range and the vertices need no check one by one (which would cost instances x vertices).
  static bool far_inside_float_range(const Aabb& box, const glm::dmat4& world) {
    for (const Vec3& p : box.corners()) {
      const glm::dvec4 w = world * glm::dvec4(glm::dvec3(p), 1.0);
      for (int axis = 0; axis < 3; ++axis) {
        if (!(std::abs(w[axis]) <= 0.5 * std::numeric_limits<float>::max())) return false;
      }
    }
    return true;
  }

  // The index in scene_.meshes of glTF mesh `mesh_index`, read in object space the first time an instance uses it:
  // its primitives with triangles, in order, are its geometries. kNoIndex for a mesh without triangles, which
  // makes no BLAS.
  uint32_t mesh_slot(int mesh_index) {
    const auto [slot, added] = mesh_slots_.try_emplace(mesh_index, static_cast<uint32_t>(scene_.meshes.size()));
    if (!added) return slot->second;
    const tinygltf::Mesh& gltf = model_.meshes[static_cast<std::size_t>(mesh_index)];
    const std::string mesh_name = gltf.name.empty() ? "mesh " + std::to_string(mesh_index) : valid_utf8(gltf.name);
    Scene mesh;
    MeshOrigin origin;
    origin.mesh = static_cast<uint32_t>(mesh_index);
    origin.name = named("mesh", mesh_index, gltf.name);
    mesh.source = file_ + " " + origin.name;
    for (std::size_t p = 0; p < gltf.primitives.size(); ++p) {
      const Primitive primitive = read_primitive(mesh_index, p);
      if (primitive.triangles.empty()) continue;
      mesh_triangles_ += primitive.triangles.size();
      if (mesh_triangles_ > scene::kMaxTriangles) {
        fail("the meshes have more than " + std::to_string(scene::kMaxTriangles) + " triangles");
      }
      const auto first_position = static_cast<uint32_t>(mesh.positions.size());
      const auto first_texcoord = static_cast<uint32_t>(mesh.texcoords.size());
      mesh.positions.insert(mesh.positions.end(), primitive.positions.begin(), primitive.positions.end());
      mesh.texcoords.insert(mesh.texcoords.end(), primitive.texcoords.begin(), primitive.texcoords.end());
      const auto geometry = static_cast<uint32_t>(mesh.geometries.size());
      mesh.geometries.push_back({mesh_name + "/" + std::to_string(p), static_cast<uint32_t>(mesh.triangles.size()),
                                 static_cast<uint32_t>(primitive.triangles.size())});
      origin.primitives.push_back(static_cast<uint32_t>(p));
      for (std::size_t t = 0; t < primitive.triangles.size(); ++t) {
        Triangle& tri = mesh.triangles.emplace_back();
        for (int k = 0; k < 3; ++k) {
          const uint32_t corner = primitive.triangles[t][static_cast<std::size_t>(k)];
          tri.v[k] = first_position + corner;
          if (!primitive.texcoords.empty()) tri.uv[k] = first_texcoord + corner;
        }
        tri.geometry = geometry;
        tri.primitive = static_cast<uint32_t>(t);
        tri.material = primitive.material;  // the file's; give_materials makes it the mesh's own
      }
    }
    if (mesh.triangles.empty()) return slot->second = kNoIndex;
    degenerate_counts_.push_back(mesh.degenerate_count());
    Aabb& box = mesh_boxes_.emplace_back();
    for (const Vec3& p : mesh.positions) box.grow(p);
    scene_.meshes.push_back(std::move(mesh));
    scene_.origins.push_back(std::move(origin));
    return slot->second;
  }

  Primitive read_primitive(int mesh_index, std::size_t p) {
    const tinygltf::Primitive& gltf = model_.meshes[static_cast<std::size_t>(mesh_index)].primitives[p];
    const std::string where = "mesh " + std::to_string(mesh_index) + " primitive " + std::to_string(p);
    Primitive out;
    if (gltf.mode < 0 || gltf.mode >= static_cast<int>(kModeNames.size())) {
      fail(where + ": unknown mode " + std::to_string(gltf.mode));
    }
    if (gltf.mode != kModeTriangles && gltf.mode != kModeStrip && gltf.mode != kModeFan) {
      fail(where + ": mode '" + std::string(kModeNames[static_cast<std::size_t>(gltf.mode)]) +
           "' is not supported (only triangles, triangle strips and triangle fans)");
    }
    if (!gltf.targets.empty()) warn_once("targets", "morph targets are ignored: meshes keep their base shape");

    const auto position = gltf.attributes.find("POSITION");
    if (position == gltf.attributes.end()) fail(where + ": no POSITION attribute");
    const AccessorView positions =
        view(position->second, where + " POSITION", {TINYGLTF_TYPE_VEC3}, {TINYGLTF_COMPONENT_TYPE_FLOAT});
    out.positions.resize(positions.count);
    for (std::size_t i = 0; i < positions.count; ++i) {
      for (int c = 0; c < 3; ++c) {
        const double v = positions.value(i, c);
        if (!std::isfinite(v)) fail(where + ": POSITION " + std::to_string(i) + " is not finite");
        out.positions[i][c] = static_cast<float>(v);
      }
    }

    if (gltf.material >= 0) {
      element(model_.materials, gltf.material, where + ": material");
      out.material = static_cast<uint32_t>(gltf.material);
      read_texcoords(gltf, where, out);
    }
    read_triangles(gltf, where, positions.count, out.triangles);
    return out;
  }

  // The texture coordinates the alpha test reads: those of the base-colour texture of a MASK material, with v
  // flipped (glTF's v = 0 is the top of the image, the alpha test's v = 1; alpha_test.h).
  void read_texcoords(const tinygltf::Primitive& gltf, const std::string& where, Primitive& out) const {
    const tinygltf::Material& material = model_.materials[static_cast<std::size_t>(gltf.material)];
    const tinygltf::TextureInfo& texture = material.pbrMetallicRoughness.baseColorTexture;
    if (material.alphaMode != "MASK" || texture.index < 0) return;
    const auto attribute = gltf.attributes.find("TEXCOORD_" + std::to_string(texture.texCoord));
    if (attribute == gltf.attributes.end()) return;  // no texel to read: opaque, as an OBJ face without vt
    const AccessorView uv = view(
        attribute->second, where + " " + attribute->first, {TINYGLTF_TYPE_VEC2},
        {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT});
    if (uv.count != out.positions.size()) {
      fail(where + ": " + attribute->first + " has " + std::to_string(uv.count) + " elements, POSITION " +
           std::to_string(out.positions.size()));
    }
    out.texcoords.resize(uv.count);
    for (std::size_t i = 0; i < uv.count; ++i) {
      const double u = uv.value(i, 0);
      const double v = uv.value(i, 1);
      if (!std::isfinite(u) || !std::isfinite(v))
        fail(where + ": " + attribute->first + " " + std::to_string(i) + " is not finite");
      out.texcoords[i] = Vec2(static_cast<float>(u), 1.0f - static_cast<float>(v));
    }
  }

  void read_triangles(const tinygltf::Primitive& gltf, const std::string& where, std::size_t vertex_count,
                      std::vector<std::array<uint32_t, 3>>& triangles) const {
    std::vector<uint32_t> indices;
    if (gltf.indices >= 0) {
      const AccessorView view_of_indices =
          view(gltf.indices, where + " indices", {TINYGLTF_TYPE_SCALAR},
               {TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT,
                TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT});
      indices.resize(view_of_indices.count);
      for (std::size_t i = 0; i < indices.size(); ++i) {
        const double index = view_of_indices.value(i, 0);
        if (index >= static_cast<double>(vertex_count)) {
          fail(where + ": index " + std::to_string(static_cast<uint64_t>(index)) + " (element " + std::to_string(i) +
               ") is past the " + std::to_string(vertex_count) + " vertices");
        }
        indices[i] = static_cast<uint32_t>(index);
      }
    } else {
      if (vertex_count > kNoIndex) fail(where + ": too many vertices");
      indices.resize(vertex_count);
      for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<uint32_t>(i);
    }
    const std::size_t n = indices.size();
    // Triangle k of each topology, as the glTF 2.0 specification (section 3.7.2.1) lists it.
    if (gltf.mode == kModeTriangles) {
      if (n % 3 != 0) fail(where + ": " + std::to_string(n) + " vertices do not make whole triangles");
      for (std::size_t k = 0; k + 2 < n; k += 3) triangles.push_back({indices[k], indices[k + 1], indices[k + 2]});
    } else if (gltf.mode == kModeStrip) {
      for (std::size_t k = 0; k + 2 < n; ++k) {
        const std::size_t odd = k % 2;
        triangles.push_back({indices[k], indices[k + 1 + odd], indices[k + 2 - odd]});
      }
    } else {
      for (std::size_t k = 0; k + 2 < n; ++k) triangles.push_back({indices[k + 1], indices[k + 2], indices[0]});
    }
  }

  // Checks that accessor `index` has one of `types` and `component_types` and lies inside its buffer view and
  // buffer, and returns it.
  AccessorView view(int index, const std::string& what, std::initializer_list<int> types,
                    std::initializer_list<int> component_types) const {
    const tinygltf::Accessor& a = element(model_.accessors, index, what + ": accessor");
    const std::string where = what + " (accessor " + std::to_string(index) + ")";
    if (a.sparse.isSparse) fail(where + ": sparse accessors are not supported");
    if (std::find(types.begin(), types.end(), a.type) == types.end()) fail(where + ": wrong element type");
    if (std::find(component_types.begin(), component_types.end(), a.componentType) == component_types.end()) {
      fail(where + ": wrong component type " + std::to_string(a.componentType));
    }
    AccessorView v;
    v.count = a.count;
    v.component_type = a.componentType;
    v.components = tinygltf::GetNumComponentsInType(static_cast<uint32_t>(a.type));
    v.normalized = a.normalized;
    if (a.bufferView < 0) return v;  // all zeros
    const tinygltf::BufferView& bv = element(model_.bufferViews, a.bufferView, where + ": buffer view");
    const tinygltf::Buffer& buffer = element(model_.buffers, bv.buffer, where + ": buffer");
    if (buffer.data.size() < bv.byteOffset || buffer.data.size() - bv.byteOffset < bv.byteLength) {
      fail(where + ": buffer view " + std::to_string(a.bufferView) + " (bytes " + std::to_string(bv.byteOffset) +
           " + " + std::to_string(bv.byteLength) + ") runs past the end of buffer " + std::to_string(bv.buffer) + " (" +
           std::to_string(buffer.data.size()) + " bytes)");
    }
    const auto element_size = static_cast<std::size_t>(
        tinygltf::GetComponentSizeInBytes(static_cast<uint32_t>(a.componentType)) * v.components);
    v.stride = bv.byteStride == 0 ? element_size : bv.byteStride;
    if (v.stride < element_size)
      fail(where + ": byteStride " + std::to_string(bv.byteStride) + " is below the element size");
    if (a.count > 0) {
      // count and stride <= byteLength first, so that the product below cannot overflow.
      const bool fits = a.byteOffset <= bv.byteLength && a.count <= bv.byteLength &&
                        (a.count == 1 || v.stride <= bv.byteLength) &&
                        (a.count - 1) * v.stride + element_size <= bv.byteLength - a.byteOffset;
      if (!fits) {
        fail(where + ": " + std::to_string(a.count) + " elements at offset " + std::to_string(a.byteOffset) +
             " run past the end of buffer view " + std::to_string(a.bufferView) + " (" + std::to_string(bv.byteLength) +
             " bytes)");
      }
    }
    v.data = buffer.data.data() + bv.byteOffset + a.byteOffset;
    return v;
  }

  // The base-colour image of every alpha-tested material triangles use, decoded once per image. An image
  // without an alpha channel is opaque, so its material is not alpha-tested.
  void load_alpha_textures() {
    std::vector<bool> used(scene_.materials.size(), false);
    for (const Scene& mesh : scene_.meshes) {
      for (const Triangle& t : mesh.triangles) {
        if (t.material != kNoIndex) used[t.material] = true;
      }
    }
    std::map<int, uint32_t> by_image;  // kNoIndex: no alpha channel
    for (std::size_t m = 0; m < scene_.materials.size(); ++m) {
      const tinygltf::Material& gltf = model_.materials[m];
      if (gltf.alphaMode != "MASK") continue;
      const tinygltf::TextureInfo& info = gltf.pbrMetallicRoughness.baseColorTexture;
      const std::string where = named("material", static_cast<int>(m), gltf.name);
      if (info.index < 0) {
        if (used[m]) warn_once("mask", where + ": alphaMode MASK without a base-colour texture is treated as opaque");
        continue;
      }
      if (!used[m]) continue;
      if (gltf.pbrMetallicRoughness.baseColorFactor.size() == 4 &&
          gltf.pbrMetallicRoughness.baseColorFactor[3] != 1.0) {
        warn_once("factor", where + ": the alpha of baseColorFactor is ignored; the texture's alpha alone is tested");
      }
      const tinygltf::Texture& texture = element(model_.textures, info.index, where + ": texture");
      const tinygltf::Image& image = element(model_.images, texture.source, where + ": image");
      auto it = by_image.find(texture.source);
      if (it == by_image.end()) it = by_image.emplace(texture.source, decode(where, texture.source, image)).first;
      scene_.materials[m].alpha_texture = it->second;
    }
  }

  uint32_t decode(const std::string& where, int index, const tinygltf::Image& image) {
    const std::string name =
        image.uri.empty() || image.uri.starts_with("data:") ? "image " + std::to_string(index) : valid_utf8(image.uri);
    if (image.image.empty()) fail(where + ": base-colour " + name + " has no data");
    const std::string_view bytes(reinterpret_cast<const char*>(image.image.data()), image.image.size());
    scene::DecodedAlpha decoded = scene::decode_alpha_texture(bytes, name, scene::AlphaSource::AlphaChannel);
    if (!decoded.problem.empty()) fail(where + ": base-colour " + name + ": " + decoded.problem);
    if (!decoded.has_alpha_channel) return kNoIndex;
    scene_.alpha_textures.push_back(std::move(decoded.texture));
    return static_cast<uint32_t>(scene_.alpha_textures.size() - 1);
  }

  const tinygltf::Model& model_;
  std::string file_;
  const WarningFn& warn_;
  InstancedScene scene_;
  std::map<int, uint32_t> mesh_slots_;  // glTF mesh -> index in scene_.meshes
  std::vector<uint32_t> degenerate_counts_;  // per mesh
  std::vector<Aabb> mesh_boxes_;             // per mesh, around all its positions
  uint64_t mesh_triangles_ = 0;
  std::map<std::string, std::string> warnings_;
  uint64_t node_visits_ = 0;
};

// The 32-bit little-endian word at `offset`.
uint32_t read_u32(std::string_view bytes, std::size_t offset) {
  uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value |= uint32_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  return value;
}

// Whether the first byte after blanks (and a UTF-8 byte-order mark) opens a JSON object.
bool starts_like_json(std::string_view bytes) {
  bytes = scene::without_bom(bytes);
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

// Refuses what tinygltf would misread: a GLB container of another version (tinygltf ignores the version word), and
// a file named .glb that is neither GLB nor JSON (which tinygltf would report as a JSON syntax error).
void check_container(std::string_view bytes, const std::string& name) {
  if (bytes.starts_with("glTF")) {
    if (bytes.size() < 8) return;  // too short for the header: tinygltf says so
    const uint32_t version = read_u32(bytes, 4);
    if (version == 1) throw_bad_input(name, "glTF 1.0 binary (GLB version 1) is not supported: hwbvh reads glTF 2.0");
    if (version != 2) {
      throw_bad_input(name, "GLB version " + std::to_string(version) + " is not supported: hwbvh reads glTF 2.0 (GLB "
                            "version 2)");
    }
    return;
  }
  if (scene::lower_extension(name) == ".glb" && !starts_like_json(bytes)) {
    throw_bad_input(name, "not a glTF binary: a .glb file starts with the magic 'glTF'");
  }
}

InstancedScene read_gltf(std::string_view bytes, const std::string& name, const std::filesystem::path& base_dir,
                         bool read_files, const WarningFn& warn) {
  if (bytes.size() > UINT_MAX) throw_bad_input(name, "file too large for a glTF reader");
  check_container(bytes, name);
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(keep_image_bytes, nullptr);
  loader.SetFsCallbacks(read_files ? tinygltf::FsCallbacks{&tinygltf::FileExists, literal_path,
                                                           &tinygltf::ReadWholeFile, never_writes, nullptr}
                                   : tinygltf::FsCallbacks{no_file, literal_path, no_read, never_writes, nullptr});
  tinygltf::Model model;
  std::string error;
  std::string warning;
  const auto size = static_cast<unsigned int>(bytes.size());
  // GLB by its magic, whatever the file is called (a .glb file holding glTF JSON reads as JSON).
  const bool ok =
      bytes.starts_with("glTF")
          ? loader.LoadBinaryFromMemory(&model, &error, &warning, reinterpret_cast<const unsigned char*>(bytes.data()),
                                        size, base_dir.string())
          : loader.LoadASCIIFromString(&model, &error, &warning, bytes.data(), size, base_dir.string());
  if (!ok) throw_bad_input(name, error.empty() ? "not a glTF file" : one_line(error));
  if (!warning.empty() && warn) warn(name + ": " + one_line(warning));
  return GltfReader(model, name, warn).read();
}

}  // namespace

InstancedScene load_gltf_instanced(const std::filesystem::path& path, const WarningFn& warn) {
  const std::string name = path.string();
  const scene::FileRead file = scene::read_file(path);
  if (file.status != scene::ReadStatus::Ok) throw_bad_input(name, file.problem);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return read_gltf(file.bytes, name, dir, true, warn);
}

InstancedScene load_gltf_instanced_from_memory(std::string_view bytes, const std::string& name,
                                               const std::filesystem::path& base_dir, const WarningFn& warn) {
  return read_gltf(bytes, name, base_dir, !base_dir.empty(), warn);
}

Scene load_gltf(const std::filesystem::path& path, const WarningFn& warn) {
  return flatten(load_gltf_instanced(path, warn));
}

Scene load_gltf_from_memory(std::string_view bytes, const std::string& name, const std::filesystem::path& base_dir,
                            const WarningFn& warn) {
  return flatten(load_gltf_instanced_from_memory(bytes, name, base_dir, warn));
}

}  // namespace hwbvh
