// RT IP 3.1 instance node (docs/rtip31-format.md §2.9, §5.5).
#include "hwbvh/formats/rdna4/instance_node.h"

#include <algorithm>

#include "hwbvh/core/bits.h"
#include "hwbvh/formats/rdna4/box_node.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::rdna4 {
namespace {

constexpr uint32_t kFilterChildren = 4;
constexpr uint32_t kFilterOriginDword = 16;  // bytes 64..75
constexpr uint32_t kFilterCountDword = 19;   // bytes 76..79
constexpr uint32_t kFilterInfoDword = 20;    // bytes 80..127
// The same fields in a box node (§2.1): origin DW3..5, DW6, child infos from DW8.
constexpr uint32_t kBoxOriginDword = 3, kBoxCountDword = 6, kBoxObbDword = 7, kBoxInfoDword = 8;
constexpr uint32_t kInfoDwords = 3;

}  // namespace

NodeDwords encode_instance_node(const InstanceNodeInput& input) {
  NodeDwords dw{};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) dw[static_cast<size_t>(4 * r + c)] = float_bits(input.world_to_object[r][c]);
  }
  dw[12] = static_cast<uint32_t>(input.blas_base_pointer);
  dw[13] = static_cast<uint32_t>(input.blas_base_pointer >> 32);
  dw[14] = input.parent_pointer;
  dw[15] = (input.user_data & 0xFFFFFFu) | (input.instance_mask & 0xFFu) << 24;
  // Four children, each naming the root's node index; the last box repeats in the slots past the count, as a hit on
  // any child means the same. A 4-child box node has the same origin, exponents and child-info layout; only the
  // place of the fields differs.
  const uint32_t boxes = std::clamp(input.filter_box_count, 1u, kFilterChildren);
  BoxNodeInput filter;
  filter.child_count = kFilterChildren;
  for (uint32_t k = 0; k < kFilterChildren; ++k) {
    filter.children[k] = {.box = input.filter_boxes[std::min(k, boxes - 1)],
                          .node_type = input.blas_root >> 4,
                          .range_length = 0,
                          .box_flags = 0,
                          .instance_mask = 0xFF};
  }
  if (node_kind(input.blas_root) == NodeKind::Primitive) {
    // GPURT's form for a primitive root: child 0 never hit (the invalid box pattern), its range length 1 moving the
    // others' pointers to 0x10 | index; those three hold the union of the boxes (pass-through mode).
    Aabb all;
    for (uint32_t k = 0; k < boxes; ++k) all.grow(input.filter_boxes[k]);
    for (uint32_t k = 1; k < kFilterChildren; ++k) filter.children[k].box = all;
    filter.children[0].box = Aabb{};
    filter.children[0].range_length = 1;
  }
  const NodeDwords box = encode_box_node(filter);
  for (uint32_t i = 0; i < 3; ++i) dw[kFilterOriginDword + i] = box[kBoxOriginDword + i];
  dw[kFilterCountDword] = box[kBoxCountDword];  // count - 1 = 3 sits in [29:28]; index in parent is 0
  for (uint32_t i = 0; i < kFilterChildren * kInfoDwords; ++i) dw[kFilterInfoDword + i] = box[kBoxInfoDword + i];
  return dw;
}

DecodedInstanceNode decode_instance_node(const uint32_t* node) {
  DecodedInstanceNode d;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) d.world_to_object[r][c] = bits_float(node[4 * r + c]);
  }
  d.blas_base_pointer = uint64_t{node[12]} | uint64_t{node[13]} << 32;
  d.parent_pointer = node[14];
  d.user_data = node[15] & 0xFFFFFFu;
  d.instance_mask = node[15] >> 24;
  // The filter node seen as a box node with zero bases: DW6 keeps the exponents and takes the count from [29:28]
  // (bit 30 and the index in parent cleared); slots 4..7 lie past the count and decode as unused.
  NodeDwords& box = d.filter_box;
  box[0] = 0;
  box[1] = 0;
  box[2] = kInvalidNode;
  for (uint32_t i = 0; i < 3; ++i) box[kBoxOriginDword + i] = node[kFilterOriginDword + i];
  box[kBoxCountDword] = node[kFilterCountDword] & 0x30FFFFFFu;
  box[kBoxObbDword] = kNoObb;
  for (uint32_t i = 0; i < kFilterChildren * kInfoDwords; ++i) box[kBoxInfoDword + i] = node[kFilterInfoDword + i];
  for (uint32_t i = kBoxInfoDword + kFilterChildren * kInfoDwords; i < kNodeDwords; ++i) box[i] = 0;
  return d;
}

}  // namespace hwbvh::rdna4
