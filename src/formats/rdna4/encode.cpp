// Whole-tree RT IP 3.1 encoder (docs/rtip31-format.md §2.4, §2.7, §2.9, §3.4, §4.8), for a BLAS (leaves of triangle
// pairs in primitive nodes) and for a top-level structure (one instance node per leaf); see TriangleLeaves and
// InstanceLeaves below for what differs.
//
// Steps:
//   1. OBB choice, bottom-up: per box node, candidate rotations from its children; accept the one whose child
//      bounds have the smallest total surface area if it beats the axis-aligned total by options.obb_accept_ratio.
//   2. Leaf packing per box node (§4.8 "longest prefix that fits"): the leaf children of one box node form a batch
//      whose pairs are packed greedily into consecutive primitive nodes; ranges may continue into the next node.
//      In a top-level structure each leaf child is one instance node.
//   3. Layout, breadth-first: a node's box children get consecutive slots (internal_base), its primitive nodes
//      follow as one run (leaf_base). Slot 0 is the node-section header, the root is slot 1 (pointer 0x15).
//      Instance nodes instead follow all box nodes (§1.5), each box node's as one run (leaf_base).
//   4. Box nodes are encoded with their children's bounds expressed in the chosen frame.
#include "hwbvh/formats/rdna4/encode.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <glm/vec3.hpp>

#include "formats/rdna4/float_steps.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/formats/rdna4/box_node.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/node_section.h"
#include "hwbvh/formats/rdna4/obb.h"
#include "hwbvh/formats/rdna4/primitive_node.h"

namespace hwbvh::rdna4 {
namespace {

using bvh_build::PrimPair;
using bvh_build::WideBvh8;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

PrimTriangleInput triangle_input(const Scene& scene, uint32_t tri) {
  const Triangle& t = scene.triangles[tri];
  PrimTriangleInput in;
  for (int k = 0; k < 3; ++k) in.v[k] = scene.positions[t.v[k]];
  in.primitive_id = t.primitive;
  in.geometry_id = t.geometry;
  in.opaque = !scene.is_alpha_tested(tri);
  return in;
}

PrimPairInput pair_input(const Scene& scene, const PrimPair& pair, bool range_stop) {
  PrimPairInput in;
  in.tri0 = triangle_input(scene, pair.tri0);
  if (pair.has_tri1()) in.tri1 = triangle_input(scene, pair.tri1);
  in.range_stop = range_stop;
  return in;
}

// ---------------------------------------------------------------------------------------------------------
// OBB selection
// ---------------------------------------------------------------------------------------------------------

// Bounds of a point set in a rotated frame, computed in double and padded so that the float rotation the
// intersector applies (§3.3) cannot push geometry outside the stored box.
struct FrameBounds {
  std::array<double, 3> lo{};
  std::array<double, 3> hi{};
};

// A table rotation's rows in double, decoded once: obb_matrix unpacks the spec's tables on every call. Each row
// factor is also held in both lanes of a two-double vector, for PointColumns::project.
using FrameRows = std::array<std::array<double, 3>, 3>;
using Double2 = double __attribute__((vector_size(16)));

struct Frame {
  FrameRows rows{};
  std::array<std::array<Double2, 3>, 3> lanes{};
};

const Frame& frame_of(uint32_t index) {
  static const std::array<Frame, kObbMatrixCount> table = [] {
    std::array<Frame, kObbMatrixCount> frames{};
    for (uint32_t i = 0; i < kObbMatrixCount; ++i) {
      const Mat3Rows m = obb_matrix(i);
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
          frames[i].rows[r][c] = m[r][c];
          frames[i].lanes[r][c] = Double2{m[r][c], m[r][c]};
        }
      }
    }
    return frames;
  }();
  return table[index];
}

// Points in double, one column per coordinate, so that two points are projected at once (PointColumns::project).
// The points are floats held in double: products with the rows' floats are exact, only the sums round.
struct PointColumns {
  std::vector<double> x, y, z;

  void assign(std::span<const Vec3> points) {
    x.resize(points.size());
    y.resize(points.size());
    z.resize(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      x[i] = points[i].x;
      y[i] = points[i].y;
      z[i] = points[i].z;
    }
  }

