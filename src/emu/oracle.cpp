#include "hwbvh/emu/oracle.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <embree3/rtcore.h>

#include "hwbvh/core/error.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/emu/loaded_bvh.h"

namespace hwbvh::emu {
namespace {

// Embree keeps a table indexed by geomID; a corrupt id must not make it allocate gigabytes.
constexpr uint32_t kMaxGeometryId = (1u << 24) - 1;

// Embree asserts that ray origins and directions lie within +-FLT_LARGE (about 1.8e18, its common/math/constants.h),
// and its triangle test forms products of three coordinates, which overflow float past about 2^42. Scenes are
// scaled below kEmbreeSceneReach, so that both hold also for rays from cameras and lights a few scene sizes away.
constexpr float kEmbreeRayReach = 0x1p60f, kEmbreeSceneReach = 0x1p40f;

void fill_ray(RTCRay& r, const Ray& ray, float scale, uint32_t mask) {
  const Vec3 origin = ray.origin * scale;
  if (!(max_abs(origin) <= kEmbreeRayReach) || !(max_abs(ray.direction) <= kEmbreeRayReach)) {
    throw_bad_input("", "a ray (origin " + std::to_string(ray.origin.x) + ", " + std::to_string(ray.origin.y) + ", " +
                            std::to_string(ray.origin.z) + ") lies too far from the scene for the Embree oracle; "
                            "trace it with --no-oracle");
  }
  r.org_x = origin.x;
  r.org_y = origin.y;
  r.org_z = origin.z;
  r.tnear = ray.tmin * scale;
  r.dir_x = ray.direction.x;
  r.dir_y = ray.direction.y;
  r.dir_z = ray.direction.z;
  r.time = 0.0f;
  r.tfar = ray.tmax * scale;
  r.mask = mask;
  r.id = 0;
  r.flags = 0;
}

// The any-hit shader as an Embree filter function, for one geometry: per primitive id its Geometry-section index.
struct AlphaFilter {
  const AlphaTest* alpha = nullptr;
  std::vector<uint32_t> triangles;
};

// Rejects every candidate that fails the alpha test; Embree then continues as traversal does after an ignored hit.
void alpha_filter(const RTCFilterFunctionNArguments* args) {
  const auto* filter = static_cast<const AlphaFilter*>(args->geometryUserPtr);
  for (unsigned i = 0; i < args->N; ++i) {
    if (args->valid[i] != -1) continue;
    const uint32_t tri = filter->triangles[RTCHitN_primID(args->hit, args->N, i)];
    const Vec2 bary{RTCHitN_u(args->hit, args->N, i), RTCHitN_v(args->hit, args->N, i)};
    if (!filter->alpha->passes(tri, bary)) args->valid[i] = 0;
  }
}

}  // namespace

struct Oracle::Impl {
  RTCDevice device = nullptr;
  RTCScene scene = nullptr;  // the scene queried: the only one, or the top level of a two-level BVH
  std::vector<RTCScene> blases;  // two-level: per BLAS, the scene its instances instance
  // Shared with every Embree geometry; one float of padding because Embree reads vertices with 16-byte loads.
  std::vector<float> vertices;
  std::string first_error;  // from Embree's error callback, for the exception message
  // range_scale(scene, kEmbreeSceneReach), exact: Embree sees positions, instance translations, ray origins and t
  // times this, and the same hits and barycentrics (a two-level scene's object and world spaces share it).
  float scale = 1.0f;
  std::optional<AlphaTest> alpha;  // the any-hit shader's data, if any
  std::vector<std::unique_ptr<AlphaFilter>> filters;  // user data of the filtered geometries (stable addresses)

  ~Impl() {
    if (scene) rtcReleaseScene(scene);
    for (RTCScene blas : blases) rtcReleaseScene(blas);
    if (device) rtcReleaseDevice(device);
  }

  void check(const std::string& file, const char* what) const {
    const RTCError code = rtcGetDeviceError(device);
    if (code != RTC_ERROR_NONE || !first_error.empty()) {
      throw Error(ErrorKind::Runtime, file,
                  std::string("Embree failed to ") + what + ": " +
                      (first_error.empty() ? "error code " + std::to_string(static_cast<int>(code)) : first_error));
    }
  }

