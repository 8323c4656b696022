// Bad input: every case throws one hwbvh::Error of kind BadInput that names the file (and the line when there
// is one). Also: no input, however broken, crashes the loader or escapes as another exception type.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "hwbvh/scene/scene.h"
#include "scene/mtl_reader.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

using test::expect_bad_input;
using test::png_image;
using test::ScratchDir;

constexpr const char* kTriangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";

// Loads `text` from memory as "bad.obj" and expects an error containing `fragment`.
void expect_rejected(const std::string& text, const std::string& fragment) {
  SCOPED_TRACE(text.substr(0, 200));
  expect_bad_input([&] { (void)load_obj_from_memory(text, "bad.obj"); }, "bad.obj", fragment);
}

TEST(ObjErrors, MissingFile) {
  const std::string missing = "/nonexistent/hwbvh/scene.obj";
  expect_bad_input([&] { (void)load_obj(missing); }, missing, "file not found");
}

TEST(ObjErrors, DirectoryInsteadOfFile) {
  ScratchDir dir;
  expect_bad_input([&] { (void)load_obj(dir.path()); }, dir.path().string(), "is a directory");
}

TEST(ObjErrors, BinaryGarbage) {
  expect_rejected(std::string("v 0 0 0\nv 1 0 0\n\0\0\0\x01", 20), "line 3: control byte 0x00");
  std::string invalid_utf8 = std::string(kTriangle) + "# ";
  for (int i = 0; i < 64; ++i) invalid_utf8 += static_cast<char>(0xFF - i % 8);
  expect_rejected(invalid_utf8, "not a text file");
}

TEST(ObjErrors, MalformedStatements) {
  const std::string t = kTriangle;
  expect_rejected(t + "f1 2 3\n", "no triangles: the file has no faces");  // 'f1' is skipped as unknown
  expect_rejected("v 1 2\n", "line 1: 'v' needs 3 to 7 numbers, found 2");
  expect_rejected("v 1 2 3 4 5 6 7 8\n", "'v' needs 3 to 7 numbers, found 8");
  expect_rejected("v 1 2 x\n", "line 1: 'v': 'x' is not a number");
  expect_rejected("v 1 2 0x10\n", "'0x10' is not a number");
  expect_rejected("v 1 2 1e\n", "'1e' is not a number");
  expect_rejected("v 1 2 .\n", "'.' is not a number");
  expect_rejected("v 1 2 1,5\n", "'1,5' is not a number");
  expect_rejected(t + "vt\n", "'vt' needs 1 to 3 numbers, found 0");
  expect_rejected(t + "vn 0 1\n", "'vn' needs 3 numbers, found 2");
  expect_rejected(t + "f 1 2\n", "line 4: 'f' needs at least 3 vertices, found 2");
  expect_rejected(t + "f 1 2 3.0\n", "vertex index '3.0' in '3.0' is not an integer");
  expect_rejected(t + "f 1 2 a\n", "'a' is not an integer");
  expect_rejected(t + "f 1 2 3/1/1/1\n", "'3/1/1/1' is not v, v/vt, v//vn or v/vt/vn");
  expect_rejected(t + "f 1 2 3/\n", "'3/' is not v, v/vt, v//vn or v/vt/vn");
  expect_rejected(t + "f 1 2 /3\n", "'/3' is not v, v/vt, v//vn or v/vt/vn");
  expect_rejected(t + "f 1 2 3//\n", "'3//' is not v");
  expect_rejected(t + "mtllib\nf 1 2 3\n", "'mtllib' needs a file name");
}

TEST(ObjErrors, IndicesOutOfRange) {
  const std::string t = kTriangle;
  expect_rejected(t + "f 0 1 2\n", "line 4: vertex index 0 in '0': OBJ indices start at 1");
  expect_rejected(t + "f 1 2 3\nf 1 2 4\nf 1 2 3\n", "line 5: vertex index 4 is out of range: the file has 3 vertices");
  expect_rejected(t + "f 1 2 99999999999999999999\n", "is not an integer");
  expect_rejected(t + "f 1 2 4294967296\n", "vertex index 4294967296 is out of range");
  expect_rejected(t + "f -1 -2 -4\n", "line 4: vertex index -4 in '-4' is out of range: only 3 vertices defined");
  expect_rejected(t + "f -1 -2 -9223372036854775808\n", "is out of range");
  // Texture coordinate and normal indices out of range are warnings unless needed (obj_input_test.cpp); malformed
  // ones stay errors.
  expect_rejected(t + "f 1/0 2/1 3/1\n", "texture coordinate index 0");
  expect_rejected(t + "f 1//x 2//1 3//1\n", "normal index 'x' in '1//x' is not an integer");
  expect_rejected(t + "l 1 7\nf 1 2 3\n", "line 4: vertex index 7 is out of range");
}