  /// Exact bounds of points [first, end) projected onto the frame's rows (min/max of doubles: independent of point
  /// order, but for which of two equal zeros of opposite sign is kept, a sign that padded_aabb erases). Each lane
  /// of the two-point vectors does what one point at a time would: the same products, summed in the same order.
  [[nodiscard]] FrameBounds project(const Frame& frame, uint32_t first, uint32_t end) const {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const auto pair_at = [](const std::vector<double>& column, uint32_t i) {
      Double2 v;
      std::memcpy(&v, &column[i], sizeof v);
      return v;
    };
    const auto& rows = frame.lanes;
    std::array<Double2, 3> lo{Double2{kInf, kInf}, Double2{kInf, kInf}, Double2{kInf, kInf}};
    std::array<Double2, 3> hi{Double2{-kInf, -kInf}, Double2{-kInf, -kInf}, Double2{-kInf, -kInf}};
    uint32_t i = first;
    for (; i + 2 <= end; i += 2) {
      const Double2 px = pair_at(x, i), py = pair_at(y, i), pz = pair_at(z, i);
      for (int r = 0; r < 3; ++r) {
        const Double2 d = rows[r][0] * px + rows[r][1] * py + rows[r][2] * pz;
        lo[r] = d < lo[r] ? d : lo[r];  // std::min(lo, d) per lane
        hi[r] = d > hi[r] ? d : hi[r];
      }
    }
    FrameBounds b;
    for (int r = 0; r < 3; ++r) {
      b.lo[r] = std::min(lo[r][0], lo[r][1]);
      b.hi[r] = std::max(hi[r][0], hi[r][1]);
      if (i < end) {
        const FrameRows& m = frame.rows;
        const double d = m[r][0] * x[i] + m[r][1] * y[i] + m[r][2] * z[i];
        b.lo[r] = std::min(b.lo[r], d);
        b.hi[r] = std::max(b.hi[r], d);
      }
    }
    return b;
  }
};

/// Exact bounds of box b's eight corners projected onto the rows of m, without visiting the corners: products
/// of floats are exact in double and rounded sums are monotonic, so per row the corner taking each
/// coordinate's min or max by the sign of its factor gives the smallest (largest) rounded value of all eight.
/// (Where a factor is zero, the two corners differ at most in the sign of a zero result, which the padding below
/// erases.)
FrameBounds project(const FrameRows& m, const Aabb& b) {
  FrameBounds out;
  for (int r = 0; r < 3; ++r) {
    const Vec3 lo{m[r][0] >= 0.0 ? b.min.x : b.max.x, m[r][1] >= 0.0 ? b.min.y : b.max.y,
                  m[r][2] >= 0.0 ? b.min.z : b.max.z};
    const Vec3 hi{m[r][0] >= 0.0 ? b.max.x : b.min.x, m[r][1] >= 0.0 ? b.max.y : b.min.y,
                  m[r][2] >= 0.0 ? b.max.z : b.min.z};
    out.lo[r] = m[r][0] * lo.x + m[r][1] * lo.y + m[r][2] * lo.z;
    out.hi[r] = m[r][0] * hi.x + m[r][1] * hi.y + m[r][2] * hi.z;
  }
  return out;
}

// Relative padding of OBB child bounds: GPURT grows each child by 7.15e-7 x the node's largest extent (§3.4);
// we pad by the magnitude of the projected coordinates too, which covers the float rotation error of the ray.
constexpr double kObbPadding = 4.0e-6;

Aabb padded_aabb(const FrameBounds& b) {
  double scale = 0.0;
  for (int r = 0; r < 3; ++r)
    scale = std::max(std::max(std::max(scale, std::abs(b.lo[r])), std::abs(b.hi[r])), b.hi[r] - b.lo[r]);
  const double pad = kObbPadding * scale;
  Aabb box;
  for (int r = 0; r < 3; ++r) {
    box.min[r] = next_down(static_cast<float>(b.lo[r] - pad));
    box.max[r] = next_up(static_cast<float>(b.hi[r] + pad));
  }
  return box;
}


// What a parent needs to know about a chosen child frame: the child's OBB as 8 world-space corners.
struct NodeFrame {
  uint32_t obb_index = kNoObb;
  std::array<Aabb, 8> child_boxes{};  // children's bounds in the node's frame (AABBs when obb_index == kNoObb)
  std::array<Vec3, 8> obb_corners{};  // world-space corners of the node's OBB (valid when obb_index != kNoObb)
};

