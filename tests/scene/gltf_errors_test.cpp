// Bad glTF input: every case throws one hwbvh::Error of kind BadInput that names the file and the problem, from
// the two-level reader (load_gltf_instanced) and the flattening one (load_gltf) alike.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>

#include "hwbvh/scene/scene.h"
#include "scene/gltf_files.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

using test::expect_bad_input;
using test::GltfFile;
using test::one_triangle_file;

// Refused by the two-level reader, and so by the flattening one.
void expect_rejected(const std::string& bytes, const std::string& fragment) {
  SCOPED_TRACE(bytes.substr(0, 300));
  expect_bad_input([&] { (void)load_gltf_instanced_from_memory(bytes, "bad.gltf"); }, "bad.gltf", fragment);
  expect_bad_input([&] { (void)load_gltf_from_memory(bytes, "bad.gltf"); }, "bad.gltf", fragment);
}

// One triangle instanced by one node with `node_members`.
GltfFile placed(const std::string& node_members) {
  GltfFile f = one_triangle_file();
  f.node("\"mesh\":0" + (node_members.empty() ? "" : "," + node_members));
  return f;
}

TEST(GltfErrors, MissingFilesAndBuffers) {
  const std::string missing = "/nonexistent/hwbvh/scene.gltf";
  expect_bad_input([&] { (void)load_gltf(missing); }, missing, "file not found");
  test::ScratchDir dir;
  GltfFile f = placed("");
  f.buffer_uri = "missing.bin";
  const auto path = dir.path() / "scene.gltf";
  std::ofstream(path) << f.json();
  expect_bad_input([&] { (void)load_gltf(path); }, path.string(), "File not found : missing.bin");
  // From memory no external file is read.
  expect_rejected(f.json(), "File not found : missing.bin");
}

TEST(GltfErrors, NotGltf) {
  expect_rejected("", "JSON string too short");
  expect_rejected("{\"asset\":{\"version\":\"2.0\"},", "bad.gltf: ");
  expect_rejected("{\"nodes\":[]}", "\"asset\" object not found");
  expect_rejected(std::string("glTF\x02\0\0\0\x0c\0\0\0", 12), "Too short data size for glTF Binary");
}

// A file named .glb is GLB (or, misnamed, glTF JSON): anything else is "not a glTF binary", not a JSON syntax error.
// GLB containers of another version than 2 are refused by their version (tinygltf does not read it).
TEST(GltfErrors, NotAGltfBinary) {
  const auto expect_not_glb = [](const std::string& bytes) {
    expect_bad_input([&] { (void)load_gltf_instanced_from_memory(bytes, "bad.glb"); }, "bad.glb",
                     "bad.glb: not a glTF binary: a .glb file starts with the magic 'glTF'");
  };
  expect_not_glb("");
  expect_not_glb(std::string("PK\x03\x04\x14\0\0\0garbage", 15));
  expect_not_glb("[1, 2, 3]");
  GltfFile f = placed("");
  EXPECT_EQ(load_gltf_instanced_from_memory(f.json(), "misnamed.GLB").meshes.size(), 1u);
  EXPECT_EQ(load_gltf_instanced_from_memory(f.glb(), "binary.gltf").meshes.size(), 1u);  // GLB by its magic

  std::string glb = f.glb();
  glb[4] = 1;  // the version word
  expect_bad_input([&] { (void)load_gltf_instanced_from_memory(glb, "old.glb"); }, "old.glb",
                   "glTF 1.0 binary (GLB version 1) is not supported: hwbvh reads glTF 2.0");
  glb[4] = 3;
  expect_bad_input([&] { (void)load_gltf_instanced_from_memory(glb, "new.glb"); }, "new.glb",
                   "GLB version 3 is not supported");
}

// glTF 1.0 keeps scenes, nodes and meshes in objects, not arrays: refused by its asset.version, not as a file
// without a scene. Later 2.x versions are read as 2.0 unless their minVersion asks for more.
TEST(GltfErrors, OtherVersionsThanTwo) {
  expect_rejected(test::gltf1_box(), "glTF 1.0 is not supported (asset.version '1.0'): hwbvh reads glTF 2.0");
  GltfFile f = placed("");
  std::string json = f.json();
  const std::string two = "\"version\":\"2.0\"";
  ASSERT_NE(json.find(two), std::string::npos);
  json.replace(json.find(two), two.size(), "\"version\":\"3.0\"");
  expect_rejected(json, "glTF 3.0 is not supported");
  json.replace(json.find("3.0"), 3, "2.1");
  EXPECT_EQ(load_gltf_instanced_from_memory(json, "later.gltf").meshes.size(), 1u);
  json.replace(json.find("\"2.1\""), 5, "\"2.1\",\"minVersion\":\"2.1\"");
  expect_rejected(json, "requires glTF 2.1 (asset.minVersion): hwbvh reads glTF 2.0");
}

