#include "hwbvh/formats/xe3/tree_check.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "formats/tree_walker.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/instance_leaf.h"
#include "hwbvh/formats/xe3/layout.h"
#include "hwbvh/formats/xe3/node_section.h"
#include "hwbvh/formats/xe3/stoc.h"

namespace hwbvh::xe3 {
namespace {

std::string at(uint32_t block) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "block %u (byte 0x%llX)", block, static_cast<unsigned long long>(block) * kBlockBytes);
  return buf;
}

// The states a pair of planar leaf masks describes, in bird order.
std::vector<SubTriangleState> bird_states(uint64_t opaque, uint64_t transparent, uint32_t level,
                                          SubTriangleOrder order) {
  std::vector<SubTriangleState> out(sub_triangle_count(level));
  for (uint32_t b = 0; b < out.size(); ++b) {
    const uint32_t bit = order == SubTriangleOrder::Bird ? b : row_index(bird_micro_triangle(b, level), level);
    out[b] = state_of(opaque, transparent, bit);
  }
  return out;
}

// What lies below an internal node's child.
struct Below {
  uint32_t geometry_masks = 0;            // OR of the leaves' geometry masks
  std::vector<uint32_t> scene_triangles;  // with a scene: the scene triangles reached
  void add(const Below& b) {
    geometry_masks |= b.geometry_masks;
    scene_triangles.insert(scene_triangles.end(), b.scene_triangles.begin(), b.scene_triangles.end());
  }
};

class Walker : formats::TreeWalker<TreeCheckResult> {
 public:
  Walker(std::span<const uint32_t> dw, const Scene* scene, const TreeCheckOptions& options)
      : TreeWalker(dw, scene, options.max_problems), options_(options) {}

  TreeCheckResult run() {
    std::string error;
    const auto header = read_node_section_header(dw_, &error);
    if (!header) return refuse(error);
    h_ = *header;
    reached_.assign(h_.node_blocks, false);
    visit_internal(h_.root_block, 0);
    for (uint32_t b = kHeaderBlocks; b < h_.node_blocks && !full(); ++b) {
      if (!reached_[b]) problem(at(b) + " is not reachable from the root");
    }
    if (result_.instance_leaves != h_.instance_leaves) {
      problem("the header counts " + std::to_string(h_.instance_leaves) + " instance leaves, the tree reaches " +
              std::to_string(result_.instance_leaves));
    }
    std::sort(result_.instance_leaf_blocks.begin(), result_.instance_leaf_blocks.end());
    check_stoc_data_coverage();
    if (scene_) {
      check_containment();
      check_references();
    }
    return std::move(result_);
  }

 private:
  // Marks `count` blocks from `block` as reached; false (with a problem) if outside the nodes or reached before.
  bool claim(uint32_t block, uint32_t count) {
    if (block < kHeaderBlocks || uint64_t{block} + count > h_.node_blocks) {
      problem(at(block) + " is outside the nodes");
      return false;
    }
    for (uint32_t b = block; b < block + count; ++b) {
      if (reached_[b]) {
        problem(at(block) + " is reached twice or overlaps another node (cycle or shared node)");
        return false;
      }
    }
    std::fill(reached_.begin() + block, reached_.begin() + block + count, true);
    return true;
  }

  template <std::size_t N>
  std::span<const uint32_t, N> node_at(uint32_t block) const {
    return std::span<const uint32_t, N>(dw_.data() + std::size_t{block} * kBlockDwords, N);
  }

