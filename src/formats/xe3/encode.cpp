// Whole-tree Xe3 encoder (docs/xe3-format.md §1, §5.2, §6.1; layout in node_section.h).
//
// Steps:
//   1. Leaves: each leaf child's pairs become its leaf list (quads, or two lone triangles for a pair that cannot be a
//      quad), of QuadLeafs or STOC3 leaves.
//   2. Layout, breadth-first from the root at block 2: each node's children get consecutive blocks right where the
//      layout cursor stands when the node is laid out, so children are contiguous and follow their parent.
//   3. Full-resolution STOC data blocks after the nodes, one per STOC3 triangle with states finer than level 3.
//   4. Nodes and STOC data are encoded independently, in parallel; then the header.
#include "hwbvh/formats/xe3/encode.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <optional>
#include <string>

#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/formats/xe3/internal_node.h"
#include "hwbvh/formats/xe3/quad_leaf.h"

namespace hwbvh::xe3 {
namespace {

using bvh_build::PrimPair;
using Bvh6 = bvh_build::WideBvh<6>;
using Clock = std::chrono::steady_clock;
using States = std::span<const SubTriangleState>;

constexpr uint32_t kMaxChildBlocks = 3;  // blockIncr is 2 bits
constexpr uint32_t kFullStatesPerBlock = kBlockBytes * 4;  // 2 bits each

QuadTriangle quad_triangle(const Scene& scene, uint32_t tri) {
  QuadTriangle q;
  for (int k = 0; k < 3; ++k) q.v[static_cast<std::size_t>(k)] = scene.vertex(tri, k);
  q.primitive = scene.triangles[tri].primitive;
  return q;
}

// Appends the leaves a leaf child's pairs become.
void append_quads(const Scene& scene, std::span<const PrimPair> pairs, std::vector<PrimPair>& out) {
  for (const PrimPair& p : pairs) {
    if (!p.has_tri1() || forms_quad(scene, p.tri0, p.tri1)) {
      out.push_back(p);
    } else {
      out.push_back({p.tri0, kNoIndex});
      out.push_back({p.tri1, kNoIndex});
    }
  }
}

bool any_alpha_tested(const Scene& scene, std::span<const PrimPair> quads) {
  return std::any_of(quads.begin(), quads.end(), [&](const PrimPair& q) {
    return scene.is_alpha_tested(q.tri0) || (q.has_tri1() && scene.is_alpha_tested(q.tri1));
  });
}

// One leaf child: its leaves (in `quads` of the encoder) and where it goes.
struct LeafChild {
  uint32_t first = 0;  ///< index of its first leaf in the quad list
  uint32_t count = 0;
  bool stoc3 = false;
  uint32_t block = 0;
  [[nodiscard]] uint32_t blocks() const { return count * (stoc3 ? 2u : 1u); }
};

class Encoder {
 public:
  Encoder(const Scene& scene, const Bvh6& bvh, const Xe3EncodeOptions& options)
      : scene_(scene), bvh_(bvh), options_(options) {}

  Xe3Encoded run() {
    const auto start = Clock::now();
    validate();
    collect_leaves();
    lay_out();
    allocate_full_states();

    Xe3Encoded out;
    out.dwords.assign(node_section_dwords(node_blocks_, data_blocks_), 0u);
    std::vector<uint32_t> swstoc(bvh_.nodes.size(), 0);
    const Executor executor(options_.threads);
    ProgressCounter progress(options_.progress, "encoding", bvh_.nodes.size() + full_triangles_.size());
    for_each_counted(executor, 0, bvh_.nodes.size(), 64, progress,
                     [&](std::size_t n) { swstoc[n] = encode_node(static_cast<uint32_t>(n), out.dwords); });
    for_each_counted(executor, 0, full_triangles_.size(), 16, progress,
                     [&](std::size_t i) { write_full_states(full_triangles_[i], out.dwords); });
    progress.finish();

    NodeSectionHeader header;
    header.node_blocks = node_blocks_;
    header.internal_nodes = static_cast<uint32_t>(bvh_.nodes.size());
    header.stoc_level = options_.stoc_level;
    header.order = options_.order;
    header.bounds = bvh_.bounds;
    header.stoc_data_blocks = data_blocks_;
    Xe3EncodeStats& st = out.stats;
    st.internal_nodes = header.internal_nodes;
    for (const auto& children : leaves_) {
      for (const std::optional<LeafChild>& leaf : children) {
        if (!leaf) continue;
        (leaf->stoc3 ? st.stoc3_leaves : st.quad_leaves) += leaf->count;
        for (uint32_t i = 0; i < leaf->count; ++i) {
          const bool pair = quads_[leaf->first + i].has_tri1();
          st.quads += pair ? 1 : 0;
          st.triangles += pair ? 2 : 1;
        }
      }
    }
    header.quad_leaves = st.quad_leaves;
    header.stoc3_leaves = st.stoc3_leaves;
    const auto header_dwords = write_node_section_header(header);
    std::copy(header_dwords.begin(), header_dwords.end(), out.dwords.begin());

    st.split_pairs = split_pairs_;
    for (const uint32_t s : swstoc) st.swstoc_triangles += s;
    st.max_depth = max_depth_;
    st.node_bytes = uint64_t{out.dwords.size()} * 4;
    st.stoc_data_bytes = uint64_t{data_blocks_} * kBlockBytes;
    st.seconds_encode = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
  }

