// What the OBJ loader makes of valid input: triangulation, geometry order, indices, texture coordinates,
// materials and alpha textures, degenerate triangles.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hwbvh/scene/scene.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

using test::png_image;
using test::ScratchDir;

Scene load(const std::string& text) { return load_obj_from_memory(text, "test.obj"); }

std::vector<std::string> geometry_names(const Scene& scene) {
  std::vector<std::string> names;
  for (const Geometry& g : scene.geometries) names.push_back(g.name);
  return names;
}

// Every triangle lies in its geometry's range and its primitive id is its offset there.
void expect_contiguous_geometries(const Scene& scene) {
  uint32_t next = 0;
  for (uint32_t g = 0; g < scene.geometries.size(); ++g) {
    const Geometry& geometry = scene.geometries[g];
    EXPECT_EQ(geometry.first_triangle, next);
    EXPECT_GT(geometry.triangle_count, 0u);
    for (uint32_t p = 0; p < geometry.triangle_count; ++p) {
      const Triangle& t = scene.triangles[geometry.first_triangle + p];
      EXPECT_EQ(t.geometry, g);
      EXPECT_EQ(t.primitive, p);
    }
    next += geometry.triangle_count;
  }
  EXPECT_EQ(next, scene.triangles.size());
}

constexpr const char* kSquare = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";

TEST(ObjLoader, PolygonsAreFanTriangulated) {
  const Scene scene = load("v 0 0 0\nv 2 0 0\nv 3 1 0\nv 1 3 0\nv -1 1 0\nf 1 2 3 4 5\n");
  ASSERT_EQ(scene.triangles.size(), 3u);
  const uint32_t expected[3][3] = {{0, 1, 2}, {0, 2, 3}, {0, 3, 4}};
  for (int t = 0; t < 3; ++t) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(scene.triangles[t].v[k], expected[t][k]);
    EXPECT_EQ(scene.triangles[t].primitive, static_cast<uint32_t>(t));
  }
  EXPECT_EQ(scene.source, "test.obj");
  EXPECT_EQ(scene.positions.size(), 5u);
}

TEST(ObjLoader, FacesBeforeAnyGroupGoToDefault) {
  const Scene scene = load(std::string(kSquare) + "f 1 2 3\n");
  EXPECT_EQ(geometry_names(scene), std::vector<std::string>{"default"});
  EXPECT_EQ(scene.triangles[0].material, kNoIndex);
}

TEST(ObjLoader, GeometriesFollowFirstAppearanceAndAreContiguous) {
  const Scene scene = load(std::string(kSquare) +
                           "f 1 2 3\n"       // default, primitive 0
                           "g b\nf 1 2 4\n"  // b, primitive 0
                           "o a\nf 2 3 4\n"  // a, primitive 0
                           "g b\nf 1 3 4\n"  // b again, primitive 1
                           "g default\nf 4 3 2\n"
                           "o a\nf 4 2 1\n");
  EXPECT_EQ(geometry_names(scene), (std::vector<std::string>{"default", "b", "a"}));
  expect_contiguous_geometries(scene);
  ASSERT_EQ(scene.triangles.size(), 6u);
  // File order is kept inside each geometry.
  const uint32_t first_vertex[6] = {0, 3, 0, 0, 1, 3};
  for (int t = 0; t < 6; ++t) EXPECT_EQ(scene.triangles[t].v[0], first_vertex[t]) << t;
}

TEST(ObjLoader, GroupOrderCountsNamesBeforeTheirFirstFace) {
  // "a" appears first but gets its first face after "b"; empty groups make no geometry.
  const Scene scene = load(std::string(kSquare) + "g a\ng b\nf 1 2 3\ng empty\ng a\nf 1 3 4\n");
  EXPECT_EQ(geometry_names(scene), (std::vector<std::string>{"a", "b"}));
  expect_contiguous_geometries(scene);
}

