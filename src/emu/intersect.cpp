#include "hwbvh/emu/intersect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::emu {
namespace {

using rdna4::kInvalidNode;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kSignBit = 0x80000000u;

// Child box flags (§2.3).
constexpr uint32_t kOnlyOpaque = 1, kOnlyNonOpaque = 2, kOnlyTriangles = 4, kOnlyProcedural = 8;

// §5.3 step 2: early culling of a child by its box flags against the pointer flags.
bool box_flags_cull(uint32_t f, const PointerFlags& pf) {
  const bool only_opaque = ((f & kOnlyOpaque) != 0 || pf.force_opaque) && !pf.force_non_opaque;
  const bool only_non_opaque = ((f & kOnlyNonOpaque) != 0 || pf.force_non_opaque) && !pf.force_opaque;
  return (only_opaque && pf.cull_opaque) || (only_non_opaque && pf.cull_non_opaque) ||
         ((f & kOnlyTriangles) != 0 && pf.skip_triangles) || ((f & kOnlyProcedural) != 0 && pf.skip_procedural);
}

// Rotates origin and direction into an OBB frame in exactly the fma order of §3.3 (z innermost).
void rotate_ray(const rdna4::Mat3Rows& m, Vec3& o, Vec3& d) {
  Vec3 ro, rd;
  for (int r = 0; r < 3; ++r) {
    ro[r] = std::fma(o.x, m[r].x, std::fma(o.y, m[r].y, std::fma(o.z, m[r].z, 0.0f)));
    const float dz = d.z * m[r].z;
    rd[r] = std::fma(d.x, m[r].x, std::fma(d.y, m[r].y, dz));
  }
  o = ro;
  d = rd;
}

// One compare-exchange of the sorting network: swap if b sorts strictly before a (ties and NaN keys keep order).
struct SortEntry {
  uint32_t ext;
  float key;
  uint32_t ptr;
};
void compare_exchange(std::array<SortEntry, 8>& e, int a, int b) {
  if (e[b].ext < e[a].ext || (e[b].ext == e[a].ext && e[b].key < e[a].key)) std::swap(e[a], e[b]);
}

// Batcher odd-even merge sort of 8 inputs, 19 comparators in 6 stages (§5.3 step 8). Stages 1-3 sort each half
// (the per-half sort used when wide sort is off), stages 4-6 merge them.
constexpr int kNetwork[19][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7},  // stage 1
                                 {0, 1}, {2, 3}, {4, 5}, {6, 7},  // stage 2
                                 {1, 2}, {5, 6},                  // stage 3
                                 {0, 4}, {1, 5}, {2, 6}, {3, 7},  // stage 4
                                 {2, 4}, {3, 5},                  // stage 5
                                 {1, 2}, {3, 4}, {5, 6}};         // stage 6
constexpr int kHalfSortComparators = 10;

void intersect_box(const rdna4::NodeDwords& node, const PointerFlags& pf, const RayOperands& ray,
                   const IntersectOptions& opt, IntersectResult& res) {
  // Decode: child pointers (INVALID past the count) and dequantized boxes (NaN past the count).
  const rdna4::DecodedBoxNode box = rdna4::decode_box_node(node);
  std::array<uint32_t, 8> child = box.child_pointer;

  // Early culling by box flags and instance mask.
  for (int k = 0; k < 8; ++k) {
    const rdna4::ChildInfoFields& info = box.info[k];
    if (box_flags_cull(info.box_flags, pf) || (info.instance_mask & ray.instance_mask) == 0) child[k] = kInvalidNode;
  }

  // OBB: the slab tests run in the node's rotated frame. Indices 104..126 have no matrix; they are treated like
  // 0x7F (axis-aligned), see docs/emulator.md.
  Vec3 o = ray.origin, d = ray.direction;
  if (box.obb_index < rdna4::kObbMatrixCount) {
    rotate_ray(rdna4::obb_matrix(box.obb_index), o, d);
    res.obb_rotated = true;
  }
  const Vec3 inv{1.0f / d.x, 1.0f / d.y, 1.0f / d.z};
  const float grow = box_grow_factor(opt.box_grow);

  // Slab test of all eight slots.
  std::array<SortEntry, 8> e{};
  for (int k = 0; k < 8; ++k) {
    const Aabb& b = box.child_box[k];
    float near_c[3], far_c[3];
    for (int c = 0; c < 3; ++c) {
      const float dlo = b.min[c] - o[c];
      const float dhi = b.max[c] - o[c];
      const float lo = dlo * inv[c];
      const float hi = dhi * inv[c];
      const bool forward = inv[c] >= 0.0f;  // a NaN inverse takes the "else" branch
      near_c[c] = forward ? lo : hi;
      far_c[c] = forward ? hi : lo;
    }
    const float tn = std::fmax(std::fmax(near_c[0], near_c[1]), near_c[2]);
    const float tf = std::fmin(std::fmin(far_c[0], far_c[1]), far_c[2]);
    float t0 = std::fmax(tn, 0.0f);
    float t1 = std::fmin(tf, ray.extent);
    if (std::isnan(tn) || std::isnan(tf)) {
      t0 = kInf;
      t1 = -kInf;
    }
    const float t1_grown = t1 * grow;
    const bool hit = t0 <= t1_grown;
    e[k].ptr = hit ? child[k] : kInvalidNode;

    switch (opt.heuristic) {
      case SortHeuristic::LargestFirst: e[k].key = t0 - t1; break;
      case SortHeuristic::ClosestMidpoint:
        e[k].key = (std::isnan(tn) ? 0.0f : tn) + (std::isnan(tf) ? kInf : tf);
        break;
      case SortHeuristic::Closest:
      case SortHeuristic::Disabled: e[k].key = t0; break;
    }
  }

  // Remove adjacent duplicates (child reuse); INVALID entries also become the new "previous".
  uint32_t prev = e[0].ptr;
  for (int k = 1; k < 8; ++k) {
    if (e[k].ptr == prev) {
      e[k].ptr = kInvalidNode;
    } else {
      prev = e[k].ptr;
    }
  }

  // 3-bit extended key: invalid last; with sort_triangles_first, primitives before boxes, (ptr & 7) == 1 first.
  for (SortEntry& s : e) {
    const uint32_t type = s.ptr & 7u;
    s.ext = (s.ptr == kInvalidNode ? 4u : 0u) | (opt.sort_triangles_first && type > 3 ? 2u : 0u) |
            (opt.sort_triangles_first && type != 1 ? 1u : 0u);
  }

  if (opt.box_sort && opt.heuristic != SortHeuristic::Disabled) {
    const int comparators = opt.wide_sort ? 19 : kHalfSortComparators;
    for (int i = 0; i < comparators; ++i) compare_exchange(e, kNetwork[i][0], kNetwork[i][1]);
  }
  for (int k = 0; k < 8; ++k) res.dw[k] = e[k].ptr;
  res.box_tests = 8;
}