 private:
  void validate() const {
    const std::string& file = scene_.source;
    if (options_.stoc_level != 0 && options_.stoc_level != 1 && options_.stoc_level != 3) {
      throw_bad_input(file, "Xe3 STOC level must be 0, 1 or 3, got " + std::to_string(options_.stoc_level));
    }
    if (options_.order != SubTriangleOrder::Bird && options_.order != SubTriangleOrder::Row) {
      throw_bad_input(file, "unknown sub-triangle order");
    }
    if (!options_.opacity.empty() && options_.opacity.size() != scene_.triangles.size()) {
      throw_bad_input(file, "opacity states given for " + std::to_string(options_.opacity.size()) +
                                " triangles, the scene has " + std::to_string(scene_.triangles.size()));
    }
    for (std::size_t t = 0; t < options_.opacity.size(); ++t) {
      const std::size_t n = options_.opacity[t].size();
      if (n != 0 && stoc_level_of(n) < 0) {
        throw_bad_input(file, "triangle " + std::to_string(t) + " has " + std::to_string(n) +
                                  " sub-triangle states; expected 4^L for a level L of 0..12");
      }
    }
    if (scene_.geometries.size() > uint64_t{kMaxGeometryIndex} + 1) {
      throw_bad_input(file, "the scene has " + std::to_string(scene_.geometries.size()) +
                                " geometries; Xe3 leaves hold a 24-bit geometry index");
    }
    if (bvh_.nodes.empty()) throw Error(ErrorKind::Runtime, file, "empty BVH cannot be encoded");
  }

  void collect_leaves() {
    leaves_.resize(bvh_.nodes.size());
    for (std::size_t n = 0; n < bvh_.nodes.size(); ++n) {
      const Bvh6::Node& node = bvh_.nodes[n];
      for (uint32_t c = 0; c < node.child_count; ++c) {
        const Bvh6::Child& child = node.children[c];
        if (!child.is_leaf()) continue;
        const std::span<const PrimPair> pairs = std::span(bvh_.pairs).subspan(child.index, child.pair_count);
        LeafChild leaf;
        leaf.first = static_cast<uint32_t>(quads_.size());
        append_quads(scene_, pairs, quads_);
        leaf.count = static_cast<uint32_t>(quads_.size()) - leaf.first;
        split_pairs_ += leaf.count - child.pair_count;
        leaf.stoc3 = options_.stoc_level == 3 && any_alpha_tested(scene_, std::span(quads_).subspan(leaf.first));
        if (leaf.blocks() > kMaxChildBlocks) {
          throw Error(ErrorKind::Runtime, scene_.source,
                      "a leaf of " + std::to_string(child.pair_count) + " pairs needs " +
                          std::to_string(leaf.blocks()) +
                          " 64-byte blocks; an Xe3 child holds at most 3 (build with xe3::configure_build)");
        }
        leaves_[n][c] = leaf;
      }
    }
  }

