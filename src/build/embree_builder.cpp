#include "hwbvh/build/embree_builder.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include <embree3/rtcore.h>
#include <embree3/rtcore_builder.h>
#include <tbb/task_arena.h>

#include "hwbvh/build/spatial_split.h"
#include "hwbvh/core/error.h"

namespace hwbvh::build {
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

void split_primitive(const RTCBuildPrimitive* prim, unsigned int dim, float position, RTCBounds* left,
                     RTCBounds* right, void* user) {
  const std::array<Vec3, 3>& v = static_cast<const Callbacks*>(user)->corners[prim->primID];
  const Aabb box{{prim->lower_x, prim->lower_y, prim->lower_z}, {prim->upper_x, prim->upper_y, prim->upper_z}};
  const SplitBoxes halves = split_triangle(v[0], v[1], v[2], box, static_cast<int>(dim), position);
  // Only the coordinates are written: Embree keeps its own ids in the padding words.
  for (auto [out, half] : {std::pair{left, &halves.left}, std::pair{right, &halves.right}}) {
    out->lower_x = half->min.x;
    out->lower_y = half->min.y;
    out->lower_z = half->min.z;
    out->upper_x = half->max.x;
    out->upper_y = half->max.y;
    out->upper_z = half->max.z;
  }
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
BinaryBvh flatten(const EmbreeNode* root, std::size_t references) {
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
        const RTCBuildPrimitive& prim = node->prims[i];
        out.refs.push_back({{{prim.lower_x, prim.lower_y, prim.lower_z}, {prim.upper_x, prim.upper_y, prim.upper_z}},
                            prim.primID});
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

}  // namespace

BinaryBvh build_binary_bvh(const Scene& scene, std::span<const uint32_t> triangles, const BuildOptions& options) {
  const bool spatial = options.quality == BuildQuality::High;
  Callbacks callbacks;
  if (spatial) callbacks.corners.resize(scene.triangles.size());
  std::vector<RTCBuildPrimitive> prims(triangles.size());
  for (size_t i = 0; i < triangles.size(); ++i) {
    const uint32_t tri = triangles[i];
    const Aabb box = triangle_bounds(scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2));
    prims[i] = {box.min.x, box.min.y, box.min.z, 0, box.max.x, box.max.y, box.max.z, tri};
    if (spatial) callbacks.corners[tri] = {scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2)};
  }
  // Spatial splits append references to the array; Embree needs spare capacity beyond primitiveCount.
  prims.resize(spatial ? 2 * triangles.size() : triangles.size());

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
  args.primitiveCount = triangles.size();
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
    throw Error(ErrorKind::Runtime, scene.source,
                "Embree BVH build failed: " + (callbacks.error.empty() ? "no root" : callbacks.error));
  }
  return flatten(root, triangles.size());
}

}  // namespace hwbvh::build
