#include "hwbvh/bvh_build/embree_builder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <embree3/rtcore.h>
#include <embree3/rtcore_builder.h>
#include <tbb/task_arena.h>

#include "hwbvh/bvh_build/spatial_split.h"
#include "hwbvh/core/error.h"

namespace hwbvh::bvh_build {
namespace {

// Nodes as Embree's callbacks create them, in Embree's thread-local memory; converted to a BinaryBvh before
// the RTCBVH is released. Leaves keep Embree's RTCBuildPrimitive (box + primID = scene triangle index).
struct EmbreeNode {
  const EmbreeNode* children[2] = {nullptr, nullptr};
  const RTCBuildPrimitive* prims = nullptr;  ///< leaf only
  uint32_t prim_count = 0;                   ///< 0 for an inner node
  uint32_t child_count = 0;
};

struct Callbacks {
  /// Spatial splits only: each triangle's three vertices side by side (by scene triangle index), so that the
  /// splitter, which Embree calls millions of times, touches one or two cache lines instead of up to four.
  std::vector<std::array<Vec3, 3>> corners;
  /// Embree works on boxes scaled by this power of two (range_scale): its SAH takes extents, areas and
  /// centroid sums in float, which overflow for coordinates near the float limit. 1 for all but huge scenes.
  float scale = 1.0f;
  std::string error;  ///< first Embree error message, reported after rtcBuildBVH returns
};

void* create_node(RTCThreadLocalAllocator alloc, unsigned int child_count, void*) {
  void* mem = rtcThreadLocalAlloc(alloc, sizeof(EmbreeNode), alignof(EmbreeNode));
  auto* node = new (mem) EmbreeNode;
  node->child_count = child_count;
  return node;
}

void set_node_children(void* node_ptr, void** children, unsigned int child_count, void*) {
  auto* node = static_cast<EmbreeNode*>(node_ptr);
  for (unsigned int i = 0; i < child_count && i < 2; ++i) node->children[i] = static_cast<EmbreeNode*>(children[i]);
}

// Bounds are recomputed exactly from the leaf references after the build, so Embree's are not kept.
void set_node_bounds(void*, const RTCBounds**, unsigned int, void*) {}

// One allocation per leaf: the node, then its references (sizeof(EmbreeNode) keeps them aligned).
void* create_leaf(RTCThreadLocalAllocator alloc, const RTCBuildPrimitive* prims, size_t count, void*) {
  static_assert(sizeof(EmbreeNode) % alignof(RTCBuildPrimitive) == 0);
  void* mem = rtcThreadLocalAlloc(alloc, sizeof(EmbreeNode) + count * sizeof(RTCBuildPrimitive),
                                  std::max(alignof(EmbreeNode), alignof(RTCBuildPrimitive)));
  auto* node = new (mem) EmbreeNode;
  auto* copy = reinterpret_cast<RTCBuildPrimitive*>(static_cast<char*>(mem) + sizeof(EmbreeNode));
  for (size_t i = 0; i < count; ++i) copy[i] = prims[i];
  node->prims = copy;
  node->prim_count = static_cast<uint32_t>(count);
  return node;
}

// x * scale rounded towards -inf or +inf, so that a scaled box still holds the original once scaled back
// (x * scale is exact in double, and only values that become subnormal in float are rounded).
float scale_outward(float x, float scale, float direction) {
  return round_toward(static_cast<double>(x) * scale, direction);
}

// Writes `box`, scaled outward, into the coordinates of `out` (Embree keeps its own ids in the padding words).
template <typename Bounds>
void set_scaled_bounds(Bounds& out, const Aabb& box, float scale) {
  constexpr float kDown = -std::numeric_limits<float>::infinity();
  constexpr float kUp = std::numeric_limits<float>::infinity();
  out.lower_x = scale_outward(box.min.x, scale, kDown);
  out.lower_y = scale_outward(box.min.y, scale, kDown);
  out.lower_z = scale_outward(box.min.z, scale, kDown);
  out.upper_x = scale_outward(box.max.x, scale, kUp);
  out.upper_y = scale_outward(box.max.y, scale, kUp);
  out.upper_z = scale_outward(box.max.z, scale, kUp);
}

// A box Embree holds, in scene coordinates (exact: scaling back by a power of two of at least 1).
template <typename Bounds>
Aabb scene_bounds(const Bounds& b, float scale) {
  return {Vec3(b.lower_x, b.lower_y, b.lower_z) / scale, Vec3(b.upper_x, b.upper_y, b.upper_z) / scale};
}

// The triangle is split in scene coordinates, where its corners are exact.
void split_primitive(const RTCBuildPrimitive* prim, unsigned int dim, float position, RTCBounds* left,
                     RTCBounds* right, void* user) {
  const auto* callbacks = static_cast<const Callbacks*>(user);
  const std::array<Vec3, 3>& v = callbacks->corners[prim->primID];
  const SplitBoxes halves = split_triangle(v[0], v[1], v[2], scene_bounds(*prim, callbacks->scale),
                                           static_cast<int>(dim), position / callbacks->scale);
  set_scaled_bounds(*left, halves.left, callbacks->scale);
  set_scaled_bounds(*right, halves.right, callbacks->scale);
}

void on_error(void* user, RTCError, const char* message) {
  auto* callbacks = static_cast<Callbacks*>(user);
  if (callbacks->error.empty()) callbacks->error = message ? message : "unknown Embree error";
}

RTCBuildQuality embree_quality(BuildQuality quality) {
  switch (quality) {
    case BuildQuality::Low: return RTC_BUILD_QUALITY_LOW;
    case BuildQuality::Medium: return RTC_BUILD_QUALITY_MEDIUM;
    case BuildQuality::High: return RTC_BUILD_QUALITY_HIGH;
  }
  return RTC_BUILD_QUALITY_MEDIUM;
}

// Owns an Embree device and BVH for one build.
class EmbreeSession {
 public:
  EmbreeSession(int threads, Callbacks* callbacks) {
    const std::string config = threads > 0 ? "threads=" + std::to_string(threads) : std::string{};
    device_ = rtcNewDevice(config.c_str());
    if (!device_) throw Error(ErrorKind::Runtime, "", "cannot create an Embree device");
    rtcSetDeviceErrorFunction(device_, on_error, callbacks);
    bvh_ = rtcNewBVH(device_);
    if (!bvh_) {
      rtcReleaseDevice(device_);
      throw Error(ErrorKind::Runtime, "", "cannot create an Embree BVH: " + callbacks->error);
    }
  }
  ~EmbreeSession() {
    rtcReleaseBVH(bvh_);
    rtcReleaseDevice(device_);
  }
  EmbreeSession(const EmbreeSession&) = delete;
  EmbreeSession& operator=(const EmbreeSession&) = delete;
  [[nodiscard]] RTCBVH bvh() const { return bvh_; }