// What bounds each child of one node besides its AABB, gathered once and projected for every candidate frame:
// a leaf's points (Leaves::add_points), or a box child's OBB corners (none for a box child without an OBB). One per
// worker, reused from node to node.
struct ChildPoints {
  std::array<uint32_t, 9> first{};  // child c's other points are points[first[c] .. first[c + 1])
  // Child c has points and all lie in its AABB (a leaf's vertices, without spatial splits): then in any frame the
  // projection of its AABB holds theirs (monotonic rounding), and theirs alone is the tighter bound.
  std::array<bool, 8> inside{};
  PointColumns points;
  std::vector<Vec3> gathered;      // add_points' output, before the conversion to double
  std::vector<uint32_t> vertices;  // add_points' scratch

  [[nodiscard]] bool empty(uint32_t c) const { return first[c] == first[c + 1]; }
  [[nodiscard]] FrameBounds project(const Frame& frame, uint32_t c) const {
    return points.project(frame, first[c], first[c + 1]);
  }
};

template <class Leaves>
class ObbChooser {
 public:
  ObbChooser(const Leaves& leaves, const WideBvh8& bvh, const EncodeOptions& options)
      : leaves_(leaves), bvh_(bvh), options_(options), frames_(bvh.nodes.size()) {}

  // Bottom-up by depth so every node sees its children's final frames; nodes of one depth run in parallel.
  std::vector<NodeFrame> choose(const Executor& executor) {
    ProgressCounter progress(options_.progress, "OBB choice", bvh_.nodes.size());
    std::vector<std::vector<uint32_t>> levels;
    levels.push_back({0});
    while (true) {
      std::vector<uint32_t> next;
      for (uint32_t n : levels.back()) {
        const auto& node = bvh_.nodes[n];
        for (uint32_t c = 0; c < node.child_count; ++c)
          if (!node.children[c].is_leaf()) next.push_back(node.children[c].index);
      }
      if (next.empty()) break;
      levels.push_back(std::move(next));
    }
    for (auto level = levels.rbegin(); level != levels.rend(); ++level) {
      const auto& nodes = *level;
      for_ranges_counted(executor, 0, nodes.size(), 16, progress, [&](std::size_t begin, std::size_t end) {
        ChildPoints points;
        for (std::size_t i = begin; i < end; ++i) frames_[nodes[i]] = choose_node(nodes[i], points);
        return end - begin;
      });
    }
    progress.finish();
    return std::move(frames_);
  }

