// glTF input, flattened (docs/gltf.md): topologies, node transforms, instances and their geometry ids, mirrored
// winding, .gltf with data URIs or external buffers and .glb alike, alpha-tested MASK materials, --flatten.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <glm/geometric.hpp>
#include <glm/matrix.hpp>

#include "fixtures/paths.h"
#include "hwbvh/scene/alpha_test.h"
#include "hwbvh/scene/scene.h"
#include "scene/gltf_files.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

using test::GltfFile;
using test::ScratchDir;

Scene load(const GltfFile& f) { return load_gltf_from_memory(f.json(), "test.gltf"); }

std::string primitive(int positions, int mode = -1, int indices = -1, int material = -1, int texcoords = -1) {
  std::string attributes = "\"POSITION\":" + std::to_string(positions);
  if (texcoords >= 0) attributes += ",\"TEXCOORD_0\":" + std::to_string(texcoords);
  std::string out = "{\"attributes\":{" + attributes + "}";
  if (mode >= 0) out += ",\"mode\":" + std::to_string(mode);
  if (indices >= 0) out += ",\"indices\":" + std::to_string(indices);
  if (material >= 0) out += ",\"material\":" + std::to_string(material);
  return out + "}";
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The corners of triangle t, as positions.
std::vector<Vec3> corners(const Scene& s, uint32_t t) { return {s.vertex(t, 0), s.vertex(t, 1), s.vertex(t, 2)}; }

Vec3 normal(const Scene& s, uint32_t t) {
  return glm::cross(s.vertex(t, 1) - s.vertex(t, 0), s.vertex(t, 2) - s.vertex(t, 0));
}

TEST(GltfInput, TrianglesStripsAndFansAsTheSpecificationNumbersThem) {
  GltfFile f;
  const int quad = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0});
  const int fan = f.positions({0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, -1, 1, 0});
  const int tri_indices = f.indices16({0, 1, 2, 2, 1, 3});
  f.mesh({primitive(quad, 4, tri_indices), primitive(quad, 5), primitive(fan, 6)}, "shapes");
  f.node("\"mesh\":0");
  const Scene s = load(f);
  ASSERT_EQ(s.triangles.size(), 2u + 2u + 3u);
  ASSERT_EQ(s.geometries.size(), 3u);
  EXPECT_EQ(s.geometries[0].triangle_count, 2u);
  EXPECT_EQ(s.geometries[1].triangle_count, 2u);
  EXPECT_EQ(s.geometries[2].triangle_count, 3u);
  EXPECT_EQ(s.geometries[1].name, "node 0/shapes/1");
  // Strip triangle 1 is (v1, v3, v2) and fan triangle k is (v[k+1], v[k+2], v0): every one faces +z.
  for (uint32_t t = 0; t < s.triangles.size(); ++t) EXPECT_GT(normal(s, t).z, 0.0f) << t;
  EXPECT_EQ(corners(s, 3), (std::vector<Vec3>{{1, 0, 0}, {1, 1, 0}, {0, 1, 0}}));
  EXPECT_EQ(corners(s, 4), (std::vector<Vec3>{{1, 0, 0}, {1, 1, 0}, {0, 0, 0}}));
  for (uint32_t t = 0; t < s.triangles.size(); ++t) {
    EXPECT_EQ(s.triangles[t].primitive, t - s.geometries[s.triangles[t].geometry].first_triangle);
  }
}

TEST(GltfInput, NestedNodesComposeTranslationRotationScaleAndMatrices) {
  GltfFile f = test::one_triangle_file();
  // child: scale x by 2, then rotate 90 degrees about z, then the parent's matrix translates by (10, 0, 0).
  f.node("\"matrix\":[1,0,0,0, 0,1,0,0, 0,0,1,0, 10,0,0,1],\"children\":[1]");
  f.node("\"mesh\":0,\"rotation\":[0,0,0.7071067811865476,0.7071067811865476],\"scale\":[2,1,1]");
  f.scene_nodes = "0";
  const Scene s = load(f);
  ASSERT_EQ(s.triangles.size(), 1u);
  const std::vector<Vec3> expected = {{10, 0, 0}, {10, 2, 0}, {9, 0, 0}};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(s.vertex(0, k).x, expected[static_cast<std::size_t>(k)].x, 1e-6f) << k;
    EXPECT_NEAR(s.vertex(0, k).y, expected[static_cast<std::size_t>(k)].y, 1e-6f) << k;
    EXPECT_NEAR(s.vertex(0, k).z, expected[static_cast<std::size_t>(k)].z, 1e-6f) << k;
  }
  ASSERT_EQ(s.instances.size(), 1u);
  EXPECT_EQ(s.instances[0].node, 1u);
  EXPECT_DOUBLE_EQ(s.instances[0].world[3][0], 10.0);
}