 private:
  RTCDevice device_ = nullptr;
  RTCBVH bvh_ = nullptr;
};

// Numbers Embree's nodes in depth-first preorder (left first) and copies the references in leaf order, which
// makes the result independent of the order in which Embree's threads created the nodes.
BinaryBvh flatten(const EmbreeNode* root, std::size_t references, float scale) {
  BinaryBvh out;
  out.nodes.reserve(2 * references);  // one reference per leaf, plus splits: avoids regrowing large arrays
  out.refs.reserve(references);
  std::vector<std::pair<const EmbreeNode*, uint32_t>> stack{{root, kNoIndex}};  // node, parent
  while (!stack.empty()) {
    const auto [node, parent] = stack.back();
    stack.pop_back();
    const auto index = static_cast<uint32_t>(out.nodes.size());
    BinaryBvh::Node& flat = out.nodes.emplace_back();
    flat.first_ref = static_cast<uint32_t>(out.refs.size());
    if (parent != kNoIndex) {
      BinaryBvh::Node& p = out.nodes[parent];
      (p.left == kNoIndex ? p.left : p.right) = index;
    }
    if (node->prim_count > 0) {
      flat.ref_count = node->prim_count;
      for (uint32_t i = 0; i < node->prim_count; ++i) {
        out.refs.push_back({scene_bounds(node->prims[i], scale), node->prims[i].primID});
      }
      continue;
    }
    if (node->child_count != 2) {
      throw Error(ErrorKind::Runtime, "", "Embree built a node with " + std::to_string(node->child_count) +
                                              " children; expected 2");
    }
    stack.push_back({node->children[1], index});
    stack.push_back({node->children[0], index});
  }
  // Children follow their parent in preorder, so one backward pass completes bounds and reference ranges.
  for (size_t i = out.nodes.size(); i-- > 0;) {
    BinaryBvh::Node& node = out.nodes[i];
    if (node.is_leaf()) {
      for (uint32_t r = 0; r < node.ref_count; ++r) node.bounds.grow(out.refs[node.first_ref + r].bounds);
    } else {
      const BinaryBvh::Node& left = out.nodes[node.left];
      const BinaryBvh::Node& right = out.nodes[node.right];
      node.bounds = left.bounds;
      node.bounds.grow(right.bounds);
      node.ref_count = left.ref_count + right.ref_count;
    }
  }
  return out;
}

// The one Embree build: `boxes` become RTCBuildPrimitives with primID ids[i]. With `callbacks.corners` set (spatial
// splits), Embree may append split references, so the array gets spare capacity.
BinaryBvh build_over_boxes(std::span<const Aabb> boxes, std::span<const uint32_t> ids, Callbacks& callbacks,
                           const BuildOptions& options, const std::string& source) {
  const bool spatial = !callbacks.corners.empty();
  Aabb all;
  for (const Aabb& box : boxes) all.grow(box);
  callbacks.scale = range_scale(all);
  std::vector<RTCBuildPrimitive> prims(boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) {
    set_scaled_bounds(prims[i], boxes[i], callbacks.scale);
    prims[i].geomID = 0;
    prims[i].primID = ids[i];
  }
  prims.resize(spatial ? 2 * boxes.size() : boxes.size());

  EmbreeSession session(options.threads, &callbacks);

  RTCBuildArguments args = rtcDefaultBuildArguments();
  args.buildQuality = embree_quality(options.quality);
  args.maxBranchingFactor = 2;
  args.maxDepth = 128;  // SAH binary trees of real meshes exceed Embree's default of 32
  args.sahBlockSize = 1;
  args.minLeafSize = 1;
  args.maxLeafSize = 1;
  // Costs per binary step and per triangle (a pair step tests two). With one reference per leaf Embree only
  // uses them to weigh a leaf against a split, which maxLeafSize = 1 decides anyway.
  args.traversalCost = options.box_step_cost;
  args.intersectionCost = 0.5f * options.pair_step_cost;
  args.bvh = session.bvh();
  args.primitives = prims.data();
  args.primitiveCount = boxes.size();
  args.primitiveArrayCapacity = prims.size();
  args.createNode = create_node;
  args.setNodeChildren = set_node_children;
  args.setNodeBounds = set_node_bounds;
  args.createLeaf = create_leaf;
  args.splitPrimitive = spatial ? split_primitive : nullptr;
  args.userPtr = &callbacks;

  const EmbreeNode* root = nullptr;
  if (spatial) {
    // Embree 3.13's spatial-split builder is not deterministic in parallel: it sums primitive areas with a
    // floating-point parallel reduction to budget splits per primitive, hands out slots for split references
    // through an atomic counter, and sorts references by id, which ties for the parts of a split triangle.
    // A one-thread arena makes every one of these steps run in a fixed order.
    tbb::task_arena(1).execute([&] { root = static_cast<const EmbreeNode*>(rtcBuildBVH(&args)); });
  } else {
    root = static_cast<const EmbreeNode*>(rtcBuildBVH(&args));
  }
  if (!root || !callbacks.error.empty()) {
    throw Error(ErrorKind::Runtime, source,
                "Embree BVH build failed: " + (callbacks.error.empty() ? "no root" : callbacks.error));
  }
  return flatten(root, boxes.size(), callbacks.scale);
}

}  // namespace

BinaryBvh build_binary_bvh(const Scene& scene, std::span<const uint32_t> triangles, const BuildOptions& options) {
  Callbacks callbacks;
  if (options.quality == BuildQuality::High) {
    callbacks.corners.resize(scene.triangles.size());
    for (const uint32_t tri : triangles) {
      callbacks.corners[tri] = {scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2)};
    }
  }
  std::vector<Aabb> boxes(triangles.size());
  for (size_t i = 0; i < triangles.size(); ++i) {
    const uint32_t tri = triangles[i];
    boxes[i] = triangle_bounds(scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2));
  }
  return build_over_boxes(boxes, triangles, callbacks, options, scene.source);
}

BinaryBvh build_binary_bvh(std::span<const Aabb> boxes, const BuildOptions& options, const std::string& source) {
  std::vector<uint32_t> ids(boxes.size());
  std::iota(ids.begin(), ids.end(), 0u);
  Callbacks callbacks;  // no corners: boxes are never split
  return build_over_boxes(boxes, ids, callbacks, options, source);
}

}  // namespace hwbvh::bvh_build
