// The RT IP 3.1 node decoders (formats/rdna4/decode.h): any 128 bytes decode as a box node and as a primitive node
// without undefined behaviour or a read outside the node; a primitive pair that decodes reads its vertices from
// its node's vertex list. Inputs shorter than 128 bytes are zero-padded.
#include <cmath>
#include <cstring>

#include "fuzz_common.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::fuzz {
namespace {

void check_box(const rdna4::NodeDwords& node) {
  const rdna4::DecodedBoxNode box = rdna4::decode_box_node(node);
  const rdna4::BoxChildren children = rdna4::decode_box_children(node);
  fuzz_check(box.child_count >= 1 && box.child_count <= 8, "1..8 children");
  for (uint32_t k = 0; k < 8; ++k) {
    fuzz_check(children.pointer[k] == box.child_pointer[k], "both box decoders agree on pointers");
    if (k >= box.child_count) {
      fuzz_check(box.child_pointer[k] == rdna4::kInvalidNode, "slots past the count are invalid");
      fuzz_check(std::isnan(children.min[0][k]), "slots past the count are NaN");
    }
  }
  if (box.obb_index < rdna4::kObbMatrixCount) (void)rdna4::obb_matrix(box.obb_index);
}

void check_primitive(const rdna4::NodeDwords& node) {
  std::string error;
  const auto header = rdna4::decode_primitive_header(node, &error);
  fuzz_check(header.has_value() || !error.empty(), "a refused header says why");
  for (uint32_t pair = 0; pair < 8; ++pair) {
    const auto decoded = rdna4::decode_primitive_pair(node, pair, &error);
    if (!decoded) continue;
    fuzz_check(header && pair < header->pair_count, "only pairs below the pair count decode");
    for (const rdna4::DecodedTriangle& t : decoded->tri) {
      if (!t.valid || t.procedural) continue;
      for (int c = 0; c < 3; ++c) {
        const Vec3 v = rdna4::decode_primitive_vertex(node, *header, t.index[c]);
        fuzz_check(std::memcmp(&v, &t.vertex[c], sizeof v) == 0,
                   "a decoded triangle's vertices are the vertex list's entries at its indices");
      }
    }
  }
  // The vertex reader on its own, with indices past any plausible vertex list.
  if (header)
    for (uint32_t i : {0u, 1u, 15u, 16u, 100u, 0xFFFFFFFFu}) (void)rdna4::decode_primitive_vertex(node, *header, i);
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto node = hwbvh::fuzz::leading_dwords<hwbvh::rdna4::kNodeDwords>(hwbvh::fuzz::input_bytes(data, size));
  hwbvh::fuzz::check_box(node);
  hwbvh::fuzz::check_primitive(node);
  return 0;
}