  Below visit_internal(uint32_t block, uint32_t depth) {
    Below below;
    if (full()) return below;
    if (depth >= kTrailLevels) {
      problem("internal node at " + at(block) + " is " + std::to_string(depth) +
              " levels deep; the restart trail holds 29");
      return below;
    }
    if (!claim(block, 1)) return below;
    ++result_.internal_nodes;
    result_.max_depth = std::max(result_.max_depth, depth);
    const DecodedInternalNode node = decode_internal_node(node_at<kBlockDwords>(block));
    const std::string name = "internal node at " + at(block);
    if (node.node_type != kNodeTypeMixed && node.node_type != kNodeTypeInstance && node.node_type != kNodeTypeQuad &&
        node.node_type != kNodeTypeQuad128) {
      problem(name + " has node type " + std::to_string(node.node_type));
      return below;
    }
    if (node.reserved != 0) problem(name + " has a non-zero reserved byte");
    for (uint32_t i = 0; i < kNodeWidth; ++i) {
      const std::string child_name = name + " child " + std::to_string(i);
      if (!node.valid[i]) {
        const bool canonical = node.child_data[i] == 0 && node.q[i][0] == 0x80 && node.q[i][1] == 0 &&
                               node.q[i][2] == 0x80 && node.q[i][3] == 0 && node.q[i][4] == 0x80 && node.q[i][5] == 0;
        if (!canonical) problem(child_name + " is an empty slot not written as 0x80/0x00 with zero childData");
        continue;
      }
      if ((node.child_data[i] & 0xC0u) != 0) problem(child_name + " has reserved childData bits set");
      if (node.node_type != kNodeTypeMixed && node.type_or_start[i] != 0) problem(child_name + " has a startPrim");
      const int64_t child = node.child_block(block, i);
      if (child <= block || child >= h_.node_blocks) {
        problem(child_name + " lies at block " + std::to_string(child) + ", not after its parent inside the nodes");
        continue;
      }
      const auto child_block = static_cast<uint32_t>(child);
      Below c;
      switch (node.child_type(i)) {
        case kNodeTypeMixed:
          if (node.block_incr[i] != 1) {
            problem(child_name + " is an internal node with blockIncr " + std::to_string(node.block_incr[i]));
          }
          c = visit_internal(child_block, depth + 1);
          break;
        case kNodeTypeQuad:
        case kNodeTypeQuad128:
          c = visit_leaf_list(child_block, node.child_type(i), node.block_incr[i], child_name);
          break;
        case kNodeTypeInstance: c = visit_instance_leaf(child_block, node.block_incr[i], child_name); break;
        default: problem(child_name + " has unsupported node type " + std::to_string(node.child_type(i))); continue;
      }
      add_child(name, i, node.child_box[i], c.scene_triangles);
      below.add(c);
    }
    if ((below.geometry_masks & ~node.node_mask) != 0) {
      problem(name + " has a nodeMask that misses geometry masks below");
    }
    return below;
  }

  // An InstanceLeaf: only the bytes the leaf itself defines; its start node lies in another section.
  Below visit_instance_leaf(uint32_t block, uint32_t block_incr, const std::string& name) {
    Below below;
    if (h_.instance_leaves == 0) problem(name + " is an instance leaf in a section whose header counts none");
    if (block_incr != kInstanceLeafBlocks) {
      problem(name + " is an instance leaf with blockIncr " + std::to_string(block_incr));
    }
    if (!claim(block, kInstanceLeafBlocks)) return below;
    ++result_.instance_leaves;
    result_.instance_leaf_blocks.push_back(block);
    const DecodedInstanceLeaf leaf = decode_instance_leaf(node_at<kInstanceLeafDwords>(block));
    below.geometry_masks = leaf.mask;
    const std::string leaf_name = "instance leaf at " + at(block);
    if (leaf.reserved_nonzero) problem(leaf_name + " has MBZ bits set");
    if (leaf.comparison != 0 || leaf.sub_type != 0 || leaf.opacity_bits != 0) {
      problem(leaf_name + " sets comparison, sub-type or opacity bits hwbvh never writes");
    }
    if (leaf.start_node % kBlockBytes != 0) {
      problem(leaf_name + " has a start node that is not an internal node's block");
    }
    return below;
  }

