// IMAGE_BVH8_INTERSECT_RAY emulation (docs/rtip31-format.md §5) on hand-built nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <glm/geometric.hpp>

#include "emu/rtip31/nodes.h"
#include "emu/rtip31/intersect_node.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/formats/rdna4/decode.h"

namespace hwbvh::emu {
namespace {

using namespace hwbvh::emu::test;
using rdna4::kInvalidNode;
constexpr uint32_t I = kInvalidNode;
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

RayOperands ray(Vec3 o, Vec3 d, float extent = 100.0f, uint32_t mask = 0xFF) { return {o, d, extent, mask}; }

IntersectResult run(const NodeImage& img, uint32_t ptr, const RayOperands& r, const IntersectOptions& opt = {},
                    const PointerFlags& flags = {}) {
  return image_bvh8_intersect_ray(img.memory(), flags, r, ptr, opt);
}

std::array<uint32_t, 8> pointers(const IntersectResult& r) {
  std::array<uint32_t, 8> p;
  std::copy_n(r.dw.begin(), 8, p.begin());
  return p;
}

// A root box node (index 1) with the given children; box children from index 2, leaves from index 20.
NodeImage root_with(std::initializer_list<rdna4::BoxChildInput> children, uint32_t obb = rdna4::kNoObb) {
  NodeImage img;
  img.put(1, box_node(2, 20, kInvalidNode, children, obb));
  return img;
}

const Aabb kUnitBox = box({0, 0, 0}, {1, 1, 1});

// --- box path ---

TEST(IntersectBox, SpecWorkedExampleHandAssembled) {
  // §2.8: origin 0, exponents (131, 128, 126), child 0 = box child 0x25, child 1 = the invalid pattern.
  rdna4::NodeDwords n{};
  n[0] = 0x20;  // internal base -> child pointer 0x25
  n[1] = 0;
  n[2] = kInvalidNode;
  n[6] = 0x107E8083;
  n[7] = 0x7F;
  n[8] = 0x0540014C, n[9] = 0xFF2B3333, n[10] = 0x15CCC7FF;
  for (int k = 1; k < 8; ++k) n[8 + 3 * k] = 0xFFFFFFFF, n[9 + 3 * k] = 0x00000FFF, n[10 + 3 * k] = 0;
  NodeImage img;
  img.put(1, n);
  // The decoded box is min (1.296875, 0.5, 0.0999755859375) max (2.703125, 1.0, 0.4000244140625).
  auto r = run(img, 0x15, ray({0, 0.75f, 0.25f}, {1, 0, 0}));
  EXPECT_EQ(r.kind, rdna4::NodeKind::Box);
  EXPECT_EQ(r.fault, NodeFault::None);
  EXPECT_EQ(r.box_tests, 8u);
  EXPECT_FALSE(r.obb_rotated);
  EXPECT_EQ(r.dw, (IntersectDwords{0x25, I, I, I, I, I, I, I, I, I}));
  // Just above the decoded y max, and an extent ending just before the decoded x min: misses.
  EXPECT_EQ(run(img, 0x15, ray({0, 1.0001f, 0.25f}, {1, 0, 0})).dw[0], I);
  EXPECT_EQ(run(img, 0x15, ray({0, 0.75f, 0.25f}, {1, 0, 0}, 1.29f)).dw[0], I);
  EXPECT_EQ(run(img, 0x15, ray({0, 0.75f, 0.25f}, {1, 0, 0}, 1.296875f)).dw[0], 0x25u);
}

TEST(IntersectBox, HitAndMiss) {
  NodeImage img = root_with({box_child(box({2, -1, -1}, {3, 1, 1})), box_child(box({5, 4, -1}, {6, 5, 1}))});
  auto r = run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}));
  EXPECT_EQ(r.dw, (IntersectDwords{box_ptr(2), I, I, I, I, I, I, I, I, I}));
  r = run(img, 0x15, ray({0, 4.5f, 0}, {1, 0, 0}));
  EXPECT_EQ(pointers(r), (std::array<uint32_t, 8>{box_ptr(3), I, I, I, I, I, I, I}));
  r = run(img, 0x15, ray({0, 0, 0}, {-1, 0, 0}));  // pointing away
  EXPECT_EQ(pointers(r), (std::array<uint32_t, 8>{I, I, I, I, I, I, I, I}));
  EXPECT_EQ(r.box_tests, 8u);  // all eight slots are evaluated even when nothing hits
}

TEST(IntersectBox, RayParallelToSlabPlanes) {
  NodeImage img = root_with({box_child(kUnitBox)});
  // Direction y = 0: the y slab is (plane - o.y) * inf. On either plane the product is 0 * inf = NaN, which the
  // minNum/maxNum reductions ignore, so the ray hits; just outside it is +inf (entry) and misses.
  for (float y : {0.0f, 0.5f, 1.0f}) {
    EXPECT_EQ(run(img, 0x15, ray({-1, y, 0.5f}, {1, 0, 0})).dw[0], box_ptr(2)) << "y " << y;
  }
  for (float y : {-0.001f, 1.001f}) {
    EXPECT_EQ(run(img, 0x15, ray({-1, y, 0.5f}, {1, 0, 0})).dw[0], I) << "y " << y;
  }
}

TEST(IntersectBox, NegativeZeroDirectionComponent) {
  NodeImage img = root_with({box_child(kUnitBox)});
  // 1 / -0 = -inf: near and far swap but the axis still contains the origin or rejects it.
  EXPECT_EQ(run(img, 0x15, ray({-1, 0.5f, 0.5f}, {1, -0.0f, -0.0f})).dw[0], box_ptr(2));
  EXPECT_EQ(run(img, 0x15, ray({-1, 2.0f, 0.5f}, {1, -0.0f, 0.0f})).dw[0], I);
  EXPECT_EQ(run(img, 0x15, ray({-1, -1.0f, 0.5f}, {1, -0.0f, 0.0f})).dw[0], I);
}

TEST(IntersectBox, NaNRayComponentsAreIgnoredPerAxis) {
  NodeImage img = root_with({box_child(kUnitBox)});
  // A NaN direction component makes that axis NaN on both slabs: it does not constrain the interval, so even an
  // origin outside the box in y hits.
  EXPECT_EQ(run(img, 0x15, ray({-1, 5.0f, 0.5f}, {1, kNaN, 0})).dw[0], box_ptr(2));
  // All three axes NaN: entry and exit are NaN, the box misses.
  EXPECT_EQ(run(img, 0x15, ray({0.5f, 0.5f, 0.5f}, {kNaN, kNaN, kNaN})).dw[0], I);
  EXPECT_EQ(run(img, 0x15, ray({kNaN, kNaN, kNaN}, {1, 1, 1})).dw[0], I);
}

