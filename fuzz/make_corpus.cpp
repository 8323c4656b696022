// Writes the seed corpora of the fuzz targets (fuzz/README.md) from the project's scenes, so that every target
// starts from inputs that reach deep into its code: the OBJ and MTL files themselves (large ones cut at a line
// boundary), the rtip31, rtip20 and xe3 blobs built from them, their Geometry and BuildMeta sections, node sections,
// single nodes of every format, rays files in both encodings, .rra files, and the glTF scenes as they are. A few
// hand-written OBJ, MTL, glTF and rays seeds add syntax the scenes do not use; the wave programs of
// presets/programs/ seed fuzz_wave_program. Deterministic: the same scenes give
// the same files. Run through fuzz/make-corpus.sh.
//
//   fuzz_make_corpus SCENES_DIR CORPUS_DIR
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <glm/geometric.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/node_pointer.h"
#include "hwbvh/formats/xe3/node_section.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/scene/rays_file.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxTextSeed = 16 * 1024;  // larger scene files are cut: big seeds slow every execution
constexpr std::size_t kMaxBlobSeed = 64 * 1024;  // whole blobs and node sections up to this size
constexpr std::size_t kNodesPerScene = 24;       // single-node seeds per scene and format

class Corpus {
 public:
  explicit Corpus(fs::path root) : root_(std::move(root)) {}

