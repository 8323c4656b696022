#include "hwbvh/formats/rdna3/box_node.h"

#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::rdna3 {

BoxNodeDwords encode_box_node(const BoxNodeInput& input) {
  if (input.child_count < 1 || input.child_count > 4) {
    throw Error(ErrorKind::Runtime, "", "RT IP 2.0 box node with " + std::to_string(input.child_count) + " children");
  }
  BoxNodeDwords dw{};
  uint32_t flags = 0;
  for (uint32_t k = 0; k < 4; ++k) {
    const bool used = k < input.child_count;
    const BoxChildInput& c = input.children[k];
    if (used && c.flags > 0xFF) {
      throw Error(ErrorKind::Runtime, "", "RT IP 2.0 box flags " + std::to_string(c.flags) + " do not fit 8 bits");
    }
    dw[k] = used ? c.pointer : kInvalidNode;
    for (int a = 0; a < 3 && used; ++a) {
      dw[4 + 6 * k + a] = float_bits(c.box.min[a]);
      dw[7 + 6 * k + a] = float_bits(c.box.max[a]);
    }
    flags |= (used ? c.flags : kEmptySlotFlags) << (8 * k);
  }
  dw[28] = flags;
  dw[29] = input.primitive_count;
  return dw;
}

}  // namespace hwbvh::rdna3
