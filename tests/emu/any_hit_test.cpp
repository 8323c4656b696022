// Any-hit emulation on alpha-tested geometry (any_hit.h): for every target, camera and shadow rays on the alpha-card
// scene give identical hits with STOC on and off, every accepted hit passes the alpha test, the hits agree with
// Embree running the same alpha test in its filter function, and STOC only moves work from the any-hit shader to
// the STOC counters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixtures/paths.h"
#include "hwbvh/emu/any_hit.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/camera.h"
#include "hwbvh/scene/ray_gen.h"

namespace hwbvh::emu {
namespace {

struct Variant {
  const char* name;
  blob::Target target;
  uint32_t stoc_level;  ///< xe3 leaves or rtip31 sideband
  xe3::SubTriangleOrder order = xe3::SubTriangleOrder::Bird;
};

const Variant kVariants[] = {
    {"rtip31-sideband3", blob::Target::Rtip31, 3},
    {"rtip31-sideband1-row", blob::Target::Rtip31, 1, xe3::SubTriangleOrder::Row},
    {"rtip31-no-sideband", blob::Target::Rtip31, 0},
    {"xe3-stoc1", blob::Target::Xe3, 1},
    {"xe3-stoc3", blob::Target::Xe3, 3},
    {"xe3-stoc3-row", blob::Target::Xe3, 3, xe3::SubTriangleOrder::Row},
    {"rtip20", blob::Target::Rtip20, 0},
};

LoadedBvh load(const std::string& scene_name, const Variant& v,
               bvh_build::BuildQuality quality = bvh_build::BuildQuality::Medium) {
  const Scene scene = load_obj(test::project_scene(scene_name));
  pipeline::BuildBlobOptions o;
  o.build.quality = quality;
  o.target = v.target;
  o.xe3_stoc_level = v.target == blob::Target::Xe3 ? v.stoc_level : 1;
  o.rtip31_stoc_level = v.target == blob::Target::Rtip31 ? v.stoc_level : 0;
  o.stoc_order = v.order;
  o.encode.threads = 1;
  return load_bvh(pipeline::build_blob(scene, o).blob, scene_name);
}

struct Rays {
  RayBatch camera;
  RayBatch shadow;
};

// 64 x 48 camera rays and shadow rays from their hits; the hits come from an Embree oracle with the alpha filter so
// that every variant traces the same rays.
Rays make_rays(const LoadedBvh& bvh, const Oracle& oracle) {
  Rays r;
  r.camera = primary_rays(auto_frame(bvh.bounds, 64.0f / 48.0f), 64, 48);
  std::vector<SurfaceHit> hits(r.camera.rays.size());
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const Ray& ray = r.camera.rays[i];
    const OracleHit h = oracle.trace_closest(ray);
    if (!h.hit) continue;
    hits[i] = {ray.origin + ray.direction * h.t, h.normal, true};
  }
  r.shadow = shadow_rays(r.camera, hits, default_light(bvh.bounds));
  return r;
}

void expect_same_hits(const std::vector<RayResult>& a, const std::vector<RayResult>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].hit, b[i].hit) << what << " ray " << i;
    if (!a[i].hit) continue;
    ASSERT_EQ(a[i].t, b[i].t) << what << " ray " << i;
    ASSERT_EQ(a[i].geometry_id, b[i].geometry_id) << what << " ray " << i;
    ASSERT_EQ(a[i].primitive_id, b[i].primitive_id) << what << " ray " << i;
    ASSERT_EQ(a[i].barycentrics, b[i].barycentrics) << what << " ray " << i;
  }
}

// Traces `batch` with `base` and with `changed` (options that must not change any hit) and checks the hits agree.
std::pair<TraceOutput, TraceOutput> trace_with_same_hits(const LoadedBvh& bvh, const RayBatch& batch,
                                                         const TraceOptions& base, const TraceOptions& changed,
                                                         const std::string& what) {
  std::pair<TraceOutput, TraceOutput> out{bvh.trace(batch.rays, batch.wave_begin, base, Executor(1)),
                                          bvh.trace(batch.rays, batch.wave_begin, changed, Executor(1))};
  expect_same_hits(out.first.rays, out.second.rays, what);
  return out;
}

class AnyHitOnAlphaCards : public ::testing::TestWithParam<Variant> {};

