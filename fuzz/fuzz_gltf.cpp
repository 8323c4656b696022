// glTF loading from memory (hwbvh::load_gltf_instanced_from_memory, JSON or GLB, no external files): any bytes are
// either refused with hwbvh::Error(BadInput) or give a two-level scene whose instances point at meshes that exist,
// with finite, affine, invertible world matrices and instance ids in order, and whose meshes each keep every Scene
// invariant (scene_checks.h); every warning names the file. Then it is flattened (which may refuse with BadInput
// too), the flattened scene checked the same way with its instances tiling the geometries, and the alpha test made
// from it, as a build would (it may refuse materials whose cutoffs differ, with BadInput too).
#include <cmath>
#include <string>
#include <string_view>

#include <glm/matrix.hpp>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/scene/alpha_test.h"
#include "hwbvh/scene/scene.h"
#include "scene_checks.h"

namespace {

void check_instances(const hwbvh::InstancedScene& scene) {
  using hwbvh::fuzz::fuzz_check;
  fuzz_check(!scene.instances.empty(), "a loaded scene has instances");
  fuzz_check(scene.origins.size() == scene.meshes.size(), "one origin per mesh");
  for (std::size_t i = 0; i < scene.instances.size(); ++i) {
    const hwbvh::MeshInstance& instance = scene.instances[i];
    fuzz_check(instance.mesh < scene.meshes.size(), "instance mesh in range");
    fuzz_check(instance.instance_id == i, "instance ids count the instances");
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) fuzz_check(std::isfinite(instance.world[c][r]), "world matrices are finite");
    }
    fuzz_check(instance.world[0][3] == 0.0 && instance.world[1][3] == 0.0 && instance.world[2][3] == 0.0 &&
                   instance.world[3][3] == 1.0,
               "world matrices are affine");
    fuzz_check(glm::determinant(glm::dmat3(instance.world)) != 0.0, "world matrices are invertible");
  }
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const hwbvh::Scene& mesh = scene.meshes[m];
    hwbvh::fuzz::check_scene(mesh);
    fuzz_check(mesh.instances.empty(), "meshes are one level");
    fuzz_check(scene.origins[m].primitives.size() == mesh.geometries.size(), "one file primitive per geometry");
    fuzz_check(scene.origins[m].materials.size() == mesh.materials.size(), "one file material per mesh material");
    for (const uint32_t material : scene.origins[m].materials) {
      fuzz_check(material < scene.materials.size(), "file material in range");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto warn = [](const std::string& warning) {
      hwbvh::fuzz::fuzz_check(warning.starts_with("fuzz.gltf: "), "warnings name the file");
    };
    const hwbvh::InstancedScene instanced = hwbvh::load_gltf_instanced_from_memory(bytes, "fuzz.gltf", {}, warn);
    check_instances(instanced);
    const hwbvh::Scene scene = hwbvh::flatten(instanced);
    hwbvh::fuzz::check_scene(scene);
    hwbvh::fuzz::fuzz_check(scene.instances.size() == instanced.instances.size(), "flatten keeps every instance");
    const hwbvh::AlphaTest alpha = hwbvh::make_alpha_test(scene);
    hwbvh::fuzz::fuzz_check(alpha.triangles.size() == scene.triangles.size(), "one alpha-test entry per triangle");
  } catch (const hwbvh::Error& e) {
    hwbvh::fuzz::fuzz_check(e.kind() == hwbvh::ErrorKind::BadInput, "refusals are BadInput");
  }
  return 0;
}