  RTCScene new_scene() const {
    RTCScene s = rtcNewScene(device);
    rtcSetSceneFlags(s, RTC_SCENE_FLAG_ROBUST);
    rtcSetSceneBuildQuality(s, RTC_BUILD_QUALITY_HIGH);
    return s;
  }

  // One triangle geometry of `scene` with Embree's geomID `id`: triangles `tris` (Geometry-section indices by
  // primitive id), with the alpha filter when one of them is alpha-tested.
  void attach_triangles(RTCScene target, uint32_t id, const std::vector<uint32_t>& tris,
                        const blob::GeometrySection& geometry, const std::string& file) {
    RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    rtcSetSharedGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, vertices.data(), 0,
                               3 * sizeof(float), geometry.positions.size());
    auto* index = static_cast<uint32_t*>(
        rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(uint32_t), tris.size()));
    if (!index) {
      rtcReleaseGeometry(geom);
      check(file, "allocate an index buffer");
      throw Error(ErrorKind::Runtime, file, "Embree failed to allocate an index buffer");
    }
    for (std::size_t p = 0; p < tris.size(); ++p) {
      const auto& tri = geometry.triangles[tris[p]];
      for (int k = 0; k < 3; ++k) index[3 * p + k] = tri.degenerate() ? tri.v[0] : tri.v[k];
    }
    rtcSetGeometryBuildQuality(geom, RTC_BUILD_QUALITY_HIGH);
    if (alpha && std::any_of(tris.begin(), tris.end(), [&](uint32_t t) { return alpha->tested(t); })) {
      filters.push_back(std::make_unique<AlphaFilter>(AlphaFilter{&*alpha, tris}));
      rtcSetGeometryUserData(geom, filters.back().get());
      rtcSetGeometryIntersectFilterFunction(geom, alpha_filter);
      rtcSetGeometryOccludedFilterFunction(geom, alpha_filter);
    }
    rtcCommitGeometry(geom);
    rtcAttachGeometryByID(target, geom, id);
    rtcReleaseGeometry(geom);
  }

  // The top level: per instance node an instance of its BLAS's scene, with geomID = its instance index.
  void attach_instances(const OracleInstances& instances) {
    for (std::size_t n = 0; n < instances.sideband.size(); ++n) {
      const blob::InstanceSideband& record = instances.sideband[n];
      RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_INSTANCE);
      rtcSetGeometryInstancedScene(geom, blases[instances.levels->instances[n].blas]);
      rtcSetGeometryMask(geom, instances.levels->instances[n].mask);
      std::array<float, 12> xfm{};  // row-major 3x4; object and world positions are both scaled by `scale`
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c) xfm[4 * r + c] = record.object_to_world[r][c] * (c == 3 ? scale : 1.0f);
      }
      rtcSetGeometryTransform(geom, 0, RTC_FORMAT_FLOAT3X4_ROW_MAJOR, xfm.data());
      rtcCommitGeometry(geom);
      rtcAttachGeometryByID(scene, geom, record.instance_index);
      rtcReleaseGeometry(geom);
    }
  }
};

