#pragma once
// The binary BVH of a build, over triangles or over plain boxes (a top-level structure's instances): at medium
// quality (and over boxes at high quality) by hwbvh's binned builder (binned_builder.h); otherwise by Embree 3's
// rtcBuildBVH, Morton at low quality and SAH with spatial splits at high quality (splitting references by exact
// triangle clipping, see spatial_split.h), through this adapter.
#include <cstdint>
#include <span>
#include <string>

#include "hwbvh/bvh_build/binary_bvh.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::bvh_build {

/// Builds a binary BVH over `triangles` (indices into scene.triangles; all non-degenerate, at least one) with
/// options.quality, options.threads and SAH costs derived from the step costs. Every leaf holds exactly one
/// reference; nodes are numbered in depth-first preorder, so the result is identical at any thread count
/// (high quality runs Embree single-threaded: its spatial-split builder is not deterministic in parallel).
/// Throws hwbvh::Error (Runtime) if Embree fails.
BinaryBvh build_binary_bvh(const Scene& scene, std::span<const uint32_t> triangles, const BuildOptions& options);

/// The same over `boxes` (all non-empty and finite, at least one): each reference's `triangle` is its box's index.
/// No spatial splits (a box has no shape to clip): high quality is the binned builder, as medium. Errors name
/// `source`.
BinaryBvh build_binary_bvh(std::span<const Aabb> boxes, const BuildOptions& options, const std::string& source);

}  // namespace hwbvh::bvh_build
