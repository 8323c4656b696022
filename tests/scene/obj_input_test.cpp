// OBJ and MTL that real exporters write: each case is a small file of its own, loaded as a user's file would be,
// with the warnings the loader gives (the CLI prints them on stderr) checked as well.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hwbvh/scene/scene.h"
#include "scene/polygon.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::expect_bad_input;
using test::png_image;
using test::ScratchDir;

constexpr const char* kTriangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";

// A scene loaded from memory together with the warnings it gave.
struct Loaded {
  Scene scene;
  std::vector<std::string> warnings;
};

Loaded load(const std::string& text, const std::filesystem::path& base_dir = {}) {
  Loaded out;
  out.scene = load_obj_from_memory(text, "in.obj", base_dir, [&](const std::string& w) { out.warnings.push_back(w); });
  return out;
}

Loaded load_file(const std::filesystem::path& path) {
  Loaded out;
  out.scene = load_obj(path, [&](const std::string& w) { out.warnings.push_back(w); });
  return out;
}

TEST(ObjInput, Latin1NamesBecomeValidUtf8) {
  const Loaded l = load(std::string("g caf\xE9\n") + kTriangle + "f 1 2 3\ng caf\xE8\nf 1 2 3\n");
  ASSERT_EQ(l.scene.geometries.size(), 2u);  // told apart by their bytes, though both names now read the same
  EXPECT_EQ(l.scene.geometries[0].name, "caf\xEF\xBF\xBD");
  EXPECT_EQ(l.scene.geometries[1].name, "caf\xEF\xBF\xBD");
  EXPECT_TRUE(l.warnings.empty());
}

TEST(ObjInput, Latin1MaterialNamesMatchAndBecomeValidUtf8) {
  ScratchDir dir;
  dir.write("latin1.mtl", "newmtl cr\xE8me\nKd 1 0 0\nnewmtl unused\xFF\n");
  const auto obj = dir.write("latin1.obj", std::string("mtllib latin1.mtl\nusemtl cr\xE8me\n") + kTriangle + "f 1 2 3\n");
  const Loaded l = load_file(obj);
  ASSERT_EQ(l.scene.materials.size(), 2u);
  EXPECT_EQ(l.scene.materials[0].name, "cr\xEF\xBF\xBDme");
  EXPECT_EQ(l.scene.materials[1].name, "unused\xEF\xBF\xBD");
  EXPECT_EQ(l.scene.triangles[0].material, 0u);
  EXPECT_EQ(l.scene.materials[0].diffuse, Vec3(1, 0, 0));
}

