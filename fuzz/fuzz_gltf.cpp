// glTF loading from memory (hwbvh::load_gltf_from_memory, JSON or GLB, no external files): any bytes are either
// refused with hwbvh::Error(BadInput) or give a flattened scene that keeps every Scene invariant (scene_checks.h),
// its instances tiling the geometries; every warning names the file. Then the alpha test is made from it, as a
// build would (it may refuse materials whose cutoffs differ, with BadInput too).
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/scene/alpha_test.h"
#include "hwbvh/scene/scene.h"
#include "scene_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto warn = [](const std::string& warning) {
      hwbvh::fuzz::fuzz_check(warning.starts_with("fuzz.gltf: "), "warnings name the file");
    };
    const hwbvh::Scene scene = hwbvh::load_gltf_from_memory(bytes, "fuzz.gltf", {}, warn);
    hwbvh::fuzz::check_scene(scene);
    const hwbvh::AlphaTest alpha = hwbvh::make_alpha_test(scene);
    hwbvh::fuzz::fuzz_check(alpha.triangles.size() == scene.triangles.size(), "one alpha-test entry per triangle");
  } catch (const hwbvh::Error& e) {
    hwbvh::fuzz::fuzz_check(e.kind() == hwbvh::ErrorKind::BadInput, "refusals are BadInput");
  }
  return 0;
}