 private:
  void gather(const WideBvh8::Node& node, ChildPoints& out) const {
    out.gathered.clear();
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const auto& child = node.children[c];
      const auto first = static_cast<uint32_t>(out.gathered.size());
      out.first[c] = first;
      if (child.is_leaf()) {
        leaves_.add_points(child, out.vertices, out.gathered);
      } else if (const NodeFrame& f = frames_[child.index]; f.obb_index != kNoObb) {
        out.gathered.insert(out.gathered.end(), f.obb_corners.begin(), f.obb_corners.end());
      }
      const auto points = std::span(out.gathered).subspan(first);
      out.inside[c] = !points.empty() &&
                      std::all_of(points.begin(), points.end(), [&](Vec3 p) { return child.bounds.contains(p); });
    }
    out.first[node.child_count] = static_cast<uint32_t>(out.gathered.size());
    out.points.assign(out.gathered);
  }

  // Child c's bounds in frame m: its AABB projected, intersected per axis with the projection of its other
  // points (the geometry lies inside both, so the tighter bound per axis is valid). An empty intersection can
  // only come from rounding on a flat child, and then the AABB projection alone is kept.
  FrameBounds child_bounds_in(const WideBvh8::Node& node, const ChildPoints& points, uint32_t c,
                              const Frame& frame) const {
    if (points.inside[c]) return points.project(frame, c);  // what the intersection below would give
    FrameBounds result = project(frame.rows, node.children[c].bounds);
    if (points.empty(c)) return result;
    const FrameBounds tight = points.project(frame, c);
    for (int r = 0; r < 3; ++r) {
      const double lo = std::max(result.lo[r], tight.lo[r]);
      const double hi = std::min(result.hi[r], tight.hi[r]);
      if (lo <= hi) {
        result.lo[r] = lo;
        result.hi[r] = hi;
      }
    }
    return result;
  }

  // Candidate rotations, in child order without repeats: each leaf's (Leaves::obb_candidate), each box child's own.
  uint32_t candidates(const WideBvh8::Node& node, std::array<uint32_t, 8>& out) const {
    uint32_t count = 0;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const auto& child = node.children[c];
      const uint32_t index = child.is_leaf() ? leaves_.obb_candidate(child) : frames_[child.index].obb_index;
      if (index < kObbMatrixCount && std::find(out.begin(), out.begin() + count, index) == out.begin() + count)
        out[count++] = index;
    }
    return count;
  }

  NodeFrame choose_node(uint32_t n, ChildPoints& points) const {
    const auto& node = bvh_.nodes[n];
    NodeFrame best;
    double aabb_area = 0.0;
    const float range = range_scale(node.bounds);  // only the ratio of areas matters
    for (uint32_t c = 0; c < node.child_count; ++c) {
      best.child_boxes[c] = node.children[c].bounds;
      aabb_area += node.children[c].bounds.surface_area(range);
    }
    if (!options_.obb || aabb_area <= 0.0) return best;

    double best_area = options_.obb_accept_ratio * aabb_area;
    std::array<uint32_t, 8> indices{};
    const uint32_t candidate_count = candidates(node, indices);
    if (candidate_count == 0) return best;
    gather(node, points);
    for (const uint32_t index : std::span(indices).first(candidate_count)) {
      const Frame& frame = frame_of(index);
      std::array<Aabb, 8> boxes{};
      double area = 0.0;
      for (uint32_t c = 0; c < node.child_count && area < best_area; ++c) {
        boxes[c] = padded_aabb(child_bounds_in(node, points, c, frame));
        area += boxes[c].surface_area(range);
      }
      if (area < best_area) {
        best_area = area;
        best.obb_index = index;
        best.child_boxes = boxes;
      }
    }
    if (best.obb_index != kNoObb) {
      // World-space corners of the node's OBB, padded in its own frame first. M is orthonormal, so M^T maps
      // frame -> world: a frame point p' goes to sum_r M[r] * p'[r] (in double, then widened to float).
      FrameBounds frame;
      for (int r = 0; r < 3; ++r) {
        frame.lo[r] = std::numeric_limits<double>::infinity();
        frame.hi[r] = -std::numeric_limits<double>::infinity();
        for (uint32_t c = 0; c < node.child_count; ++c) {
          frame.lo[r] = std::min<double>(frame.lo[r], best.child_boxes[c].min[r]);
          frame.hi[r] = std::max<double>(frame.hi[r], best.child_boxes[c].max[r]);
        }
      }
      const Aabb padded = padded_aabb(frame);
      const Mat3Rows m = obb_matrix(best.obb_index);
      const auto corners = padded.corners();
      for (int i = 0; i < 8; ++i) {
        for (int a = 0; a < 3; ++a) {
          const double w = double(m[0][a]) * corners[i].x + double(m[1][a]) * corners[i].y + double(m[2][a]) * corners[i].z;
          best.obb_corners[i][a] = static_cast<float>(w);
        }
      }
    }
    return best;
  }

  const Leaves& leaves_;
  const WideBvh8& bvh_;
  const EncodeOptions& options_;
  std::vector<NodeFrame> frames_;
};

// ---------------------------------------------------------------------------------------------------------
// Leaves: what differs between a BLAS and a top-level structure
// ---------------------------------------------------------------------------------------------------------
//
// A Leaves class tells the OBB chooser and the layout what a leaf child is: the points that bound it besides its
// box (add_points), its candidate rotation (obb_candidate), its slot's box flags and instance mask, and how the
// leaf children of one box node become 128-byte nodes: pack() before the layout (their count), write() after it
// (with the box node's pointer). A Batch tells, per leaf child, the node its range starts in and the child
// pointer's type.

// A BLAS: leaves are runs of triangle pairs, packed into primitive nodes (§4.8).
class TriangleLeaves {
 public:
  static constexpr bool kInstanceNodes = false;

  struct Batch {
    std::vector<NodeDwords> nodes;          // primitive nodes of this box node's leaf children, in order
    std::array<uint32_t, 8> start_node{};   // per leaf child (in leaf order): node index where its range starts
    std::array<uint32_t, 8> start_type{};   // and the node type of the pair it starts at
    [[nodiscard]] uint32_t node_count() const { return static_cast<uint32_t>(nodes.size()); }
  };

  TriangleLeaves(const Scene& scene, const WideBvh8& bvh) : scene_(scene), bvh_(bvh) {}