TEST_P(AnyHitOnAlphaCards, StocChangesOnlyWhoDecidesAndHitsMatchTheGroundTruth) {
  const Variant& v = GetParam();
  const LoadedBvh bvh = load("alpha-cards.obj", v);
  ASSERT_TRUE(bvh.alpha_test.has_value());
  ASSERT_TRUE(bvh.alpha_test->any_tested());
  const std::optional<AnyHitShader> shader = AnyHitShader::of(bvh);
  ASSERT_TRUE(shader.has_value());
  const Oracle oracle(bvh.geometry, bvh.file, 1, &*bvh.alpha_test);
  const Rays rays = make_rays(bvh, oracle);
  ASSERT_GT(rays.shadow.rays.size(), 100u);

  for (const bool shadow : {false, true}) {
    const RayBatch& batch = shadow ? rays.shadow : rays.camera;
    const std::string what = std::string(v.name) + (shadow ? " shadow" : " camera");
    TraceOptions on = with_shader({}, shader);
    on.any_hit = shadow;
    TraceOptions off = on;
    off.stoc = false;
    const auto [a, b] = trace_with_same_hits(bvh, batch, on, off, what);

    AgreementStats agreement;
    for (std::size_t i = 0; i < a.rays.size(); ++i) {
      const RayResult& r = a.rays[i];
      const RayCounters& c = r.counters;
      const RayCounters& d = b.rays[i].counters;
      // The same candidates in the same order: identical traversal, only the deciding party differs.
      ASSERT_EQ(c.steps, d.steps) << what << " ray " << i;
      ASSERT_EQ(c.any_hit_invocations + c.stoc_skipped_transparent + c.stoc_accepted_opaque, d.any_hit_invocations)
          << what << " ray " << i;
      ASSERT_EQ(d.stoc_skipped_transparent + d.stoc_accepted_opaque, 0u);
      if (r.hit) {
        ASSERT_TRUE(shader->passes(r.geometry_id, r.primitive_id, r.barycentrics)) << what << " ray " << i;
      }
      const Ray& ray = batch.rays[i];
      if (shadow) {
        agreement.add(r.hit, oracle.occluded(ray));
      } else {
        agreement.add(OracleHit{r.hit, r.t, r.geometry_id, r.primitive_id}, oracle.trace_closest(ray));
      }
    }
    EXPECT_EQ(agreement.disagreeing(), 0u) << what;

    const RayCounters ta = a.total_counters(), tb = b.total_counters();
    EXPECT_GT(tb.any_hit_invocations, 0u) << what;
    if (v.stoc_level > 0) {
      EXPECT_LT(ta.any_hit_invocations, tb.any_hit_invocations) << what;
      EXPECT_GT(ta.stoc_skipped_transparent + ta.stoc_accepted_opaque, 0u) << what;
    } else {
      EXPECT_EQ(ta, tb) << what;  // no STOC data: the switch changes nothing
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, AnyHitOnAlphaCards, ::testing::ValuesIn(kVariants),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(AnyHit, WithoutAShaderNonOpaqueCandidatesAreAcceptedAndNothingIsCounted) {
  const LoadedBvh bvh = load("alpha-cards.obj", kVariants[0]);
  const RayBatch batch = primary_rays(auto_frame(bvh.bounds, 1.0f), 32, 32);
  const TraceOutput plain = bvh.trace(batch.rays, batch.wave_begin, TraceOptions{}, Executor(1));
  const RayCounters t = plain.total_counters();
  EXPECT_EQ(t.any_hit_invocations + t.stoc_skipped_transparent + t.stoc_accepted_opaque, 0u);
  // With the shader some camera rays pass through transparent texels and hit something farther or nothing.
  const std::optional<AnyHitShader> shader = AnyHitShader::of(bvh);
  const TraceOutput alpha = bvh.trace(batch.rays, batch.wave_begin, with_shader({}, shader), Executor(1));
  std::size_t differing = 0;
  for (std::size_t i = 0; i < batch.rays.size(); ++i)
    differing += plain.rays[i].hit != alpha.rays[i].hit || plain.rays[i].t != alpha.rays[i].t;
  EXPECT_GT(differing, 0u);
}

TEST(AnyHit, OpaqueSceneHasNoShaderAndTheResultsAreUnchanged) {
  const LoadedBvh bvh = load("cornell-box.obj", kVariants[0]);
  EXPECT_FALSE(bvh.alpha_test.has_value());
  EXPECT_FALSE(AnyHitShader::of(bvh).has_value());
}

TEST(AnyHit, ResolveFollowsTheContract) {
  const LoadedBvh bvh = load("alpha-cards.obj", kVariants[0]);
  const std::optional<AnyHitShader> shader = AnyHitShader::of(bvh);
  TraceOptions o = with_shader({}, shader);
  RayCounters c;
  AnyHitRecord record;
  EXPECT_FALSE(resolve_non_opaque(o, 0, 0, {0.25f, 0.25f}, xe3::SubTriangleState::Transparent, c, record));
  EXPECT_TRUE(resolve_non_opaque(o, 0, 0, {0.25f, 0.25f}, xe3::SubTriangleState::Opaque, c, record));
  EXPECT_EQ(c.stoc_skipped_transparent, 1u);
  EXPECT_EQ(c.stoc_accepted_opaque, 1u);
  EXPECT_EQ(c.any_hit_invocations, 0u);
  (void)resolve_non_opaque(o, 0, 0, {0.25f, 0.25f}, xe3::SubTriangleState::Unknown, c, record);
  (void)resolve_non_opaque(o, 0, 0, {0.25f, 0.25f}, std::nullopt, c, record);
  EXPECT_EQ(c.any_hit_invocations, 2u);
  o.stoc = false;  // STOC off: the state is not consulted
  (void)resolve_non_opaque(o, 0, 0, {0.25f, 0.25f}, xe3::SubTriangleState::Transparent, c, record);
  EXPECT_EQ(c.any_hit_invocations, 3u);
  EXPECT_EQ(c.stoc_skipped_transparent, 1u);
  // Unknown ids pass (the shader has no data for them).
  EXPECT_TRUE(shader->passes(0xFFFFFFu, 0xFFFFFFu, {0.25f, 0.25f}));
}

// NO_DUPLICATE_ANYHIT_INVOCATION: the shader runs once per primitive and ray; a repeated candidate on the same
// primitive takes the recorded outcome, also a rejection.
TEST(AnyHit, NoDuplicateInvocationRunsTheShaderOncePerPrimitive) {
  const LoadedBvh bvh = load("alpha-cards.obj", kVariants[2]);
  const std::optional<AnyHitShader> shader = AnyHitShader::of(bvh);
  TraceOptions o = with_shader({}, shader);
  o.no_duplicate_any_hit = true;
  // A point of triangle (0, 0) where its alpha test fails, and one where it passes (the cards have both).
  Vec2 fails{-1.0f}, passes{-1.0f};
  for (int i = 0; i < 64 && (fails.x < 0 || passes.x < 0); ++i) {
    const Vec2 b{static_cast<float>(i % 8) / 8.0f * 0.9f, static_cast<float>(i / 8) / 8.0f * (1.0f - (i % 8) / 8.0f * 0.9f)};
    (shader->passes(0, 0, b) ? passes : fails) = b;
  }
  ASSERT_GE(fails.x, 0.0f);
  RayCounters c;
  AnyHitRecord record;
  EXPECT_FALSE(resolve_non_opaque(o, 0, 0, fails, std::nullopt, c, record));
  EXPECT_FALSE(resolve_non_opaque(o, 0, 0, fails, std::nullopt, c, record));
  EXPECT_EQ(c.any_hit_invocations, 1u);
  (void)resolve_non_opaque(o, 0, 1, fails, std::nullopt, c, record);  // another primitive: runs
  EXPECT_EQ(c.any_hit_invocations, 2u);
  o.no_duplicate_any_hit = false;  // without the flag every candidate runs the shader
  (void)resolve_non_opaque(o, 0, 0, fails, std::nullopt, c, record);
  EXPECT_EQ(c.any_hit_invocations, 3u);
}

// With spatial splits (high quality) one triangle sits in several leaves and a ray can meet it twice. The flag
// removes exactly those repeated invocations: the same hits on every target, fewer any-hit invocations where
// the splits duplicated any.
TEST(AnyHit, NoDuplicateInvocationOnSpatialSplitsKeepsTheHits) {
  uint64_t saved = 0;
  for (const Variant& v : {kVariants[2], kVariants[3], kVariants[6]}) {
    const LoadedBvh bvh = load("alpha-cards.obj", v, bvh_build::BuildQuality::High);
    const std::optional<AnyHitShader> shader = AnyHitShader::of(bvh);
    const RayBatch batch = random_rays(bvh.bounds, 4096, 7);
    TraceOptions every = with_shader({}, shader);
    every.stoc = false;
    TraceOptions once = every;
    once.no_duplicate_any_hit = true;
    const auto [a, b] = trace_with_same_hits(bvh, batch, every, once, v.name);
    for (std::size_t i = 0; i < a.rays.size(); ++i)
      ASSERT_LE(b.rays[i].counters.any_hit_invocations, a.rays[i].counters.any_hit_invocations) << v.name << " " << i;
    saved += a.total_counters().any_hit_invocations - b.total_counters().any_hit_invocations;
  }
  EXPECT_GT(saved, 0u);
}

}  // namespace
}  // namespace hwbvh::emu