namespace {

// The world-space box of a two-level scene: every instance's BLAS box (object space) through its matrix.
Aabb world_bounds(const blob::GeometrySection& geometry, const OracleInstances& instances) {
  std::vector<Aabb> blas_bounds;
  for (const blob::BlasRange& blas : instances.levels->blases) {
    Aabb box;
    for (uint32_t t = blas.first_triangle; t < blas.first_triangle + blas.triangle_count; ++t) {
      for (uint32_t v : geometry.triangles[t].v) box.grow(geometry.positions[v]);
    }
    blas_bounds.push_back(box);
  }
  Aabb world;
  for (std::size_t n = 0; n < instances.sideband.size(); ++n) {
    const Aabb& box = blas_bounds[instances.levels->instances[n].blas];
    if (box.empty()) continue;
    const Mat3x4& m = instances.sideband[n].object_to_world;
    for (const Vec3& p : box.corners()) world.grow(affine_point(m, p));
  }
  return world;
}

// One scene's commit as `units` of a progress count that stands at `base`: Embree reports its build in [0, 1].
struct CommitProgress {
  ProgressCounter* counter;
  uint64_t base;
  uint64_t units;
};

bool commit_progress(void* user, double n) {
  const auto* p = static_cast<const CommitProgress*>(user);
  p->counter->reach(p->base + static_cast<uint64_t>(std::clamp(n, 0.0, 1.0) * static_cast<double>(p->units)));
  return true;
}

void commit_counted(RTCScene scene, ProgressCounter& counter, uint64_t base, uint64_t units) {
  CommitProgress p{&counter, base, units};
  if (counter.active()) rtcSetSceneProgressMonitorFunction(scene, commit_progress, &p);
  rtcCommitScene(scene);
  if (counter.active()) rtcSetSceneProgressMonitorFunction(scene, nullptr, nullptr);
  counter.reach(base + units);
}

}  // namespace

Oracle::Oracle(const blob::GeometrySection& geometry, const std::string& file, int threads, const AlphaTest* alpha,
               const OracleInstances& instances, const ProgressCallback& progress)
    : impl_(std::make_unique<Impl>()) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(file, "geometry for the oracle: " + problem); };

  // Check ids and group triangle indices by geometry, each geometry's list indexed by primitive id.
  std::map<uint32_t, std::vector<uint32_t>> by_geometry;
  for (uint32_t i = 0; i < geometry.triangles.size(); ++i) {
    const auto& tri = geometry.triangles[i];
    for (uint32_t v : tri.v) {
      if (v >= geometry.positions.size()) {
        fail("triangle " + std::to_string(i) + " vertex index " + std::to_string(v) + " is out of range (" +
             std::to_string(geometry.positions.size()) + " positions)");
      }
    }
    if (tri.geometry > kMaxGeometryId) {
      fail("triangle " + std::to_string(i) + " geometry id " + std::to_string(tri.geometry) + " exceeds 2^24 - 1");
    }
    by_geometry[tri.geometry].push_back(i);
  }
  for (auto& [id, tris] : by_geometry) {
    std::vector<uint32_t> by_primitive(tris.size(), kNoIndex);
    for (uint32_t i : tris) {
      const uint32_t p = geometry.triangles[i].primitive;
      if (p >= tris.size() || by_primitive[p] != kNoIndex) {
        fail("geometry " + std::to_string(id) + " primitive ids are not 0.." + std::to_string(tris.size() - 1) +
             " (triangle " + std::to_string(i) + " has primitive id " + std::to_string(p) + ")");
      }
      by_primitive[p] = i;
    }
    tris = std::move(by_primitive);
  }

  Impl& im = *impl_;
  const bool two_level = instances.levels != nullptr;
  if (alpha) {
    if (alpha->triangles.size() != geometry.triangles.size()) {
      fail("the alpha test covers " + std::to_string(alpha->triangles.size()) + " triangles, the geometry " +
           std::to_string(geometry.triangles.size()));
    }
    im.alpha = *alpha;
  }
  const std::string config = "threads=" + std::to_string(std::max(threads, 0));
  im.device = rtcNewDevice(config.c_str());
  if (!im.device) {
    throw Error(ErrorKind::Runtime, file, "Embree device creation failed (error code " +
                                              std::to_string(static_cast<int>(rtcGetDeviceError(nullptr))) + ")");
  }
  if (two_level && rtcGetDeviceProperty(im.device, RTC_DEVICE_PROPERTY_RAY_MASK_SUPPORTED) == 0) {
    throw Error(ErrorKind::Runtime, file, "this Embree build has no ray masks, which the oracle's instances need");
  }
  rtcSetDeviceErrorFunction(
      im.device,
      [](void* user, RTCError, const char* message) {
        auto& first = static_cast<Impl*>(user)->first_error;
        if (first.empty()) first = message ? message : "unknown error";
      },
      &im);

  Aabb bounds;
  for (const Vec3& p : geometry.positions) bounds.grow(p);
  if (two_level) bounds.grow(world_bounds(geometry, instances));
  im.scale = range_scale(bounds, kEmbreeSceneReach);
  im.vertices.resize(3 * geometry.positions.size() + 1, 0.0f);
  for (std::size_t i = 0; i < geometry.positions.size(); ++i) {
    for (int k = 0; k < 3; ++k) im.vertices[3 * i + k] = geometry.positions[i][k] * im.scale;
  }

  const uint64_t triangles = geometry.triangles.size();
  ProgressCounter built(progress, "oracle scene", triangles + (two_level ? instances.sideband.size() : 0));
  im.scene = im.new_scene();
  if (!two_level) {
    for (const auto& [id, tris] : by_geometry) im.attach_triangles(im.scene, id, tris, geometry, file);
  } else {
    for (const blob::BlasRange& range : instances.levels->blases) {
      RTCScene blas = im.blases.emplace_back(im.new_scene());
      for (auto it = by_geometry.lower_bound(range.first_geometry);
           it != by_geometry.end() && it->first < range.first_geometry + range.geometry_count; ++it) {
        im.attach_triangles(blas, it->first - range.first_geometry, it->second, geometry, file);
      }
      commit_counted(blas, built, range.first_triangle, range.triangle_count);
    }
    im.attach_instances(instances);
  }
  commit_counted(im.scene, built, two_level ? triangles : 0, two_level ? instances.sideband.size() : triangles);
  built.finish();
  im.check(file, "build its scene");
  // Queries run on many threads; the callback writes unsynchronised state, so it only watches construction.
  rtcSetDeviceErrorFunction(im.device, nullptr, nullptr);
}

