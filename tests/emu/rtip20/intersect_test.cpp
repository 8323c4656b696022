// IMAGE_BVH_INTERSECT_RAY (RT IP 2.0) and IMAGE_BVH_DUAL_INTERSECT_RAY (BVH4x2) on RT IP 2.0 nodes
// (docs/rtip31-format.md §5.7, §8; docs/rdna3-format.md, `image_bvh_dual_intersect_ray`).
#include <gtest/gtest.h>

#include <limits>

#include "emu/rtip20/nodes.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/emu/rtip20/intersect.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test4;
using rdna3::kInvalidNode;
constexpr uint32_t I = kInvalidNode;
constexpr float kInf = std::numeric_limits<float>::infinity();

Bvh4RayOperands ray_x(Vec3 origin, float extent = 100.0f, float dir = 1.0f) {
  Bvh4RayOperands r;
  r.origin = origin;
  r.direction = {dir, 0.0f, 0.0f};
  r.inverse_direction = {1.0f / dir, kInf, kInf};
  r.extent = extent;
  return r;
}

Aabb slab(float x0, float x1) { return Aabb{{x0, -1.0f, -1.0f}, {x1, 1.0f, 1.0f}}; }

// A root box node in slot 2 with the given children (the child pointers need not exist for the box path).
std::vector<uint32_t> one_box(std::initializer_list<rdna3::BoxChildInput> children) {
  Bvh4Image img;
  img.box(2, I, children);
  return img.section();
}

Bvh4IntersectResult intersect(const std::vector<uint32_t>& section, const Bvh4RayOperands& ray, uint32_t node,
                              const IntersectOptions& o = {}, const PointerFlags& pf = {},
                              Bvh4Version version = Bvh4Version::Rtip20) {
  return image_bvh_intersect_ray(NodeMemory{section}, pf, ray, node, o, version);
}

TEST(Rtip20IntersectBox, FourSlabTestsSortedClosestFirst) {
  const auto s = one_box({child(box_ptr(10), slab(6, 7)), child(box_ptr(12), slab(2, 3)),
                          child(box_ptr(14), slab(-5, -4)), child(tri_ptr(16, 1), slab(4, 5))});
  const Bvh4IntersectResult r = intersect(s, ray_x({0, 0, 0}), 0x15);
  EXPECT_EQ(r.fault, NodeFault::None);
  EXPECT_EQ(r.kind, rdna4::NodeKind::Box);
  EXPECT_EQ(r.box_tests, 4u);
  EXPECT_EQ(r.triangle_tests, 0u);
  // The box behind the origin misses; no triangles-first key: the triangle sorts by distance like a box.
  EXPECT_EQ(r.dw, (std::array<uint32_t, 4>{box_ptr(12), tri_ptr(16, 1), box_ptr(10), I}));
}

TEST(Rtip20IntersectBox, InvalidSlotsMoveBackKeepingOrderOfHits) {
  // Misses in slots 0 and 2: "swap if (b valid and key_b < key_a) or a invalid".
  const auto s = one_box({child(box_ptr(10), slab(-3, -2)), child(box_ptr(12), slab(5, 6)),
                          child(box_ptr(14), slab(-9, -8)), child(box_ptr(16), slab(1, 2))});
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15).dw, (std::array<uint32_t, 4>{box_ptr(16), box_ptr(12), I, I}));
}

TEST(Rtip20IntersectBox, SortOffKeepsSlotOrder) {
  const auto s = one_box({child(box_ptr(10), slab(6, 7)), child(box_ptr(12), slab(-3, -2)),
                          child(box_ptr(14), slab(2, 3))});
  IntersectOptions o;
  o.heuristic = SortHeuristic::Disabled;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, o).dw, (std::array<uint32_t, 4>{box_ptr(10), I, box_ptr(14), I}));
  o = {};
  o.box_sort = false;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, o).dw, (std::array<uint32_t, 4>{box_ptr(10), I, box_ptr(14), I}));
}

