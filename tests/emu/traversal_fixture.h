#pragma once
// Checks shared by the tests of every traversal loop (TraceRay3_1, TraceRay2_0 / BVH4x2, Xe3): rays along +x, the
// hit on the nearer wall of the hand-built two-wall trees, mixed random rays, agreement with the Embree oracle and
// identical results across thread counts. Format-neutral: the hand-built nodes stay in rtip31/nodes.h, rtip20/nodes.h.
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <span>
#include <vector>

#include <glm/geometric.hpp>

#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu::test {

/// A ray along +x.
inline Ray ray_x(Vec3 origin, float tmin = 0.0f, float tmax = 100.0f) {
  return Ray{origin, {1.0f, 0.0f, 0.0f}, tmin, tmax};
}

/// The hit of a ray along +x from the origin on a two-wall tree: the wall at x = 2 (primitive 0, geometry 0), whose
/// normal points along +x like the ray. Wrap in ASSERT_NO_FATAL_FAILURE: a fault ends the test.
inline void expect_nearer_wall_hit(const RayResult& r) {
  ASSERT_EQ(r.fault, NodeFault::None);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.t, 2.0f);
  EXPECT_EQ(r.primitive_id, 0u);
  EXPECT_EQ(r.geometry_id, 0u);
  EXPECT_EQ(r.barycentrics, Vec2(0.25f, 0.25f));
  EXPECT_FALSE(r.front_face);
}

/// Rays from outside through `bounds`, plus rays from inside with short extents and tmin.
inline std::vector<Ray> mixed_rays(const Aabb& bounds, uint32_t count, uint32_t seed) {
  std::vector<Ray> rays = random_rays(bounds, count / 2, seed).rays;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> x(bounds.min.x, bounds.max.x), y(bounds.min.y, bounds.max.y),
      z(bounds.min.z, bounds.max.z);
  const float diagonal = glm::length(bounds.extent());
  for (auto i = static_cast<uint32_t>(rays.size()); i < count; ++i) {
    const Vec3 o{x(rng), y(rng), z(rng)}, target{x(rng), y(rng), z(rng)};
    rays.push_back(Ray{o, target - o, i % 3 == 0 ? 0.05f : 0.0f, i % 5 == 0 ? 0.3f : 2.0f * diagonal});
  }
  return rays;
}

/// At least 99.99% of `rays` agree with Embree on `scene`: their closest hits (`closest`, traced without any-hit)
/// and their occlusion (`shadow`, the same rays traced as shadow rays). No ray may fault or hit the step limit.
/// Disagreements are listed, not failed on one by one: grazing an edge, a non-watertight triangle test and
/// Embree's robust test may decide differently.
inline void expect_oracle_agreement(const Scene& scene, std::span<const Ray> rays, const TraceOutput& closest,
                                    const TraceOutput& shadow) {
  const blob::GeometrySection geometry = blob::decode_geometry(blob::encode_geometry(scene), scene.source);
  const Oracle oracle(geometry, scene.source, 1);
  AgreementStats closest_stats, occlusion_stats;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const RayResult& r = closest.rays[i];
    ASSERT_EQ(r.fault, NodeFault::None) << "ray " << i;
    ASSERT_EQ(r.counters.step_limit_hits, 0u) << "ray " << i;
    const Disagreement d =
        closest_stats.add(OracleHit{r.hit, r.t, r.geometry_id, r.primitive_id}, oracle.trace_closest(rays[i]));
    if (d != Disagreement::None) {
      std::cout << scene.source << " ray " << i << ": " << disagreement_name(d) << " (emulator t " << r.t
                << ", stack entries lost " << r.counters.stack_lost << ")\n";
    }
    occlusion_stats.add(shadow.rays[i].hit, oracle.occluded(rays[i]));
  }
  EXPECT_GE(closest_stats.agreeing() * 10000, closest_stats.rays() * 9999)
      << closest_stats.disagreeing() << " of " << rays.size();
  EXPECT_GE(occlusion_stats.agreeing() * 10000, occlusion_stats.rays() * 9999)
      << occlusion_stats.disagreeing() << " of " << rays.size();
}

/// Two traces of the same rays (at different thread counts, node sequences recorded) agree ray by ray, wave by wave
/// and node by node; each ray's sequence has one node per step, and the waves account for every ray and step.
inline void expect_identical_runs(const TraceOutput& a, const TraceOutput& b) {
  EXPECT_TRUE(a.rays == b.rays);
  EXPECT_TRUE(a.waves == b.waves);
  EXPECT_TRUE(a.node_sequences == b.node_sequences);
  for (std::size_t i = 0; i < a.rays.size(); ++i) EXPECT_EQ(a.node_sequences[i].size(), a.rays[i].counters.steps);
  const WaveStats w = a.total_waves();
  EXPECT_EQ(w.lanes, a.rays.size());
  EXPECT_EQ(w.active_lane_steps, a.total_counters().steps);
}

}  // namespace hwbvh::emu::test