TEST(ObjInput, BackslashContinuesALine) {
  const Loaded l = load("v 0 0 \\\n 0\nv 1 0 0\nv 0 1 0\nf 1 \\\n2 \\  \n 3\n");
  // Continued statements count as one; messages give the line numbers of the file.
  ASSERT_EQ(l.scene.triangles.size(), 1u);
  EXPECT_EQ(l.scene.positions[0], Vec3(0, 0, 0));
  const Loaded unknown = load("v 0 0 \\\n 0\nbogus\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  EXPECT_THAT(unknown.warnings, ElementsAre("in.obj: line 3: unknown statement 'bogus' skipped"));
}

TEST(ObjInput, CommentsAfterData) {
  const Loaded l = load(
      "v 0 0 0 # origin\nv 1 0 0\t#x\nv 0 1 0 #\ng body # the body\nusemtl mat#2 # hash in a name\nf 1 2 3 # face\n");
  ASSERT_EQ(l.scene.triangles.size(), 1u);
  EXPECT_EQ(l.scene.geometries[0].name, "body");
  expect_bad_input([] { (void)load_obj_from_memory("v 0 0 0#x\n", "h.obj"); }, "h.obj", "'0#x' is not a number");
}

TEST(ObjInput, EmptyUsemtlAndNewmtlNames) {
  ScratchDir dir;
  dir.write("empty.mtl", "newmtl\nKd 0 1 0\nnewmtl red\nKd 1 0 0\n");
  const auto obj = dir.write("empty.obj", std::string("mtllib empty.mtl\n") + kTriangle +
                                              "usemtl red\nf 1 2 3\nusemtl\nf 1 2 3\n");
  const Loaded l = load_file(obj);
  ASSERT_EQ(l.scene.materials.size(), 2u);
  EXPECT_EQ(l.scene.materials[0].name, "");
  EXPECT_EQ(l.scene.materials[0].diffuse, Vec3(0, 1, 0));  // its Kd did not go to the material before it
  EXPECT_EQ(l.scene.triangles[0].material, 1u);
  EXPECT_EQ(l.scene.triangles[1].material, 0u);
  // Without an MTL, as Blender writes it for faces without a material: no material.
  EXPECT_EQ(load(std::string(kTriangle) + "usemtl\nf 1 2 3\n").scene.triangles[0].material, kNoIndex);
}

TEST(ObjInput, DosEndOfFileByte) {
  EXPECT_EQ(load(std::string(kTriangle) + "f 1 2 3\n\x1A").scene.triangles.size(), 1u);
  EXPECT_EQ(load(std::string(kTriangle) + "f 1 2 3\x1A").scene.triangles.size(), 1u);
  expect_bad_input([] { (void)load_obj_from_memory(std::string(kTriangle) + "\x1A\nf 1 2 3\n", "z.obj"); }, "z.obj",
                   "line 4: control byte 0x1A");
}

TEST(ObjInput, UnusedStatementsAreSkippedWithOneWarningPerKind) {
  const Loaded l = load(std::string(kTriangle) +
                        "vw 1 0.5\nt crease 2/1 1 2\ncstype bspline\ndeg 3\nbmat u 1 0\nstep 1\ncurv 0 1 1 2\n"
                        "curv 0 1 2 3\nsurf 0 1 0 1 1 2 3\nf 1 2 3\n");
  EXPECT_EQ(l.scene.triangles.size(), 1u);
  ASSERT_EQ(l.warnings.size(), 8u);
  EXPECT_EQ(l.warnings[0], "in.obj: line 4: 'vw' statement skipped: vertex weights not supported");
  EXPECT_EQ(l.warnings[1], "in.obj: line 5: 't' statement skipped: subdivision creases and tags not supported");
  EXPECT_EQ(l.warnings[6],
            "in.obj: line 10: 'curv' statement skipped: free-form geometry not supported (2 times; the first is shown)");
}

// Exporters write statements of their own: each is skipped, with one warning per keyword (its first line and a
// count) for the first 8 keywords and one for all the others, after the warnings of the known kinds.
TEST(ObjInput, UnknownStatementsAreSkippedWithOneWarningPerKeyword) {
  const Loaded l = load(std::string(kTriangle) + "shading on\nf 1 2 3\nshading off\nvendor_tag 7\nshading on\nvw 1 2\n");
  EXPECT_EQ(l.scene.triangles.size(), 1u);
  EXPECT_THAT(l.warnings, ElementsAre("in.obj: line 9: 'vw' statement skipped: vertex weights not supported",
                                      "in.obj: line 4: unknown statement 'shading' skipped (3 times; the first is shown)",
                                      "in.obj: line 7: unknown statement 'vendor_tag' skipped"));

  std::string many = std::string(kTriangle) + "f 1 2 3\n";
  for (int k = 0; k < 20; ++k) many += "kw" + std::to_string(k) + "\nkw" + std::to_string(k) + " again\n";
  const Loaded m = load(many);
  ASSERT_EQ(m.warnings.size(), 9u);
  EXPECT_EQ(m.warnings[0], "in.obj: line 5: unknown statement 'kw0' skipped (2 times; the first is shown)");
  EXPECT_EQ(m.warnings[7], "in.obj: line 19: unknown statement 'kw7' skipped (2 times; the first is shown)");
  EXPECT_EQ(m.warnings[8], "in.obj: line 21: 12 more unknown statement keywords skipped (24 lines; the first is shown)");
}

// A library that is not there is skipped with a warning naming it and where it was looked for; the libraries that
// are there still give their materials.
TEST(ObjInput, MissingMtlLibraryIsAWarningNamingIt) {
  ScratchDir dir;
  dir.write("found.mtl", "newmtl red\nKd 1 0 0\n");
  const auto obj = dir.write("scene.obj", std::string("mtllib nowhere.mtl found.mtl\n") + kTriangle +
                                              "usemtl red\nf 1 2 3\nmtllib nowhere.mtl gone.mtl\n");
  const Loaded l = load_file(obj);
  ASSERT_EQ(l.scene.materials.size(), 1u);
  EXPECT_EQ(l.scene.triangles[0].material, 0u);
  const std::string where = (dir.path() / "nowhere.mtl").string();
  EXPECT_THAT(l.warnings,
              ElementsAre(obj.string() + ": line 1: material library 'nowhere.mtl' not found (" + where +
                              "): its materials are unknown and faces using them get no material",
                          HasSubstr(": line 7: material library 'gone.mtl' not found")));
}

TEST(ObjInput, MtlSpectralAndXyzDiffuse) {
  ScratchDir dir;
  dir.write("kd.mtl", "newmtl spectral\nKd spectral grey.rfl 0.5\nnewmtl xyz\nKd xyz 0.9505 1 1.089\n"
                      "newmtl one\nKd xyz 0\n");
  const auto obj = dir.write("kd.obj", std::string("mtllib kd.mtl\n") + kTriangle + "f 1 2 3\n");
  const Loaded l = load_file(obj);
  ASSERT_EQ(l.scene.materials.size(), 3u);
  EXPECT_EQ(l.scene.materials[0].diffuse, Vec3(0.0f));  // no colour from a spectrum file: as without Kd
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(l.scene.materials[1].diffuse[c], 1.0f, 1e-3f);  // D65 white
  EXPECT_EQ(l.scene.materials[2].diffuse, Vec3(0.0f));
}

TEST(ObjInput, MissingAlphaTextureIsAnErrorOnlyWhenUsed) {
  ScratchDir dir;
  dir.write("mask.png", png_image(1, 1, 1, {255}));
  const auto mtl = dir.write("alpha.mtl", "newmtl ghost\nmap_d missing.png\nnewmtl leaf\nmap_d mask.png\n");
  const auto unused = dir.write("unused.obj", std::string("mtllib alpha.mtl\n") + kTriangle + "usemtl leaf\nf 1 2 3\n");
  const Loaded l = load_file(unused);
  ASSERT_EQ(l.scene.materials.size(), 2u);
  EXPECT_FALSE(l.scene.materials[0].alpha_tested());
  EXPECT_TRUE(l.scene.materials[1].alpha_tested());
  EXPECT_THAT(l.warnings, ElementsAre(mtl.string() + ": material 'ghost': map_d texture '" +
                                      (dir.path() / "missing.png").string() +
                                      "': file not found; ignored: no face uses the material"));
  const auto used = dir.write("used.obj", std::string("mtllib alpha.mtl\n") + kTriangle + "usemtl ghost\nf 1 2 3\n");
  expect_bad_input([&] { (void)load_obj(used); }, mtl.string(),
                   "material 'ghost': map_d texture '" + (dir.path() / "missing.png").string() + "': file not found");
}

TEST(ObjInput, UnneededIndicesOutOfRangeAreWarnings) {
  const Loaded l = load(std::string(kTriangle) + "vt 0 0\nvn 0 0 1\nf 1/1/2 2/5/1 3/1/-4\n");
  ASSERT_EQ(l.scene.triangles.size(), 1u);
  EXPECT_EQ(l.scene.triangles[0].uv[0], kNoIndex);  // the face's texture coordinates are dropped as a whole
  EXPECT_THAT(l.warnings,
              ElementsAre("in.obj: line 6: normal index -4 in '3/1/-4' is out of range: only 1 normals defined so "
                          "far; ignored (normals are not used) (2 times; the first is shown)",
                          "in.obj: line 6: texture coordinate index 5 is out of range: the file has 1 texture "
                          "coordinates; ignored (the face's material is not alpha-tested)"));
  expect_bad_input([] { (void)load_obj_from_memory(std::string(kTriangle) + "f 1 2 4\n", "v.obj"); }, "v.obj",
                   "line 4: vertex index 4 is out of range: the file has 3 vertices");
}

TEST(ObjInput, TexcoordsOutOfRangeOnAnAlphaTestedMaterialAreAnError) {
  ScratchDir dir;
  dir.write("mask.png", png_image(1, 1, 1, {255}));
  dir.write("leaf.mtl", "newmtl leaf\nmap_d mask.png\n");
  const auto obj = dir.write("leaf.obj", std::string("mtllib leaf.mtl\n") + kTriangle +
                                             "vt 0 0\nf 1/1 2/1 3/1\nusemtl leaf\nf 1/1 2/-2 3/1\n");
  expect_bad_input([&] { (void)load_obj(obj); }, obj.string(),
                   "line 8: texture coordinate index -2 in '2/-2' is out of range: only 1 texture coordinates "
                   "defined so far (alpha-tested material 'leaf' needs texture coordinates)");
}

// Twice the area of triangle (a, b, c) in the z = 0 plane, signed.
float area2(Vec3 a, Vec3 b, Vec3 c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); }