TEST(GltfInput, InstancesOfOneMeshMapBackToInstanceAndPrimitive) {
  GltfFile f;
  const int p = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0});
  f.mesh({primitive(p), primitive(p)}, "pair");
  f.node("\"name\":\"left\",\"mesh\":0");
  f.node("\"children\":[2]");
  f.node("\"name\":\"right\",\"mesh\":0,\"translation\":[5,0,0]");
  f.scene_nodes = "0,1";
  const Scene s = load(f);
  ASSERT_EQ(s.instances.size(), 2u);
  ASSERT_EQ(s.geometries.size(), 4u);
  EXPECT_EQ(s.instances[1].name, "right");
  EXPECT_EQ(s.instances[1].node, 2u);
  EXPECT_EQ(s.instances[1].mesh, 0u);
  EXPECT_EQ(s.instances[1].first_geometry, 2u);
  EXPECT_EQ(s.instances[1].geometry_count, 2u);
  EXPECT_EQ(s.instances[1].primitives, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(s.geometries[3].name, "right/pair/1");
  EXPECT_EQ(s.vertex(s.geometries[3].first_triangle, 1), Vec3(6, 0, 0));
}

TEST(GltfInput, MirroredInstancesKeepTheirFrontFace) {
  GltfFile f = test::one_triangle_file();
  f.node("\"mesh\":0");
  f.node("\"mesh\":0,\"scale\":[-1,1,1]");               // mirrored: determinant -1
  f.node("\"mesh\":0,\"scale\":[-1,-1,1]");              // two mirrors: a rotation, determinant +1
  f.node("\"mesh\":0,\"children\":[4],\"scale\":[1,1,-1]");  // mirrored parent ...
  f.node("\"mesh\":0,\"scale\":[1,1,-1]");               // ... and child: determinant +1 again
  f.scene_nodes = "0,1,2,3";
  const Scene s = load(f);
  ASSERT_EQ(s.triangles.size(), 5u);
  // The triangle faces +z in object space; x and y mirrors leave it facing +z, a z mirror turns it to -z.
  EXPECT_GT(normal(s, 0).z, 0.0f);
  EXPECT_GT(normal(s, 1).z, 0.0f);
  EXPECT_EQ(corners(s, 1), (std::vector<Vec3>{{0, 0, 0}, {0, 1, 0}, {-1, 0, 0}}));  // corners 1 and 2 swapped
  EXPECT_GT(normal(s, 2).z, 0.0f);
  EXPECT_LT(normal(s, 3).z, 0.0f);
  EXPECT_GT(normal(s, 4).z, 0.0f);
  EXPECT_EQ(s.triangles[1].primitive, 0u);
}

TEST(GltfInput, DataUriExternalBufferAndGlbGiveTheSameScene) {
  ScratchDir dir;
  GltfFile f = test::one_triangle_file();
  f.node("\"mesh\":0,\"translation\":[1,2,3]");
  const Scene embedded = load(f);
  write(dir.path() / "scene.glb", f.glb());
  const Scene glb = load_gltf(dir.path() / "scene.glb");
  GltfFile external = f;
  external.buffer_uri = "scene.bin";
  write(dir.path() / "scene.bin", f.bin);
  write(dir.path() / "scene.gltf", external.json());
  const Scene from_file = load_gltf(dir.path() / "scene.gltf");
  for (const Scene* s : {&glb, &from_file}) {
    EXPECT_EQ(s->positions, embedded.positions);
    ASSERT_EQ(s->triangles.size(), 1u);
    EXPECT_EQ(s->vertex(0, 2), Vec3(1, 3, 3));
  }
  EXPECT_EQ(from_file.source, (dir.path() / "scene.gltf").string());
}

TEST(GltfInput, DefaultSceneIsTheOneNamed) {
  for (const uint32_t named : {0u, 1u}) {
    GltfFile f = test::one_triangle_file();
    for (int n = 0; n < 2; ++n) f.node("\"mesh\":0,\"translation\":[" + std::to_string(7 * n) + ",0,0]");
    // The later "scenes" and "scene" members replace the helper's (JSON objects keep the last).
    f.extra = "\"scenes\":[{\"nodes\":[0]},{\"nodes\":[1]}],\"scene\":" + std::to_string(named);
    const Scene s = load(f);
    ASSERT_EQ(s.instances.size(), 1u);
    EXPECT_EQ(s.instances[0].node, named);
  }
}

// A 1 x 2 RGBA texture: top row opaque (alpha 200), bottom row clear (alpha 40).
std::string two_row_texture(int channels = 4) {
  if (channels == 3) return test::png_image(1, 2, 3, {255, 255, 255, 0, 0, 0});
  return test::png_image(1, 2, 4, {255, 255, 255, 200, 255, 255, 255, 40});
}

// One triangle whose texture coordinates all sit at glTF v (0 = top of the image), with material `material`.
int textured_triangle(GltfFile& f, float v, int material) {
  const int p = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0});
  const int uv = f.texcoords({0.5f, v, 0.5f, v, 0.5f, v});
  return f.mesh({primitive(p, -1, -1, material, uv)});
}

