// The RT IP 2.0 node decoders (formats/rdna3/decode.h): any 128 bytes decode as an FP32 box node, and their first
// 64 bytes as each of the four triangles of a triangle node, without undefined behaviour. Inputs shorter than 128
// bytes are zero-padded.
#include "fuzz_common.h"
#include "hwbvh/formats/rdna3/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hwbvh;
  const auto bytes = fuzz::input_bytes(data, size);
  (void)rdna3::decode_box_node(fuzz::leading_dwords<rdna3::kBoxNodeDwords>(bytes));
  const auto triangle_node = fuzz::leading_dwords<rdna3::kTriangleNodeDwords>(bytes);
  for (uint32_t type = 0; type < 4; ++type) {
    const rdna3::DecodedTriangle t = rdna3::decode_triangle(triangle_node, type);
    fuzz::fuzz_check(t.id.i_source < 4 && t.id.j_source < 4, "two-bit vertex sources");
    if (const auto v = rdna3::source_vertices(t))
      fuzz::fuzz_check(t.id.i_source <= 2 && t.id.j_source <= 2 && t.id.i_source != t.id.j_source,
                       "source order only for two distinct slots 0..2");
  }
  return 0;
}