TEST(IntersectBox, ExtentClampingAndGrowth) {
  NodeImage img = root_with({box_child(box({5, -1, -1}, {6, 1, 1}))});
  const Vec3 o{0, 0, 0}, d{1, 0, 0};
  IntersectOptions no_grow;
  no_grow.box_grow = 0;
  EXPECT_EQ(run(img, 0x15, ray(o, d, 5.0f)).dw[0], box_ptr(2));  // entry == extent counts as a hit
  EXPECT_EQ(run(img, 0x15, ray(o, d, 4.5f)).dw[0], I);
  const float one_ulp_short = std::nextafter(5.0f, 0.0f);
  EXPECT_EQ(run(img, 0x15, ray(o, d, one_ulp_short)).dw[0], box_ptr(2));  // saved by the 6-ulp growth
  EXPECT_EQ(run(img, 0x15, ray(o, d, one_ulp_short), no_grow).dw[0], I);
  const float eight_ulps_short = bits_float(float_bits(5.0f) - 8);
  EXPECT_EQ(run(img, 0x15, ray(o, d, eight_ulps_short)).dw[0], I);
  // The entry clamps at 0: a box behind the origin's plane but containing it still hits with extent 0.
  NodeImage around = root_with({box_child(box({-1, -1, -1}, {1, 1, 1}))});
  EXPECT_EQ(run(around, 0x15, ray(o, d, 0.0f)).dw[0], box_ptr(2));
  // A negative extent rejects everything.
  EXPECT_EQ(run(around, 0x15, ray(o, d, -1.0f)).dw[0], I);
}

TEST(IntersectBox, GrowFactorConstant) {
  EXPECT_EQ(float_bits(box_grow_factor(6)), 0x3F800003u);
  EXPECT_EQ(float_bits(box_grow_factor(0)), 0x3F800000u);
  EXPECT_EQ(float_bits(box_grow_factor(255)), 0x3F800080u);  // 1 + 127.5 * 2^-23 rounds to even
}

TEST(IntersectBox, AdjacentDuplicatePointersAreRemoved) {
  IntersectOptions unsorted;
  unsorted.heuristic = SortHeuristic::Disabled;
  const Aabb a = box({1, -1, -1}, {2, 1, 1}), b = box({3, -1, -1}, {4, 1, 1});
  // Slots 0 and 1 decode to the same leaf pointer (range 0 = child reuse): the second copy is dropped.
  NodeImage reuse = root_with({box_child(a, 0, 0), box_child(b, 0, 1)});
  EXPECT_EQ(pointers(run(reuse, 0x15, ray({0, 0, 0}, {1, 0, 0}), unsorted)),
            (std::array<uint32_t, 8>{prim_ptr(20), I, I, I, I, I, I, I}));
  // Equal pointers that are not adjacent are both kept.
  NodeImage apart = root_with({box_child(a, 0, 0), box_child(b, 1, 0), box_child(b, 0, 1)});
  EXPECT_EQ(pointers(run(apart, 0x15, ray({0, 0, 0}, {1, 0, 0}), unsorted)),
            (std::array<uint32_t, 8>{prim_ptr(20), prim_ptr(20, 1), prim_ptr(20), I, I, I, I, I}));
  // A miss between two equal pointers also separates them (INVALID becomes the new "previous").
  NodeImage gap = root_with({box_child(a, 0, 0), box_child(box({3, 5, 5}, {4, 6, 6}), 0, 0), box_child(b, 0, 1)});
  EXPECT_EQ(pointers(run(gap, 0x15, ray({0, 0, 0}, {1, 0, 0}), unsorted)),
            (std::array<uint32_t, 8>{prim_ptr(20), I, prim_ptr(20), I, I, I, I, I}));
}

TEST(IntersectBox, TraitsOfDecodedChildren) {
  rdna4::BoxChildren box{};
  box.pointer = {box_ptr(2), box_ptr(3), prim_ptr(20), I, I, I, I, I};
  for (int a = 0; a < 3; ++a) {
    box.min[a] = {0, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN};  // NaN past the count, as the decoder leaves it
    box.max[a] = {1, 1, 1, kNaN, kNaN, kNaN, kNaN, kNaN};
  }
  EXPECT_TRUE(BoxTraits::of(box).finite_planes);
  EXPECT_TRUE(BoxTraits::of(box).distinct_pointers);
  EXPECT_TRUE(BoxTraits::of(box).sentinel_free);
  box.max[1][2] = kInf;  // a used slot with an infinite plane
  EXPECT_FALSE(BoxTraits::of(box).finite_planes);
  box.pointer[1] = box.pointer[0];  // child reuse
  EXPECT_FALSE(BoxTraits::of(box).distinct_pointers);
  box.pointer[2] = rdna4::kTerminalNode;  // a malformed child
  EXPECT_FALSE(BoxTraits::of(box).sentinel_free);
}

// The box path skips the NaN bookkeeping of the slab test and the duplicate removal when BoxTraits and the ray say
// they cannot matter. Random children (some infinite planes, some adjacent duplicate pointers), random rays (some
// with zero, infinite or NaN components) and all OBB indices: the result dwords equal those of the general path.
TEST(IntersectBox, ShortcutsGiveTheGeneralPathsResult) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> coord(-4.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  const auto odd_value = [&](float usual) {  // mostly `usual`, now and then a special value
    switch (pick(rng)) {
      case 0: return 0.0f;
      case 1: return kInf;
      case 2: return -kInf;
      case 3: return kNaN;
      default: return usual;
    }
  };
  int shortcut_steps = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    rdna4::BoxChildren box{};
    const int count = 1 + pick(rng) % 8;
    box.obb_index = trial % 128;
    for (int k = 0; k < 8; ++k) {
      const bool used = k < count;
      box.pointer[k] = !used ? I : (k > 0 && pick(rng) < 3) ? box.pointer[k - 1] : box_ptr(2 + k);
      box.instance_mask[k] = pick(rng) == 0 ? 0u : 0xFFu;
      box.box_flags[k] = 0;
      for (int a = 0; a < 3; ++a) {
        const float x = coord(rng), y = coord(rng);
        box.min[a][k] = !used ? kNaN : pick(rng) == 0 ? -kInf : std::min(x, y);
        box.max[a][k] = !used ? kNaN : pick(rng) == 0 ? kInf : std::max(x, y);
      }
    }
    const Vec3 origin{coord(rng), coord(rng), coord(rng)};
    const Vec3 direction{odd_value(coord(rng)), odd_value(coord(rng)), odd_value(coord(rng))};
    const PreparedRay prepared(ray(trial % 7 == 0 ? Vec3{odd_value(1.0f), 0, 0} : origin, direction,
                                   trial % 5 == 0 ? kInf : 3.0f));
    const rdna4::Mat3Rows obb = rdna4::obb_matrix(box.obb_index);
    for (SortHeuristic heuristic : {SortHeuristic::Closest, SortHeuristic::ClosestMidpoint}) {
      IntersectOptions opt;
      opt.heuristic = heuristic;
      IntersectResult fast, general;
      const BoxTraits traits = BoxTraits::of(box);
      detail::intersect_box(box, obb, traits, {}, prepared, opt, fast);
      detail::intersect_box(box, obb, BoxTraits{}, {}, prepared, opt, general);
      ASSERT_EQ(fast.dw, general.dw) << "trial " << trial;
      ASSERT_EQ(fast.obb_rotated, general.obb_rotated);
      shortcut_steps += traits.finite_planes && prepared.nan_free_slabs ? 1 : 0;
    }
  }
  EXPECT_GT(shortcut_steps, 400);  // the NaN-free slab test ran, not only the general path
}