  void write(const std::string& target, const std::string& name, std::span<const std::byte> bytes) {
    fs::create_directories(root_ / target);
    std::ofstream(root_ / target / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ++files_;
  }
  void write(const std::string& target, const std::string& name, std::string_view text) {
    write(target, name, std::as_bytes(std::span(text.data(), text.size())));
  }
  [[nodiscard]] int files() const { return files_; }

 private:
  fs::path root_;
  int files_ = 0;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The first `limit` bytes, cut after the last complete line.
std::string head_lines(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  const std::size_t end = text.rfind('\n', limit);
  return text.substr(0, end == std::string::npos ? limit : end + 1);
}

// `count` windows of `window` bytes, evenly spaced over `bytes` from `first` on, stepping by multiples of `step`.
void write_windows(Corpus& corpus, const std::string& target, const std::string& prefix,
                   std::span<const std::byte> bytes, std::size_t first, std::size_t step, std::size_t window) {
  if (bytes.size() < first + window) return;
  const std::size_t slots = (bytes.size() - first - window) / step + 1;
  const std::size_t count = std::min(slots, kNodesPerScene);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = first + (i * slots / count) * step;
    corpus.write(target, prefix + "-" + std::to_string(at), bytes.subspan(at, window));
  }
}

// Rays through the scene's bounds in both encodings: four from outside towards the centre, one with tmin > 0.
void write_rays(Corpus& corpus, const std::string& name, const Aabb& bounds) {
  const Vec3 center = 0.5f * (bounds.min + bounds.max), size = bounds.max - bounds.min;
  std::vector<Ray> rays;
  for (const Vec3 dir : {Vec3{1, 0, 0}, Vec3{0, -1, 0}, Vec3{0, 0, 1}, Vec3{0.6f, 0.48f, -0.64f}}) {
    rays.push_back({center - size * dir, dir, 0.0f, 3.0f * glm::length(size)});
  }
  rays.push_back({center, Vec3{0, 1, 0}, 0.25f, std::numeric_limits<float>::infinity()});
  corpus.write("rays", name + ".txt", serialize_rays(rays, RaysFileFormat::Text));
  corpus.write("rays", name + ".bin", serialize_rays(rays, RaysFileFormat::Binary));
}

// .rra files of an rtip31 blob: as exported, zstd-compressed, and without the HwbvhSections chunk (the form of a
// driver's capture, whose triangles the reader decodes from the nodes).
void write_rra(Corpus& corpus, const std::string& name, const blob::Blob& b) {
  corpus.write("rra", name + ".rra", rra::export_blob(b, name));
  corpus.write("rra", name + "-zstd.rra", rra::export_blob(b, name, {.compress = true}));
  corpus.write("rra", name + "-capture.rra", rra::serialize(rra::accel_structs_from_blob(b, name), {}));
}

void write_scene(Corpus& corpus, const fs::path& obj) {
  const std::string name = obj.stem().string();
  corpus.write("obj", name + ".obj", head_lines(read_text(obj), kMaxTextSeed));
  const Scene scene = load_obj(obj);
  write_rays(corpus, name, scene.bounds());

  for (const blob::Target target : {blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3}) {
    pipeline::BuildBlobOptions options;
    options.target = target;
    const blob::Blob b = pipeline::build_blob(scene, options).blob;
    const std::string stem = name + "-" + blob::target_name(target);
    const std::vector<std::byte> file = blob::serialize(b);
    if (file.size() <= kMaxBlobSeed) {
      // Not ".hwbvh": .gitignore leaves out blob files so that built ones are never committed by accident.
      corpus.write("blob", stem + ".blob", file);  // also fuzz_emu's seeds (fuzz/CMakeLists.txt)
    }
    const auto& nodes = b.require(blob::SectionType::Nodes, stem).data;
    if (target == blob::Target::Rtip31) {
      if (nodes.size() <= kMaxBlobSeed) {
        corpus.write("node_section", stem + ".nodes", nodes);
        write_rra(corpus, name, b);
      }
      write_windows(corpus, "rdna4_nodes", stem, nodes, 0, rdna4::kNodeBytes, rdna4::kNodeBytes);
      const auto& geometry = b.require(blob::SectionType::Geometry, name).data;
      if (geometry.size() <= kMaxBlobSeed) corpus.write("geometry", name + ".geometry", geometry);
      corpus.write("build_meta", name + ".json", b.require(blob::SectionType::BuildMeta, name).data);
    } else if (target == blob::Target::Rtip20) {
      // Box nodes take 128 bytes, triangle nodes 64: windows on every 64-byte slot catch both.
      write_windows(corpus, "rdna3_nodes", stem, nodes, rdna4::kNodeBytes, 64, rdna4::kNodeBytes);
    } else {
      // Past the 128-byte section header; 128-byte windows on every 64-byte block hold an internal node or a
      // QuadLeaf in their first half, and a STOC3 leaf where the scene has them.
      write_windows(corpus, "xe3_nodes", stem, nodes, xe3::kHeaderBlocks * xe3::kBlockBytes, xe3::kBlockBytes,
                    xe3::kStoc3LeafBytes);
    }
  }
}

// Syntax the project's scenes do not exercise.
// fuzz_instanced's seeds: the glTF text built as a two-level blob of every target; and fuzz_rra's, the rtip31 blob
// as .rra files.
void write_instanced(Corpus& corpus, const std::string& name, const std::string& gltf) {
  const InstancedScene scene = load_gltf_instanced_from_memory(gltf, name + ".gltf");
  for (const blob::Target target : {blob::Target::Rtip31, blob::Target::Rtip20, blob::Target::Xe3}) {
    pipeline::BuildBlobOptions options;
    options.target = target;
    const blob::Blob b = pipeline::build_instanced_blob(scene, options).blob;
    corpus.write("instanced", name + "-" + blob::target_name(target) + ".blob", blob::serialize(b));
    if (target == blob::Target::Rtip31) write_rra(corpus, name + "-instanced", b);
  }
}

void write_handmade(Corpus& corpus) {
  corpus.write("obj", "syntax.obj",
               "# comment\nmtllib a.mtl b.mtl\nv 0 0 0\nv 1 0 0 1.0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\n"
               "vn 0 0 1\nvp 0.5\ng first group\nusemtl red\nf 1/1/1 2/2/1 3/3/1\nf -4 -3 -2 -1\no object\ns off\n"
               "f 1//1 3//1 4//1\nl 1 2\np 3\ng\nf 1 2 3 4\n");
  corpus.write("obj", "degenerate.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 1 1 2\nv 0 1 0\nf 1 2 4\n");
  corpus.write("obj", "crlf-tabs.obj", "v\t0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n");
  // What real exporters write (obj_input_test.cpp): comments after data, continuations, empty and Latin-1 names,
  // skipped statements, indices out of range that are only warnings, concave and degenerate polygons, a final
  // Ctrl-Z; and coordinates near the float limit.
  corpus.write("obj", "exporters.obj",
               "# exporter\nmtllib exporters.mtl\nv 0 0 0 # origin\nv 4 0 0\nv 4 4 \\\n 0\nv 2 1 0\nv 0 4 0\n"
               "vt 0 0\nvn 0 0 1\nvw 1 0.5\ng caf\xE9\nusemtl\nf 2 3 4 5 1\nusemtl cr\xE8me\n"
               "f 1/1/1 2/9/1 3/1/7\nt crease 2/1 1 2\ncstype bspline\ndeg 3\ncurv 0 1 1 2\nf 1 1 1 1 1\n\x1A");
  corpus.write("obj", "huge.obj",
               "v 2e19 0 0\nv 0 2e19 0\nv 0 0 2e19\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 3e38 -3e38 0\nf 1 2 3\nf 4 5 6\n"
               "f 7 5 6\n");
  corpus.write("mtl", "exporters.mtl",
               "newmtl\nKd 0 1 0\nnewmtl cr\xE8me # Latin-1\nKd xyz 0.9505 1 1.089\nnewmtl spectral\n"
               "Kd spectral grey.rfl 0.5\nmap_d missing.png\n");
  corpus.write("mtl", "full.mtl",
               "newmtl red\nKd 0.8 0.1 0.1\nKa 0 0 0\nNs 10\nd 1\nTr 0\nillum 2\nmap_Kd red.png\n"
               "newmtl leaf\nKd 0.2 0.6 0.2\nmap_d textures\\leaf mask.png\nnewmtl\nnewmtl plain\n");
  // The scene of tests/rra/golden/one-triangle.rra: its export is that file's bytes.
  pipeline::BuildBlobOptions one_triangle;
  one_triangle.encode.threads = 1;
  const blob::Blob triangle_blob =
      pipeline::build_blob(load_obj_from_memory("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "one-triangle.obj"),
                           one_triangle)
          .blob;
  write_rra(corpus, "one-triangle", triangle_blob);
  // With a ray history: a 2 x 2 dispatch, two rays at pixel 3 (a hit and a miss), one at pixel 0 (docs/rra.md §6).
  rra::HistoryDispatch history{2, 2, {}};
  rra::HistoryRay hit;
  hit.launch_index = 3;
  hit.accel_struct_address = rra::accel_struct_address(0);
  hit.ray = {{0.25f, 0.25f, -1.0f}, {0.0f, 0.0f, 1.0f}, 0.0f, 100.0f};
  hit.hit = true;
  hit.t = 1.0f;
  hit.primitive_index = hit.geometry_index = 0;
  hit.hit_kind = rra::kHitKindBackFacing;
  hit.iterations = 2;
  rra::HistoryRay miss{.launch_index = 3, .accel_struct_address = hit.accel_struct_address, .ray = hit.ray,
                       .iterations = 1};
  miss.ray.origin.x = 2.0f;
  rra::HistoryRay first = miss;
  first.launch_index = 0;
  history.rays = {hit, first, miss};
  corpus.write("rra", "one-triangle-history.rra",
               rra::export_blob(triangle_blob, "one-triangle", {}, std::span(&history, 1)));
  // glTF: one triangle (its 36 bytes of positions as a data URI); strips and fans without indices under nested
  // matrix and TRS nodes, one mirrored; the same triangle as a GLB with its BIN chunk.
  const std::string triangle_buffer =
      "{\"byteLength\":36,\"uri\":\"data:application/octet-stream;base64,"
      "AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA\"}";
  const std::string triangle_json =
      "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],"
      "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0}}]}],\"accessors\":[{\"bufferView\":0,"
      "\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}],\"bufferViews\":[{\"buffer\":0,\"byteLength\":36}],"
      "\"buffers\":[";
  corpus.write("gltf", "triangle.gltf", triangle_json + triangle_buffer + "]}");
  write_instanced(corpus, "triangle", triangle_json + triangle_buffer + "]}");
  const std::string strips_fans =
      "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0,2]}],\"nodes\":[{\"matrix\":[1,0,0,0,"
      "0,1,0,0,0,0,1,0,5,0,0,1],\"children\":[1]},{\"mesh\":0,\"rotation\":[0,0,0.6,0.8],\"scale\":[-1,2,1]},"
      "{\"mesh\":0,\"translation\":[0,0,3]}],\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},"
      "\"mode\":5},{\"attributes\":{\"POSITION\":0},\"mode\":6}]}],\"accessors\":[{\"bufferView\":0,"
      "\"componentType\":5126,\"count\":3,\"type\":\"VEC3\"}],\"bufferViews\":[{\"buffer\":0,"
      "\"byteLength\":36}],\"buffers\":[" + triangle_buffer + "]}";
  corpus.write("gltf", "strips-fans.gltf", strips_fans);
  write_instanced(corpus, "strips-fans", strips_fans);
  std::string json = triangle_json + "{\"byteLength\":36}]}";
  json.resize((json.size() + 3) / 4 * 4, ' ');
  const auto le32 = [](std::size_t v) {
    std::string out(4, '\0');
    for (std::size_t k = 0; k < 4; ++k) out[k] = static_cast<char>((v >> (8 * k)) & 0xFF);
    return out;
  };
  const std::string bin("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80\x3f\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80\x3f\0\0\0\0", 36);
  corpus.write("gltf", "triangle.glb",
               "glTF" + le32(2) + le32(12 + 8 + json.size() + 8 + bin.size()) + le32(json.size()) + "JSON" + json +
                   le32(bin.size()) + std::string("BIN\0", 4) + bin);
  corpus.write("rays", "comments.txt",
               "# origin direction tmin tmax\n\n0 0 -5  0 0 1  0 inf\n  1 2 3 -1 -2 -3 0.5 10 # trailing\n");
}

int run(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_corpus SCENES_DIR CORPUS_DIR\n");
    return 2;
  }
  std::vector<fs::path> objs, mtls, gltfs;
  for (const auto& entry : fs::directory_iterator(argv[1])) {
    if (entry.path().extension() == ".obj") objs.push_back(entry.path());
    if (entry.path().extension() == ".mtl") mtls.push_back(entry.path());
    if (entry.path().extension() == ".gltf") gltfs.push_back(entry.path());
  }
  std::sort(objs.begin(), objs.end());
  std::sort(mtls.begin(), mtls.end());
  std::sort(gltfs.begin(), gltfs.end());
  Corpus corpus(argv[2]);
  for (const fs::path& obj : objs) write_scene(corpus, obj);
  for (const fs::path& mtl : mtls) corpus.write("mtl", mtl.filename().string(), read_text(mtl));
  for (const fs::path& gltf : gltfs) corpus.write("gltf", gltf.filename().string(), read_text(gltf));
  // The shipped wave programs (presets/programs/, beside scenes/).
  std::vector<fs::path> programs;
  for (const auto& entry : fs::directory_iterator(fs::path(argv[1]) / ".." / "presets" / "programs")) {
    if (entry.path().extension() == ".json") programs.push_back(entry.path());
  }
  std::sort(programs.begin(), programs.end());
  for (const fs::path& p : programs) corpus.write("wave_program", p.filename().string(), read_text(p));
  write_handmade(corpus);
  std::printf("wrote %d seed files from %zu scenes to %s\n", corpus.files(), objs.size(), argv[2]);
  return 0;
}

}  // namespace
}  // namespace hwbvh::fuzz

int main(int argc, char** argv) {
  try {
    return hwbvh::fuzz::run(argc, argv);
  } catch (const hwbvh::Error& e) {
    std::fprintf(stderr, "fuzz_make_corpus: %s\n", e.what());
    return 1;
  }
}
