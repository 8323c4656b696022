// flatten(load_gltf_instanced(f)) is the Scene the one-level reader gave before glTF files loaded as two levels:
// digests of every field, pinned from that reader's output on the project's glTF files, the fuzz corpus's
// hand-written ones and a file made here that has what those lack (unused materials and meshes, shared and empty
// primitives).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "fixtures/paths.h"
#include "hwbvh/scene/scene.h"
#include "scene/gltf_files.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

// FNV-1a over every field of a Scene but its source (a path).
class Digest {
 public:
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) value_ = (value_ ^ p[i]) * 0x100000001b3ull;
  }
  void u32(uint32_t v) { bytes(&v, sizeof v); }
  void f32(float v) { u32(std::bit_cast<uint32_t>(v)); }
  void f64(double v) {
    const auto bits = std::bit_cast<uint64_t>(v);
    bytes(&bits, sizeof bits);
  }
  void text(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  [[nodiscard]] uint64_t value() const { return value_; }

 private:
  uint64_t value_ = 0xcbf29ce484222325ull;
};

uint64_t digest(const Scene& s) {
  Digest d;
  d.u32(static_cast<uint32_t>(s.positions.size()));
  for (const Vec3& p : s.positions) {
    for (int c = 0; c < 3; ++c) d.f32(p[c]);
  }
  d.u32(static_cast<uint32_t>(s.texcoords.size()));
  for (const Vec2& t : s.texcoords) {
    d.f32(t.x);
    d.f32(t.y);
  }
  d.u32(static_cast<uint32_t>(s.triangles.size()));
  for (const Triangle& t : s.triangles) {
    for (int k = 0; k < 3; ++k) {
      d.u32(t.v[k]);
      d.u32(t.uv[k]);
    }
    d.u32(t.geometry);
    d.u32(t.primitive);
    d.u32(t.material);
  }
  d.u32(static_cast<uint32_t>(s.geometries.size()));
  for (const Geometry& g : s.geometries) {
    d.text(g.name);
    d.u32(g.first_triangle);
    d.u32(g.triangle_count);
  }
  d.u32(static_cast<uint32_t>(s.materials.size()));
  for (const Material& m : s.materials) {
    d.text(m.name);
    for (int c = 0; c < 3; ++c) d.f32(m.diffuse[c]);
    d.u32(m.alpha_texture);
    d.f32(m.alpha_cutoff.value_or(-1.0f));
  }
  d.u32(static_cast<uint32_t>(s.alpha_textures.size()));
  for (const AlphaTexture& t : s.alpha_textures) {
    d.text(t.path);
    d.u32(t.width);
    d.u32(t.height);
    d.bytes(t.alpha.data(), t.alpha.size());
  }
  d.u32(static_cast<uint32_t>(s.instances.size()));
  for (const SceneInstance& i : s.instances) {
    d.text(i.name);
    d.u32(i.node);
    d.u32(i.mesh);
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) d.f64(i.world[c][r]);
    }
    d.u32(i.first_geometry);
    d.u32(i.geometry_count);
    for (const uint32_t p : i.primitives) d.u32(p);
  }
  return d.value();
}

std::string primitive(int positions, int mode, int material, int texcoords = -1, int indices = -1) {
  std::string out = "{\"attributes\":{\"POSITION\":" + std::to_string(positions) +
                    (texcoords >= 0 ? ",\"TEXCOORD_0\":" + std::to_string(texcoords) : "") + "},\"mode\":" +
                    std::to_string(mode) + ",\"material\":" + std::to_string(material);
  return out + (indices >= 0 ? ",\"indices\":" + std::to_string(indices) : "") + "}";
}

// Unused materials and an unused mesh, a primitive without triangles, a MASK material with and one without an
// alpha channel, a mesh used by three nodes (one reached through two parents, one mirrored), nested transforms.
test::GltfFile mixed_file() {
  test::GltfFile f;
  f.materials.push_back("{\"name\":\"unused\"}");
  const int leaf = f.mask_material(test::png_image(1, 2, 4, {255, 255, 255, 200, 255, 255, 255, 40}), 0.4);
  f.materials.push_back("{\"name\":\"stone\",\"pbrMetallicRoughness\":{\"baseColorFactor\":[0.3,0.2,0.1,1]}}");
  const int rgb = f.mask_material(test::png_image(1, 1, 3, {9, 9, 9}), 0.5, "rgb");
  const int stone = 2;
  const int quad = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0.5f});
  const int uv = f.texcoords({0, 0, 1, 0.25f, 0, 1, 1, 0.75f});
  const int quad_indices = f.indices16({0, 1, 2, 2, 1, 3});
  const int two = f.positions({0, 0, 0, 1, 0, 0});
  const int box = f.positions({-1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1, 0, 0, 1});
  const int pyramid = f.indices16({0, 2, 1, 0, 3, 2, 0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4});
  f.mesh({primitive(box, 4, stone, -1, pyramid)}, "unused mesh");
  f.mesh({primitive(two, 5, stone), primitive(quad, 4, leaf, uv, quad_indices), primitive(quad, 5, stone),
          primitive(quad, 6, leaf, uv)},
         "pair");
  f.mesh({primitive(box, 4, rgb, -1, pyramid)}, "rock");
  f.node("\"name\":\"root\",\"translation\":[1,2,3],\"children\":[1,2]");
  f.node("\"mesh\":1,\"rotation\":[0.1,0.7,0.2,0.6],\"scale\":[-1.5,0.5,2]");
  f.node("\"name\":\"holder\",\"mesh\":2,\"matrix\":[0,1,0,0, -1,0,0,0, 0,0,3,0, 7,-2,0.25,1],\"children\":[3]");
  f.node("\"name\":\"shared\",\"mesh\":1,\"scale\":[1e-3,2e3,0.7]");
  f.node("\"mesh\":2,\"translation\":[-4,0,1e5]");
  f.node("\"children\":[3],\"scale\":[1,1,-1]");
  f.scene_nodes = "0,4,5";
  return f;
}