Oracle Oracle::of(const LoadedBvh& bvh, int threads, const ProgressCallback& progress) {
  const OracleInstances instances{bvh.levels ? &*bvh.levels : nullptr, bvh.sideband};
  return Oracle(bvh.geometry, bvh.file, threads, bvh.alpha_test ? &*bvh.alpha_test : nullptr, instances, progress);
}

Oracle::~Oracle() = default;
Oracle::Oracle(Oracle&&) noexcept = default;
Oracle& Oracle::operator=(Oracle&&) noexcept = default;

OracleHit Oracle::trace_closest(const Ray& ray, uint32_t instance_mask) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRayHit rh{};
  fill_ray(rh.ray, ray, impl_->scale, instance_mask);
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.primID = RTC_INVALID_GEOMETRY_ID;
  std::fill(std::begin(rh.hit.instID), std::end(rh.hit.instID), RTC_INVALID_GEOMETRY_ID);
  rtcIntersect1(impl_->scene, &context, &rh);
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return {};
  // Ng is in the instance's object space, as the emulator's triangle normal is.
  const uint32_t instance = rh.hit.instID[0] == RTC_INVALID_GEOMETRY_ID ? 0 : rh.hit.instID[0];
  return {true, rh.ray.tfar / impl_->scale, rh.hit.geomID, rh.hit.primID, {rh.hit.u, rh.hit.v},
          {rh.hit.Ng_x, rh.hit.Ng_y, rh.hit.Ng_z}, instance};
}

bool Oracle::occluded(const Ray& ray, uint32_t instance_mask) const {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  RTCRay r{};
  fill_ray(r, ray, impl_->scale, instance_mask);
  rtcOccluded1(impl_->scene, &context, &r);
  return r.tfar == -std::numeric_limits<float>::infinity();  // Embree's "occluded" mark
}

const char* disagreement_name(Disagreement d) {
  switch (d) {
    case Disagreement::None: return "none";
    case Disagreement::EmuMissEmbreeHit: return "emu-miss-embree-hit";
    case Disagreement::EmuHitEmbreeMiss: return "emu-hit-embree-miss";
    case Disagreement::DifferentPrimitiveFarther: return "different-primitive-farther";
    case Disagreement::DifferentPrimitiveCloser: return "different-primitive-closer";
    case Disagreement::OcclusionMismatch: return "occlusion-mismatch";
    case Disagreement::EdgeCrack: return "edge-crack";
  }
  return "unknown";
}

