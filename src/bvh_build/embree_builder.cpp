#include "hwbvh/bvh_build/embree_builder.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <embree3/rtcore.h>
#include <embree3/rtcore_builder.h>
#include <tbb/task_arena.h>

#include "hwbvh/bvh_build/binned_builder.h"
#include "hwbvh/bvh_build/spatial_split.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/core/progress.h"

namespace hwbvh::bvh_build {
namespace {

// Nodes as Embree's callbacks create them, in Embree's thread-local memory; converted to a BinaryBvh before
// the RTCBVH is released. Every leaf holds one reference. Without spatial splits a leaf is no allocation at all but
// a tagged pointer, (primID << 1) | 1, which Embree passes on without reading (the nodes are most of the builder's
// peak memory), and the conversion computes the reference's box again from its triangle or box; with them, a leaf
// node keeps the clipped box. Each inner node counts its subtree's nodes and references, so that the conversion
// knows where every subtree goes before it writes any (and writes them in parallel).
struct EmbreeNode {
  const void* children[2] = {nullptr, nullptr};  ///< inner node: EmbreeNodes or tagged leaves; leaf: none
  /// Binary nodes in the subtree; for an inner node set once both children's subtrees are complete (0 before).
  uint32_t nodes = 0;
  uint32_t references = 0;  ///< references in the subtree (0 until set, as `nodes`)
  [[nodiscard]] bool is_leaf() const { return children[0] == nullptr; }
  [[nodiscard]] const RTCBuildPrimitive& clipped() const;  ///< a leaf's reference (ClippedLeaf)
};

/// A leaf of a build with spatial splits: its reference as Embree holds it (clipped box, primID).
struct ClippedLeaf {
  EmbreeNode node;
  RTCBuildPrimitive reference;
};

const RTCBuildPrimitive& EmbreeNode::clipped() const { return reinterpret_cast<const ClippedLeaf*>(this)->reference; }

struct Callbacks {
  /// Spatial splits only: each triangle's three vertices side by side (by scene triangle index), so that the
  /// splitter, which Embree calls millions of times, touches one or two cache lines instead of up to four.
  std::vector<std::array<Vec3, 3>> corners;
  /// Embree works on boxes scaled by this power of two (range_scale): its SAH takes extents, areas and
  /// centroid sums in float, which overflow for coordinates near the float limit. 1 for all but huge scenes.
  float scale = 1.0f;
  std::string error;  ///< first Embree error message, reported after rtcBuildBVH returns
  /// The first broken promise of Embree's callbacks (a string literal), if any: a node of other than two children,
  /// a leaf larger than maxLeafSize, children set before their subtrees were complete.
  std::atomic<const char*> broken{nullptr};
  void report_broken(const char* what) {
    const char* none = nullptr;
    broken.compare_exchange_strong(none, what);
  }
  ProgressCounter* progress = nullptr;  ///< "binary BVH" in per mille, when BuildOptions::progress is set
};

// Embree's build progress monitor: n in [0, 1]; returning true lets the build go on.
bool build_progress(void* user, double n) {
  static_cast<Callbacks*>(user)->progress->reach(static_cast<uint64_t>(std::clamp(n, 0.0, 1.0) * 1000.0));
  return true;
}

void* create_node(RTCThreadLocalAllocator alloc, unsigned int child_count, void* user) {
  if (child_count != 2) static_cast<Callbacks*>(user)->report_broken("a node without exactly two children");
  void* mem = rtcThreadLocalAlloc(alloc, sizeof(EmbreeNode), alignof(EmbreeNode));
  return new (mem) EmbreeNode;
}

void* tagged_leaf(uint32_t prim_id) { return reinterpret_cast<void*>((uintptr_t{prim_id} << 1) | 1u); }
bool is_tagged_leaf(const void* node) { return (reinterpret_cast<uintptr_t>(node) & 1u) != 0; }
uint32_t tagged_prim_id(const void* node) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(node) >> 1); }

