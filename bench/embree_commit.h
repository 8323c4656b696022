#pragma once
// Embree's own acceleration structure over a Scene's triangles, committed as an Embree user would: what the build
// benchmarks time hwbvh's pipeline against, on the same triangles in the same process.
#include <embree3/rtcore.h>

#include <cstdint>
#include <cstring>

#include "hwbvh/scene/scene.h"

namespace hwbvh::bench {

/// Builds and commits an Embree scene of all of `scene`'s triangles at `quality` on `device`, then releases it:
/// the timing is the point.
inline void embree_commit(RTCDevice device, const Scene& scene, RTCBuildQuality quality) {
  RTCScene rs = rtcNewScene(device);
  rtcSetSceneBuildQuality(rs, quality);
  RTCGeometry g = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
  rtcSetGeometryBuildQuality(g, quality);
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                        3 * sizeof(float), scene.positions.size()));
  std::memcpy(v, scene.positions.data(), scene.positions.size() * 3 * sizeof(float));
  auto* t = static_cast<uint32_t*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                           3 * sizeof(uint32_t), scene.triangles.size()));
  for (std::size_t i = 0; i < scene.triangles.size(); ++i)
    for (int k = 0; k < 3; ++k) t[3 * i + k] = scene.triangles[i].v[k];
  rtcCommitGeometry(g);
  rtcAttachGeometry(rs, g);
  rtcReleaseGeometry(g);
  rtcCommitScene(rs);
  rtcReleaseScene(rs);
}

}  // namespace hwbvh::bench
