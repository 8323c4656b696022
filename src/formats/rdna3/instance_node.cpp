#include "hwbvh/formats/rdna3/instance_node.h"

#include <cstddef>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"

namespace hwbvh::rdna3 {
namespace {

void put_matrix(InstanceNodeDwords& dw, std::size_t first, const Mat3x4& m) {
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 4; ++c) dw[first + 4 * r + c] = float_bits(m[r][c]);
}

}  // namespace

InstanceNodeDwords encode_instance_node(const InstanceNodeInput& in) {
  if (in.instance_id > 0xFFFFFFu || in.instance_mask > 0xFFu || in.contribution > 0xFFFFFFu ||
      in.instance_flags > 0xFFu) {
    throw Error(ErrorKind::Runtime, "", "RT IP 2.0 instance node field does not fit its bits");
  }
  InstanceNodeDwords dw{};
  put_matrix(dw, 0, in.world_to_object);
  dw[12] = in.instance_id | in.instance_mask << 24;
  dw[13] = in.contribution | in.instance_flags << 24;
  dw[14] = static_cast<uint32_t>(in.blas_base_pointer);
  dw[15] = static_cast<uint32_t>(in.blas_base_pointer >> 32);
  dw[16] = in.instance_index;
  dw[17] = in.blas_node_pointer;
  dw[18] = in.blas_metadata_size;
  put_matrix(dw, 20, in.object_to_world);
  return dw;
}

}  // namespace hwbvh::rdna3
