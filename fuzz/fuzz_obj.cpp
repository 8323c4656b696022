// OBJ loading from memory (hwbvh::load_obj_from_memory): any text is either refused with hwbvh::Error(BadInput) or
// gives a scene whose indices all point at existing, finite positions, whose geometries tile the triangles and
// whose names are valid UTF-8; every warning names the file.
#include <cmath>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/scene/scene.h"
#include "scene/text_lines.h"

namespace hwbvh::fuzz {
namespace {

void check_scene(const Scene& scene) {
  fuzz_check(!scene.triangles.empty(), "a loaded scene has triangles");
  for (const Vec3& p : scene.positions)
    fuzz_check(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z), "positions are finite");
  uint32_t next = 0;
  for (const Geometry& g : scene.geometries) {
    fuzz_check(g.first_triangle == next && g.triangle_count > 0, "geometries are contiguous and non-empty");
    next += g.triangle_count;
    fuzz_check(scene::valid_utf8(g.name) == g.name, "geometry names are valid UTF-8");
  }
  fuzz_check(next == scene.triangles.size(), "geometries cover every triangle");
  for (const Triangle& t : scene.triangles) {
    for (int k = 0; k < 3; ++k) {
      fuzz_check(t.v[k] < scene.positions.size(), "vertex index in range");
      fuzz_check(t.uv[k] == kNoIndex || t.uv[k] < scene.texcoords.size(), "texcoord index in range");
    }
    fuzz_check(t.geometry < scene.geometries.size(), "geometry id in range");
    fuzz_check(t.primitive < scene.geometries[t.geometry].triangle_count, "primitive id in range");
    fuzz_check(t.material == kNoIndex || t.material < scene.materials.size(), "material in range");
  }
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto warn = [](const std::string& warning) {
      hwbvh::fuzz::fuzz_check(warning.starts_with("fuzz.obj: "), "warnings name the file");
    };
    hwbvh::fuzz::check_scene(hwbvh::load_obj_from_memory(text, "fuzz.obj", {}, warn));
  } catch (const hwbvh::Error&) {
  }
  return 0;
}