// Digests of the one-level reader's Scene (commit b436b34, before the reader produced two levels), on the files as
// they are now.
TEST(GltfFlatten, GivesTheSceneOfTheOneLevelReader) {
  const std::pair<const char*, uint64_t> files[] = {
      {"scenes/instanced-garden.gltf", 0x161213d047aa8df7ull},
      {"scenes/thousand-rocks.gltf", 0x86d697b1425ae541ull},
      {"fuzz/corpus/gltf/strips-fans.gltf", 0x059a21424b812185ull},
      {"fuzz/corpus/gltf/triangle.gltf", 0x86a6c08c0ce34456ull},
      {"fuzz/corpus/gltf/triangle.glb", 0x86a6c08c0ce34456ull},
  };
  for (const auto& [file, expected] : files) {
    const auto path = test::source_dir() / file;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const Scene flat = flatten(load_gltf_instanced(path));
    EXPECT_EQ(digest(flat), expected) << file;
    EXPECT_EQ(flat.source, path.string());
  }
  const std::string mixed = mixed_file().json();
  EXPECT_EQ(digest(flatten(load_gltf_instanced_from_memory(mixed, "mixed.gltf"))), 0xd931ee7408fc6c06ull);
  EXPECT_EQ(digest(load_gltf_from_memory(mixed, "mixed.gltf")), 0xd931ee7408fc6c06ull);
}

/// The box world_bounds must give: the vertices of flatten()'s non-degenerate triangles.
Aabb flattened_bounds(const InstancedScene& scene) {
  const Scene flat = flatten(scene);
  Aabb box;
  for (const Triangle& t : flat.triangles) {
    const Vec3 a = flat.positions[t.v[0]], b = flat.positions[t.v[1]], c = flat.positions[t.v[2]];
    if (zero_area(a, b, c)) continue;
    box.grow(a);
    box.grow(b);
    box.grow(c);
  }
  return box;
}

// world_bounds moves only the instances that can widen the box; the box must be the one of every vertex all the same:
// random rotations, mirrors, scales down to ones that collapse triangles in float, translations far from the origin,
// and instances nested inside others.
TEST(WorldBounds, EqualsTheFlattenedScenesBoxAtAnyThreadCount) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int round = 0; round < 20; ++round) {
    InstancedScene scene;
    scene.source = "random";
    for (int m = 0; m < 3; ++m) {
      Scene mesh;
      mesh.source = "mesh";
      for (int v = 0; v < 30; ++v) mesh.positions.push_back(Vec3(u(rng), u(rng), u(rng)) * static_cast<float>(m + 1));
      mesh.geometries.push_back({"g", 0, 20});
      for (uint32_t t = 0; t < 20; ++t) {
        Triangle tri;
        for (int k = 0; k < 3; ++k) tri.v[k] = static_cast<uint32_t>(rng() % 30);
        tri.primitive = t;
        mesh.triangles.push_back(tri);
      }
      scene.meshes.push_back(std::move(mesh));
    }
    const double far = round % 2 ? 1e7 : 10.0;
    for (uint32_t i = 0; i < 300; ++i) {
      MeshInstance inst;
      inst.name = "node " + std::to_string(i);
      inst.mesh = i % 3;
      const double scale = std::pow(10.0, -12.0 * std::abs(u(rng)) * (i % 7 == 0));  // some scaled to nothing
      glm::dmat4 m(1.0);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) m[c][r] = scale * u(rng);
      m[3] = glm::dvec4(far * u(rng), far * u(rng), far * u(rng), 1.0);
      inst.world = m;
      scene.instances.push_back(std::move(inst));
    }
    const Aabb expected = flattened_bounds(scene);
    EXPECT_EQ(world_bounds(scene), expected) << "round " << round;
    EXPECT_EQ(world_bounds(scene, Executor(2)), expected) << "round " << round;
  }
}

}  // namespace
}  // namespace hwbvh
