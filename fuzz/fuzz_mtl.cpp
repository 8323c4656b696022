// MTL parsing (scene::parse_mtl, the private reader behind load_obj): any text is refused with
// hwbvh::Error(BadInput) or gives named materials. Texture names are only resolved, never opened.
#include <string_view>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "scene/mtl_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const hwbvh::scene::MtlMaterial& m : hwbvh::scene::parse_mtl(text, "fuzz.mtl", "fuzz-textures"))
      hwbvh::fuzz::fuzz_check(!m.name.empty(), "materials without a name are dropped");
  } catch (const hwbvh::Error&) {
  }
  return 0;
}