TEST(ObjLoader, GroupNames) {
  const Scene scene = load(std::string(kSquare) +
                           "o   spaced name  \nf 1 2 3\n"
                           "g left right\nf 1 2 3\n"
                           "g\nf 1 2 3\n"
                           "o\tcube\t\nf 1 2 3\n"
                           "g W\xC3\xBCrfel\nf 1 2 3\n");
  EXPECT_EQ(geometry_names(scene),
            (std::vector<std::string>{"spaced name", "left right", "default", "cube", "W\xC3\xBCrfel"}));
}

TEST(ObjLoader, RelativeAndForwardIndices) {
  const Scene scene = load("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nf 1 2 4\nv 1 1 0\nf -1 -2 -3\n");
  ASSERT_EQ(scene.triangles.size(), 3u);
  EXPECT_EQ(scene.triangles[0].v[0], 0u);
  EXPECT_EQ(scene.triangles[0].v[2], 2u);
  EXPECT_EQ(scene.triangles[1].v[2], 3u);  // refers to a vertex defined further down
  EXPECT_EQ(scene.triangles[2].v[0], 3u);
  EXPECT_EQ(scene.triangles[2].v[2], 1u);
}

TEST(ObjLoader, TextureCoordinates) {
  const Scene scene = load(std::string(kSquare) +
                           "vt 0 0\nvt 1 0\nvt 1 1 0\nvt 0.5\nvn 0 0 1\n"
                           "f 1/1 2/2 3/3\n"
                           "f 1/1/1 3/3/1 4/4/1\n"
                           "f 1//1 2//1 3//1\n"
                           "f 1/1 2 3/3\n");
  ASSERT_EQ(scene.texcoords.size(), 4u);
  EXPECT_EQ(scene.texcoords[2], Vec2(1.0f, 1.0f));
  EXPECT_EQ(scene.texcoords[3], Vec2(0.5f, 0.0f));  // v defaults to 0
  EXPECT_EQ(scene.triangles[0].uv[2], 2u);
  EXPECT_EQ(scene.triangles[1].uv[2], 3u);
  // Without a texture coordinate on every corner a triangle has none.
  for (int t : {2, 3}) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(scene.triangles[t].uv[k], kNoIndex);
  }
}

TEST(ObjLoader, LineEndingsCommentsAndIgnoredStatements) {
  const std::string text =
      "\xEF\xBB\xBF# exported by hand\r\n"
      "v 0 0 0\r\nv +1 0 0\rv 0 .5 0\n"
      "  \t v\t0\t0\t1e-60   \n"  // below the float range: zero
      "\n# comment with a \xE9 (Latin-1)\n"
      "s off\ns 1\nmg 1\nl 1 2\np 3\n"
      "f 1 2 3\r\n"
      "f 1 2 4";  // no line end at the end of the file
  const Scene scene = load(text);
  ASSERT_EQ(scene.positions.size(), 4u);
  EXPECT_EQ(scene.positions[1].x, 1.0f);
  EXPECT_EQ(scene.positions[2].y, 0.5f);
  EXPECT_EQ(scene.positions[3].z, 0.0f);
  EXPECT_EQ(scene.triangles.size(), 2u);
}

TEST(ObjLoader, VertexColoursAndWeightsAreAccepted) {
  const Scene scene = load("v 0 0 0 1\nv 1 0 0 0.5 0.5 0.5\nv 0 1 0 1 0 0 1\nf 1 2 3\n");
  EXPECT_EQ(scene.positions[1], Vec3(1.0f, 0.0f, 0.0f));
}

TEST(ObjLoader, DegenerateTrianglesAreKeptAndCounted) {
  const Scene scene = load(
      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 2 0 0\nv 1 0 0\n"
      "f 1 2 3\n"   // fine
      "f 1 1 2\n"   // repeated index
      "f 2 5 3\n"   // two vertices at the same position
      "f 1 2 4\n"   // collinear
      "f 3 2 1\n");  // fine
  ASSERT_EQ(scene.triangles.size(), 5u);
  const bool expected[5] = {false, true, true, true, false};
  for (uint32_t t = 0; t < 5; ++t) EXPECT_EQ(scene.is_degenerate(t), expected[t]) << t;
  EXPECT_EQ(scene.degenerate_count(), 3u);
  EXPECT_EQ(scene.triangles[4].primitive, 4u);  // ids stay stable
}