  Below visit_leaf_list(uint32_t first, uint32_t type, uint32_t block_incr, const std::string& name) {
    Below below;
    const uint32_t size = type == kNodeTypeQuad128 ? 2 : 1;
    if (type == kNodeTypeQuad128 && h_.stoc_level != 3) {
      problem(name + " is a STOC3 leaf list in a section of STOC level " + std::to_string(h_.stoc_level));
    }
    uint32_t blocks = 0;
    for (uint32_t b = first; !full(); b += size) {
      if (!claim(b, size)) return below;
      blocks += size;
      bool last = false;
      if (type == kNodeTypeQuad128) {
        const DecodedStoc3Leaf leaf = decode_stoc3_leaf(node_at<kStoc3LeafDwords>(b));
        ++result_.stoc3_leaves;
        check_leaf(b, leaf.quad, &leaf, below);
        last = leaf.quad.last;
      } else {
        const DecodedQuadLeaf leaf = decode_quad_leaf(node_at<kBlockDwords>(b));
        ++result_.quad_leaves;
        check_leaf(b, leaf, nullptr, below);
        last = leaf.last;
      }
      if (last) break;
    }
    if (blocks != block_incr) {
      problem(name + " has blockIncr " + std::to_string(block_incr) + " but its leaf list takes " +
              std::to_string(blocks) + " blocks");
    }
    return below;
  }

  void check_leaf(uint32_t block, const DecodedQuadLeaf& q, const DecodedStoc3Leaf* s3, Below& below) {
    const std::string name = "leaf at " + at(block);
    below.geometry_masks |= q.geometry_mask;
    if (q.sub_type != 0) problem(name + " has sub-type " + std::to_string(q.sub_type));
    if (q.desc_reserved != 0 || q.flags_reserved != 0) problem(name + " has MBZ bits set");
    const bool pair = q.has_tri1();
    if (pair && (q.prim_index1_delta < 1 || q.prim_index1_delta > kMaxPrimIndexDelta)) {
      problem(name + " has primIndex1Delta " + std::to_string(q.prim_index1_delta) + " with a triangle 1");
    }
    if (!pair && (q.prim_index1_delta != 0 || q.swstoc[1] || q.stoc1_opaque[1] != 0 || q.stoc1_transparent[1] != 0)) {
      problem(name + " has triangle-1 fields without a triangle 1");
    }
    result_.quads += pair ? 1 : 0;
    for (int k = 0; k < (pair ? 2 : 1); ++k) {
      const auto ku = static_cast<std::size_t>(k);
      if ((q.stoc1_opaque[ku] & q.stoc1_transparent[ku]) != 0) {
        problem(name + " triangle " + std::to_string(k) + " has STOC1 bits both opaque and transparent");
      }
      if (h_.stoc_level == 0 && (q.stoc1_opaque[ku] != 0 || q.stoc1_transparent[ku] != 0 || q.swstoc[ku])) {
        problem(name + " has STOC1 bits in a section of STOC level 0");
      }
      if (s3) check_stoc3(name, *s3, k);
      ++result_.triangles;
      const uint32_t tri = check_triangle(name, q, k);
      if (tri != kNoIndex) below.scene_triangles.push_back(tri);
    }
    if (s3) {
      if (s3->reserved_nonzero) problem(name + " has reserved STOC3 bits set");
      if (!pair && (s3->opaque[1] || s3->transparent[1] || s3->full_address[1] || s3->full_level[1] || s3->swstoc[1])) {
        problem(name + " has triangle-1 STOC3 fields without a triangle 1");
      }
    }
  }

