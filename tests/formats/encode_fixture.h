#pragma once
// What the whole-tree encoder tests of every format share: the build options they vary, and the verdict of the
// format's tree check (formats/tree_check.h) on an encoded scene.
#include <gtest/gtest.h>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/formats/tree_check.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::test {

/// Build options at `quality` on `threads` threads (0: all), before the format adapts them.
inline bvh_build::BuildOptions build_options(bvh_build::BuildQuality quality, int threads) {
  bvh_build::BuildOptions bo;
  bo.quality = quality;
  bo.threads = threads;
  return bo;
}

/// The tree check of `scene`'s encoding found no problem (each one is listed), referenced every non-degenerate
/// triangle exactly once (at least once with `allow_duplicates`: spatial splits), and no degenerate one.
inline void expect_clean_check(const Scene& scene, const formats::TreeCheckSummary& check, bool allow_duplicates) {
  for (const auto& p : check.problems) ADD_FAILURE() << p;
  for (uint32_t t = 0; t < scene.triangles.size(); ++t) {
    const uint32_t refs = check.triangle_references[t];
    if (scene.is_degenerate(t)) {
      EXPECT_EQ(refs, 0u) << "degenerate triangle " << t;
    } else if (allow_duplicates) {
      EXPECT_GE(refs, 1u) << "triangle " << t;
    } else {
      EXPECT_EQ(refs, 1u) << "triangle " << t;
    }
  }
}

}  // namespace hwbvh::test
