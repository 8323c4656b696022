#pragma once
// A small, valid rtip31 blob built in-process, and the tools that turn it hostile: edits of its node section
// (resealed through blob::serialize, so every checksum is valid and only the nodes are wrong), raw edits of its
// container bytes (resealed with fuzz/reseal.h), and the rays that reach its nodes.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fixtures/random_scene.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::test {

/// 600 random triangles in [0, 10]^3: a tree three levels deep, with box children under the root.
inline const pipeline::BuildBlobResult& sample_build() {
  static const pipeline::BuildBlobResult built = [] {
    pipeline::BuildBlobOptions options;
    options.build.threads = 1;
    return pipeline::build_blob(random_triangle_soup(600, 14), options);
  }();
  return built;
}

/// The sample's node section as dwords.
inline std::vector<uint32_t> sample_nodes() {
  return blob::bytes_to_dwords(sample_build().blob.require(blob::SectionType::Nodes, "sample").data);
}

/// The sample blob with its node section replaced by `nodes`, as file bytes with valid checksums.
inline std::vector<std::byte> with_nodes(const std::vector<uint32_t>& nodes) {
  blob::Blob b = sample_build().blob;
  for (blob::Section& s : b.sections)
    if (s.type == blob::SectionType::Nodes) s.data = blob::dwords_to_bytes(nodes);
  return blob::serialize(b);
}

/// The sample blob's file bytes.
inline std::vector<std::byte> sample_bytes() { return blob::serialize(sample_build().blob); }

/// The 32 dwords of the node at `pointer`, as a mutable view.
inline uint32_t* node_at(std::vector<uint32_t>& nodes, uint32_t pointer) {
  return nodes.data() + rdna4::node_byte_offset(pointer) / 4;
}

/// Pointers of all box and primitive nodes reachable from the root (pair-0 pointers for primitive nodes), found
/// through the decoder; the sample is well formed, so a plain breadth-first walk terminates.
struct SampleTree {
  std::vector<uint32_t> boxes;
  std::vector<uint32_t> primitives;
};
inline SampleTree sample_tree() {
  SampleTree t;
  std::vector<uint32_t> nodes = sample_nodes();
  std::vector<uint32_t> queue{rdna4::kRootPointer};
  for (std::size_t i = 0; i < queue.size(); ++i) {
    t.boxes.push_back(queue[i]);
    rdna4::NodeDwords node;
    std::memcpy(node.data(), node_at(nodes, queue[i]), sizeof node);
    const rdna4::DecodedBoxNode box = rdna4::decode_box_node(node);
    for (uint32_t k = 0; k < box.child_count; ++k) {
      const uint32_t p = box.child_pointer[k];
      if (rdna4::node_kind(p) == rdna4::NodeKind::Box) {
        queue.push_back(p);
      } else if ((p & ~0xFu) != 0) {
        const uint32_t first = p & ~0xFu;
        bool seen = false;
        for (uint32_t q : t.primitives) seen = seen || q == first;
        if (!seen) t.primitives.push_back(first);
      }
    }
  }
  return t;
}

/// A grid of 16 x 16 rays along +z through the sample's [0, 10]^2 footprint: most of them hit a triangle.
inline std::vector<Ray> sample_rays() {
  std::vector<Ray> rays;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x)
      rays.push_back({{0.3f + 0.6f * static_cast<float>(x), 0.3f + 0.6f * static_cast<float>(y), -5.0f},
                      {0.0f, 0.0f, 1.0f}, 0.0f, 100.0f});
  return rays;
}

/// Raw container edits: little-endian stores at a byte offset.
inline void put32(std::vector<std::byte>& bytes, std::size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<std::byte>(value >> (8 * i));
}
inline void put64(std::vector<std::byte>& bytes, std::size_t offset, uint64_t value) {
  blob::store_le64(bytes, offset, value);
}

}  // namespace hwbvh::test
