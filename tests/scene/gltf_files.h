#pragma once
// Test helper: small glTF 2.0 files written by the tests. GltfFile collects binary data and JSON objects; text()
// gives a .gltf with one buffer as a base64 data URI (or an external file name), glb() the same as a .glb.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace hwbvh::test {

inline std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

inline std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

struct GltfFile {
  std::string bin;  ///< the one buffer
  std::vector<std::string> buffer_views, accessors, meshes, nodes, materials, textures, images;
  std::string scene_nodes;  ///< the default scene's root nodes, e.g. "0,1"; empty: every node added without a parent
  std::string extra;        ///< more top-level members, e.g. "\"extensionsRequired\":[\"X\"]" (no leading comma)
  std::string buffer_uri;   ///< empty: a data URI of `bin`
  int64_t buffer_length = -1;  ///< byteLength of the buffer; -1: bin.size()

  /// A tightly packed buffer view of `data`, 4-byte aligned; returns its index.
  int view(std::string_view data) {
    while (bin.size() % 4 != 0) bin += '\0';
    buffer_views.push_back("{\"buffer\":0,\"byteOffset\":" + std::to_string(bin.size()) +
                           ",\"byteLength\":" + std::to_string(data.size()) + "}");
    bin += data;
    return static_cast<int>(buffer_views.size()) - 1;
  }
  template <typename T>
  static std::string bytes_of(const std::vector<T>& values) {
    std::string out(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  int accessor(int view_index, int component_type, std::size_t count, const std::string& type) {
    accessors.push_back("{\"bufferView\":" + std::to_string(view_index) + ",\"componentType\":" +
                        std::to_string(component_type) + ",\"count\":" + std::to_string(count) + ",\"type\":\"" +
                        type + "\"}");
    return static_cast<int>(accessors.size()) - 1;
  }
  int positions(const std::vector<float>& xyz) { return accessor(view(bytes_of(xyz)), 5126, xyz.size() / 3, "VEC3"); }
  int texcoords(const std::vector<float>& uv) { return accessor(view(bytes_of(uv)), 5126, uv.size() / 2, "VEC2"); }
  int indices(const std::vector<uint32_t>& i) { return accessor(view(bytes_of(i)), 5125, i.size(), "SCALAR"); }
  int indices16(const std::vector<uint16_t>& i) { return accessor(view(bytes_of(i)), 5123, i.size(), "SCALAR"); }
  /// A mesh of the given primitives (JSON objects); returns its index.
  int mesh(const std::vector<std::string>& primitives, const std::string& name = "") {
    meshes.push_back("{" + (name.empty() ? "" : "\"name\":\"" + name + "\",") + "\"primitives\":[" +
                     join(primitives) + "]}");
    return static_cast<int>(meshes.size()) - 1;
  }
  /// A node (JSON members without braces, e.g. "\"mesh\":0,\"translation\":[1,0,0]"); returns its index.
  int node(const std::string& members) {
    nodes.push_back("{" + members + "}");
    return static_cast<int>(nodes.size()) - 1;
  }
  /// A MASK material whose base-colour texture is `png` (embedded through a buffer view).
  int mask_material(const std::string& png, double cutoff, const std::string& name = "leaf") {
    images.push_back("{\"bufferView\":" + std::to_string(view(png)) + ",\"mimeType\":\"image/png\"}");
    textures.push_back("{\"source\":" + std::to_string(images.size() - 1) + "}");
    materials.push_back("{\"name\":\"" + name + "\",\"alphaMode\":\"MASK\",\"alphaCutoff\":" + std::to_string(cutoff) +
                        ",\"pbrMetallicRoughness\":{\"baseColorTexture\":{\"index\":" +
                        std::to_string(textures.size() - 1) + "}}}");
    return static_cast<int>(materials.size()) - 1;
  }

  [[nodiscard]] std::string json(bool glb_buffer = false) const {
    std::string roots = scene_nodes;
    if (roots.empty()) {
      for (std::size_t n = 0; n < nodes.size(); ++n) roots += (n ? "," : "") + std::to_string(n);
    }
    const int64_t length = buffer_length >= 0 ? buffer_length : static_cast<int64_t>(bin.size());
    const std::string uri = glb_buffer ? ""
                            : buffer_uri.empty() ? ",\"uri\":\"data:application/octet-stream;base64," + base64(bin) + "\""
                                                 : ",\"uri\":\"" + buffer_uri + "\"";
    std::string out = "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[" + roots + "]}]";
    const auto list = [&](const char* key, const std::vector<std::string>& items) {
      if (!items.empty()) out += ",\"" + std::string(key) + "\":[" + join(items) + "]";
    };
    list("nodes", nodes);
    list("meshes", meshes);
    list("accessors", accessors);
    list("bufferViews", buffer_views);
    list("materials", materials);
    list("textures", textures);
    list("images", images);
    out += ",\"buffers\":[{\"byteLength\":" + std::to_string(length) + uri + "}]";
    if (!extra.empty()) out += "," + extra;
    return out + "}";
  }

  /// The same content as a binary glTF: JSON chunk and BIN chunk.
  [[nodiscard]] std::string glb() const {
    std::string json_chunk = json(true);
    while (json_chunk.size() % 4 != 0) json_chunk += ' ';
    std::string bin_chunk = bin;
    while (bin_chunk.size() % 4 != 0) bin_chunk += '\0';
    const auto u32 = [](std::size_t v) {
      std::string s(4, '\0');
      for (int k = 0; k < 4; ++k) s[static_cast<std::size_t>(k)] = static_cast<char>((v >> (8 * k)) & 0xFF);
      return s;
    };
    const std::size_t total = 12 + 8 + json_chunk.size() + 8 + bin_chunk.size();
    return "glTF" + u32(2) + u32(total) + u32(json_chunk.size()) + "JSON" + json_chunk + u32(bin_chunk.size()) +
           "BIN" + std::string(1, '\0') + bin_chunk;
  }
};

/// A glTF 1.0 file as COLLADA2GLTF wrote them: top-level objects keyed by id rather than arrays (one triangle).
inline std::string gltf1_box() {
  return R"({"asset":{"generator":"collada2gltf@f356b99aef8868f74877c7ca545f2cd206b9d3b7","premultipliedAlpha":true,
"profile":{"api":"WebGL","version":"1.0.2"},"version":"1.0"},"scene":"defaultScene",
"scenes":{"defaultScene":{"nodes":["node_0"]}},
"nodes":{"node_0":{"children":[],"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"meshes":["mesh_0"],"name":"Box"}},
"meshes":{"mesh_0":{"name":"Box","primitives":[{"attributes":{"POSITION":"accessor_positions"},
"indices":"accessor_indices","mode":4}]}},
"accessors":{"accessor_indices":{"bufferView":"view_indices","byteOffset":0,"byteStride":0,"componentType":5123,
"count":3,"type":"SCALAR"},"accessor_positions":{"bufferView":"view_positions","byteOffset":0,"byteStride":12,
"componentType":5126,"count":3,"type":"VEC3"}},
"bufferViews":{"view_indices":{"buffer":"box","byteLength":6,"byteOffset":0,"target":34963},
"view_positions":{"buffer":"box","byteLength":36,"byteOffset":8,"target":34962}},
"buffers":{"box":{"byteLength":44,"type":"arraybuffer","uri":"data:application/octet-stream;base64,AAABAAIAAAAAAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAACAPwAAAAA="}}})";
}

/// One triangle (0,0,0) (1,0,0) (0,1,0), counter-clockwise seen from +z, as mesh 0.
inline GltfFile one_triangle_file() {
  GltfFile f;
  const int p = f.positions({0, 0, 0, 1, 0, 0, 0, 1, 0});
  f.mesh({"{\"attributes\":{\"POSITION\":" + std::to_string(p) + "}}"}, "tri");
  return f;
}

}  // namespace hwbvh::test