TEST(GltfErrors, ShortBuffers) {
  GltfFile f = placed("");
  f.buffer_length = static_cast<int64_t>(f.bin.size()) + 4;  // the data URI holds fewer bytes than byteLength
  const std::string message = test::expect_bad_input([&] { (void)load_gltf_from_memory(f.json(), "bad.gltf"); },
                                                     "bad.gltf", "Failed to decode 'uri' : data:application/octet-stream;base64,AAAAAAAAAAA... in Buffer");
  EXPECT_LT(message.size(), 120u) << "the data URI is shortened";
  GltfFile g = placed("");
  g.buffer_views[0] = "{\"buffer\":0,\"byteOffset\":4,\"byteLength\":36}";
  expect_rejected(g.json(), "POSITION (accessor 0): buffer view 0 (bytes 4 + 36) runs past the end of buffer 0");
}

TEST(GltfErrors, AccessorsOutOfRange) {
  GltfFile f = placed("");
  f.accessors[0] = "{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"}";
  expect_rejected(f.json(), "4 elements at offset 0 run past the end of buffer view 0 (36 bytes)");
  f.accessors[0] = "{\"bufferView\":0,\"byteOffset\":4,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}";
  expect_rejected(f.json(), "run past the end of buffer view 0");
  f.accessors[0] = "{\"bufferView\":0,\"componentType\":5126,\"count\":3,\"type\":\"VEC2\"}";
  expect_rejected(f.json(), "wrong element type");
  f.accessors[0] = "{\"bufferView\":0,\"componentType\":5121,\"count\":3,\"type\":\"VEC3\"}";
  expect_rejected(f.json(), "wrong component type 5121");
  f.accessors[0] = "{\"bufferView\":7,\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}";
  expect_rejected(f.json(), "mesh 0 primitive 0 POSITION (accessor 0): buffer view 7 does not exist (the file has 1)");
  GltfFile g = one_triangle_file();
  g.mesh({"{\"attributes\":{\"POSITION\":9}}"});
  g.node("\"mesh\":1");
  expect_rejected(g.json(), "mesh 1 primitive 0 POSITION: accessor 9 does not exist (the file has 1)");
  GltfFile h = placed("");
  h.nodes[0] = "{\"mesh\":5}";
  expect_rejected(h.json(), "node 0: mesh 5 does not exist (the file has 1)");
  h.scene_nodes = "3";
  expect_rejected(h.json(), "node 3 does not exist (the file has 1)");
}

TEST(GltfErrors, IndicesPastTheVertexCount) {
  GltfFile f;
  const int p = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0});
  const int i = f.indices({0, 1, 3});
  f.mesh({"{\"attributes\":{\"POSITION\":" + std::to_string(p) + "},\"indices\":" + std::to_string(i) + "}"});
  f.node("\"mesh\":0");
  expect_rejected(f.json(), "mesh 0 primitive 0: index 3 (element 2) is past the 3 vertices");
}

TEST(GltfErrors, PointsAndLinesAreRefused) {
  for (const auto& [mode, name] : std::vector<std::pair<int, std::string>>{
           {0, "points"}, {1, "lines"}, {2, "line loop"}, {3, "line strip"}}) {
    GltfFile f;
    const int p = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0});
    f.mesh({"{\"attributes\":{\"POSITION\":" + std::to_string(p) + "},\"mode\":" + std::to_string(mode) + "}"});
    f.node("\"mesh\":0");
    expect_rejected(f.json(), "mesh 0 primitive 0: mode '" + name +
                                  "' is not supported (only triangles, triangle strips and triangle fans)");
  }
}

TEST(GltfErrors, NodeCycles) {
  GltfFile f = one_triangle_file();
  f.node("\"mesh\":0,\"children\":[1]");
  f.node("\"children\":[2]");
  f.node("\"name\":\"loop\",\"children\":[1]");
  f.scene_nodes = "0";
  expect_rejected(f.json(), "the node graph has a cycle: node 1 is its own ancestor");
  GltfFile self = one_triangle_file();
  self.node("\"name\":\"me\",\"mesh\":0,\"children\":[0]");
  expect_rejected(self.json(), "node 0 'me' is its own ancestor");
}