  // The leaf's distinct vertices (`vertices` keeps their indices: neighbouring triangles share most of them).
  void add_points(const WideBvh8::Child& leaf, std::vector<uint32_t>& vertices, std::vector<Vec3>& points) const {
    vertices.clear();
    for (uint32_t p = leaf.index; p < leaf.index + leaf.pair_count; ++p) {
      for (uint32_t tri : {bvh_.pairs[p].tri0, bvh_.pairs[p].tri1}) {
        if (tri == kNoIndex) continue;
        for (const uint32_t v : scene_.triangles[tri].v) {
          if (std::find(vertices.begin(), vertices.end(), v) != vertices.end()) continue;
          vertices.push_back(v);
          points.push_back(scene_.positions[v]);
        }
      }
    }
  }

  // The frame of the leaf's first triangle (§3.4).
  [[nodiscard]] uint32_t obb_candidate(const WideBvh8::Child& leaf) const {
    const uint32_t tri = bvh_.pairs[leaf.index].tri0;
    return triangle_obb_candidate(scene_.vertex(tri, 0), scene_.vertex(tri, 1), scene_.vertex(tri, 2));
  }

  [[nodiscard]] uint32_t box_flags(const WideBvh8::Child& leaf) const {
    bool all_opaque = true, all_non_opaque = true;
    for (uint32_t p = leaf.index; p < leaf.index + leaf.pair_count; ++p) {
      for (uint32_t tri : {bvh_.pairs[p].tri0, bvh_.pairs[p].tri1}) {
        if (tri == kNoIndex) continue;
        const bool opaque = !scene_.is_alpha_tested(tri);
        all_opaque = all_opaque && opaque;
        all_non_opaque = all_non_opaque && !opaque;
      }
    }
    return kBoxFlagOnlyTriangles | (all_opaque ? kBoxFlagOnlyOpaque : 0u) |
           (all_non_opaque ? kBoxFlagOnlyNonOpaque : 0u);
  }

  [[nodiscard]] static uint32_t instance_mask(const WideBvh8::Child&) { return 0xFF; }

  // Greedy "longest prefix that fits": pairs of all leaf children of one box node in slot order, cut at pair
  // boundaries; a range may continue into the next node (the stop bit marks its last pair).
  [[nodiscard]] Batch pack(std::span<const WideBvh8::Child> leaves) const {
    std::vector<PrimPairInput> all;
    std::vector<uint32_t> owner;  // leaf index of each pair
    // Allocated once at their size: growing them pair by pair took about 5 allocations each per box node.
    std::size_t pair_total = 0;
    for (const WideBvh8::Child& leaf : leaves) pair_total += leaf.pair_count;
    all.reserve(pair_total);
    owner.reserve(pair_total);
    for (uint32_t l = 0; l < leaves.size(); ++l) {
      for (uint32_t p = 0; p < leaves[l].pair_count; ++p) {
        const bool stop = p + 1 == leaves[l].pair_count;
        all.push_back(pair_input(scene_, bvh_.pairs[leaves[l].index + p], stop));
        owner.push_back(l);
      }
    }
    Batch batch;
    std::size_t begin = 0;
    while (begin < all.size()) {
      const std::optional<PrimitiveNodePrefix> node = encode_primitive_node_prefix(std::span(all).subspan(begin));
      if (!node) {
        throw Error(ErrorKind::Runtime, scene_.source,
                    "a triangle pair does not fit an RT IP 3.1 primitive node (ids out of range?)");
      }
      const std::size_t count = node->count;
      for (std::size_t i = begin; i < begin + count; ++i) {
        if (i == 0 || owner[i] != owner[i - 1]) {  // a range starts here
          batch.start_node[owner[i]] = batch.node_count();
          batch.start_type[owner[i]] = pair_node_type(static_cast<uint32_t>(i - begin));
        }
      }
      batch.nodes.push_back(node->node);
      begin += count;
    }
    return batch;
  }

  static void write(const Batch& batch, uint32_t /*box_pointer*/, uint32_t* out) {
    for (const NodeDwords& node : batch.nodes) out = std::copy(node.begin(), node.end(), out);
  }

 private:
  const Scene& scene_;
  const WideBvh8& bvh_;
};

// A top-level structure: every leaf child is one instance (its pair's tri0 indexes the instances), stored as one
// instance node (§2.9) of type 6 and range length 1.
class InstanceLeaves {
 public:
  static constexpr bool kInstanceNodes = true;