// Component-wise helpers with a fixed evaluation order (left to right).
Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// One triangle slot of the primitive path (§5.4); returns (t, I, J, prim << 1 | hitkind).
std::array<uint32_t, 4> intersect_triangle(const rdna4::DecodedTriangle& tri, const PointerFlags& pf,
                                           const RayOperands& ray, uint32_t& triangle_tests) {
  float tn = 0.0f, den = 1.0f, u = 0.0f, v = 0.0f;
  if (!tri.procedural) {
    // Möller–Trumbore, as GPURT's emulation writes it.
    const Vec3 a = tri.vertex[0], b = tri.vertex[1], c = tri.vertex[2];
    const Vec3 e1 = b - a, e2 = c - a, e3 = ray.origin - a;
    const Vec3 s1 = cross(ray.direction, e2), s2 = cross(e3, e1);
    tn = dot(e2, s2);
    den = dot(s1, e1);
    const float un = dot(e3, s1), vn = dot(ray.direction, s2);
    const float t = tn / den, bu = un / den, bv = vn / den;
    if (bu < 0.0f || bu > 1.0f || bv < 0.0f || bu + bv > 1.0f || t < 0.0f) {  // NaN compares false
      tn = kInf;
      den = 1.0f;
    }
    u = un / den;
    v = vn / den;
    ++triangle_tests;
  }

  // Culling and opacity from the pointer flags.
  const bool opaque = pf.force_opaque || (!pf.force_non_opaque && tri.opaque);
  bool culled = false;
  if (!tri.procedural) {
    bool front = den >= 0.0f;  // -0.0 counts as front
    if (pf.flip_facedness) {
      front = !front;
      tn = bits_float(float_bits(tn) ^ kSignBit);
      den = bits_float(float_bits(den) ^ kSignBit);
    }
    culled = (front ? pf.cull_front_facing : pf.cull_back_facing) || pf.skip_triangles;
  } else {
    culled = pf.skip_procedural;
  }
  culled = culled || (opaque ? pf.cull_opaque : pf.cull_non_opaque);
  if (culled) {
    tn = kInf, den = 1.0f, u = 0.0f, v = 0.0f;
  } else if (tri.procedural) {
    tn = 0.0f, den = 1.0f, u = 0.0f, v = 0.0f;
  }

  // Result packing: sign of I = procedural, sign of J = non-opaque, low bit of the id = back face.
  uint32_t ub = float_bits(u) & ~kSignBit, vb = float_bits(v) & ~kSignBit;
  if (tri.procedural) {
    ub = float_bits(1.0f) | kSignBit;
    vb = float_bits(1.0f);
  }
  if (!opaque) vb |= kSignBit;
  const uint32_t hitkind = tri.procedural ? 0u : float_bits(den) >> 31;
  const float t_out = tri.procedural ? tn : tn / den;
  return {float_bits(t_out), ub, vb, (tri.primitive_id << 1) | hitkind};
}

