// Two-level Xe3 blobs end to end (docs/xe3-format.md, "Top level"): scenes/instanced-garden.gltf built with
// InstanceLeafs finds the same hits as its --flatten build, primary and shadow rays; the same bytes and hits at any
// thread count; hostile start nodes fault the ray.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <optional>

#include "emu/traversal_fixture.h"
#include "fixtures/paths.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/xe3/intersect.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/tlas.h"
#include "hwbvh/formats/xe3/tree_check.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/ray_gen.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::emu {
namespace {

blob::Blob build_blob(const AnyScene& scene, int threads = 0) {
  pipeline::BuildBlobOptions o;
  o.target = blob::Target::Xe3;
  o.build.threads = o.encode.threads = threads;
  return std::holds_alternative<Scene>(scene) ? pipeline::build_blob(std::get<Scene>(scene), o).blob
                                              : pipeline::build_instanced_blob(std::get<InstancedScene>(scene), o).blob;
}

LoadedBvh build(const AnyScene& scene) { return load_bvh(build_blob(scene), "garden"); }

// Node sequences are recorded when tracing on several threads (to compare them with a one-thread run).
TraceOutput trace(const LoadedBvh& bvh, const RayBatch& batch, bool first_hit, int threads = 1) {
  const std::optional<AnyHitShader> shader = AnyHitShader::of(bvh);
  TraceOptions o;
  o.any_hit = first_hit;
  o.record_node_sequence = threads > 1;
  o.any_hit_shader = shader ? &*shader : nullptr;
  return bvh.trace(batch.rays, batch.wave_begin, o, Executor(threads));
}

class Xe3Garden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto path = hwbvh::test::project_scene("instanced-garden.gltf");
    instanced_ = new InstancedScene(load_gltf_instanced(path));
    flat_scene_ = new Scene(flatten(*instanced_));
    two_level_ = new LoadedBvh(build(*instanced_));
    flat_ = new LoadedBvh(build(*flat_scene_));
  }
  static void TearDownTestSuite() {
    delete flat_;
    delete two_level_;
    delete flat_scene_;
    delete instanced_;
  }
  // The flat build's geometry id of a two-level hit: instance k's geometries follow each other in the flat scene.
  static uint32_t flat_geometry(const RayResult& r) {
    return flat_scene_->instances.at(r.instance_index).first_geometry + r.geometry_id;
  }
  // An explicit camera: from above the front-right of the scene's world box towards its centre.
  static RayBatch primary() {
    const Aabb b = flat_->bounds;
    const Vec3 centre = 0.5f * (b.min + b.max), size = b.max - b.min;
    return primary_rays(Camera{centre + Vec3{0.6f, 0.8f, 1.2f} * std::max({size.x, size.y, size.z}), centre}, 64, 64);
  }
  // The world-space hit of `ray` on the flat scene's triangle (geometry, primitive).
  static Xe3TriangleHit flat_hit(const Ray& ray, uint32_t geometry, uint32_t primitive) {
    const uint32_t index = flat_->triangle_index(geometry, primitive);
    if (index == kNoIndex) return {};
    const auto& tri = flat_->geometry.triangles[index];
    const auto& p = flat_->geometry.positions;
    const PreparedRay prepared(RayOperands{ray.origin, ray.direction});
    return intersect_triangle({p[tri.v[0]], p[tri.v[1]], p[tri.v[2]]}, prepared);
  }
  static inline InstancedScene* instanced_ = nullptr;
  static inline Scene* flat_scene_ = nullptr;
  static inline LoadedBvh* two_level_ = nullptr;
  static inline LoadedBvh* flat_ = nullptr;
};

TEST_F(Xe3Garden, TopLevelAndBlasesPassTheChecker) {
  ASSERT_TRUE(two_level_->two_level());
  EXPECT_EQ(two_level_->instance_count(), instanced_->instances.size());
  const std::span<const uint32_t> nodes(two_level_->nodes);
  const auto level = [&](uint64_t address, uint64_t bytes) {
    return xe3::check_encoded_tree(xe3::unpadded_level(nodes.subspan(address / 4, bytes / 4)), nullptr);
  };
  const xe3::TreeCheckResult top = level(0, two_level_->levels->top_bytes);
  EXPECT_TRUE(top.ok()) << top.problems.front();
  EXPECT_EQ(top.instance_leaves, instanced_->instances.size());
  for (const blob::BlasRange& b : two_level_->levels->blases) {
    const xe3::TreeCheckResult blas = level(b.address, b.bytes);
    EXPECT_TRUE(blas.ok()) << blas.problems.front();
  }
}

