#pragma once
// Builds blobs of the project's scenes in memory and loads them for tracing.
#include <filesystem>
#include <string>

#include "fixtures/paths.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::test {

inline emu::LoadedBvh load_scene_bvh(const std::filesystem::path& obj, bool obb = true,
                                     bvh_build::BuildQuality quality = bvh_build::BuildQuality::Medium) {
  pipeline::BuildBlobOptions options;
  options.build.quality = quality;
  options.encode.obb = obb;
  const Scene scene = load_obj(obj);
  return emu::load_bvh(pipeline::build_blob(scene, options).blob, obj.filename().string());
}

/// Small, fast stats options: a 64x48 image, 2 AO samples, 1024 random rays.
inline stats::StatsOptions small_stats_options() {
  stats::StatsOptions o;
  o.kinds = {stats::RayKind::Primary, stats::RayKind::AmbientOcclusion, stats::RayKind::Shadow,
             stats::RayKind::Reflection, stats::RayKind::Random};
  o.width = 64;
  o.height = 48;
  o.ao_samples = 2;
  o.random_rays = 1024;
  return o;
}

}  // namespace hwbvh::test