TEST(Rtip20IntersectBox, LargestIntervalAndMidpointHeuristics) {
  // Near and short vs. far and long: closest picks the near one, largest-first the long one, midpoint the one
  // whose entry + exit is smaller.
  const auto s = one_box({child(box_ptr(10), slab(1, 1.5f)), child(box_ptr(12), slab(2, 10))});
  IntersectOptions o;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, o).dw[0], box_ptr(10));
  o.heuristic = SortHeuristic::LargestFirst;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, o).dw[0], box_ptr(12));
  o.heuristic = SortHeuristic::ClosestMidpoint;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, o).dw[0], box_ptr(10));
}

TEST(Rtip20IntersectBox, ExtentAndGrowth) {
  // Entry at exactly t = 5 hits with extent 5; with extent 5 - 1 ulp it hits only thanks to the growth factor.
  const auto s = one_box({child(box_ptr(10), slab(5, 6))});
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}, 5.0f), 0x15).dw[0], box_ptr(10));
  const float below = std::nextafter(5.0f, 0.0f);
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}, below), 0x15).dw[0], box_ptr(10));
  IntersectOptions no_grow;
  no_grow.box_grow = 0;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}, below), 0x15, no_grow).dw[0], I);
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}, 4.0f), 0x15).dw[0], I);
}

TEST(Rtip20IntersectBox, EarlyCullingByBoxFlags) {
  const auto s = one_box({child(box_ptr(10), slab(1, 2), rdna3::kBoxFlagOnlyTriangles | rdna3::kBoxFlagOnlyOpaque),
                          child(box_ptr(12), slab(3, 4), rdna3::kBoxFlagOnlyTriangles | rdna3::kBoxFlagOnlyNonOpaque)});
  PointerFlags pf;
  pf.cull_opaque = true;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, {}, pf).dw, (std::array<uint32_t, 4>{box_ptr(12), I, I, I}));
  pf = {};
  pf.cull_non_opaque = true;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, {}, pf).dw, (std::array<uint32_t, 4>{box_ptr(10), I, I, I}));
  pf.force_opaque = true;  // everything counts as opaque: nothing is non-opaque-only any more
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, {}, pf).dw[1], box_ptr(12));
  pf = {};
  pf.skip_triangles = true;
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), 0x15, {}, pf).dw, (std::array<uint32_t, 4>{I, I, I, I}));
}

// A pair node of two walls at x = 2 in slot 2: triangle 0 = wall(2), triangle 1 = wall_partner(2).
std::vector<uint32_t> pair_node(bool opaque = true) {
  Bvh4Image img;
  rdna3::TriangleInput t0 = wall(2, 5, 9), t1 = wall_partner(2, 6, 9);
  t0.opaque = t1.opaque = opaque;
  img.triangles(2, I, t0, t1);
  img.triangles(3, I, wall(4, 7));  // keeps the slot count consistent; unused
  return img.section();
}