// IntersectResult::pointer_slots, which the traversal hands to the stack instead of the stack reading DW0..7 back,
// is exactly the set of result slots holding a pointer under every sort option, with ties (equal boxes) and
// primitive pointers among the children; and unknown when a child is a sentinel other than INVALID_NODE (always so
// when a result slot holds one).
TEST(IntersectBox, PointerSlotsDescribeTheSortedResult) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> coord(-4.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  int sentinel_results = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    rdna4::BoxChildren box{};
    const int count = 1 + pick(rng) % 8;
    box.obb_index = trial % 2 == 0 ? 0x7F : trial % 104;
    for (int k = 0; k < 8; ++k) {
      const bool used = k < count;
      const int kind = pick(rng);
      const uint32_t child = kind < 6 ? 0x100u * (k + 1) + kind % 4 : box_ptr(2 + k);  // a primitive or a box
      box.pointer[k] = !used ? I : kind < 1 ? rdna4::kEndSearch + pick(rng) % 7 : child;
      box.instance_mask[k] = 0xFF;
      const bool same_box = k > 0 && pick(rng) < 4;  // equal keys: ties for the sort
      for (int a = 0; a < 3; ++a) {
        const float x = coord(rng), y = coord(rng);
        box.min[a][k] = !used ? kNaN : same_box ? box.min[a][k - 1] : std::min(x, y);
        box.max[a][k] = !used ? kNaN : same_box ? box.max[a][k - 1] : std::max(x, y);
      }
    }
    const PreparedRay prepared(ray({coord(rng), coord(rng), -6.0f}, {coord(rng) * 0.1f, coord(rng) * 0.1f, 1.0f}));
    for (int variant = 0; variant < 32; ++variant) {
      IntersectOptions opt;
      opt.box_sort = variant % 2 == 0;
      opt.wide_sort = variant / 2 % 2 == 0;
      opt.sort_triangles_first = variant / 4 % 2 == 0;
      opt.heuristic = static_cast<SortHeuristic>(variant / 8);
      IntersectResult res;
      detail::intersect_box(box, rdna4::obb_matrix(box.obb_index), BoxTraits::of(box), {}, prepared, opt, res);
      unsigned expected = 0;
      bool sentinel_result = false, sentinel_child = false;
      for (unsigned k = 0; k < 8; ++k) {
        expected |= res.dw[k] != I ? 1u << k : 0u;
        sentinel_result = sentinel_result || (res.dw[k] != I && rdna4::is_sentinel(res.dw[k]));
        sentinel_child = sentinel_child || (box.pointer[k] != I && rdna4::is_sentinel(box.pointer[k]));
      }
      ASSERT_TRUE(sentinel_child || !sentinel_result);
      sentinel_results += sentinel_result ? 1 : 0;
      ASSERT_EQ(res.pointer_slots, sentinel_child ? IntersectResult::kSlotsUnknown : expected)
          << "trial " << trial << ", variant " << variant;
    }
  }
  EXPECT_GT(sentinel_results, 1000);
}

#if HWBVH_EMU_AVX2
// The eight-wide AVX2 slab test against the four-wide one, on random planes and rays with zero, infinite and NaN
// values, every heuristic and both NaN modes: identical pass bits and key bits.
TEST(IntersectBox, Avx2SlabTestEqualsTheFourWideOne) {
  if (!detail::use_avx2) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> coord(-4.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  const auto value = [&] {
    switch (pick(rng)) {
      case 0: return 0.0f;
      case 1: return kInf;
      case 2: return -kInf;
      case 3: return kNaN;
      default: return coord(rng);
    }
  };
  const auto bits = [](const auto& v) {
    std::array<uint32_t, 8> b;
    std::memcpy(b.data(), &v, sizeof b);
    return b;
  };
  for (int trial = 0; trial < 2000; ++trial) {
    rdna4::BoxChildren box{};
    for (int k = 0; k < 8; ++k) {
      box.instance_mask[k] = pick(rng) == 0 ? 0u : 1u << (pick(rng) % 8);
      for (int a = 0; a < 3; ++a) box.min[a][k] = value(), box.max[a][k] = value();
    }
    detail::SlabOperands s{{value(), value(), value()}, {value(), value(), value()}, {}, {}, value(), 1.0000004f};
    for (int c = 0; c < 3; ++c) {
      const bool near_is_max = pick(rng) < 8;
      s.near_plane[c] = (near_is_max ? box.max : box.min)[c].data();
      s.far_plane[c] = (near_is_max ? box.min : box.max)[c].data();
    }
    const uint32_t mask = 1u << (pick(rng) % 8);
    const auto heuristic = static_cast<SortHeuristic>(trial % 4);
    simd4::U4 pass_sse[2], pass_avx[2];
    std::array<float, 8> key_sse, key_avx;
    detail::slab_test<false>(box, s, mask, heuristic, pass_sse, key_sse);
    detail::slab_test_avx2<false>(box, s, mask, heuristic, pass_avx, key_avx);
    ASSERT_EQ(bits(pass_sse), bits(pass_avx)) << "trial " << trial;
    ASSERT_EQ(bits(key_sse), bits(key_avx)) << "trial " << trial;
    detail::slab_test<true>(box, s, mask, heuristic, pass_sse, key_sse);
    detail::slab_test_avx2<true>(box, s, mask, heuristic, pass_avx, key_avx);
    ASSERT_EQ(bits(pass_sse), bits(pass_avx)) << "trial " << trial;
    ASSERT_EQ(bits(key_sse), bits(key_avx)) << "trial " << trial;
  }
}
#endif

// Slots: A box t=3, B box t=1, leaf type 0 t=5, leaf type 1 t=7, box C missed, leaf type 0 t=2.5.
NodeImage mixed_node() {
  auto slab = [](float x0, float x1) { return box({x0, -1, -1}, {x1, 1, 1}); };
  return root_with({box_child(slab(3, 4)), box_child(slab(1, 2)), box_child(slab(5, 6), 0, 1),
                    box_child(slab(7, 8), 1, 1), box_child(box({0, 4, -1}, {1, 5, 1})),
                    box_child(slab(2.5f, 2.75f), 0, 1)});
}
const uint32_t kA = box_ptr(2), kB = box_ptr(3), kLeaf5 = prim_ptr(20), kLeaf7 = prim_ptr(21, 1),
               kLeaf25 = prim_ptr(22);

TEST(IntersectBox, SortPrimitivesFirstThenBoxesThenInvalid) {
  const NodeImage img = mixed_node();
  const auto r = run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}));
  // (ptr & 7) == 1 first, then other primitives by distance, then boxes by distance, then misses.
  EXPECT_EQ(pointers(r), (std::array<uint32_t, 8>{kLeaf7, kLeaf25, kLeaf5, kB, kA, I, I, I}));
}

