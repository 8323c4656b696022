#pragma once
// What the emulator fuzz targets share (fuzz_emu, fuzz_instanced): rays around a blob's bounds and trace options, all
// drawn from the input, and the checks every traced ray must pass.
#include <algorithm>
#include <cmath>
#include <vector>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/wavefront.h"

namespace hwbvh::fuzz {

using namespace hwbvh::emu;

inline constexpr std::size_t kRays = 40;  // one full wave and a partial one

// A small deterministic generator (64-bit LCG, high bits out): the same input always traces the same rays.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  uint32_t next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state_ >> 33);
  }
  float unit() { return static_cast<float>(next() & 0xFFFFFF) / 16777216.0f; }  // [0, 1)
  Vec3 signed_vec() { return Vec3{unit(), unit(), unit()} * 2.0f - 1.0f; }

 private:
  uint64_t state_;
};

inline float finite_or(float v, float fallback) { return std::isfinite(v) ? v : fallback; }

// Rays from outside the bounds through them, from inside outwards, and a few with tmin > 0 or a finite tmax.
inline std::vector<Ray> make_rays(const Aabb& bounds, Lcg& rng) {
  Vec3 center{0.0f}, half{1.0f};
  for (int a = 0; a < 3; ++a) {
    const float lo = finite_or(bounds.min[a], -1.0f), hi = finite_or(bounds.max[a], 1.0f);
    center[a] = finite_or(0.5f * lo + 0.5f * hi, 0.0f);
    half[a] = finite_or(std::max(0.5f * hi - 0.5f * lo, 1e-3f), 1.0f);
  }
  std::vector<Ray> rays(kRays);
  for (std::size_t i = 0; i < kRays; ++i) {
    Vec3 dir = rng.signed_vec();
    if (dir == Vec3{0.0f}) dir = Vec3{0.0f, 0.0f, 1.0f};
    Ray& r = rays[i];
    if (i % 2 == 0) {
      r.origin = center - 2.0f * half * dir;
      r.direction = dir;
    } else {
      r.origin = center + half * rng.signed_vec();
      r.direction = dir;
    }
    if (i % 7 == 3) r.tmin = rng.unit();
    if (i % 5 == 4) r.tmax = r.tmin + 4.0f * rng.unit() * std::max({half.x, half.y, half.z});
  }
  return rays;
}

inline TraceOptions make_options(Lcg& rng) {
  TraceOptions o;
  const uint32_t bits = rng.next();
  o.stack.size = 2u << (bits & 3);  // 2, 4, 8, 16: small rings overflow and walk back
  o.intersect.heuristic = static_cast<SortHeuristic>((bits >> 2) & 3);
  o.intersect.box_sort = (bits & 16) == 0;
  o.intersect.wide_sort = (bits & 32) == 0;
  o.intersect.triangle_test = (bits & 64) == 0 ? TriangleTest::Watertight : TriangleTest::Gpurt;
  o.any_hit = (bits & 128) != 0;
  o.flags = PointerFlags::from_bits(bits >> 8 & 0x3FF);
  o.record_node_sequence = (bits & (1u << 18)) != 0;
  o.step_limit = 32 + (rng.next() % 480);
  return o;
}

inline void check(const TraceOutput& out, const TraceOptions& options) {
  fuzz_check(out.rays.size() == kRays, "one result per ray");
  fuzz_check(out.total_waves().lanes == kRays, "waves cover every ray");
  for (const RayResult& r : out.rays) {
    fuzz_check(r.counters.steps <= options.step_limit, "no ray runs past the step limit");
    fuzz_check(r.counters.step_limit_hits <= 1, "the step limit is hit at most once");
    fuzz_check(r.fault == NodeFault::None || r.fault_node != rdna4::kInvalidNode, "a fault names its node");
  }
}

/// Reads the (resealed) input as a blob and traces two waves of rays through it with options drawn from it, then
/// `more(bvh, rays, options, output)` for the target's own checks. Inputs the reader refuses end quietly.
template <class More>
void trace_blob(std::span<const std::byte> bytes, More&& more) {
  blob::Blob b;
  try {
    b = blob::parse(bytes, "fuzz.hwbvh");
  } catch (const Error&) {
    return;
  }
  Lcg rng(blob::checksum(bytes));
  const TraceOptions options = make_options(rng);
  try {
    const LoadedBvh bvh = load_bvh(b, "fuzz.hwbvh");
    const std::vector<Ray> rays = make_rays(bvh.bounds, rng);
    const uint32_t waves[] = {0, 32};
    const TraceOutput out = bvh.trace(rays, waves, options, Executor(1));
    check(out, options);
    more(bvh, rays, options, out);
  } catch (const Error&) {
  }
}

}  // namespace hwbvh::fuzz