void intersect_primitive(const rdna4::NodeDwords& node, uint32_t node_pointer, const PointerFlags& pf,
                         const RayOperands& ray, IntersectResult& res) {
  const std::optional<rdna4::DecodedPair> pair = rdna4::decode_primitive_pair(node, rdna4::pair_index(node_pointer));
  if (!pair) {
    res.fault = NodeFault::MalformedPrimitive;
    return;
  }
  for (int k = 0; k < 2; ++k) {
    const rdna4::DecodedTriangle& tri = pair->tri[k];
    // An invalid tri1 (indices 0,0,0) is not tested and reports a miss.
    const std::array<uint32_t, 4> slot = (k == 1 && !tri.valid)
                                             ? std::array<uint32_t, 4>{float_bits(kInf), float_bits(1.0f),
                                                                       float_bits(1.0f), 0u}
                                             : intersect_triangle(tri, pf, ray, res.triangle_tests);
    std::copy(slot.begin(), slot.end(), res.dw.begin() + 4 * k);
    res.dw[8 + k] = (tri.geometry_id << 2) | pair->navigation;
  }
}

}  // namespace

const char* fault_name(NodeFault fault) {
  switch (fault) {
    case NodeFault::None: return "none";
    case NodeFault::OutOfRange: return "node outside the node memory";
    case NodeFault::Misaligned: return "box or instance pointer not on a 128-byte boundary";
    case NodeFault::MalformedPrimitive: return "malformed primitive node";
    case NodeFault::UnsupportedNode: return "unsupported node type";
  }
  return "unknown fault";
}

NodeFault NodeMemory::fetch(uint32_t pointer, rdna4::NodeDwords& out) const {
  const rdna4::NodeKind kind = rdna4::node_kind(pointer);
  if ((kind == rdna4::NodeKind::Box || kind == rdna4::NodeKind::Instance) && (pointer & 8u) != 0) {
    return NodeFault::Misaligned;
  }
  const uint64_t first = rdna4::node_byte_offset(pointer) / 4;
  if (first > dwords.size() || dwords.size() - first < rdna4::kNodeDwords) return NodeFault::OutOfRange;
  std::copy_n(dwords.begin() + static_cast<std::ptrdiff_t>(first), rdna4::kNodeDwords, out.begin());
  return NodeFault::None;
}

PointerFlags PointerFlags::from_bits(uint32_t bits) {
  auto bit = [bits](int i) { return ((bits >> i) & 1u) != 0; };
  return {bit(0), bit(1), bit(2), bit(3), bit(4), bit(5), bit(6), bit(7), bit(8), bit(9)};
}

uint32_t PointerFlags::bits() const {
  const bool b[10] = {force_opaque,      force_non_opaque, disable_triangle_cull, flip_facedness, cull_back_facing,
                      cull_front_facing, cull_opaque,      cull_non_opaque,       skip_triangles, skip_procedural};
  uint32_t v = 0;
  for (int i = 0; i < 10; ++i) v |= (b[i] ? 1u : 0u) << i;
  return v;
}

void IntersectOptions::validate() const {
  if (box_grow > 255) {
    throw Error(ErrorKind::BadInput, "", "box grow value " + std::to_string(box_grow) + " is outside 0..255");
  }
  if (static_cast<uint32_t>(heuristic) > 3) {
    throw Error(ErrorKind::BadInput, "",
                "box sort heuristic " + std::to_string(static_cast<uint32_t>(heuristic)) + " is outside 0..3");
  }
}

float box_grow_factor(uint32_t box_grow) {
  // 1 + g * 2^-24 is exact in double; one rounding to f32 as the hardware constant.
  return static_cast<float>(1.0 + static_cast<double>(box_grow) * 0x1p-24);
}

IntersectResult image_bvh8_intersect_ray(const NodeMemory& memory, const PointerFlags& flags, const RayOperands& ray,
                                         uint32_t node_pointer, const IntersectOptions& options) {
  IntersectResult res;
  res.dw.fill(kInvalidNode);
  res.kind = rdna4::node_kind(node_pointer);
  if (res.kind == rdna4::NodeKind::Instance || res.kind == rdna4::NodeKind::Unsupported) return res;

  rdna4::NodeDwords node;
  res.fault = memory.fetch(node_pointer, node);
  if (res.fault != NodeFault::None) return res;
  if (res.kind == rdna4::NodeKind::Box) {
    intersect_box(node, flags, ray, options, res);
  } else {
    intersect_primitive(node, node_pointer, flags, ray, res);
    if (res.fault != NodeFault::None) res.dw.fill(kInvalidNode);
  }
  return res;
}

TriangleSlot read_triangle_slot(const IntersectDwords& dw, int k) {
  const uint32_t* s = dw.data() + 4 * k;
  const uint32_t ext = dw[8 + static_cast<size_t>(k)];
  return {bits_float(s[0]),
          bits_float(s[1] & ~kSignBit),
          bits_float(s[2] & ~kSignBit),
          (s[1] & kSignBit) != 0,
          (s[2] & kSignBit) != 0,
          s[3] >> 1,
          (s[3] & 1u) != 0,
          ext >> 2,
          ext & 3u};
}

}  // namespace hwbvh::emu
