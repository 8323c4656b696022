// OBJ loading from memory (hwbvh::load_obj_from_memory): any text is either refused with hwbvh::Error(BadInput) or
// gives a scene whose indices all point at existing, finite positions, whose geometries tile the triangles and
// whose names are valid UTF-8; every warning names the file.
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/scene/scene.h"
#include "scene_checks.h"

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