uint32_t subtree_nodes(const void* ref) { return is_tagged_leaf(ref) ? 1 : static_cast<const EmbreeNode*>(ref)->nodes; }
uint32_t subtree_references(const void* ref) {
  return is_tagged_leaf(ref) ? 1 : static_cast<const EmbreeNode*>(ref)->references;
}

// Sets an inner node's children and its subtree's counts from theirs. Embree calls this once both children's
// subtrees are built (a child still counting 0 nodes would break that, and is reported).
void set_node_children(void* node_ptr, void** children, unsigned int child_count, void* user) {
  auto& callbacks = *static_cast<Callbacks*>(user);
  if (child_count != 2) {
    callbacks.report_broken("a node without exactly two children");
    return;
  }
  auto& node = *static_cast<EmbreeNode*>(node_ptr);
  node.children[0] = children[0];
  node.children[1] = children[1];
  const uint32_t left_nodes = subtree_nodes(children[0]), right_nodes = subtree_nodes(children[1]);
  if (left_nodes == 0 || right_nodes == 0) callbacks.report_broken("children set before their subtrees were built");
  node.nodes = 1 + left_nodes + right_nodes;
  node.references = subtree_references(children[0]) + subtree_references(children[1]);
}

// Bounds are recomputed exactly from the leaf references after the build, so Embree's are not kept.
void set_node_bounds(void*, const RTCBounds**, unsigned int, void*) {}