TEST(ObjLoader, TinyButNonZeroAreaIsNotDegenerate) {
  const Scene scene = load("v 0 0 0\nv 1 0 0\nv 0.5 1e-30 0\nf 1 2 3\n");
  EXPECT_FALSE(scene.is_degenerate(0));
}

TEST(ObjLoader, BoundsCoverTriangleVerticesOnly) {
  const Scene scene = load("v 0 0 0\nv 1 2 0\nv 0 1 3\nv 100 100 100\nf 1 2 3\n");
  EXPECT_EQ(scene.bounds(), (Aabb{Vec3(0.0f), Vec3(1.0f, 2.0f, 3.0f)}));
}

TEST(ObjLoader, MaterialsFromMtl) {
  ScratchDir dir;
  dir.write("scene.mtl",
            "# comment\nnewmtl red\nKd 1 0 0\nNs 10\nillum 2\nmap_Kd red.png\n\n"
            "newmtl 01 - Default\nKd 0.5 0.5 0.5\nd 0.25\nTr 0.75\n"
            "newmtl red\nKd 0 0 1\n");  // a second definition of a name is ignored
  dir.write("scene.obj", std::string("mtllib scene.mtl\n") + kSquare +
                             "usemtl 01 - Default\nf 1 2 3\nusemtl red\nf 1 3 4\nusemtl unknown\nf 2 3 4\n");
  const Scene scene = load_obj(dir.path() / "scene.obj");
  ASSERT_EQ(scene.materials.size(), 2u);
  EXPECT_EQ(scene.materials[0].name, "red");
  EXPECT_EQ(scene.materials[0].diffuse, Vec3(1.0f, 0.0f, 0.0f));
  EXPECT_EQ(scene.materials[1].name, "01 - Default");
  EXPECT_EQ(scene.triangles[0].material, 1u);
  EXPECT_EQ(scene.triangles[1].material, 0u);
  EXPECT_EQ(scene.triangles[2].material, kNoIndex);
  // A dissolve value (d or Tr) without map_d does not make a material alpha-tested.
  EXPECT_FALSE(scene.materials[1].alpha_tested());
  EXPECT_TRUE(scene.alpha_textures.empty());
  for (uint32_t t = 0; t < 3; ++t) EXPECT_FALSE(scene.is_alpha_tested(t));
}

TEST(ObjLoader, MissingMtlLeavesTrianglesWithoutMaterial) {
  ScratchDir dir;
  dir.write("scene.obj", std::string("mtllib nowhere.mtl\n") + kSquare + "usemtl red\nf 1 2 3\n");
  const Scene scene = load_obj(dir.path() / "scene.obj");
  EXPECT_TRUE(scene.materials.empty());
  EXPECT_EQ(scene.triangles[0].material, kNoIndex);
}

TEST(ObjLoader, FromMemoryWithoutBaseDirIgnoresMaterials) {
  const Scene scene = load(std::string("mtllib scene.mtl\n") + kSquare + "usemtl red\nf 1 2 3\n");
  EXPECT_TRUE(scene.materials.empty());
}

TEST(ObjLoader, FromMemoryResolvesLibrariesAgainstBaseDir) {
  ScratchDir dir;
  dir.write("lib/a.mtl", "newmtl a\nKd 0 1 0\n");
  dir.write("lib/b.mtl", "newmtl b\nKd 0 0 1\n");
  const Scene scene = load_obj_from_memory(std::string("mtllib lib\\a.mtl lib/b.mtl\n") + kSquare +
                                               "usemtl b\nf 1 2 3\n",
                                           "memory.obj", dir.path());
  ASSERT_EQ(scene.materials.size(), 2u);
  EXPECT_EQ(scene.triangles[0].material, 1u);
}