  void check_stoc3(const std::string& name, const DecodedStoc3Leaf& s3, int k) {
    const auto ku = static_cast<std::size_t>(k);
    const std::string tri = name + " triangle " + std::to_string(k);
    if ((s3.opaque[ku] & s3.transparent[ku]) != 0) {
      problem(tri + " has STOC3 bits both opaque and transparent");
      return;
    }
    const StocMasks level1 =
        summarize(bird_states(s3.opaque[ku], s3.transparent[ku], kStoc3Level, h_.order), kStoc1Level, h_.order);
    if (level1.opaque != s3.quad.stoc1_opaque[ku] || level1.transparent != s3.quad.stoc1_transparent[ku]) {
      problem(tri + " has STOC1 bits that are not the level-1 reduction of its STOC3 bits");
    }
    const uint32_t level = s3.full_level[ku];
    const uint64_t address = s3.full_address[ku];
    if (level == 0) {
      if (address != 0) problem(tri + " has a full-STOC address without a level");
      return;
    }
    if (level < 4 || level > kMaxStocLevel) {
      problem(tri + " has full-STOC level " + std::to_string(level));
      return;
    }
    const uint64_t bytes = sub_triangle_count(level) / 4;
    const uint64_t begin = uint64_t{h_.node_blocks} * kBlockBytes, end = uint64_t{dw_.size()} * 4;
    if (address % kBlockBytes != 0 || address < begin || address + bytes > end) {
      problem(tri + " has full-STOC data outside the STOC data area");
      return;
    }
    const auto [it, inserted] = stoc_ranges_.emplace(address, bytes);
    if (!inserted && it->second != bytes) problem(tri + " shares full-STOC data of a different level");
    std::vector<SubTriangleState> states(sub_triangle_count(level));
    for (std::size_t i = 0; i < states.size(); ++i) {
      const uint32_t value = (dw_[address / 4 + i / 16] >> (2 * (i % 16))) & 3u;
      states[i] = value == kFullStateOpaque        ? SubTriangleState::Opaque
                  : value == kFullStateTransparent ? SubTriangleState::Transparent
                                                   : SubTriangleState::Unknown;
    }
    const StocMasks level3 = summarize(states, kStoc3Level, h_.order);
    if (level3.opaque != s3.opaque[ku] || level3.transparent != s3.transparent[ku]) {
      problem(tri + " has STOC3 bits that are not the level-3 reduction of its full-STOC data");
    }
  }

  // Returns the scene triangle the leaf's triangle k names, or kNoIndex.
  uint32_t check_triangle(const std::string& name, const DecodedQuadLeaf& q, int k) {
    const uint32_t tri = scene_triangle(name, q.geometry_index, q.primitive(k), q.triangle(k));
    if (tri == kNoIndex) return kNoIndex;
    if (q.opaque == scene_->is_alpha_tested(tri)) {
      problem(name + ": triangle " + std::to_string(tri) + " has the wrong OpaqueGeometry bit");
    }
    if (q.shader_index != q.geometry_index) problem(name + " has a shader index other than its geometry index");
    return tri;
  }

  // The full-STOC ranges must tile the data area.
  void check_stoc_data_coverage() {
    uint64_t expected = uint64_t{h_.node_blocks} * kBlockBytes;
    for (const auto& [address, bytes] : stoc_ranges_) {
      if (address != expected) {
        problem("full-STOC data at byte " + std::to_string(address) +
                " does not follow the previous data (gap or overlap)");
        return;
      }
      expected = address + (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    }
    if (expected != uint64_t{dw_.size()} * 4) problem("the STOC data area holds data no leaf references");
  }

  void check_references() {
    for (uint32_t t = 0; t < scene_->triangles.size() && !full(); ++t) {
      const uint32_t refs = result_.triangle_references[t];
      if (scene_->is_degenerate(t)) {
        if (refs != 0) problem("degenerate triangle " + std::to_string(t) + " is referenced");
      } else if (refs == 0) {
        problem("triangle " + std::to_string(t) + " is not referenced");
      } else if (refs > 1 && !options_.allow_duplicate_references) {
        problem("triangle " + std::to_string(t) + " is referenced " + std::to_string(refs) + " times");
      }
    }
  }

  std::map<uint64_t, uint64_t> stoc_ranges_;  ///< full-STOC data: byte offset -> bytes
  TreeCheckOptions options_;
  NodeSectionHeader h_;
  std::vector<bool> reached_;  ///< per 64-byte block
};

}  // namespace

TreeCheckResult check_encoded_tree(std::span<const uint32_t> dwords, const Scene* scene,
                                   const TreeCheckOptions& options) {
  return Walker(dwords, scene, options).run();
}

}  // namespace hwbvh::xe3
