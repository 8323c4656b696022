// InstanceLeaf encoder (docs/xe3-format.md, "InstanceLeaf").
#include "hwbvh/formats/xe3/instance_leaf.h"

#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::xe3 {
namespace {

[[noreturn]] void caller_bug(const std::string& what) {
  throw Error(ErrorKind::Runtime, "", "Xe3 instance leaf: " + what);
}

// Bytes of the columns and translations (§ "InstanceLeaf"): a 3x4 matrix is stored as three linear columns at one
// place and its translation at another.
constexpr std::size_t kWorldToObjectLinear = 16, kObjectToWorldTranslation = 52, kObjectToWorldLinear = 80,
                      kWorldToObjectTranslation = 116;

void put_columns(InstanceLeafDwords& dw, const Mat3x4& m, std::size_t linear_byte, std::size_t translation_byte) {
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t r = 0; r < 3; ++r) dw[linear_byte / 4 + 3 * c + r] = float_bits(m[r][c]);
  for (std::size_t r = 0; r < 3; ++r) dw[translation_byte / 4 + r] = float_bits(m[r][3]);
}

}  // namespace

InstanceLeafDwords encode_instance_leaf(const InstanceLeafInput& in) {
  if (in.contribution > 0xFFFFFFu) caller_bug("hit-group contribution exceeds 24 bits");
  if (in.mask > 0xFFu || in.flags > 0xFFu) caller_bug("mask or flags exceed 8 bits");
  if (in.bvh >> 48 != 0) caller_bug("BVH pointer exceeds 48 bits");
  InstanceLeafDwords dw{};
  dw[0] = in.contribution | in.mask << 24;
  dw[1] = in.flags;  // comparison, sub-type and the opacity bits stay 0 for a triangle BLAS
  dw[2] = static_cast<uint32_t>(in.start_node);
  dw[3] = static_cast<uint32_t>(in.start_node >> 32);
  put_columns(dw, in.world_to_object, kWorldToObjectLinear, kWorldToObjectTranslation);
  put_columns(dw, in.object_to_world, kObjectToWorldLinear, kObjectToWorldTranslation);
  dw[16] = static_cast<uint32_t>(in.bvh);
  dw[17] = static_cast<uint32_t>(in.bvh >> 32);
  dw[18] = in.instance_id;
  dw[19] = in.instance_index;
  return dw;
}

}  // namespace hwbvh::xe3
