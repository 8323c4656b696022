// MTL parsing (scene::parse_mtl, the private reader behind load_obj): any text is refused with
// hwbvh::Error(BadInput) or parsed, never a crash. A `newmtl` without a name is a material (exporters write it,
// tests/scene ObjInput.EmptyUsemtlAndNewmtlNames). Texture names are only resolved, never opened.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwbvh/core/error.h"
#include "scene/mtl_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)hwbvh::scene::parse_mtl(text, "fuzz.mtl", "fuzz-textures");
  } catch (const hwbvh::Error&) {
  }
  return 0;
}