TEST(IntersectBox, SortByDistanceOnlyWithoutTrianglesFirst) {
  IntersectOptions opt;
  opt.sort_triangles_first = false;
  const auto r = run(mixed_node(), 0x15, ray({0, 0, 0}, {1, 0, 0}), opt);
  EXPECT_EQ(pointers(r), (std::array<uint32_t, 8>{kB, kLeaf25, kA, kLeaf5, kLeaf7, I, I, I}));
}

TEST(IntersectBox, HeuristicThreeAndSortOffKeepSlotOrder) {
  IntersectOptions h3;
  h3.heuristic = SortHeuristic::Disabled;
  IntersectOptions off;
  off.box_sort = false;
  const std::array<uint32_t, 8> slot_order{kA, kB, kLeaf5, kLeaf7, I, kLeaf25, I, I};
  EXPECT_EQ(pointers(run(mixed_node(), 0x15, ray({0, 0, 0}, {1, 0, 0}), h3)), slot_order);
  EXPECT_EQ(pointers(run(mixed_node(), 0x15, ray({0, 0, 0}, {1, 0, 0}), off)), slot_order);
}

TEST(IntersectBox, LargestIntervalAndMidpointHeuristics) {
  NodeImage img = root_with({box_child(box({1, -1, -1}, {2, 1, 1})), box_child(box({3, -1, -1}, {7, 1, 1})),
                             box_child(box({4, -1, -1}, {5, 1, 1}))});
  IntersectOptions largest;
  largest.heuristic = SortHeuristic::LargestFirst;
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}), largest)),
            (std::array<uint32_t, 8>{box_ptr(3), box_ptr(2), box_ptr(4), I, I, I, I, I}));
  // The interval is clamped by the extent: with extent 3.5 the second box is [3, 3.5], shorter than [1, 2],
  // and the third misses.
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}, 3.5f), largest)),
            (std::array<uint32_t, 8>{box_ptr(2), box_ptr(3), I, I, I, I, I, I}));
  IntersectOptions midpoint;
  midpoint.heuristic = SortHeuristic::ClosestMidpoint;  // keys 3, 10, 9
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}), midpoint)),
            (std::array<uint32_t, 8>{box_ptr(2), box_ptr(4), box_ptr(3), I, I, I, I, I}));
}

// Eight boxes all containing the point (0.5, 0.5, 0.5), of different sizes.
NodeImage nested_boxes() {
  NodeImage img;
  rdna4::BoxNodeInput in;
  in.internal_base = 2 << 4;
  in.parent_pointer = kInvalidNode;
  in.child_count = 8;
  for (int k = 0; k < 8; ++k) {
    const float s = 0.5f + 0.25f * static_cast<float>(k);
    in.children[k] = box_child(box({0.5f - s, 0.5f - s, 0.5f - s}, {0.5f + s, 0.5f + s, 0.5f + s}));
  }
  img.put(1, rdna4::encode_box_node(in));
  return img;
}

TEST(IntersectBox, EqualAndNaNKeysKeepNetworkOrder) {
  const NodeImage img = nested_boxes();
  std::array<uint32_t, 8> slot_order;
  for (uint32_t k = 0; k < 8; ++k) slot_order[k] = box_ptr(2 + k);
  // Zero direction: every slab is (plane - o) * inf = -inf / +inf, so every box is hit with entry 0 (equal
  // closest keys) and midpoint key -inf + inf = NaN. Strict compare-exchanges keep the slot order.
  const RayOperands r = ray({0.5f, 0.5f, 0.5f}, {0, 0, 0});
  EXPECT_EQ(pointers(run(img, 0x15, r)), slot_order);
  IntersectOptions midpoint;
  midpoint.heuristic = SortHeuristic::ClosestMidpoint;
  EXPECT_EQ(pointers(run(img, 0x15, r, midpoint)), slot_order);
  IntersectOptions largest;
  largest.heuristic = SortHeuristic::LargestFirst;  // keys 0 - extent: equal too
  EXPECT_EQ(pointers(run(img, 0x15, r, largest)), slot_order);
}

TEST(IntersectBox, WideSortOffSortsHalvesSeparately) {
  NodeImage img;
  rdna4::BoxNodeInput in;
  in.internal_base = 2 << 4;
  in.parent_pointer = kInvalidNode;
  in.child_count = 8;
  for (int k = 0; k < 8; ++k) {  // slot k entered at t = 8 - k
    const float x = 8.0f - static_cast<float>(k);
    in.children[k] = box_child(box({x, -1, -1}, {x + 0.5f, 1, 1}));
  }
  img.put(1, rdna4::encode_box_node(in));
  auto p = [](uint32_t k) { return box_ptr(2 + k); };
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}))),
            (std::array<uint32_t, 8>{p(7), p(6), p(5), p(4), p(3), p(2), p(1), p(0)}));
  IntersectOptions halves;
  halves.wide_sort = false;
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}), halves)),
            (std::array<uint32_t, 8>{p(3), p(2), p(1), p(0), p(7), p(6), p(5), p(4)}));
}