TEST(ObjInput, ConcavePolygonsAreEarClipped) {
  // An arrowhead: its fan from corner 0 (4 0) would cover the notch at (2 1).
  const Loaded l = load("v 0 0 0\nv 4 0 0\nv 4 4 0\nv 2 1 0\nv 0 4 0\nf 2 3 4 5 1\n");
  ASSERT_EQ(l.scene.triangles.size(), 3u);
  float total = 0.0f;
  for (uint32_t t = 0; t < 3; ++t) {
    const float a = area2(l.scene.vertex(t, 0), l.scene.vertex(t, 1), l.scene.vertex(t, 2));
    EXPECT_GT(a, 0.0f) << "triangle " << t << " turns against the outline";
    total += a;
  }
  EXPECT_FLOAT_EQ(total, 2.0f * 10.0f);  // 4 x 4 square less the notch's 6
  EXPECT_TRUE(l.warnings.empty());
}

TEST(ObjInput, ConvexPolygonsAndQuadsKeepTheFan) {
  const Loaded l = load("v 0 0 0\nv 2 0 0\nv 3 1 0\nv 2 2 0\nv 0 2 0\nf 1 2 3 4 5\nf 1 2 4 5\n");
  ASSERT_EQ(l.scene.triangles.size(), 5u);
  const uint32_t fan[5][3] = {{0, 1, 2}, {0, 2, 3}, {0, 3, 4}, {0, 1, 3}, {0, 3, 4}};
  for (uint32_t t = 0; t < 5; ++t) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(l.scene.triangles[t].v[k], fan[t][k]) << t;
  }
}

