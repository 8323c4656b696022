#pragma once
// IMAGE_BVH_INTERSECT_RAY of RT IP 2.0 (RDNA 2/3) and IMAGE_BVH_DUAL_INTERSECT_RAY (RDNA 4's BVH4x2 mode) as
// GPURT's software emulation models them (docs/rtip31-format.md §5.7, §8; RDNA 4 ISA guide §10.9), on the
// RT IP 2.0 node section of formats/rdna3. The node bytes are read only through that format's decoder.
//
// image_bvh_intersect_ray: one node, four result dwords.
//   FP32 box node (type 5): early culling of children by their box flags against the pointer flags (RT IP 2.0),
//     4 slab tests with the shader's inverse direction and the box growth of §5.3 step 5, then the 4-input sort
//     (0,2)(1,3)(0,1)(2,3)(1,2) with "swap if (b valid and key_b < key_a) or a invalid"; DW0..3 = child pointers,
//     INVALID_NODE for misses. No triangles-first key, no duplicate removal (those are BVH8 features).
//   triangle node (types 0..3): one triangle, the one the type selects (§8.3), Möller–Trumbore in the slot order
//     (or, with IntersectOptions::triangle_test, the RT IP 3.1 emulator's watertight test);
//     barycentric return mode (t_num, t_denom, I_num, J_num) with I/J taken from the triangle_id I/J sources;
//     culling and opacity from the pointer flags and the triangle_id opaque bit. Version Rtip30 (the dual
//     instruction) also skips procedural triangles and puts "procedural" in the sign of I and "non-opaque" in the
//     sign of J, as RT IP 3.0 does.
//   instance (6) and procedural (7) nodes: all 0xFFFFFFFF (the shader handles them).
//
// image_bvh_dual_intersect_ray: two node pointers tested in one instruction (BVH4x2), each exactly as above with
//   version Rtip30: DW0..3 = node 0, DW4..7 = node 1 (all 0xFFFFFFFF when node 1 is INVALID_NODE), DW8/DW9 = the
//   geometry id of a triangle node 0 / 1. GPURT's emulation sorts the two box results separately; whether the
//   hardware interleaves them when wide sort is enabled is not modelled (docs/rdna3-format.md, `image_bvh_dual_intersect_ray`).
#include <array>
#include <cstdint>

#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/rtip31/intersect.h"

namespace hwbvh::emu {

/// GPURT's INTERSECT_RAY_VERSION: what the triangle path of the BVH4 instruction returns.
enum class Bvh4Version : uint8_t {
  Rtip20,  ///< RDNA 2/3: pointer-flag culling, triangle_id opacity
  Rtip30,  ///< RDNA 4 BVH4x2 path: also procedural triangles and the sign-bit flags of I and J
};

/// The BVH4 instructions' triangle test when IntersectOptions::triangle_test names none: GPURT's emulation.
inline constexpr TriangleTest kBvh4TriangleTest = TriangleTest::Gpurt;

/// The ray operands of the BVH4 instructions. Unlike IMAGE_BVH8_INTERSECT_RAY they take the inverse direction.
struct Bvh4RayOperands {
  Vec3 origin{0.0f};
  Vec3 direction{0.0f, 0.0f, 1.0f};
  Vec3 inverse_direction{0.0f};  ///< the shader's rcp(direction)
  float extent = 0.0f;           ///< ray_extent: box hits need entry <= extent * G
};

/// One node's four result dwords plus what the counters need.
struct Bvh4IntersectResult {
  std::array<uint32_t, 4> dw{};
  rdna4::NodeKind kind = rdna4::NodeKind::Unsupported;  ///< Box (type 5), Primitive (types 0..3), else Unsupported
  uint32_t box_tests = 0;       ///< 4 per box node (all slots are tested)
  uint32_t triangle_tests = 0;  ///< 1 per non-procedural triangle
  NodeFault fault = NodeFault::None;  ///< non-None: dw is all 0xFFFFFFFF
};

/// Emulates IMAGE_BVH_INTERSECT_RAY on `node_pointer` of the RT IP 2.0 node section `memory`. `options` supplies
/// box_sort, heuristic, box_grow and triangle_test (sort_triangles_first and wide_sort do not exist on this
/// instruction). Faults:
/// OutOfRange when the node lies (partly) outside `memory`; MalformedPrimitive when the selected triangle's I or J
/// source is 3 (the hardware behaviour is undefined); UnsupportedNode for an FP16 box node (type 4, not modelled).
Bvh4IntersectResult image_bvh_intersect_ray(const NodeMemory& memory, const PointerFlags& flags,
                                            const Bvh4RayOperands& ray, uint32_t node_pointer,
                                            const IntersectOptions& options, Bvh4Version version = Bvh4Version::Rtip20);

struct DualIntersectResult {
  std::array<uint32_t, 10> dw{};  ///< DW0..3 node 0, DW4..7 node 1, DW8/DW9 geometry ids (0xFFFFFFFF if no triangle)
  std::array<rdna4::NodeKind, 2> kind{rdna4::NodeKind::Unsupported, rdna4::NodeKind::Unsupported};
  uint32_t box_tests = 0;
  uint32_t triangle_tests = 0;
  NodeFault fault = NodeFault::None;  ///< the first fault of the two nodes
  uint32_t fault_node = 0xFFFFFFFFu;  ///< the pointer that faulted
};

/// Emulates IMAGE_BVH_DUAL_INTERSECT_RAY on `node0` and `node1` (INVALID_NODE: no second node).
DualIntersectResult image_bvh_dual_intersect_ray(const NodeMemory& memory, const PointerFlags& flags,
                                                 const Bvh4RayOperands& ray, uint32_t node0, uint32_t node1,
                                                 const IntersectOptions& options);

/// The hit a triangle result describes, read the way GPURT's TraceRay2_0 / 3_0 do: t = t_num / t_denom, hit
/// kind from the sign of t_denom, barycentrics |I| / t_denom and |J| / t_denom.
struct Bvh4TriangleHit {
  float t = 0.0f;
  Vec2 barycentrics{0.0f};  ///< weights of the triangle's source vertices 1 and 2
  bool back_face = false;   ///< sign bit of t_denom
  bool procedural = false;  ///< sign of I (Rtip30 results only)
  bool non_opaque = false;  ///< sign of J (Rtip30 results only)
};
Bvh4TriangleHit read_triangle_result(const std::array<uint32_t, 4>& dw, Bvh4Version version);

}  // namespace hwbvh::emu