TEST(IntersectBox, EarlyCullingByBoxFlagsAndInstanceMask) {
  const Aabb a = box({1, -1, -1}, {2, 1, 1}), b = box({3, -1, -1}, {4, 1, 1});
  NodeImage img = root_with({box_child(a, 5, 1, rdna4::kBoxFlagOnlyOpaque | rdna4::kBoxFlagOnlyTriangles, 0x0F),
                             box_child(b, 5, 1, rdna4::kBoxFlagOnlyNonOpaque, 0xF0)});
  const RayOperands r = ray({0, 0, 0}, {1, 0, 0});
  EXPECT_EQ(pointers(run(img, 0x15, r)), (std::array<uint32_t, 8>{box_ptr(2), box_ptr(3), I, I, I, I, I, I}));
  PointerFlags cull_opaque;
  cull_opaque.cull_opaque = true;
  EXPECT_EQ(pointers(run(img, 0x15, r, {}, cull_opaque)), (std::array<uint32_t, 8>{box_ptr(3), I, I, I, I, I, I, I}));
  // FORCE_NON_OPAQUE turns the ONLY_OPAQUE child into a non-opaque one: now the other rule culls both.
  PointerFlags forced = cull_opaque;
  forced.force_non_opaque = true;
  EXPECT_EQ(pointers(run(img, 0x15, r, {}, forced)),
            (std::array<uint32_t, 8>{box_ptr(2), box_ptr(3), I, I, I, I, I, I}));
  forced.cull_non_opaque = true;
  EXPECT_EQ(pointers(run(img, 0x15, r, {}, forced)), (std::array<uint32_t, 8>{I, I, I, I, I, I, I, I}));
  PointerFlags skip_tri;
  skip_tri.skip_triangles = true;
  EXPECT_EQ(pointers(run(img, 0x15, r, {}, skip_tri)), (std::array<uint32_t, 8>{box_ptr(3), I, I, I, I, I, I, I}));
  // Instance mask: child masks 0x0F and 0xF0.
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}, 100, 0x10))),
            (std::array<uint32_t, 8>{box_ptr(3), I, I, I, I, I, I, I}));
  EXPECT_EQ(pointers(run(img, 0x15, ray({0, 0, 0}, {1, 0, 0}, 100, 0x00))),
            (std::array<uint32_t, 8>{I, I, I, I, I, I, I, I}));
}

TEST(IntersectBox, ObbNodeMatchesAxisAlignedNodeWithRotatedRay) {
  // Matrix 6 is a 90-degree turn about x: p' = (p.x, -p.z, p.y), exact in any rounding mode.
  const rdna4::Mat3Rows m = rdna4::obb_matrix(6);
  ASSERT_EQ(m[1], Vec3(0, 0, -1));
  ASSERT_EQ(m[2], Vec3(0, 1, 0));
  // Child boxes are given in the node's (rotated) frame.
  const auto children = {box_child(box({-1, -1, 2}, {1, 1, 3})), box_child(box({2, -1, -1}, {3, 1, 1}))};
  NodeImage obb;
  obb.put(1, box_node(2, 20, kInvalidNode, children, 6));
  NodeImage aabb;
  aabb.put(1, box_node(2, 20, kInvalidNode, children));
  // World +y becomes +z in the node frame.
  const auto r_obb = run(obb, 0x15, ray({0, 0, 0}, {0, 1, 0}));
  const auto r_aabb = run(aabb, 0x15, ray({0, 0, 0}, {0, 0, 1}));
  EXPECT_TRUE(r_obb.obb_rotated);
  EXPECT_FALSE(r_aabb.obb_rotated);
  EXPECT_EQ(r_obb.dw, r_aabb.dw);
  EXPECT_EQ(r_obb.dw[0], box_ptr(2));
  // The same world ray misses the unrotated node, and world +x hits child 1 in both (x is unchanged).
  EXPECT_EQ(run(aabb, 0x15, ray({0, 0, 0}, {0, 1, 0})).dw[0], I);
  EXPECT_EQ(run(obb, 0x15, ray({0, 0, 0}, {1, 0, 0})).dw[0], box_ptr(3));
}

TEST(IntersectBox, ObbGeneralRotation) {
  // Matrix 24 (a rotation about a skew axis): send the ray along M^T * z = row 2 of M, which the node frame sees
  // as +z.
  const Vec3 world_dir = rdna4::obb_matrix(24)[2];
  NodeImage obb;
  obb.put(1, box_node(2, 20, kInvalidNode,
                      {box_child(box({-0.5f, -0.5f, 2}, {0.5f, 0.5f, 3})), box_child(box({2, -1, -1}, {3, 1, 1}))},
                      24));
  const auto r = run(obb, 0x15, ray({0, 0, 0}, world_dir));
  EXPECT_TRUE(r.obb_rotated);
  EXPECT_EQ(pointers(r), (std::array<uint32_t, 8>{box_ptr(2), I, I, I, I, I, I, I}));
}

// --- primitive path ---

