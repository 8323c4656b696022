#pragma once
// The node tests of an Intel Xe3 ray-tracing unit as the emulator models them, on nodes read through the Xe3 decoder
// (formats/xe3/decode.h). Intel does not document the unit's arithmetic (docs/xe3-format.md §6.2 lists what is
// public); the choices here are ours and docs/xe3-format.md records them:
//
//   InternalNode6: the six slots' dequantized boxes against the interval [t_min, t_far] with a slab test in f32
//     (per axis the near and far planes by the sign of the reciprocal direction, NaN slab distances ignored, as in
//     the RT IP 3.1 emulation), the far distance grown by the RT IP 3.1 box-growth factor; a hit needs
//     entry <= far * growth. Invalid slots miss; a node whose nodeMask shares no bit with the ray mask misses
//     entirely. Hit children come back sorted by entry distance (slot order on ties), the order traversal takes them.
//   Triangles: watertight (Woop, Benthin, Wald 2013), because DXR and Vulkan require watertight hardware; or, with
//     IntersectOptions::triangle_test, GPURT's Möller–Trumbore as the RT IP 3.1 emulator runs it.
#include <array>
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/formats/xe3/decode.h"

namespace hwbvh::emu {

struct Xe3ChildHit {
  int64_t block = 0;   ///< the child's 64-byte block
  uint32_t type = 0;   ///< its node type (xe3::kNodeType*)
  float entry = 0.0f;  ///< entry distance, >= t_min
  uint32_t slot = 0;
};

struct Xe3BoxResult {
  std::array<Xe3ChildHit, xe3::kNodeWidth> hits{};  ///< [0, count), nearest first
  uint32_t count = 0;
  uint32_t box_tests = xe3::kNodeWidth;  ///< slab tests the unit performs: all six slots
};

/// Tests the children of `node`, which sits at block `node_block`, against `ray` over [t_min, t_far].
/// `grow` is box_grow_factor(IntersectOptions::box_grow).
Xe3BoxResult intersect_internal_node(const xe3::DecodedInternalNode& node, int64_t node_block, const PreparedRay& ray,
                                     float t_min, float t_far, uint32_t ray_mask, float grow);

struct Xe3TriangleHit {
  bool hit = false;
  float t = 0.0f;
  Vec2 barycentrics{0.0f};  ///< weights of vertices v[1] and v[2]
  bool front_face = false;  ///< the ray travels against (v1 - v0) x (v2 - v0)
};

/// The Xe3 triangle test when IntersectOptions::triangle_test names none.
inline constexpr TriangleTest kXe3TriangleTest = TriangleTest::Watertight;

/// Ray/triangle test of `v` (either winding). A hit has t >= 0; the caller applies its interval.
Xe3TriangleHit intersect_triangle(const std::array<Vec3, 3>& v, const PreparedRay& ray,
                                  TriangleTest test = kXe3TriangleTest);

}  // namespace hwbvh::emu