TEST(ObjErrors, NonFiniteNumbers) {
  expect_rejected("v 0 nan 0\n", "line 1: 'v': 'nan' is NaN, infinite or beyond the float range");
  expect_rejected("v 0 0 -inf\n", "'-inf' is NaN");
  expect_rejected("v 0 0 Infinity\n", "'Infinity' is NaN");
  expect_rejected("v 0 0 1.#INF\n", "'1.#INF' is NaN");
  expect_rejected("v 0 0 -1.#IND\n", "'-1.#IND' is NaN");
  expect_rejected("v 0 0 1e39\n", "'1e39' is NaN, infinite or beyond the float range");
  expect_rejected("v 0 0 1e400\n", "'1e400' is NaN");
  expect_rejected(std::string(kTriangle) + "vt 0.5 NaN\n", "'vt': 'NaN' is NaN");
  expect_rejected(std::string(kTriangle) + "vn 0 0 inf\n", "'vn': 'inf' is NaN");
}

TEST(ObjErrors, EmptyScenes) {
  expect_rejected("", "no triangles");
  expect_rejected("# nothing but a comment\n", "no triangles");
  expect_rejected(kTriangle, "no triangles");
  expect_rejected(std::string(kTriangle) + "l 1 2\np 3\n", "no triangles");
  expect_rejected(std::string(kTriangle) + "v 2 0 0\nf 1 1 2\nf 1 2 4\n",
                  "all 2 triangles are degenerate (zero area)");
}

TEST(ObjErrors, MessagesNameTheFileOnDisk) {
  ScratchDir dir;
  const auto path = dir.write("broken.obj", std::string(kTriangle) + "f 1 2 5\n");
  expect_bad_input([&] { (void)load_obj(path); }, path.string(), "line 4: vertex index 5 is out of range");
}

TEST(ObjErrors, MissingAlphaTextureNamesTextureAndMtl) {
  ScratchDir dir;
  const auto mtl = dir.write("scene.mtl", "newmtl leaf\nmap_d textures\\missing.png\n");
  const auto obj = dir.write("scene.obj", std::string("mtllib scene.mtl\nusemtl leaf\n") + kTriangle + "f 1 2 3\n");
  const std::string message =
      expect_bad_input([&] { (void)load_obj(obj); }, mtl.string(), "material 'leaf': map_d texture '");
  EXPECT_NE(message.find("missing.png"), std::string::npos) << message;
  EXPECT_NE(message.find("file not found"), std::string::npos) << message;
}

TEST(ObjErrors, UndecodableAlphaTexture) {
  ScratchDir dir;
  dir.write("mask.png", "this is not an image");
  std::string truncated = png_image(4, 4, 1, std::vector<uint8_t>(16, 255));
  truncated.resize(truncated.size() / 2);
  dir.write("truncated.png", truncated);
  const auto mtl = dir.write("scene.mtl", "newmtl leaf\nmap_d mask.png\n");
  const auto mtl2 = dir.write("scene2.mtl", "newmtl leaf\nmap_d truncated.png\n");
  const auto obj = dir.write("scene.obj", std::string("mtllib scene.mtl\nusemtl leaf\n") + kTriangle + "f 1 2 3\n");
  const auto obj2 =
      dir.write("scene2.obj", std::string("mtllib scene2.mtl\nusemtl leaf\n") + kTriangle + "f 1 2 3\n");
  expect_bad_input([&] { (void)load_obj(obj); }, mtl.string(), "mask.png': cannot decode image");
  expect_bad_input([&] { (void)load_obj(obj2); }, mtl2.string(), "truncated.png': cannot decode image");
}