  // Breadth-first from the root; a node's children take consecutive blocks at the cursor.
  void lay_out() {
    const std::size_t count = bvh_.nodes.size();
    block_.assign(count, 0);
    first_child_.assign(count, 0);
    std::vector<uint32_t> depth(count, 0);
    std::vector<bool> seen(count, false);
    uint32_t cursor = kRootBlock + 1;
    block_[0] = kRootBlock;
    seen[0] = true;
    for (std::deque<uint32_t> queue{0}; !queue.empty(); queue.pop_front()) {
      const uint32_t n = queue.front();
      const Bvh6::Node& node = bvh_.nodes[n];
      first_child_[n] = cursor;
      for (uint32_t c = 0; c < node.child_count; ++c) {
        const Bvh6::Child& child = node.children[c];
        if (child.is_leaf()) {
          leaves_[n][c]->block = cursor;
          cursor += leaves_[n][c]->blocks();
          continue;
        }
        if (child.index >= count || seen[child.index]) {
          throw Error(ErrorKind::Runtime, scene_.source, "the BVH is not a tree (a node is referenced twice)");
        }
        seen[child.index] = true;
        depth[child.index] = depth[n] + 1;
        if (depth[child.index] >= kTrailLevels) {
          throw Error(ErrorKind::Runtime, scene_.source,
                      "the BVH is more than " + std::to_string(kTrailLevels) +
                          " levels deep; the Xe3 restart trail holds 29");
        }
        max_depth_ = std::max(max_depth_, depth[child.index]);
        block_[child.index] = cursor++;
        queue.push_back(child.index);
      }
    }
    if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
      throw Error(ErrorKind::Runtime, scene_.source, "the BVH has nodes that the root does not reach");
    }
    node_blocks_ = cursor;
  }

  [[nodiscard]] States states_of(uint32_t tri) const {
    return options_.opacity.empty() ? States{} : options_.opacity[tri];
  }

  // Every triangle of a STOC3 leaf with states finer than level 3 gets its full states once (split references share).
  void allocate_full_states() {
    if (options_.stoc_level != 3 || options_.opacity.empty()) return;
    full_block_.assign(scene_.triangles.size(), kNoIndex);
    uint32_t cursor = node_blocks_;
    for (const auto& children : leaves_) {
      for (const std::optional<LeafChild>& leaf : children) {
        if (!leaf || !leaf->stoc3) continue;
        for (uint32_t i = 0; i < leaf->count; ++i) {
          const PrimPair& q = quads_[leaf->first + i];
          for (const uint32_t tri : {q.tri0, q.tri1}) {
            if (tri == kNoIndex || full_block_[tri] != kNoIndex || stoc_level_of(states_of(tri).size()) <= 3) continue;
            full_block_[tri] = cursor;
            cursor += static_cast<uint32_t>(states_of(tri).size() / kFullStatesPerBlock);
            full_triangles_.push_back(tri);
          }
        }
      }
    }
    data_blocks_ = cursor - node_blocks_;
  }

  void write_full_states(uint32_t tri, std::vector<uint32_t>& dw) const {
    const States states = states_of(tri);
    uint32_t* out = dw.data() + std::size_t{full_block_[tri]} * kBlockDwords;
    for (std::size_t i = 0; i < states.size(); ++i) {
      const uint32_t value = states[i] == SubTriangleState::Opaque        ? kFullStateOpaque
                             : states[i] == SubTriangleState::Transparent ? kFullStateTransparent
                                                                          : kFullStateUnknown;
      out[i / 16] |= value << (2 * (i % 16));  // 16 states per dword, from the least significant bit
    }
  }

  // Encodes node n and its leaf children; returns the number of triangles given a swstoc bit.
  uint32_t encode_node(uint32_t n, std::vector<uint32_t>& dw) const {
    const Bvh6::Node& node = bvh_.nodes[n];
    InternalNodeInput in;
    in.child_offset = static_cast<int32_t>(first_child_[n] - block_[n]);
    in.child_count = node.child_count;
    uint32_t swstoc = 0;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const Bvh6::Child& child = node.children[c];
      InternalChildInput& ci = in.children[c];
      ci.box = child.bounds;
      if (!child.is_leaf()) continue;  // the defaults: an internal node of one block
      const LeafChild& leaf = *leaves_[n][c];
      ci.node_type = leaf.stoc3 ? kNodeTypeQuad128 : kNodeTypeQuad;
      ci.blocks = leaf.blocks();
      for (uint32_t i = 0; i < leaf.count; ++i) {
        const uint32_t block = leaf.block + i * (leaf.stoc3 ? 2u : 1u);
        swstoc += encode_leaf(quads_[leaf.first + i], i + 1 == leaf.count, leaf.stoc3,
                              dw.data() + std::size_t{block} * kBlockDwords);
      }
    }
    const BlockDwords box = encode_node_of_scene(in);
    std::copy(box.begin(), box.end(), dw.begin() + static_cast<std::ptrdiff_t>(std::size_t{block_[n]} * kBlockDwords));
    return swstoc;
  }