// Shared subtrees are instanced once per path to them: 21 levels of a node listing its child twice would make
// 2^21 paths, which is refused before it is walked.
TEST(GltfErrors, NodeGraphsThatExpandTooFar) {
  GltfFile f = one_triangle_file();
  for (int level = 0; level < 21; ++level) {
    f.node("\"children\":[" + std::to_string(level + 1) + "," + std::to_string(level + 1) + "]");
  }
  f.node("\"mesh\":0");
  f.scene_nodes = "0";
  expect_rejected(f.json(), "the node graph expands to more than 1048576 nodes");
}

TEST(GltfErrors, NonFiniteAndSingularMatrices) {
  expect_rejected(placed("\"matrix\":[1e999,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]").json(), "number overflow");
  expect_rejected(placed("\"scale\":[0,1,1]").json(), "node 0: world matrix is singular (determinant 0)");
  expect_rejected(placed("\"matrix\":[1,0,0,0, 0,1,0,0, 2,2,0,0, 0,0,0,1]").json(), "world matrix is singular");
  expect_rejected(placed("\"translation\":[1e300,0,0],\"scale\":[1e300,1,1]").json(), "beyond the float range");
  expect_rejected(placed("\"matrix\":[1,0,0,0, 0,1,0,0, 0,0,1,0.5, 0,0,0,1]").json(), "not affine");
  expect_rejected(placed("\"rotation\":[0,0,0,0]").json(), "rotation is a zero quaternion");
  expect_rejected(placed("\"scale\":[1,1]").json(), "scale has 2 numbers, not 3");
  // Finite factors whose product is not: the world matrix overflows.
  GltfFile f = one_triangle_file();
  f.node("\"scale\":[1e200,1e200,1e200],\"children\":[1]");
  f.node("\"mesh\":0,\"scale\":[1e200,1e200,1e200]");
  f.scene_nodes = "0";
  expect_rejected(f.json(), "node 1: world matrix is not finite");
}

TEST(GltfErrors, UnsupportedRequiredExtensions) {
  GltfFile f = placed("");
  f.extra = "\"extensionsUsed\":[\"KHR_draco_mesh_compression\"],\"extensionsRequired\":[\"KHR_draco_mesh_compression\"]";
  expect_rejected(f.json(), "requires extension 'KHR_draco_mesh_compression', which hwbvh does not support");
}

TEST(GltfErrors, NothingToBuild) {
  expect_rejected(one_triangle_file().json(), "no triangles: no node of the default scene references a mesh");
  GltfFile f;
  const int p = f.positions({0, 0, 0, 1, 0, 0, 2, 0, 0});
  f.mesh({"{\"attributes\":{\"POSITION\":" + std::to_string(p) + "}}"});
  f.node("\"mesh\":0");
  expect_rejected(f.json(), "all 1 triangles are degenerate");
  GltfFile g = one_triangle_file();
  g.meshes[0] = "{\"primitives\":[{\"attributes\":{\"NORMAL\":0}}]}";
  g.node("\"mesh\":0");
  expect_rejected(g.json(), "mesh 0 primitive 0: no POSITION attribute");
}

// A scale of 1e-46 leaves the mesh whole in object space but rounds every world coordinate to zero:
// the two-level scene loads, its flattened form has no area.
TEST(GltfErrors, DegenerateOnlyOnceFlattened) {
  const std::string bytes = placed("\"scale\":[1e-46,1e-46,1e-46]").json();
  EXPECT_EQ(load_gltf_instanced_from_memory(bytes, "bad.gltf").instances.size(), 1u);
  expect_bad_input([&] { (void)load_gltf_from_memory(bytes, "bad.gltf"); }, "bad.gltf",
                   "all 1 triangles are degenerate (zero area): nothing to build");
}

TEST(GltfErrors, UndecodableMaskTexture) {
  GltfFile f;
  const int leaf = f.mask_material("not a png", 0.5);
  const int p = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0});
  const int uv = f.texcoords({0, 0, 1, 0, 0, 1});
  f.mesh({"{\"attributes\":{\"POSITION\":" + std::to_string(p) + ",\"TEXCOORD_0\":" + std::to_string(uv) +
          "},\"material\":" + std::to_string(leaf) + "}"});
  f.node("\"mesh\":0");
  expect_rejected(f.json(), "material 0 'leaf': base-colour image 0: cannot decode image");
}

// Mutations of a valid file: refused with BadInput or loaded, never a crash or another exception type.
TEST(GltfErrors, RandomByteFlipsNeverCrash) {
  GltfFile f = placed("\"translation\":[1,2,3]");
  const std::string text = f.json();
  const std::string glb = f.glb();
  std::mt19937 rng(5);
  for (const std::string* original : {&text, &glb}) {
    for (int round = 0; round < 300; ++round) {
      std::string bytes = *original;
      for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xFF);
      try {
        (void)load_gltf_from_memory(bytes, "fuzz.gltf");
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace hwbvh