TEST(Rtip20IntersectTriangle, BarycentricModeWithSourceOrderWeights) {
  const auto s = pair_node();
  // Triangle 0 at (y, z) = (0, 0): t = 2; weights of source vertices 1 and 2 are 1/4 each.
  Bvh4IntersectResult r = intersect(s, ray_x({0, 0, 0}), tri_ptr(2, 0));
  EXPECT_EQ(r.kind, rdna4::NodeKind::Primitive);
  EXPECT_EQ(r.triangle_tests, 1u);
  Bvh4TriangleHit h = read_triangle_result(r.dw, Bvh4Version::Rtip20);
  EXPECT_EQ(h.t, 2.0f);
  EXPECT_EQ(h.barycentrics, Vec2(0.25f, 0.25f));
  EXPECT_TRUE(h.back_face);  // the ray travels along the normal
  // Triangle 1 (source order (x,-1,3), (x,3,-1), (x,3,3)) at (y, z) = (2, 2): P = 0.25 v0 + 0.25 v1 + 0.5 v2.
  r = intersect(s, ray_x({0, 2, 2}), tri_ptr(2, 1));
  h = read_triangle_result(r.dw, Bvh4Version::Rtip20);
  EXPECT_EQ(h.t, 2.0f);
  EXPECT_EQ(h.barycentrics, Vec2(0.25f, 0.5f));
  EXPECT_TRUE(h.back_face);  // pair compression keeps the winding
  // Triangle 0 does not contain that point; triangle 1 does not contain (0, 0).
  EXPECT_EQ(bits_float(intersect(s, ray_x({0, 2, 2}), tri_ptr(2, 0)).dw[0]), kInf);
  EXPECT_EQ(bits_float(intersect(s, ray_x({0, 0, 0}), tri_ptr(2, 1)).dw[0]), kInf);
}

// IntersectOptions::triangle_test = watertight: on these rays the same t, weights and facing as GPURT's test, from
// its own numerators.
TEST(Rtip20IntersectTriangle, WatertightTestOnRequest) {
  const auto s = pair_node();
  IntersectOptions watertight;
  watertight.triangle_test = TriangleTest::Watertight;
  for (const auto& [origin, triangle] : {std::pair{Vec3{0, 0, 0}, 0u}, {Vec3{0, 2, 2}, 1u}, {Vec3{0, 2, 2}, 0u}}) {
    // Direction length 2: Möller–Trumbore's t_denom scales with it, the watertight test's does not.
    const Bvh4IntersectResult gpurt = intersect(s, ray_x(origin, 100.0f, 2.0f), tri_ptr(2, triangle));
    const Bvh4IntersectResult r = intersect(s, ray_x(origin, 100.0f, 2.0f), tri_ptr(2, triangle), watertight);
    EXPECT_EQ(r.triangle_tests, 1u);
    const Bvh4TriangleHit a = read_triangle_result(gpurt.dw, Bvh4Version::Rtip20);
    const Bvh4TriangleHit b = read_triangle_result(r.dw, Bvh4Version::Rtip20);
    EXPECT_EQ(b.t, a.t);
    if (a.t != kInf) {
      EXPECT_NE(r.dw[1], gpurt.dw[1]);
      EXPECT_EQ(b.barycentrics, a.barycentrics);
      EXPECT_EQ(b.back_face, a.back_face);
    }
  }
}

TEST(Rtip20IntersectTriangle, MissKeepsTheWeightsAsGpurtDoes) {
  const auto s = pair_node();
  const Bvh4IntersectResult r = intersect(s, ray_x({0, 0, 0}, 100.0f, -1.0f), tri_ptr(2, 0));  // behind: t < 0
  EXPECT_EQ(bits_float(r.dw[0]), kInf);
  EXPECT_EQ(bits_float(r.dw[1]), 1.0f);
  EXPECT_NE(r.dw[2] | r.dw[3], 0u);  // t_num and t_denom replaced, I_num and J_num left as computed
}