  // encode_internal_node, with its input errors (a scene too large for the 8-bit exponents) naming the scene.
  BlockDwords encode_node_of_scene(const InternalNodeInput& in) const {
    try {
      return encode_internal_node(in);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::BadInput || !e.file().empty()) throw;
      throw_bad_input(scene_.source, e.what());
    }
  }

  uint32_t encode_leaf(const PrimPair& q, bool last, bool stoc3, uint32_t* out) const {
    const Triangle& t0 = scene_.triangles[q.tri0];
    QuadInput in;
    in.tri0 = quad_triangle(scene_, q.tri0);
    if (q.has_tri1()) in.tri1 = quad_triangle(scene_, q.tri1);
    in.geometry = t0.geometry;
    in.shader_index = t0.geometry;  // DXR: the shader record follows the geometry index
    in.opaque = !scene_.is_alpha_tested(q.tri0);
    in.last = last;
    std::array<Stoc3Bits, 2> s3{};
    uint32_t swstoc = 0;
    const std::array<uint32_t, 2> tris{q.tri0, q.tri1};
    for (std::size_t k = 0; k < 2; ++k) {
      if (tris[k] == kNoIndex || options_.stoc_level == 0) continue;
      const States states = states_of(tris[k]);
      if (states.empty()) continue;
      const StocMasks m1 = summarize(states, kStoc1Level, options_.order);
      in.stoc1[k] = {static_cast<uint32_t>(m1.opaque), static_cast<uint32_t>(m1.transparent), m1.swstoc};
      if (stoc3) {
        const StocMasks m3 = summarize(states, kStoc3Level, options_.order);
        s3[k].opaque = m3.opaque;
        s3[k].transparent = m3.transparent;
        s3[k].swstoc = m3.swstoc;
        if (full_block_.size() > tris[k] && full_block_[tris[k]] != kNoIndex) {
          s3[k].full_address = uint64_t{full_block_[tris[k]]} * kBlockBytes;
          s3[k].full_level = static_cast<uint32_t>(stoc_level_of(states.size()));
        }
      }
      swstoc += (m1.swstoc || s3[k].swstoc) ? 1 : 0;
    }
    if (stoc3) {
      const Stoc3Dwords leaf = encode_stoc3_leaf(in, s3).value();  // forms_quad was checked in collect_leaves
      std::copy(leaf.begin(), leaf.end(), out);
    } else {
      const BlockDwords leaf = encode_quad_leaf(in).value();
      std::copy(leaf.begin(), leaf.end(), out);
    }
    return swstoc;
  }

  const Scene& scene_;
  const Bvh6& bvh_;
  const Xe3EncodeOptions& options_;
  std::vector<PrimPair> quads_;  ///< every leaf: one quad or one lone triangle
  std::vector<std::array<std::optional<LeafChild>, kNodeWidth>> leaves_;  ///< per node and child slot
  uint32_t split_pairs_ = 0;
  std::vector<uint32_t> block_;        ///< per node: its block
  std::vector<uint32_t> first_child_;  ///< per node: its first child's block
  uint32_t max_depth_ = 0;
  uint32_t node_blocks_ = 0;
  std::vector<uint32_t> full_block_;       ///< per scene triangle: its full-STOC block, or kNoIndex
  std::vector<uint32_t> full_triangles_;   ///< triangles with full STOC data, in block order
  uint32_t data_blocks_ = 0;
};

}  // namespace

bool forms_quad(const Scene& scene, uint32_t tri0, uint32_t tri1) {
  const Triangle& a = scene.triangles[tri0];
  const Triangle& b = scene.triangles[tri1];
  return a.geometry == b.geometry && scene.is_alpha_tested(tri0) == scene.is_alpha_tested(tri1) &&
         quad_shape(quad_triangle(scene, tri0), quad_triangle(scene, tri1)).has_value();
}

bool leaf_fits(const Scene& scene, std::span<const bvh_build::PrimPair> pairs, uint32_t stoc_level) {
  std::vector<PrimPair> quads;
  append_quads(scene, pairs, quads);
  const uint32_t per_leaf = stoc_level == 3 && any_alpha_tested(scene, quads) ? 2u : 1u;
  return quads.size() * per_leaf <= kMaxChildBlocks;
}

void configure_build(bvh_build::BuildOptions& options, uint32_t stoc_level) {
  options.max_leaf_pairs = kMaxChildBlocks;
  options.pair_leftovers = false;
  options.pair_fits = [](const Scene& scene, uint32_t tri0, uint32_t tri1) { return forms_quad(scene, tri0, tri1); };
  options.leaf_fits = [stoc_level](const Scene& scene, std::span<const bvh_build::PrimPair> pairs) {
    return leaf_fits(scene, pairs, stoc_level);
  };
}

Xe3Encoded encode(const Scene& scene, const bvh_build::WideBvh<6>& bvh, const Xe3EncodeOptions& options) {
  return Encoder(scene, bvh, options).run();
}

}  // namespace hwbvh::xe3
