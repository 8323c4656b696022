#pragma once
// Embree's own acceleration structure over triangles, committed as an Embree user would: what the build benchmarks
// time hwbvh's pipeline against, and what bench_emulate traces, on the same triangles in the same process.
#include <embree3/rtcore.h>

#include <cstdint>
#include <cstring>
#include <span>

#include "hwbvh/scene/scene.h"

namespace hwbvh::bench {

/// Adds triangles (anything with vertex indices `v[3]` into `positions`) to `scene` as one committed Embree triangle
/// geometry built at `quality`.
template <class Tri>
void attach_triangles(RTCDevice device, RTCScene scene, std::span<const Vec3> positions,
                      std::span<const Tri> triangles, RTCBuildQuality quality) {
  RTCGeometry g = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
  rtcSetGeometryBuildQuality(g, quality);
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                        3 * sizeof(float), positions.size()));
  std::memcpy(v, positions.data(), positions.size() * 3 * sizeof(float));
  auto* t = static_cast<uint32_t*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                           3 * sizeof(uint32_t), triangles.size()));
  for (std::size_t i = 0; i < triangles.size(); ++i)
    for (int k = 0; k < 3; ++k) t[3 * i + k] = triangles[i].v[k];
  rtcCommitGeometry(g);
  rtcAttachGeometry(scene, g);
  rtcReleaseGeometry(g);
}

/// Builds and commits an Embree scene of all of `scene`'s triangles at `quality` on `device`, then releases it:
/// the timing is the point.
inline void embree_commit(RTCDevice device, const Scene& scene, RTCBuildQuality quality) {
  RTCScene rs = rtcNewScene(device);
  rtcSetSceneBuildQuality(rs, quality);
  attach_triangles(device, rs, std::span<const Vec3>(scene.positions), std::span<const Triangle>(scene.triangles),
                   quality);
  rtcCommitScene(rs);
  rtcReleaseScene(rs);
}

}  // namespace hwbvh::bench