TEST(ObjErrors, MalformedMtl) {
  ScratchDir dir;
  const auto obj = dir.write("scene.obj", std::string("mtllib scene.mtl\n") + kTriangle + "f 1 2 3\n");
  const auto expect_mtl_rejected = [&](const std::string& mtl_text, const std::string& fragment) {
    SCOPED_TRACE(mtl_text);
    const auto mtl = dir.write("scene.mtl", mtl_text);
    expect_bad_input([&] { (void)load_obj(obj); }, mtl.string(), fragment);
  };
  expect_mtl_rejected("newmtl a\nKd 1 0\n", "line 2: 'Kd' needs 3 numbers (r g b), found 2");
  expect_mtl_rejected("newmtl a\nKd 1 0 nan\n", "line 2: 'Kd': non-finite value 'nan'");
  expect_mtl_rejected("newmtl a\nKd 1 0 red\n", "'red' is not a number");
  expect_mtl_rejected("newmtl a\nKd xyz 1 1\n", "line 2: 'Kd xyz' needs 1 or 3 numbers (x y z)");
  expect_mtl_rejected("newmtl a\nKd spectral\n", "line 2: 'Kd spectral' needs a file name and an optional factor");
  expect_mtl_rejected("newmtl a\nKd spectral a.rfl x\n", "line 2: 'Kd': 'x' is not a number");
  expect_mtl_rejected("newmtl a\nmap_d\n", "line 2: 'map_d' needs a texture file name");
  expect_mtl_rejected("newmtl a\nmap_d -clamp on\n", "material 'a': 'map_d' has texture options but no file name");
  expect_mtl_rejected("newmtl a\n{Kd} 1 1 1\n", "line 2: not an MTL statement: '{Kd}'");
  expect_mtl_rejected(std::string("newmtl a\n\x01\x02\x03", 12), "line 2: control byte 0x01");
  std::filesystem::remove(dir.path() / "scene.mtl");
  std::filesystem::create_directory(dir.path() / "scene.mtl");
  expect_bad_input([&] { (void)load_obj(obj); }, (dir.path() / "scene.mtl").string(), "is a directory");
}

// Random bytes, and valid OBJ text with random damage: either a scene or a BadInput error, nothing else.
// (The real fuzz target runs under libFuzzer with sanitizers; this keeps a cheap version in every test run.)
TEST(ObjErrors, GarbageNeverCrashes) {
  std::mt19937 random(12345);
  const std::string valid =
      "mtllib x.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 1\nvt 0 0\nvt 1 1\nvn 0 0 1\n"
      "g a b\nusemtl m\nf 1/1/1 2/2/1 3/1/1 4/2/1\no c\nf -1 -2 -3\nl 1 2\ns 1\n";
  const std::string alphabet = "vtnfglopsu/-+.eE0123456789 \t\r\n#\\:;\x01\xC3\xA9\xFF";
  int loaded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    if (round % 3 == 0) {
      text.resize(random() % 200);
      for (char& c : text) c = static_cast<char>(random());
    } else {
      text = valid;
      const int edits = 1 + static_cast<int>(random() % 6);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = random() % (text.size() + 1);
        const char c = alphabet[random() % alphabet.size()];
        switch (random() % 3) {
          case 0: text.insert(at, 1, c); break;
          case 1: if (at < text.size()) text.erase(at, 1); break;
          default: if (at < text.size()) text[at] = c; break;
        }
      }
    }
    try {
      const Scene scene = load_obj_from_memory(text, "garbage.obj");
      EXPECT_FALSE(scene.triangles.empty());
      ++loaded;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    }
  }
  EXPECT_GT(loaded, 50);  // not every damaged file is rejected: both paths are exercised
}

TEST(ObjErrors, GarbageMtlNeverCrashes) {
  std::mt19937 random(54321);
  const std::string valid =
      "newmtl a\nKd 1 0 0\nd 0.5\nmap_d -clamp on -o 1 2 3 -s 1 1 x.png\nmap_Kd -bm 2 y.png\nnewmtl b\nillum 2\n";
  const std::string alphabet = "newmtlKdmap_-o. 0123456789\t\r\n#\\";
  for (int round = 0; round < 2000; ++round) {
    std::string text = valid;
    for (int e = 0; e < 4; ++e) {
      const std::size_t at = random() % (text.size() + 1);
      const char c = alphabet[random() % alphabet.size()];
      if (random() % 2 == 0) {
        text.insert(at, 1, c);
      } else if (at < text.size()) {
        text.erase(at, 1);
      }
    }
    try {
      (void)scene::parse_mtl(text, "garbage.mtl", "/nonexistent");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    }
  }
}

}  // namespace
}  // namespace hwbvh