  struct Batch {
    std::array<uint32_t, 8> instance{};    // per leaf child: index into the instances
    std::array<uint32_t, 8> start_node{};  // = the leaf child's index: one node each
    std::array<uint32_t, 8> start_type{};  // kTypeInstance
    uint32_t count = 0;
    [[nodiscard]] uint32_t node_count() const { return count; }
  };

  InstanceLeaves(std::span<const TlasInstanceInput> instances, const WideBvh8& bvh)
      : instances_(instances), bvh_(bvh) {}

  void add_points(const WideBvh8::Child& leaf, std::vector<uint32_t>&, std::vector<Vec3>& points) const {
    const auto& corners = of(leaf).world_corners;
    points.insert(points.end(), corners.begin(), corners.end());
  }

  // Corners 0, 1, 2 lie on the BLAS box's x and y edges: the frame of that face is the instance's own rotation.
  [[nodiscard]] uint32_t obb_candidate(const WideBvh8::Child& leaf) const {
    const auto& c = of(leaf).world_corners;
    return triangle_obb_candidate(c[0], c[1], c[2]);
  }

  [[nodiscard]] uint32_t box_flags(const WideBvh8::Child& leaf) const { return of(leaf).box_flags; }
  [[nodiscard]] uint32_t instance_mask(const WideBvh8::Child& leaf) const { return of(leaf).node.instance_mask; }

  [[nodiscard]] Batch pack(std::span<const WideBvh8::Child> leaves) const {
    Batch batch;
    for (const WideBvh8::Child& leaf : leaves) {
      batch.instance[batch.count] = bvh_.pairs[leaf.index].tri0;
      batch.start_node[batch.count] = batch.count;
      batch.start_type[batch.count++] = kTypeInstance;
    }
    return batch;
  }

  void write(const Batch& batch, uint32_t box_pointer, uint32_t* out) const {
    for (uint32_t l = 0; l < batch.count; ++l) {
      InstanceNodeInput node = instances_[batch.instance[l]].node;
      node.parent_pointer = box_pointer;
      const NodeDwords dwords = encode_instance_node(node);
      out = std::copy(dwords.begin(), dwords.end(), out);
    }
  }

 private:
  [[nodiscard]] const TlasInstanceInput& of(const WideBvh8::Child& leaf) const {
    return instances_[bvh_.pairs[leaf.index].tri0];
  }

  std::span<const TlasInstanceInput> instances_;
  const WideBvh8& bvh_;
};

// ---------------------------------------------------------------------------------------------------------
// Layout and node encoding
// ---------------------------------------------------------------------------------------------------------

struct BoxPlan {
  std::array<uint32_t, 8> order{};  // WideBvh child indices in slot order: box children first, then leaves
  uint32_t box_children = 0;
  uint32_t leaf_children = 0;
  uint32_t slot = 0;                // this node's 128-byte slot
  uint32_t first_box_slot = 0;      // internal_base slot
  uint32_t first_leaf_slot = 0;     // leaf_base slot
  uint32_t parent_slot = 0;         // 0 for the root
  uint32_t index_in_parent = 0;
  uint32_t box_flags = 0;           // AND over the subtree, for the parent's child info
  uint32_t instance_mask = 0;       // OR over the subtree, for the parent's child info
  std::array<uint32_t, 8> leaf_flags{};  // box flags of each leaf child, by WideBvh child index
  std::array<uint32_t, 8> leaf_masks{};  // instance mask of each leaf child, by WideBvh child index
};

struct EncodedTree {
  EncodedBvh bvh;
  std::vector<uint32_t> breadth_first;  // WideBvh node indices in slot order (which is also their leaf nodes' order)
};