// Node 1: pair 0 = unit right triangle in z = 0 (prim 10, geo 3) + a second triangle far away (prim 11).
NodeImage one_pair_node(bool with_tri1 = true, bool opaque = true) {
  const auto t0 = triangle({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, 10, 3, opaque);
  const auto t1 = triangle({5, 5, 0}, {6, 5, 0}, {5, 6, 0}, 11, 4);
  NodeImage img;
  img.put(1, with_tri1 ? primitive_node({pair(t0, t1)}) : primitive_node({pair(t0)}));
  return img;
}

constexpr TriangleTest kBothTests[] = {TriangleTest::Watertight, TriangleTest::Gpurt};

IntersectOptions with_test(TriangleTest test) {
  IntersectOptions o;
  o.triangle_test = test;
  return o;
}

// Exact values on exactly representable geometry: both triangle tests fill the slots identically.
TEST(IntersectPrimitive, KnownDistanceAndBarycentrics) {
  const NodeImage img = one_pair_node();
  for (TriangleTest test : kBothTests) {
    SCOPED_TRACE(triangle_test_name(test));
    const auto r = run(img, prim_ptr(1), ray({0.25f, 0.5f, 1}, {0, 0, -1}), with_test(test));
    EXPECT_EQ(r.kind, rdna4::NodeKind::Primitive);
    EXPECT_EQ(r.triangle_tests, 2u);
    EXPECT_EQ(r.box_tests, 0u);
    EXPECT_EQ(r.dw[0], float_bits(1.0f));
    EXPECT_EQ(r.dw[1], float_bits(0.25f));  // weight of vertex i1 = (1,0,0)
    EXPECT_EQ(r.dw[2], float_bits(0.5f));   // weight of vertex i2 = (0,1,0)
    EXPECT_EQ(r.dw[3], 10u << 1);           // front face
    EXPECT_EQ(r.dw[4], float_bits(kInf));   // tri1 missed
    EXPECT_EQ(r.dw[7] >> 1, 11u);
    EXPECT_EQ(r.dw[8], (3u << 2) | rdna4::kNavEndOfRange);
    EXPECT_EQ(r.dw[9], (4u << 2) | rdna4::kNavEndOfRange);
    const TriangleSlot s = read_triangle_slot(r.dw, 0);
    EXPECT_EQ(s.t, 1.0f);
    EXPECT_EQ(s.u, 0.25f);
    EXPECT_EQ(s.v, 0.5f);
    EXPECT_FALSE(s.back_face);
    EXPECT_FALSE(s.procedural);
    EXPECT_FALSE(s.non_opaque);
    EXPECT_EQ(s.primitive_id, 10u);
    EXPECT_EQ(s.geometry_id, 3u);
    EXPECT_EQ(s.navigation, rdna4::kNavEndOfRange);
  }
}

TEST(IntersectPrimitive, BackFaceAndMisses) {
  const NodeImage img = one_pair_node();
  for (TriangleTest test : kBothTests) {
    SCOPED_TRACE(triangle_test_name(test));
    const IntersectOptions opt = with_test(test);
    auto r = run(img, prim_ptr(1), ray({0.25f, 0.5f, -2}, {0, 0, 1}), opt);
    EXPECT_EQ(r.dw[0], float_bits(2.0f));
    EXPECT_EQ(r.dw[3], (10u << 1) | 1u);  // back face: the ray travels along the normal (0, 0, 1)
    EXPECT_EQ(r.dw[1], float_bits(0.25f));
    // Outside the triangle, behind the origin: t = +inf (a miss has no other marker).
    EXPECT_EQ(run(img, prim_ptr(1), ray({0.75f, 0.75f, 1}, {0, 0, -1}), opt).dw[0], float_bits(kInf));
    EXPECT_EQ(run(img, prim_ptr(1), ray({0.25f, 0.25f, -1}, {0, 0, -1}), opt).dw[0], float_bits(kInf));
    // No extent test on triangles: a far hit is still reported (the loop compares with its closest t).
    EXPECT_EQ(run(img, prim_ptr(1), ray({0.25f, 0.25f, 1000}, {0, 0, -1}, 1.0f), opt).dw[0], float_bits(1000.0f));
    // Facing follows the winding whatever the dominant axis and direction sign (the watertight test permutes axes).
    const NodeImage tilted = [] {
      NodeImage i;
      i.put(1, primitive_node({pair(triangle({0, 0, 0}, {4, 1, 0.5f}, {1, 4, -0.5f}, 7))}));
      return i;
    }();
    const Vec3 target{1.5f, 1.5f, 0.0f};
    for (const Vec3 d : {Vec3{0.1f, 0.2f, -1}, Vec3{3, 0.5f, -1}, Vec3{-0.5f, -3, -1}, Vec3{-3, 0.2f, -0.5f}}) {
      const Vec3 n = glm::cross(Vec3{4, 1, 0.5f}, Vec3{1, 4, -0.5f});
      const bool front = glm::dot(d, n) < 0.0f;
      const auto hit = run(tilted, prim_ptr(1), ray(target - 2.0f * d, d), opt);
      EXPECT_NEAR(bits_float(hit.dw[0]), 2.0f, 1e-5f) << d.x << " " << d.y << " " << d.z;
      EXPECT_EQ(hit.dw[3] & 1u, front ? 0u : 1u) << d.x << " " << d.y << " " << d.z;
      const auto back = run(tilted, prim_ptr(1), ray(target + 2.0f * d, -d), opt);
      EXPECT_EQ(back.dw[3] & 1u, front ? 1u : 0u) << d.x << " " << d.y << " " << d.z;
    }
  }
}

TEST(IntersectPrimitive, CullingAndOpacityFlags) {
  const NodeImage img = one_pair_node();
  const RayOperands front = ray({0.25f, 0.5f, 1}, {0, 0, -1}), back = ray({0.25f, 0.5f, -1}, {0, 0, 1});
  const IntersectDwords culled_dw{float_bits(kInf), 0u, 0u, 10u << 1};
  auto slot0 = [](const IntersectResult& r) { return IntersectDwords{r.dw[0], r.dw[1], r.dw[2], r.dw[3]}; };
  for (TriangleTest test : kBothTests) {
    SCOPED_TRACE(triangle_test_name(test));
    const IntersectOptions opt = with_test(test);
    PointerFlags f;
    f.cull_back_facing = true;
    EXPECT_EQ(slot0(run(img, prim_ptr(1), back, opt, f)), culled_dw);
    EXPECT_EQ(run(img, prim_ptr(1), front, opt, f).dw[0], float_bits(1.0f));
    f = {};
    f.cull_front_facing = true;
    EXPECT_EQ(slot0(run(img, prim_ptr(1), front, opt, f)), culled_dw);
    f = {};
    f.flip_facedness = true;  // front becomes back; t is unchanged (both signs flip)
    auto r = run(img, prim_ptr(1), front, opt, f);
    EXPECT_EQ(r.dw[0], float_bits(1.0f));
    EXPECT_EQ(r.dw[3], (10u << 1) | 1u);
    f.cull_back_facing = true;
    EXPECT_EQ(slot0(run(img, prim_ptr(1), front, opt, f)), culled_dw);
    f = {};
    f.cull_opaque = true;
    EXPECT_EQ(slot0(run(img, prim_ptr(1), front, opt, f)), culled_dw);
    f.force_non_opaque = true;  // no longer opaque: not culled, J carries the non-opaque sign
    r = run(img, prim_ptr(1), front, opt, f);
    EXPECT_EQ(r.dw[0], float_bits(1.0f));
    EXPECT_EQ(r.dw[2], float_bits(0.5f) | 0x80000000u);
    EXPECT_TRUE(read_triangle_slot(r.dw, 0).non_opaque);
    EXPECT_EQ(read_triangle_slot(r.dw, 0).v, 0.5f);
    f = {};
    f.skip_triangles = true;
    EXPECT_EQ(slot0(run(img, prim_ptr(1), front, opt, f)), culled_dw);
    // A non-opaque triangle: J sign set; FORCE_OPAQUE clears it.
    const NodeImage translucent = one_pair_node(true, false);
    EXPECT_EQ(run(translucent, prim_ptr(1), front, opt).dw[2], float_bits(0.5f) | 0x80000000u);
    f = {};
    f.force_opaque = true;
    EXPECT_EQ(run(translucent, prim_ptr(1), front, opt, f).dw[2], float_bits(0.5f));
    // A culled non-opaque triangle keeps its non-opaque sign on J = 0.
    f = {};
    f.cull_back_facing = true;
    EXPECT_EQ(run(translucent, prim_ptr(1), back, opt, f).dw[2], 0x80000000u);
  }
}

TEST(IntersectPrimitive, InvalidTri1) {
  const NodeImage img = one_pair_node(false);
  for (TriangleTest test : kBothTests) {
    SCOPED_TRACE(triangle_test_name(test));
    const auto r = run(img, prim_ptr(1), ray({0.25f, 0.5f, 1}, {0, 0, -1}), with_test(test));
    EXPECT_EQ(r.triangle_tests, 1u);
    EXPECT_EQ(r.dw[4], float_bits(kInf));
    EXPECT_EQ(r.dw[5], float_bits(1.0f));
    EXPECT_EQ(r.dw[6], float_bits(1.0f));
    EXPECT_EQ(r.dw[7], 0u);
    EXPECT_EQ(r.dw[0], float_bits(1.0f));
  }
}

// Rays through points of the diagonal shared by the two triangles of a (nearly) planar quad in general position:
// the watertight test hits at least one of them every time, Möller–Trumbore does not. The ray directions vary so
// that every dominant axis and sign is exercised; rays grazing the plane are left out (where the rounded fourth
// vertex folds the quad, a grazing ray may pass legitimately).
TEST(IntersectPrimitive, WatertightTestHasNoCracksOnSharedEdges) {
  const Vec3 p0{0.1f, 0.2f, 0.3f}, p1{1.7f, 0.4f, 0.9f}, p2{0.3f, 1.9f, 0.1f}, p3 = p1 + p2 - p0;
  NodeImage img;
  img.put(1, primitive_node({pair(triangle(p0, p1, p2, 0), triangle(p1, p3, p2, 1))}));  // shared edge p1-p2
  const Vec3 n = glm::normalize(glm::cross(p1 - p0, p2 - p0));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> along(0.02f, 0.98f), dir(-1.0f, 1.0f);
  uint32_t cracks[2] = {0, 0}, rays = 0;
  while (rays < 20000) {
    const Vec3 on_edge = p1 + along(rng) * (p2 - p1);
    const Vec3 d{dir(rng), dir(rng), dir(rng)};
    if (glm::length(d) < 0.1f || std::abs(glm::dot(glm::normalize(d), n)) < 0.05f) continue;
    ++rays;
    const RayOperands r = ray(on_edge - 3.0f * d, d);
    for (int m = 0; m < 2; ++m) {
      const auto res = run(img, prim_ptr(1), r, with_test(kBothTests[m]));
      cracks[m] += res.dw[0] == float_bits(kInf) && res.dw[4] == float_bits(kInf) ? 1 : 0;
    }
  }
  EXPECT_EQ(cracks[0], 0u) << "watertight";
  EXPECT_GT(cracks[1], 0u) << "gpurt (Möller–Trumbore is expected to leak through shared edges)";
}

TEST(IntersectPrimitive, TriangleTestsAgreeAwayFromEdges) {
  // Random rays aimed well inside a triangle: same hit, same facing, t and barycentrics within rounding.
  const Vec3 a{-1.3f, 0.2f, 0.7f}, b{2.1f, -0.4f, 1.9f}, c{0.4f, 2.6f, -0.8f};
  NodeImage img;
  img.put(1, primitive_node({pair(triangle(a, b, c, 5))}));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> w(0.05f, 0.9f), dir(-1.0f, 1.0f);
  for (int i = 0; i < 2000; ++i) {
    float u = w(rng), v = w(rng);
    if (u + v > 0.95f) u = 0.95f - v * 0.5f, v *= 0.5f;
    const Vec3 target = a + u * (b - a) + v * (c - a);
    const Vec3 d{dir(rng), dir(rng), dir(rng)};
    const RayOperands r = ray(target - 2.0f * d, d);
    const TriangleSlot wt = read_triangle_slot(run(img, prim_ptr(1), r, with_test(TriangleTest::Watertight)).dw, 0);
    const TriangleSlot mt = read_triangle_slot(run(img, prim_ptr(1), r, with_test(TriangleTest::Gpurt)).dw, 0);
    ASSERT_LT(wt.t, kInf) << i;
    ASSERT_LT(mt.t, kInf) << i;
    EXPECT_NEAR(wt.t, mt.t, 1e-4f * mt.t) << i;
    EXPECT_NEAR(wt.u, mt.u, 1e-4f) << i;
    EXPECT_NEAR(wt.v, mt.v, 1e-4f) << i;
    EXPECT_NEAR(wt.u, u, 1e-4f) << i;
    EXPECT_NEAR(wt.v, v, 1e-4f) << i;
    EXPECT_EQ(wt.back_face, mt.back_face) << i;
  }
}

TEST(IntersectPrimitive, NavigationValuesAndPairIndexFromPointer) {
  // Five pairs: ranges {0, 1} and {2, 3, 4}; pair 4 is addressed with node type 8.
  // The same three vertices for every triangle keep the node within 16 unique vertices.
  auto t = [](uint32_t id) { return triangle({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, id, id % 2); };
  NodeImage img;
  img.put(1, primitive_node({pair(t(0), t(1), false), pair(t(2), t(3), true), pair(t(4), t(5), false),
                             pair(t(6), t(7), false), pair(t(8), t(9), false)}));
  const RayOperands r = ray({0.25f, 0.25f, 1}, {0, 0, -1});
  const uint32_t expected_nav[5] = {rdna4::kNavEndOfPair, rdna4::kNavEndOfRange, rdna4::kNavEndOfPair,
                                    rdna4::kNavEndOfPair, rdna4::kNavEndOfNode};
  for (uint32_t p = 0; p < 5; ++p) {
    const auto res = run(img, prim_ptr(1, rdna4::pair_node_type(p)), r);
    ASSERT_EQ(res.fault, NodeFault::None) << "pair " << p;
    EXPECT_EQ(res.dw[8] & 3u, expected_nav[p]) << "pair " << p;
    EXPECT_EQ(res.dw[9] & 3u, expected_nav[p]) << "pair " << p;
    EXPECT_EQ(res.dw[3] >> 1, 2 * p) << "pair " << p;
    EXPECT_EQ(res.dw[7] >> 1, 2 * p + 1) << "pair " << p;
    EXPECT_EQ(res.dw[9] >> 2, 1u) << "pair " << p;
  }
}

// --- dispatch and faults ---

// A decode cache rebound to another node memory answers exactly as a new cache for it: nothing of the first
// memory's nodes survives, even where both memories hold a node at the same pointer.
TEST(IntersectDispatch, ReboundDecodeCacheEqualsANewOne) {
  const NodeImage first = root_with({box_child(kUnitBox), box_child(box({2, 0, 0}, {3, 1, 1}))});
  const NodeImage second = root_with({box_child(box({0, 0, 5}, {1, 1, 6}), 0, 1)});
  const PreparedRay along_x(ray({-1, 0.5f, 0.5f}, {1, 0, 0})), along_z(ray({0.5f, 0.5f, -1}, {0, 0, 1}));
  NodeDecodeCache cache(first.memory());
  const IntersectResult warm = image_bvh8_intersect_ray(cache, {}, along_x, 0x15, {});
  EXPECT_EQ(warm.dw, image_bvh8_intersect_ray(first.memory(), {}, along_x, 0x15, {}).dw);
  cache.rebind(second.memory());
  NodeDecodeCache fresh(second.memory());
  for (const PreparedRay* r : {&along_x, &along_z}) {
    EXPECT_EQ(image_bvh8_intersect_ray(cache, {}, *r, 0x15, {}).dw,
              image_bvh8_intersect_ray(fresh, {}, *r, 0x15, {}).dw);
  }
}

// A default PreparedRay is the default operands prepared: a lane holds it until it prepares its own ray in place.
TEST(IntersectDispatch, DefaultPreparedRayIsTheDefaultOperandsPrepared) {
  const PreparedRay fresh, prepared{RayOperands{}};
  EXPECT_EQ(fresh.operands.origin, prepared.operands.origin);
  EXPECT_EQ(fresh.operands.direction, prepared.operands.direction);
  EXPECT_EQ(fresh.operands.extent, prepared.operands.extent);
  EXPECT_EQ(fresh.operands.instance_mask, prepared.operands.instance_mask);
  EXPECT_EQ(fresh.inverse, prepared.inverse);
  EXPECT_EQ(fresh.near_is_max, prepared.near_is_max);
  EXPECT_EQ((std::array{fresh.kx, fresh.ky, fresh.kz}), (std::array{prepared.kx, prepared.ky, prepared.kz}));
  EXPECT_EQ((std::array{fresh.shear_x, fresh.shear_y, fresh.shear_z}),
            (std::array{prepared.shear_x, prepared.shear_y, prepared.shear_z}));
  EXPECT_EQ(fresh.nan_free_slabs, prepared.nan_free_slabs);
}

TEST(IntersectDispatch, UnsupportedTypesReturnAllOnes) {
  const NodeImage img = one_pair_node();
  const IntersectDwords all_ones{I, I, I, I, I, I, I, I, I, I};
  for (uint32_t type : {4u, 7u}) {
    const auto r = run(img, (1u << 4) | type, ray({0, 0, 1}, {0, 0, -1}));
    EXPECT_EQ(r.dw, all_ones) << "type " << type;
    EXPECT_EQ(r.fault, NodeFault::None);
    EXPECT_EQ(r.kind, rdna4::NodeKind::Unsupported);
  }
}

TEST(IntersectDispatch, FaultsAreReportedCleanly) {
  const NodeImage img = one_pair_node();
  const RayOperands r = ray({0, 0, 1}, {0, 0, -1});
  EXPECT_EQ(run(img, prim_ptr(2), r).fault, NodeFault::OutOfRange);
  EXPECT_EQ(run(img, box_ptr(1000000), r).fault, NodeFault::OutOfRange);
  EXPECT_EQ(run(img, 0xFFFFFFF5u, r).fault, NodeFault::OutOfRange);  // top of the 32 GiB pointer range
  EXPECT_EQ(run(img, 0x1Du, r).fault, NodeFault::Misaligned);         // box pointer with bit 3 set
  const auto bad_pair = run(img, prim_ptr(1, 1), r);                  // pair 1 of a one-pair node
  EXPECT_EQ(bad_pair.fault, NodeFault::MalformedPrimitive);
  EXPECT_EQ(bad_pair.dw[0], I);
  NodeImage garbage;
  rdna4::NodeDwords n;
  n.fill(0xFFFFFFFFu);
  garbage.put(1, n);
  EXPECT_EQ(run(garbage, prim_ptr(1), r).fault, NodeFault::MalformedPrimitive);
  // A box node decodes whatever its bytes are; it never faults once fetched.
  EXPECT_EQ(run(garbage, box_ptr(1), r).fault, NodeFault::None);
}

TEST(IntersectOptionsTest, Validation) {
  IntersectOptions o;
  EXPECT_NO_THROW(o.validate());
  EXPECT_FALSE(o.triangle_test.has_value());  // each target's own test
  EXPECT_EQ(kRtip31TriangleTest, TriangleTest::Watertight);
  o.box_grow = 256;
  EXPECT_THROW(o.validate(), Error);
  o = {};
  o.heuristic = static_cast<SortHeuristic>(4);
  EXPECT_THROW(o.validate(), Error);
  o = {};
  o.triangle_test = static_cast<TriangleTest>(2);
  EXPECT_THROW(o.validate(), Error);
}

TEST(IntersectOptionsTest, TriangleTestNames) {
  for (TriangleTest test : {TriangleTest::Watertight, TriangleTest::Gpurt}) {
    EXPECT_EQ(parse_triangle_test(triangle_test_name(test)), test);
  }
  EXPECT_STREQ(triangle_test_name(TriangleTest::Gpurt), "gpurt");
  EXPECT_THROW((void)parse_triangle_test("moller"), Error);
}

TEST(PointerFlagsTest, BitRoundTrip) {
  for (uint32_t bits = 0; bits < 1024; ++bits) EXPECT_EQ(PointerFlags::from_bits(bits).bits(), bits);
  EXPECT_TRUE(PointerFlags::from_bits(1u << 4).cull_back_facing);   // bit 58
  EXPECT_TRUE(PointerFlags::from_bits(1u << 9).skip_procedural);    // bit 63
}

}  // namespace
}  // namespace hwbvh::emu