TEST(ObjInput, SelfIntersectingAndDegeneratePolygonsFallBackToTheFan) {
  const Loaded l = load("v 0 0 0\nv 2 0 0\nv 0 2 0\nv 2 2 0\nv 1 3 0\nv 3 3 0\nf 1 2 3 4 5\n"
                        "f 1 1 1 1 1\n");
  ASSERT_EQ(l.scene.triangles.size(), 6u);
  EXPECT_EQ(l.scene.triangles[1].v[1], 2u);  // the fan (0, 2, 3)
  EXPECT_THAT(l.warnings, ElementsAre("in.obj: line 7: polygon of 5 corners is degenerate or self-intersecting: "
                                      "fan-triangulated (2 times; the first is shown)"));
}

// A comb: `teeth` zigzag corners along y = 1..2 over a base along y = 0, concave at every other tooth.
std::vector<Vec3> comb(uint32_t teeth) {
  std::vector<Vec3> corners;
  for (uint32_t i = 0; i < teeth; ++i) corners.emplace_back(static_cast<float>(i), i % 2 == 0 ? 1.0f : 2.0f, 0.0f);
  corners.emplace_back(static_cast<float>(teeth - 1), 0.0f, 0.0f);
  corners.emplace_back(0.0f, 0.0f, 0.0f);
  return corners;
}

TEST(Polygon, LongConcaveOutlinesAreFanned) {
  std::vector<std::array<uint32_t, 3>> triangles;
  const std::vector<Vec3> small = comb(20);
  EXPECT_EQ(scene::triangulate_polygon(small, triangles), scene::PolygonTriangulation::EarClipped);
  EXPECT_EQ(triangles.size(), small.size() - 2);
  const std::vector<Vec3> large = comb(scene::kMaxClippedCorners);
  EXPECT_EQ(scene::triangulate_polygon(large, triangles), scene::PolygonTriangulation::TooLarge);
  EXPECT_EQ(triangles.size(), large.size() - 2);
}

}  // namespace
}  // namespace hwbvh