template <class Leaves>
EncodedTree encode_tree(const WideBvh8& bvh, const Leaves& leaves, const EncodeOptions& options,
                        const std::string& source) {
  if (bvh.nodes.empty()) throw Error(ErrorKind::Runtime, source, "empty BVH cannot be encoded");
  const Executor executor(options.threads);
  EncodedTree tree;
  EncodedBvh& out = tree.bvh;

  auto start = Clock::now();
  const std::vector<NodeFrame> frames = ObbChooser<Leaves>(leaves, bvh, options).choose(executor);
  out.stats.seconds_obb = seconds_since(start);
  start = Clock::now();

  // Slot order within each node, and leaf packing per node (independent, parallel); progress counts nodes planned,
  // then nodes written.
  const std::size_t node_count = bvh.nodes.size();
  ProgressCounter progress(options.progress, "encoding", 2 * node_count);
  std::vector<BoxPlan> plans(node_count);
  std::vector<typename Leaves::Batch> batches(node_count);
  for_each_counted(executor, 0, node_count, 64, progress, [&](std::size_t n) {
    const auto& node = bvh.nodes[n];
    BoxPlan& plan = plans[n];
    std::array<WideBvh8::Child, 8> leaf_children{};
    for (uint32_t c = 0; c < node.child_count; ++c)
      if (!node.children[c].is_leaf()) plan.order[plan.box_children++] = c;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      if (!node.children[c].is_leaf()) continue;
      leaf_children[plan.leaf_children] = node.children[c];
      plan.order[plan.box_children + plan.leaf_children++] = c;
      plan.leaf_flags[c] = leaves.box_flags(node.children[c]);
      plan.leaf_masks[c] = leaves.instance_mask(node.children[c]);
    }
    batches[n] = leaves.pack(std::span(leaf_children).first(plan.leaf_children));
  });

  // Breadth-first slot assignment: slot 0 = section header, slot 1 = root. Primitive nodes follow their box node's
  // box children; instance nodes get their own run after the last box node.
  uint32_t next_slot = 2;
  uint32_t next_instance_slot = 1 + static_cast<uint32_t>(node_count);
  uint32_t& next_leaf_slot = Leaves::kInstanceNodes ? next_instance_slot : next_slot;
  std::vector<uint32_t>& queue = tree.breadth_first;
  queue.push_back(0);
  plans[0].slot = 1;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const uint32_t n = queue[q];
    BoxPlan& plan = plans[n];
    plan.first_box_slot = next_slot;
    for (uint32_t s = 0; s < plan.box_children; ++s) {
      const uint32_t child = bvh.nodes[n].children[plan.order[s]].index;
      plans[child].slot = next_slot++;
      plans[child].parent_slot = plan.slot;
      plans[child].index_in_parent = s;
      queue.push_back(child);
    }
    plan.first_leaf_slot = next_leaf_slot;
    next_leaf_slot += batches[n].node_count();
  }
  if (queue.size() != node_count) {
    throw Error(ErrorKind::Runtime, source, "BVH has unreachable nodes; refusing to encode");
  }
  const uint32_t slots = next_leaf_slot;  // the last run of leaf nodes ends the section

  // Box flags (AND) and instance masks (OR) over the subtree, children before parents (reverse breadth-first).
  for (auto it = queue.rbegin(); it != queue.rend(); ++it) {
    const auto& node = bvh.nodes[*it];
    uint32_t flags = 0xF, mask = 0;
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const auto& child = node.children[c];
      flags &= child.is_leaf() ? plans[*it].leaf_flags[c] : plans[child.index].box_flags;
      mask |= child.is_leaf() ? plans[*it].leaf_masks[c] : plans[child.index].instance_mask;
    }
    plans[*it].box_flags = flags;
    plans[*it].instance_mask = mask;
  }

  out.dwords.assign(std::size_t{slots} * kNodeDwords, 0u);
  auto slot_pointer = [](uint32_t slot, uint32_t type) { return make_node_pointer(uint64_t{slot} * kNodeBytes, type); };

  for_each_counted(executor, 0, node_count, 64, progress, [&](std::size_t n) {
    const auto& node = bvh.nodes[n];
    const BoxPlan& plan = plans[n];
    const typename Leaves::Batch& batch = batches[n];
    const NodeFrame& frame = frames[n];
    BoxNodeInput in;
    in.internal_base = slot_pointer(plan.first_box_slot, 0);
    in.leaf_base = slot_pointer(plan.first_leaf_slot, 0);
    in.parent_pointer = n == 0 ? kInvalidNode : slot_pointer(plan.parent_slot, kTypeBox);
    in.index_in_parent = plan.index_in_parent;
    in.obb_index = frame.obb_index;
    in.child_count = node.child_count;
    for (uint32_t s = 0; s < node.child_count; ++s) {
      const uint32_t c = plan.order[s];
      const auto& child = node.children[c];
      BoxChildInput& ci = in.children[s];
      ci.box = frame.child_boxes[c];
      if (!child.is_leaf()) {
        ci.node_type = kTypeBox;
        ci.range_length = 1;
        ci.box_flags = plans[child.index].box_flags;
        ci.instance_mask = plans[child.index].instance_mask;
      } else {
        const uint32_t leaf = s - plan.box_children;
        ci.node_type = batch.start_type[leaf];
        const uint32_t next_start = leaf + 1 < plan.leaf_children ? batch.start_node[leaf + 1] : batch.node_count();
        ci.range_length = next_start - batch.start_node[leaf];
        ci.box_flags = plan.leaf_flags[c];
        ci.instance_mask = plan.leaf_masks[c];
      }
    }
    const NodeDwords box = encode_box_node(in);
    std::copy(box.begin(), box.end(), out.dwords.begin() + std::ptrdiff_t{plan.slot} * kNodeDwords);
    leaves.write(batch, slot_pointer(plan.slot, kTypeBox),
                 out.dwords.data() + std::ptrdiff_t{plan.first_leaf_slot} * kNodeDwords);
  });

  // Statistics and the section header.
  EncodeStats& st = out.stats;
  st.box_nodes = static_cast<uint32_t>(node_count);
  uint32_t leaf_nodes = 0;
  for (std::size_t n = 0; n < node_count; ++n) {
    leaf_nodes += batches[n].node_count();
    st.obb_box_nodes += frames[n].obb_index != kNoObb ? 1 : 0;
    st.leaf_ranges += plans[n].leaf_children;
  }
  (Leaves::kInstanceNodes ? st.instance_nodes : st.primitive_nodes) = leaf_nodes;
  st.node_bytes = uint64_t{slots} * kNodeBytes;
  NodeSectionHeader header;
  header.root_pointer = kRootPointer;
  header.node_slots = slots;
  header.box_nodes = st.box_nodes;
  header.primitive_nodes = st.primitive_nodes;
  header.instance_nodes = st.instance_nodes;
  header.bounds = bvh.bounds;
  const NodeDwords header_dwords = write_node_section_header(header);
  std::copy(header_dwords.begin(), header_dwords.end(), out.dwords.begin());
  st.seconds_encode = seconds_since(start);
  progress.finish();
  return tree;
}

}  // namespace