// Every leaf holds one reference: without spatial splits a tagged pointer; with them, the node followed by its
// reference.
void* create_leaf(RTCThreadLocalAllocator alloc, const RTCBuildPrimitive* prims, size_t count, void* user) {
  auto& callbacks = *static_cast<Callbacks*>(user);
  if (count != 1) callbacks.report_broken("a leaf of other than one reference");
  if (callbacks.corners.empty()) return tagged_leaf(prims[0].primID);
  auto* leaf = new (rtcThreadLocalAlloc(alloc, sizeof(ClippedLeaf), alignof(ClippedLeaf))) ClippedLeaf{{}, prims[0]};
  leaf->node.nodes = 1;
  leaf->node.references = 1;
  return &leaf->node;
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

// A reference's box as Embree was given it, in scene coordinates: `box` scaled outward and back, which is `box`
// itself for all but huge scenes (range_scale).
Aabb as_given(const Aabb& box, float scale) {
  if (scale == 1.0f) return box;  // what scaling by 1 and back gives, without the directed rounding
  RTCBounds scaled;
  set_scaled_bounds(scaled, box, scale);
  return scene_bounds(scaled, scale);
}

// Numbers Embree's nodes in depth-first preorder (left first) and copies the references in leaf order, which
// makes the result independent of the order in which Embree's threads created the nodes. Every subtree's place
// (its first node and first reference) follows from the counts in its ancestors, so subtrees of up to
// kTaskNodes nodes are written in parallel, then the nodes above them. `box_of(id)` is the unclipped box of
// reference `id`; spatial-split leaves hold their clipped boxes instead.
template <typename BoxOf>
class Flattener {
 public:
  Flattener(float scale, const BoxOf& box_of, int threads) : scale_(scale), box_of_(box_of), threads_(threads) {}

  BinaryBvh run(const void* root) {
    out_.nodes.resize(subtree_nodes(root));
    out_.refs.resize(subtree_references(root));
    struct Place {
      const void* ref;
      uint32_t index, first_ref;
    };
    std::vector<Place> tasks;
    std::vector<uint32_t> top;  // nodes above the tasks, in preorder
    for (std::vector<Place> stack{{root, 0, 0}}; !stack.empty();) {
      const Place p = stack.back();
      stack.pop_back();
      if (subtree_nodes(p.ref) <= kTaskNodes) {
        tasks.push_back(p);
        continue;
      }
      const auto* node = static_cast<const EmbreeNode*>(p.ref);  // a leaf is one node: never above a task
      const uint32_t right = p.index + 1 + subtree_nodes(node->children[0]);
      BinaryBvh::Node& flat = out_.nodes[p.index];
      flat.first_ref = p.first_ref;
      flat.right = right;
      flat.ref_count = node->references;
      top.push_back(p.index);
      stack.push_back({node->children[1], right, p.first_ref + subtree_references(node->children[0])});
      stack.push_back({node->children[0], p.index + 1, p.first_ref});
    }
    Executor(threads_).for_each(0, tasks.size(), [&](size_t t) { fill(tasks[t].ref, tasks[t].index, tasks[t].first_ref); });
    // `top` is in preorder, so its indices ascend and every node's children come after it: back to front.
    for (auto it = top.rbegin(); it != top.rend(); ++it) {
      BinaryBvh::Node& node = out_.nodes[*it];
      node.bounds = out_.nodes[BinaryBvh::left(*it)].bounds;
      node.bounds.grow(out_.nodes[node.right].bounds);
    }
    return std::move(out_);
  }

 private:
  static constexpr uint32_t kTaskNodes = 4096;

  // Writes the subtree of `ref` from node `index` and reference `first_ref` on.
  void fill(const void* ref, uint32_t index, uint32_t first_ref) {
    BinaryBvh::Node& flat = out_.nodes[index];
    flat.first_ref = first_ref;
    flat.right = kNoIndex;
    if (is_tagged_leaf(ref)) {
      const uint32_t id = tagged_prim_id(ref);
      out_.refs[first_ref] = {id};
      flat.ref_count = 1;
      flat.bounds = as_given(box_of_(id), scale_);
      return;
    }
    const auto* node = static_cast<const EmbreeNode*>(ref);
    flat.ref_count = node->references;
    if (node->is_leaf()) {
      out_.refs[first_ref] = {node->clipped().primID};
      flat.bounds = scene_bounds(node->clipped(), scale_);
      return;
    }
    const uint32_t right = index + 1 + subtree_nodes(node->children[0]);
    fill(node->children[0], index + 1, first_ref);
    fill(node->children[1], right, first_ref + subtree_references(node->children[0]));
    flat.right = right;
    flat.bounds = out_.nodes[index + 1].bounds;
    flat.bounds.grow(out_.nodes[right].bounds);
  }

  float scale_;
  const BoxOf& box_of_;
  int threads_;
  BinaryBvh out_;
};

// The one Embree build over `count` references: reference i is box_of(ids[i]) with primID ids[i]. With
// `callbacks.corners` set (spatial splits), Embree may append split references, so the array gets spare
// capacity. The boxes are made where Embree's array is filled, and that array is freed before the conversion,
// so that no more than one per-reference array is alive beside Embree's nodes.
template <typename BoxOf>
BinaryBvh build_over_boxes(std::span<const uint32_t> ids, const BoxOf& box_of, Callbacks& callbacks,
                           const BuildOptions& options, const std::string& source) {
  const bool spatial = !callbacks.corners.empty();
  std::vector<RTCBuildPrimitive> prims(spatial ? 2 * ids.size() : ids.size());
  Aabb all;
  for (size_t i = 0; i < ids.size(); ++i) {  // each box made once: scale 1 (all but huge scenes) keeps it as it is
    const Aabb box = box_of(ids[i]);
    all.grow(box);
    prims[i] = {box.min.x, box.min.y, box.min.z, 0, box.max.x, box.max.y, box.max.z, ids[i]};
  }
  callbacks.scale = range_scale(all);
  if (callbacks.scale != 1.0f) {
    for (size_t i = 0; i < ids.size(); ++i) set_scaled_bounds(prims[i], scene_bounds(prims[i], 1.0f), callbacks.scale);
  }

  EmbreeSession session(options.threads, &callbacks);

  RTCBuildArguments args = rtcDefaultBuildArguments();
  // Embree builds only what the binned builder does not: Morton (low) and spatial splits (high, over triangles).
  args.buildQuality = spatial ? RTC_BUILD_QUALITY_HIGH : RTC_BUILD_QUALITY_LOW;
  args.maxBranchingFactor = 2;
  args.maxDepth = 128;  // SAH binary trees of real meshes exceed Embree's default of 32
  args.sahBlockSize = 1;
  args.minLeafSize = 1;
  args.maxLeafSize = 1;
  args.traversalCost = options.box_step_cost;
  args.intersectionCost = 0.5f * options.pair_step_cost;
  args.bvh = session.bvh();
  args.primitives = prims.data();
  args.primitiveCount = ids.size();
  args.primitiveArrayCapacity = prims.size();
  args.createNode = create_node;
  args.setNodeChildren = set_node_children;
  args.setNodeBounds = set_node_bounds;
  args.createLeaf = create_leaf;
  args.splitPrimitive = spatial ? split_primitive : nullptr;
  args.userPtr = &callbacks;
  ProgressCounter progress(options.progress, "binary BVH", 1000);
  if (progress.active()) {
    callbacks.progress = &progress;
    args.buildProgress = build_progress;
  }

  const void* root = nullptr;
  if (spatial) {
    // Embree 3.13's spatial-split builder is not deterministic in parallel: it sums primitive areas with a
    // floating-point parallel reduction to budget splits per primitive, hands out slots for split references
    // through an atomic counter, and sorts references by id, which ties for the parts of a split triangle.
    // A one-thread arena makes every one of these steps run in a fixed order.
    tbb::task_arena(1).execute([&] { root = rtcBuildBVH(&args); });
  } else {
    root = rtcBuildBVH(&args);
  }
  if (const char* broken = callbacks.broken.load(); broken && callbacks.error.empty()) callbacks.error = broken;
  if (!root || !callbacks.error.empty()) {
    throw Error(ErrorKind::Runtime, source,
                "Embree BVH build failed: " + (callbacks.error.empty() ? "no root" : callbacks.error));
  }
  std::vector<RTCBuildPrimitive>().swap(prims);  // the leaves hold what is still needed
  BinaryBvh binary = Flattener<BoxOf>(callbacks.scale, box_of, options.threads).run(root);
  progress.finish();
  return binary;
}

// The binned builder's tree over `count` references, reference i being (box, id) = ref_of(i): the reference
// array is filled in parallel, each index its own slot.
template <typename RefOf>
BinaryBvh binned_over_boxes(size_t count, const RefOf& ref_of, const BuildOptions& options) {
  std::vector<BinnedRef> refs(count);
  Executor(options.threads).for_ranges(0, count, size_t{1} << 16, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const auto [box, id] = ref_of(i);
      refs[i] = {box.min, id, box.max};
    }
  });
  return build_binned_bvh(std::move(refs), options.threads, options.progress);
}

}  // namespace