TEST(GltfInput, MaskMaterialsAreAlphaTestedWithTheFileCutoff) {
  GltfFile f;
  const int leaf = f.mask_material(two_row_texture(), 0.6);
  f.node("\"mesh\":" + std::to_string(textured_triangle(f, 0.25f, leaf)));  // top row: alpha 200
  f.node("\"mesh\":" + std::to_string(textured_triangle(f, 0.75f, leaf)));  // bottom row: alpha 40
  const Scene s = load(f);
  ASSERT_EQ(s.alpha_textures.size(), 1u);
  EXPECT_EQ(s.alpha_textures[0].alpha, (std::vector<uint8_t>{200, 40}));
  EXPECT_TRUE(s.is_alpha_tested(0));
  EXPECT_EQ(s.materials[0].name, "leaf");
  ASSERT_TRUE(s.materials[0].alpha_cutoff.has_value());
  EXPECT_FLOAT_EQ(*s.materials[0].alpha_cutoff, 0.6f);

  const AlphaTest file_cutoff = make_alpha_test(s);
  EXPECT_FLOAT_EQ(file_cutoff.cutoff, 0.6f);
  EXPECT_TRUE(file_cutoff.passes(0, {0.3f, 0.3f}));   // 200 / 255 >= 0.6
  EXPECT_FALSE(file_cutoff.passes(1, {0.3f, 0.3f}));  // 40 / 255 < 0.6
  const AlphaTest given = make_alpha_test(s, 0.1f);  // --alpha-cutoff wins over the file
  EXPECT_TRUE(given.passes(1, {0.3f, 0.3f}));
}

TEST(GltfInput, MaskWithoutAnAlphaChannelIsOpaque) {
  GltfFile f;
  const int rgb = f.mask_material(two_row_texture(3), 0.5);
  f.node("\"mesh\":" + std::to_string(textured_triangle(f, 0.75f, rgb)));
  const Scene s = load(f);
  EXPECT_FALSE(s.is_alpha_tested(0));
  EXPECT_FALSE(make_alpha_test(s).any_tested());
}

TEST(GltfInput, DifferentCutoffsNeedTheOption) {
  GltfFile f;
  const int a = f.mask_material(two_row_texture(), 0.6, "a");
  const int b = f.mask_material(two_row_texture(), 0.3, "b");
  f.node("\"mesh\":" + std::to_string(textured_triangle(f, 0.25f, a)));
  f.node("\"mesh\":" + std::to_string(textured_triangle(f, 0.25f, b)));
  const Scene s = load(f);
  test::expect_bad_input([&] { (void)make_alpha_test(s); }, "test.gltf", "have different cutoffs");
  EXPECT_FLOAT_EQ(make_alpha_test(s, 0.5f).cutoff, 0.5f);
}

TEST(GltfInput, SceneFilesAreToldApartByTheirExtensionInAnyCase) {
  ScratchDir dir;
  GltfFile f = test::one_triangle_file();
  f.node("\"mesh\":0");
  const auto path = dir.path() / "scene.GLTF";
  write(path, f.json());
  EXPECT_TRUE(is_scene_file(path));
  EXPECT_TRUE(is_instanced_scene_file(path));
  EXPECT_TRUE(is_scene_file("a.glb"));
  EXPECT_TRUE(is_scene_file("a.obj"));
  EXPECT_FALSE(is_instanced_scene_file("a.OBJ"));
  EXPECT_FALSE(is_scene_file("a.hwbvh"));
  EXPECT_TRUE(std::holds_alternative<InstancedScene>(load_any_scene(path, {})));
  EXPECT_EQ(std::get<Scene>(load_any_scene(path, {.flatten = true})).triangles.size(), 1u);
}

// The shipped instanced scene (scenes/README.md): every rock triangle faces away from its instance's origin (the
// rock is star-shaped around it, and a linear map keeps that), mirrored instances included.
TEST(ProjectScenes, InstancedGardenRocksFaceOutwardEvenWhenMirrored) {
  const auto path = test::project_scene("instanced-garden.gltf");
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const Scene s = load_gltf(path);
  EXPECT_EQ(s.triangles.size(), 23162u);
  EXPECT_EQ(s.instances.size(), 331u);
  EXPECT_EQ(s.geometries.size(), 331u);
  EXPECT_EQ(make_alpha_test(s).tested_count(), 600u);
  uint32_t rocks = 0;
  uint32_t mirrored = 0;
  for (const SceneInstance& instance : s.instances) {
    const Geometry& g = s.geometries[instance.first_geometry];
    if (!g.name.ends_with("/rock/0")) continue;
    ++rocks;
    mirrored += glm::determinant(glm::dmat3(instance.world)) < 0.0 ? 1 : 0;
    const Vec3 origin(instance.world[3]);
    for (uint32_t t = g.first_triangle; t < g.first_triangle + g.triangle_count; ++t) {
      const Vec3 centre = (s.vertex(t, 0) + s.vertex(t, 1) + s.vertex(t, 2)) / 3.0f;
      EXPECT_GT(glm::dot(normal(s, t), centre - origin), 0.0f) << instance.name << " triangle " << t;
    }
  }
  EXPECT_GT(rocks, 0u);
  EXPECT_GT(mirrored, 0u);
}

}  // namespace
}  // namespace hwbvh