// Every primary ray: the same hit or miss, t within 1e-5 relative, and the same triangle (primitive mapped through
// instance and geometry ids) with the same facing, except where two triangles tie at the hit's t (a ray through a
// shared edge): there each build may keep either, so the two-level build's triangle must be hit at the same t in
// world space. Every shadow ray: the same occlusion.
TEST_F(Xe3Garden, SameHitsAsTheFlattenedBuildOnPrimaryAndShadowRays) {
  ASSERT_EQ(flat_scene_->instances.size(), instanced_->instances.size());
  const RayBatch rays = primary();
  const TraceOutput flat = trace(*flat_, rays, false), two = trace(*two_level_, rays, false);
  std::vector<SurfaceHit> surfaces(rays.rays.size());
  std::size_t hits = 0, ties = 0;
  for (std::size_t i = 0; i < rays.rays.size(); ++i) {
    const RayResult &f = flat.rays[i], &t = two.rays[i];
    ASSERT_EQ(f.hit, t.hit) << "ray " << i;
    if (!f.hit) continue;
    ++hits;
    EXPECT_NEAR(f.t, t.t, 1e-5f * f.t) << "ray " << i;
    surfaces[i] = {rays.rays[i].origin + f.t * rays.rays[i].direction, flat_->hit_normal(f), true};
    if (f.primitive_id == t.primitive_id && f.geometry_id == flat_geometry(t)) {
      EXPECT_EQ(f.front_face, t.front_face) << "ray " << i;  // flatten swaps mirrored triangles' winding
      continue;
    }
    ++ties;
    const Xe3TriangleHit other = flat_hit(rays.rays[i], flat_geometry(t), t.primitive_id);
    EXPECT_TRUE(other.hit) << "ray " << i;
    EXPECT_NEAR(other.t, f.t, 1e-5f * f.t) << "ray " << i;
  }
  EXPECT_GT(hits, rays.rays.size() / 4);
  EXPECT_LE(ties * 100, hits);  // at most 1 %: 4 of 1,256 hits when written

  const RayBatch shadow = shadow_rays(rays, surfaces, default_light(flat_->bounds));
  const TraceOutput flat_shadow = trace(*flat_, shadow, true), two_shadow = trace(*two_level_, shadow, true);
  std::size_t occluded = 0;
  for (std::size_t i = 0; i < shadow.rays.size(); ++i) {
    ASSERT_EQ(flat_shadow.rays[i].hit, two_shadow.rays[i].hit) << "shadow ray " << i;
    occluded += flat_shadow.rays[i].hit ? 1 : 0;
  }
  EXPECT_GT(occluded, 0u);
  // The two-level rays took top-level steps and entered instances.
  const RayCounters c = two.total_counters();
  EXPECT_GT(c.tlas_steps, 0u);
  EXPECT_GT(c.instance_transitions, 0u);
  EXPECT_EQ(c.steps, c.tlas_steps + c.blas_steps);
  // The alpha-tested plant's candidates meet the any-hit shader and the QuadLeafs' STOC bits inside its BLAS.
  const RayCounters s = two_shadow.total_counters();
  EXPECT_GT(s.any_hit_invocations + c.any_hit_invocations, 0u);
  EXPECT_GT(s.stoc_skipped_transparent + c.stoc_skipped_transparent, 0u);
}

TEST_F(Xe3Garden, IdenticalAtAnyThreadCount) {
  const auto nodes = [](int threads) {
    return build_blob(*instanced_, threads).require(blob::SectionType::Nodes, "").data;
  };
  EXPECT_EQ(nodes(1), nodes(3));
  // Two threads against three: the waves go to different threads in either run.
  const RayBatch rays = primary();
  test::expect_identical_runs(trace(*two_level_, rays, false, 2), trace(*two_level_, rays, false, 3));
}

// A blob whose first InstanceLeaf (the root's first InstanceLeaf child, or its first internal child's, ...) points
// outside the Nodes section, to itself, or into a BLAS but not at its root: rays aimed at it fault, nothing crashes.
TEST_F(Xe3Garden, HostileStartNodesFaultTheRay) {
  const uint64_t nodes_bytes = uint64_t{two_level_->nodes.size()} * 4;
  const uint64_t blas = two_level_->levels->blases.at(0).address;
  for (const uint64_t start : {nodes_bytes + 128, uint64_t{0}, blas, blas + 128 + 64}) {
    LoadedBvh bvh = build(*instanced_);
    int64_t block = xe3::kRootBlock;
    std::optional<std::pair<int64_t, Aabb>> leaf;  // block and world box
    while (!leaf) {
      const auto node = xe3::decode_internal_node(std::span<const uint32_t, xe3::kBlockDwords>(
          bvh.nodes.data() + block * xe3::kBlockDwords, xe3::kBlockDwords));
      for (uint32_t i = 0; i < xe3::kNodeWidth && !leaf; ++i) {
        if (node.valid[i] && node.child_type(i) == xe3::kNodeTypeInstance) {
          leaf = std::make_pair(node.child_block(block, i), node.child_box[i]);
        }
      }
      block = node.child_block(block, 0);
    }
    const auto [leaf_block, box] = *leaf;
    // Bytes 8..15: startNodePtr; 0 means the leaf's own block.
    const uint64_t to = start == 0 ? uint64_t(leaf_block) * xe3::kBlockBytes : start;
    bvh.nodes[leaf_block * xe3::kBlockDwords + 2] = static_cast<uint32_t>(to);
    bvh.nodes[leaf_block * xe3::kBlockDwords + 3] = static_cast<uint32_t>(to >> 32);
    // From the centre of the leaf's box: its entry distance is the smallest, so it is reached first.
    const RayBatch batch = make_batch({Ray{0.5f * (box.min + box.max), Vec3{0.0f, 1.0f, 0.0f}, 0.0f, 1e30f}});
    const RayResult r = trace(bvh, batch, false).rays.at(0);
    EXPECT_EQ(r.fault, start == nodes_bytes + 128 ? NodeFault::OutOfRange : NodeFault::UnknownBlas) << start;
    EXPECT_EQ(r.fault_node, static_cast<uint32_t>(leaf_block)) << start;
  }
}

}  // namespace
}  // namespace hwbvh::emu