namespace {

/// |t_emu - t_embree| relative to |t_embree| (or FLT_MIN, so t_embree = 0 does not divide by zero).
double relative_t_error(float t_emu, float t_embree) {
  const double scale = std::max<double>(std::abs(t_embree), std::numeric_limits<float>::min());
  return std::abs(static_cast<double>(t_emu) - static_cast<double>(t_embree)) / scale;
}

/// Embree's hit lies within kEdgeCrackBarycentric of its triangle's border.
bool near_edge(const OracleHit& hit) {
  const float u = hit.barycentrics.x, v = hit.barycentrics.y;
  return std::min({u, v, 1.0f - u - v}) < kEdgeCrackBarycentric;
}

}  // namespace

Disagreement compare(const OracleHit& emu, const OracleHit& embree) {
  if (!emu.hit && !embree.hit) return Disagreement::None;
  if (!embree.hit) return Disagreement::EmuHitEmbreeMiss;
  if (!emu.hit) return near_edge(embree) ? Disagreement::EdgeCrack : Disagreement::EmuMissEmbreeHit;
  if (emu.instance == embree.instance && emu.geometry == embree.geometry && emu.primitive == embree.primitive) {
    return Disagreement::None;
  }
  if (relative_t_error(emu.t, embree.t) <= kAgreementRelativeT) return Disagreement::None;
  if (emu.t > embree.t) return near_edge(embree) ? Disagreement::EdgeCrack : Disagreement::DifferentPrimitiveFarther;
  return Disagreement::DifferentPrimitiveCloser;
}

Disagreement compare(bool emu_occluded, bool embree_occluded) {
  return emu_occluded == embree_occluded ? Disagreement::None : Disagreement::OcclusionMismatch;
}

Disagreement AgreementStats::add(const OracleHit& emu, const OracleHit& embree) {
  const Disagreement d = compare(emu, embree);
  ++by_cause[static_cast<std::size_t>(d)];
  if (emu.hit && embree.hit) {
    worst_relative_t_error = std::max(worst_relative_t_error, relative_t_error(emu.t, embree.t));
  }
  return d;
}

Disagreement AgreementStats::add(bool emu_occluded, bool embree_occluded) {
  const Disagreement d = compare(emu_occluded, embree_occluded);
  ++by_cause[static_cast<std::size_t>(d)];
  return d;
}

uint64_t AgreementStats::rays() const { return std::accumulate(by_cause.begin(), by_cause.end(), uint64_t{0}); }

std::string AgreementStats::percent_text(int decimals) const {
  uint64_t scale = 100;  // percent, then one factor of ten per decimal
  for (int d = 0; d < decimals; ++d) scale *= 10;
  const uint64_t total = rays();
  // Integer floor of agreeing / total * scale: never rounded up to 100 %. agreeing * scale stays below 2^64 for
  // up to 1.8e14 rays at three decimals, far beyond any ray set the commands trace.
  const uint64_t units = total ? agreeing() * scale / total : scale;
  const uint64_t per_percent = scale / 100;
  std::string text = std::to_string(units / per_percent);
  if (decimals > 0) {
    const std::string fraction = std::to_string(per_percent + units % per_percent);  // leading 1 keeps the zeros
    text += "." + fraction.substr(1);
  }
  return text + "%";
}

std::string AgreementStats::causes_text() const {
  std::string text;
  for (std::size_t c = 1; c < kDisagreementCount; ++c) {
    if (by_cause[c] == 0) continue;
    text += (text.empty() ? "" : ", ") + std::to_string(by_cause[c]) + " " +
            disagreement_name(static_cast<Disagreement>(c));
  }
  return text;
}

AgreementStats& AgreementStats::operator+=(const AgreementStats& o) {
  for (std::size_t i = 0; i < by_cause.size(); ++i) by_cause[i] += o.by_cause[i];
  worst_relative_t_error = std::max(worst_relative_t_error, o.worst_relative_t_error);
  return *this;
}

}  // namespace hwbvh::emu
