// Exact counter baselines: the emulator is deterministic, so the summed counters of fixed ray sets on the
// project's scenes are checked exactly, at 1 and 2 threads. A change here must be explained in the commit that
// makes it (a new encoding, a different traversal rule); the failure message prints the new row to paste.
#include <gtest/gtest.h>

#include <array>

#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

struct Baseline {
  const char* scene;
  const char* kind;
  // steps, box-node steps, primitive-node steps, box tests, triangle tests, OBB steps, pushes, pops, lost, walk-back,
  // any-hit invocations, STOC skipped transparent, STOC accepted opaque
  std::array<uint64_t, 13> totals;
};

// Produced by this test's failure output on the current encoder and emulator (medium quality, OBB on, 64x48
// primary rays, 2 AO samples, 1024 random rays, seed 1, 16-entry stack; alpha-cards with its any-hit shader and the
// default level-3 STOC sideband).
constexpr Baseline kBaselines[] = {
#include "baselines.inc"
};

std::array<uint64_t, 13> totals_of(const emu::RayCounters& t) {
  return {t.steps, t.box_node_steps, t.primitive_node_steps, t.box_tests, t.triangle_tests, t.obb_steps,
          t.stack_pushes, t.stack_pops, t.stack_lost, t.walk_back_steps, t.any_hit_invocations,
          t.stoc_skipped_transparent, t.stoc_accepted_opaque};
}

std::string row(const char* scene, const char* kind, const std::array<uint64_t, 13>& v) {
  std::string s = std::string("    {\"") + scene + "\", \"" + kind + "\", {";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}},\n";
}

TEST(Baselines, CountersMatchExactlyAtOneAndTwoThreads) {
  std::string actual;
  bool all_match = true;
  for (const char* scene : {"cornell-box.obj", "rotated-objects.obj", "alpha-cards.obj", "overflow-fan.obj"}) {
    const auto bvh = test::load_scene_bvh(test::project_scene(scene));
    auto options = test::small_stats_options();
    options.oracle = false;
    for (int threads : {1, 2}) {
      options.threads = threads;
      const StatsReport report = run_stats(bvh, options);
      for (const KindStats& k : report.kinds) {
        const auto totals = totals_of(k.totals);
        if (threads == 1) actual += row(scene, ray_kind_name(k.kind), totals);
        const Baseline* expected = nullptr;
        for (const Baseline& b : kBaselines)
          if (std::string(b.scene) == scene && std::string(b.kind) == ray_kind_name(k.kind)) expected = &b;
        all_match = all_match && expected && expected->totals == totals;
      }
    }
  }
  EXPECT_TRUE(all_match) << "counter baselines changed; if intended, replace tests/stats/baselines.inc with:\n"
                         << actual;
}

}  // namespace
}  // namespace hwbvh::stats