TEST(Rtip20IntersectTriangle, CullingAndOpacity) {
  const auto opaque = pair_node(true), non_opaque = pair_node(false);
  auto t_of = [](const std::vector<uint32_t>& s, const PointerFlags& pf, Bvh4Version v = Bvh4Version::Rtip20) {
    return read_triangle_result(intersect(s, ray_x({0, 0, 0}), tri_ptr(2, 0), {}, pf, v).dw, v).t;
  };
  PointerFlags pf;
  pf.cull_back_facing = true;
  EXPECT_EQ(t_of(opaque, pf), kInf);
  pf.flip_facedness = true;  // now it is front facing
  EXPECT_EQ(t_of(opaque, pf), 2.0f);
  pf = {};
  pf.cull_front_facing = true;
  EXPECT_EQ(t_of(opaque, pf), 2.0f);
  pf = {};
  pf.cull_opaque = true;
  EXPECT_EQ(t_of(opaque, pf), kInf);
  EXPECT_EQ(t_of(non_opaque, pf), 2.0f);
  pf.force_opaque = true;
  EXPECT_EQ(t_of(non_opaque, pf), kInf);
  pf = {};
  pf.skip_triangles = true;
  EXPECT_EQ(t_of(opaque, pf), kInf);
  // RT IP 2.0 results do not show opacity (it only drives culling); RT IP 3.0 results carry "non-opaque" in the
  // sign of J (and clear the arithmetic signs of I and J).
  EXPECT_EQ(intersect(non_opaque, ray_x({0, 0, 0}), tri_ptr(2, 0)).dw,
            intersect(opaque, ray_x({0, 0, 0}), tri_ptr(2, 0)).dw);
  const Bvh4IntersectResult r30 = intersect(non_opaque, ray_x({0, 0, 0}), tri_ptr(2, 0), {}, {}, Bvh4Version::Rtip30);
  const Bvh4IntersectResult o30 = intersect(opaque, ray_x({0, 0, 0}), tri_ptr(2, 0), {}, {}, Bvh4Version::Rtip30);
  EXPECT_EQ(r30.dw[3] & 0x80000000u, 0x80000000u);
  EXPECT_EQ(o30.dw[3] & 0x80000000u, 0u);
  EXPECT_FALSE(read_triangle_result(o30.dw, Bvh4Version::Rtip30).non_opaque);
  EXPECT_TRUE(read_triangle_result(r30.dw, Bvh4Version::Rtip30).non_opaque);
  EXPECT_EQ(read_triangle_result(r30.dw, Bvh4Version::Rtip30).barycentrics, Vec2(0.25f, 0.25f));
}

TEST(Rtip20IntersectTriangle, ProceduralBitOnlyInRtip30) {
  auto s = pair_node();
  s[2 * 16 + 15] |= rdna3::kTriangleIdProcedural;  // triangle 0's id byte
  const Bvh4IntersectResult r30 = intersect(s, ray_x({0, 0, 0}), tri_ptr(2, 0), {}, {}, Bvh4Version::Rtip30);
  EXPECT_EQ(r30.triangle_tests, 0u);
  EXPECT_EQ(r30.dw, (std::array<uint32_t, 4>{0u, float_bits(1.0f), float_bits(1.0f) | 0x80000000u, float_bits(1.0f)}));
  EXPECT_TRUE(read_triangle_result(r30.dw, Bvh4Version::Rtip30).procedural);
  const Bvh4IntersectResult r20 = intersect(s, ray_x({0, 0, 0}), tri_ptr(2, 0));
  EXPECT_EQ(r20.triangle_tests, 1u);
  EXPECT_EQ(read_triangle_result(r20.dw, Bvh4Version::Rtip20).t, 2.0f);
}

TEST(Rtip20IntersectDispatch, FaultsAndUnmodelledTypes) {
  auto s = pair_node();
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), tri_ptr(1000)).fault, NodeFault::OutOfRange);
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), box_ptr(4)).fault, NodeFault::OutOfRange);  // 128 bytes do not fit
  EXPECT_EQ(intersect(s, ray_x({0, 0, 0}), (2u << 3) | 4).fault, NodeFault::UnsupportedNode);  // FP16 box
  for (uint32_t type : {6u, 7u}) {
    const Bvh4IntersectResult r = intersect(s, ray_x({0, 0, 0}), (2u << 3) | type);
    EXPECT_EQ(r.fault, NodeFault::None);
    EXPECT_EQ(r.dw, (std::array<uint32_t, 4>{I, I, I, I}));
  }
  s[2 * 16 + 15] |= 3;  // triangle 0: I source 3
  const Bvh4IntersectResult bad = intersect(s, ray_x({0, 0, 0}), tri_ptr(2, 0));
  EXPECT_EQ(bad.fault, NodeFault::MalformedPrimitive);
  EXPECT_EQ(bad.dw, (std::array<uint32_t, 4>{I, I, I, I}));
}