BinaryBvh build_binary_bvh(const Scene& scene, std::span<const uint32_t> triangles, const BuildOptions& options) {
  const auto triangle_box = [&scene](uint32_t tri) {
    return triangle_bounds(scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2));
  };
  if (options.quality == BuildQuality::Medium) {
    const auto reference = [&](size_t i) { return std::pair{triangle_box(triangles[i]), triangles[i]}; };
    return binned_over_boxes(triangles.size(), reference, options);
  }
  Callbacks callbacks;
  if (options.quality == BuildQuality::High) {
    callbacks.corners.resize(scene.triangles.size());
    for (const uint32_t tri : triangles) {
      callbacks.corners[tri] = {scene.vertex(tri, 0), scene.vertex(tri, 1), scene.vertex(tri, 2)};
    }
  }
  return build_over_boxes(triangles, triangle_box, callbacks, options, scene.source);
}

BinaryBvh build_binary_bvh(std::span<const Aabb> boxes, const BuildOptions& options, const std::string& source) {
  if (options.quality != BuildQuality::Low) {
    const auto reference = [&](size_t i) { return std::pair{boxes[i], static_cast<uint32_t>(i)}; };
    return binned_over_boxes(boxes.size(), reference, options);
  }
  std::vector<uint32_t> ids(boxes.size());
  std::iota(ids.begin(), ids.end(), 0u);
  Callbacks callbacks;  // no corners: boxes are never split
  return build_over_boxes(ids, [boxes](uint32_t i) { return boxes[i]; }, callbacks, options, source);
}

}  // namespace hwbvh::bvh_build