void adapt_build_options(bvh_build::BuildOptions& options) {
  options.leaf_fits = primitive_leaf_fits;
  options.pair_leftovers = true;
}

EncodedBvh encode(const Scene& scene, const bvh_build::WideBvh8& bvh, const EncodeOptions& options) {
  EncodedBvh out = encode_tree(bvh, TriangleLeaves(scene, bvh), options, scene.source).bvh;
  out.stats.pairs = static_cast<uint32_t>(bvh.pairs.size());
  for (const auto& pair : bvh.pairs) out.stats.triangles += pair.has_tri1() ? 2 : 1;
  return out;
}

EncodedTlas encode_tlas(const bvh_build::WideBvh8& tree, std::span<const TlasInstanceInput> instances,
                        const EncodeOptions& options) {
  for (const auto& node : tree.nodes) {
    for (uint32_t c = 0; c < node.child_count; ++c) {
      const auto& child = node.children[c];
      if (child.is_leaf() && (child.pair_count != 1 || tree.pairs[child.index].tri0 >= instances.size())) {
        throw Error(ErrorKind::Runtime, "",
                    "top-level tree leaf does not name one of the " + std::to_string(instances.size()) + " instances");
      }
    }
  }
  EncodedTree encoded = encode_tree(tree, InstanceLeaves(instances, tree), options, "");
  EncodedTlas out;
  out.bvh = std::move(encoded.bvh);
  out.first_instance_slot = 1 + static_cast<uint32_t>(tree.nodes.size());
  // Instance nodes run in slot order of their box nodes, each node's in the order of its leaf children.
  for (const uint32_t n : encoded.breadth_first) {
    const auto& node = tree.nodes[n];
    for (uint32_t c = 0; c < node.child_count; ++c)
      if (node.children[c].is_leaf()) out.instance_order.push_back(tree.pairs[node.children[c].index].tri0);
  }
  return out;
}

uint32_t tlas_slots(const bvh_build::WideBvh8& tree) {
  auto slots = 1 + static_cast<uint32_t>(tree.nodes.size());
  for (const auto& node : tree.nodes)
    for (uint32_t c = 0; c < node.child_count; ++c) slots += node.children[c].is_leaf() ? 1 : 0;
  return slots;
}

}  // namespace hwbvh::rdna4