TEST(ObjLoader, AlphaTexturesResolveBackslashesAndAreShared) {
  ScratchDir dir;
  // 2 x 2 RGBA: the alpha channel is the mask.
  dir.write("textures/leaf mask.png", png_image(2, 2, 4, {9, 9, 9, 0, 9, 9, 9, 255, 9, 9, 9, 128, 9, 9, 9, 7}));
  dir.write("materials/scene.mtl",
            "newmtl leaf\nKd 0 1 0\nmap_d ..\\textures\\leaf mask.png\n"
            "newmtl leaf2\nmap_d -clamp on ../textures/leaf mask.png\n"
            "newmtl opaque\nKd 1 1 1\nd 0.5\n");
  dir.write("scene.obj", std::string("mtllib materials/scene.mtl\n") + kSquare +
                             "usemtl leaf\nf 1 2 3\nusemtl opaque\nf 1 3 4\nusemtl leaf2\nf 2 3 4\n");
  const Scene scene = load_obj(dir.path() / "scene.obj");
  ASSERT_EQ(scene.alpha_textures.size(), 1u);
  const AlphaTexture& texture = scene.alpha_textures[0];
  EXPECT_EQ(std::filesystem::path(texture.path), (dir.path() / "textures" / "leaf mask.png").lexically_normal());
  EXPECT_EQ(texture.width, 2u);
  EXPECT_EQ(texture.height, 2u);
  EXPECT_EQ(texture.alpha, (std::vector<uint8_t>{0, 255, 128, 7}));
  EXPECT_EQ(scene.materials[0].alpha_texture, 0u);
  EXPECT_EQ(scene.materials[1].alpha_texture, 0u);
  EXPECT_TRUE(scene.is_alpha_tested(0));
  EXPECT_FALSE(scene.is_alpha_tested(1));
  EXPECT_TRUE(scene.is_alpha_tested(2));
}

TEST(ObjLoader, AlphaFromEachImageKind) {
  ScratchDir dir;
  dir.write("grey.png", png_image(2, 1, 1, {10, 200}));
  dir.write("grey_alpha.png", png_image(2, 1, 2, {10, 255, 200, 0}));           // the grey value
  dir.write("rgb.png", png_image(2, 1, 3, {255, 0, 0, 77, 77, 77}));            // luminance
  dir.write("rgba.png", png_image(2, 1, 4, {1, 2, 3, 40, 4, 5, 6, 250}));       // alpha
  dir.write("scene.mtl",
            "newmtl grey\nmap_d grey.png\nnewmtl grey_alpha\nmap_d grey_alpha.png\n"
            "newmtl rgb\nmap_d rgb.png\nnewmtl rgba\nmap_d rgba.png\n");
  dir.write("scene.obj", std::string("mtllib scene.mtl\n") + kSquare + "f 1 2 3\n");
  const Scene scene = load_obj(dir.path() / "scene.obj");
  ASSERT_EQ(scene.alpha_textures.size(), 4u);
  EXPECT_EQ(scene.alpha_textures[0].alpha, (std::vector<uint8_t>{10, 200}));
  EXPECT_EQ(scene.alpha_textures[1].alpha, (std::vector<uint8_t>{10, 200}));
  EXPECT_EQ(scene.alpha_textures[2].alpha, (std::vector<uint8_t>{54, 77}));  // 0.2126 * 255, grey stays grey
  EXPECT_EQ(scene.alpha_textures[3].alpha, (std::vector<uint8_t>{40, 250}));
}

TEST(ObjLoader, RelativePathFromTheCurrentFolder) {
  ScratchDir dir;
  dir.write("scene.mtl", "newmtl m\nKd 1 1 1\n");
  dir.write("scene.obj", std::string("mtllib scene.mtl\n") + kSquare + "usemtl m\nf 1 2 3\n");
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const Scene scene = load_obj("scene.obj");
  std::filesystem::current_path(previous);
  EXPECT_EQ(scene.materials.size(), 1u);
  EXPECT_EQ(scene.source, "scene.obj");
}

}  // namespace
}  // namespace hwbvh