TEST(DualIntersect, TwoBoxesSortedSeparately) {
  Bvh4Image img;
  img.box(2, I, {child(box_ptr(10), slab(6, 7)), child(box_ptr(12), slab(2, 3))});
  img.box(4, I, {child(box_ptr(14), slab(1, 2)), child(box_ptr(16), slab(4, 5)), child(box_ptr(18), slab(-2, -1))});
  const auto s = img.section();
  const DualIntersectResult r = image_bvh_dual_intersect_ray(NodeMemory{s}, {}, ray_x({0, 0, 0}), box_ptr(2),
                                                             box_ptr(4), {});
  EXPECT_EQ(r.fault, NodeFault::None);
  EXPECT_EQ(r.box_tests, 8u);
  // Node 0's children in DW0..3, node 1's in DW4..7, each sorted on its own (no cross-node sort).
  EXPECT_EQ(r.dw, (std::array<uint32_t, 10>{box_ptr(12), box_ptr(10), I, I, box_ptr(14), box_ptr(16), I, I, I, I}));
}

TEST(DualIntersect, TriangleAndBoxAndSingleNode) {
  Bvh4Image img;
  img.box(2, I, {child(box_ptr(10), slab(6, 7))});
  img.triangles(4, I, wall(2, 5, 9), wall_partner(2, 6, 9));
  const auto s = img.section();
  const NodeMemory mem{s};
  // Triangle 0 and triangle 1 of one node, as push8_pop2 hands them out.
  DualIntersectResult r = image_bvh_dual_intersect_ray(mem, {}, ray_x({0, 0, 0}), tri_ptr(4, 0), tri_ptr(4, 1), {});
  EXPECT_EQ(r.triangle_tests, 2u);
  EXPECT_EQ(read_triangle_result({r.dw[0], r.dw[1], r.dw[2], r.dw[3]}, Bvh4Version::Rtip30).t, 2.0f);
  EXPECT_EQ(bits_float(r.dw[4]), kInf);
  EXPECT_EQ(r.dw[8], 9u);  // geometry ids of triangle nodes
  EXPECT_EQ(r.dw[9], 9u);
  EXPECT_EQ(r.kind, (std::array<rdna4::NodeKind, 2>{rdna4::NodeKind::Primitive, rdna4::NodeKind::Primitive}));
  // A box and a triangle; then a box alone (node 1 INVALID: DW4..9 all ones, no tests).
  r = image_bvh_dual_intersect_ray(mem, {}, ray_x({0, 0, 0}), box_ptr(2), tri_ptr(4, 1), {});
  EXPECT_EQ(r.box_tests, 4u);
  EXPECT_EQ(r.triangle_tests, 1u);
  EXPECT_EQ(r.dw[0], box_ptr(10));
  EXPECT_EQ(r.dw[8], I);
  r = image_bvh_dual_intersect_ray(mem, {}, ray_x({0, 0, 0}), box_ptr(2), I, {});
  EXPECT_EQ(r.box_tests, 4u);
  EXPECT_EQ(r.triangle_tests, 0u);
  EXPECT_EQ(r.dw, (std::array<uint32_t, 10>{box_ptr(10), I, I, I, I, I, I, I, I, I}));
  // A fault in either node is reported with its pointer.
  r = image_bvh_dual_intersect_ray(mem, {}, ray_x({0, 0, 0}), box_ptr(2), tri_ptr(999), {});
  EXPECT_EQ(r.fault, NodeFault::OutOfRange);
  EXPECT_EQ(r.fault_node, tri_ptr(999));
}

}  // namespace
}  // namespace hwbvh::emu
