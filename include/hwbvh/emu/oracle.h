#pragma once
// The Embree oracle (docs/design.md, "The oracle"): every emulated ray's closest hit is checked against Embree 3's
// rtcIntersect1 on the same triangles, and every shadow ray against rtcOccluded1. The triangles come from the
// blob's Geometry section, the same one the emulated BVH was encoded from: one Embree triangle geometry per
// geometry id, with Embree's geomID = our geometry id and primID = our primitive id, so ids compare directly.
// Triangles flagged degenerate are kept (so ids stay aligned) but collapsed to a point, because the BVH leaves
// them out and the oracle must see the triangles the emulator traces. Embree runs in robust mode
// (RTC_SCENE_FLAG_ROBUST) with a high-quality build; it is linked privately and never appears in this header.
// Alpha-tested geometry: given the blob's AlphaTest, Embree runs the same alpha test (AlphaTest::passes at Embree's
// barycentrics) in an intersection filter function for rtcIntersect1 and rtcOccluded1, so a candidate that fails it
// is ignored and the query continues, exactly as the emulator's any-hit shader (any_hit.h) does.
//
// Two-level blobs (the Levels and InstanceSideband sections): one Embree scene per BLAS, its geometries numbered by
// their local ids (Geometry-section id minus BlasRange::first_geometry, as the BLAS numbers them), and a top-level
// scene of instance geometries, one per instance node, attached with geomID = the instance's index (the sideband's)
// so that Embree's instID is our instance index, each with the sideband's object-to-world matrix and the Levels
// mask. Rays carry the instance mask as Embree's ray mask (the Debian build has RTC_DEVICE_PROPERTY_RAY_MASK_SUPPORTED,
// checked when an oracle with instances is built). One-level triangles keep Embree's all-ones geometry mask, so there
// only a zero mask culls (as the RT IP 3.1 and Xe3 emulators do; RT IP 2.0 box nodes carry no mask, which is why the
// CLI takes masks for two-level blobs only). One-level hits report instance 0, as the emulator does.
//
// Agreement rule, per ray: closest-hit rays agree when (a) both miss, (b) both hit the same instance, geometry and
// primitive, or (c) both hit and |t_emu - t_embree| <= 1e-4 * max(|t_embree|, FLT_MIN) (edges shared by two
// triangles, ties). Shadow (any-hit) rays agree when both are occluded or both are not.
// A disagreeing closest-hit ray where the emulator missed Embree's hit (no hit, or a farther one) is classified
// EdgeCrack when Embree's hit lies within kEdgeCrackBarycentric of its triangle's border in barycentric terms,
// min(u, v, 1 - u - v): the signature of a ray slipping between two triangles through a shared edge, i.e. of a
// triangle test that is not watertight (IntersectOptions::triangle_test = Gpurt), rather than of a BVH bug.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/scene/alpha_test.h"

namespace hwbvh::emu {

/// Relative t tolerance of agreement rule (c).
inline constexpr float kAgreementRelativeT = 1e-4f;
/// Largest barycentric distance min(u, v, 1 - u - v) of Embree's hit from its triangle's border for EdgeCrack.
inline constexpr float kEdgeCrackBarycentric = 1e-4f;

/// A closest hit, from Embree or converted from the emulator ({r.hit, r.t, r.geometry_id, r.primitive_id, {}, {},
/// r.instance_index}).
struct OracleHit {
  bool hit = false;
  float t = std::numeric_limits<float>::infinity();  ///< distance along the ray, in units of its direction
  uint32_t geometry = kNoIndex;  ///< two-level: the BLAS's own geometry id
  uint32_t primitive = kNoIndex;
  Vec2 barycentrics{0.0f};  ///< (u, v): weights of the triangle's vertices v[1] and v[2]
  Vec3 normal{0.0f};        ///< unnormalised geometric normal (v1 - v0) x (v2 - v0), object space
  uint32_t instance = 0;    ///< the instance index (sideband) of a two-level hit; 0 otherwise
};

struct LoadedBvh;  // loaded_bvh.h

/// A two-level BVH's instances as the oracle needs them: per instance node its BLAS and mask, and its sideband.
struct OracleInstances {
  const blob::Levels* levels = nullptr;
  std::span<const blob::InstanceSideband> sideband;
};

/// Embree 3 scene over a Geometry section. Queries are const and safe to call from many threads at once.
class Oracle {
 public:
  /// Builds the Embree scene. `threads` is Embree's build thread count (0 = all hardware threads); `file` names
  /// the section's source in messages; `alpha` (copied), if given, is the alpha test its filter functions run.
  /// Throws hwbvh::Error(BadInput) if a vertex index is out of range, a geometry id is >= 2^24, a geometry's
  /// primitive ids are not exactly 0..n-1 (n its triangle count), or `alpha` does not have one entry per triangle;
  /// hwbvh::Error(Runtime) if Embree fails.
  /// With `instances` (a two-level BVH, the Geometry section holding every BLAS's triangles one after another),
  /// the two-level scene described above; its sections are assumed decoded and validated (blob::decode_levels).
  /// `progress` hears "oracle scene" (Embree's scene builds, in triangles and then instances).
  explicit Oracle(const blob::GeometrySection& geometry, const std::string& file = {}, int threads = 0,
                  const AlphaTest* alpha = nullptr, const OracleInstances& instances = {},
                  const ProgressCallback& progress = {});
  /// The oracle of a loaded blob: its geometry, alpha test and, if two-level, instances.
  static Oracle of(const LoadedBvh& bvh, int threads, const ProgressCallback& progress = {});
  ~Oracle();
  Oracle(Oracle&&) noexcept;
  Oracle& operator=(Oracle&&) noexcept;
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  /// Closest hit within [ray.tmin, ray.tmax] (rtcIntersect1); hit == false for a miss. `instance_mask` (8 bits)
  /// culls the instances whose mask it does not share a bit with.
  [[nodiscard]] OracleHit trace_closest(const Ray& ray, uint32_t instance_mask = 0xFF) const;
  /// True if any triangle is hit within [ray.tmin, ray.tmax] (rtcOccluded1).
  [[nodiscard]] bool occluded(const Ray& ray, uint32_t instance_mask = 0xFF) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

enum class Disagreement : uint8_t {
  None,                       ///< the ray agrees
  EmuMissEmbreeHit,           ///< the emulator missed, Embree hit
  EmuHitEmbreeMiss,           ///< the emulator hit, Embree missed
  DifferentPrimitiveFarther,  ///< both hit different primitives; the emulator's is farther beyond tolerance
  DifferentPrimitiveCloser,   ///< both hit different primitives; the emulator's is closer beyond tolerance
  OcclusionMismatch,          ///< shadow ray: one says occluded, the other not
  EdgeCrack,                  ///< the emulator missed Embree's hit (no hit or a farther one) next to an edge
};
inline constexpr std::size_t kDisagreementCount = 7;

/// Short kebab-case name for tables and JSON ("none", "emu-miss-embree-hit", ...).
[[nodiscard]] const char* disagreement_name(Disagreement d);

/// Classifies a closest-hit ray by the agreement rule above.
[[nodiscard]] Disagreement compare(const OracleHit& emu, const OracleHit& embree);
/// Classifies a shadow ray: None or OcclusionMismatch.
[[nodiscard]] Disagreement compare(bool emu_occluded, bool embree_occluded);

/// Agreement counts over many rays. Sums over threads or batches with operator+= are order-independent.
struct AgreementStats {
  std::array<uint64_t, kDisagreementCount> by_cause{};  ///< rays per outcome, indexed by Disagreement
  /// Largest |t_emu - t_embree| / max(|t_embree|, FLT_MIN) over rays where both hit (agreeing or not).
  double worst_relative_t_error = 0.0;

  /// Classifies one closest-hit ray, counts it and returns the outcome.
  Disagreement add(const OracleHit& emu, const OracleHit& embree);
  /// Classifies one shadow ray, counts it and returns the outcome.
  Disagreement add(bool emu_occluded, bool embree_occluded);

  [[nodiscard]] uint64_t count(Disagreement d) const { return by_cause[static_cast<std::size_t>(d)]; }
  [[nodiscard]] uint64_t rays() const;
  [[nodiscard]] uint64_t agreeing() const { return count(Disagreement::None); }
  [[nodiscard]] uint64_t disagreeing() const { return rays() - agreeing(); }
  /// The agreeing share in percent with `decimals` decimals and a '%', rounded down, so that a single disagreeing ray
  /// never reads "100.000%" (22 of 16,777,216 rays: "99.999%"); "100.000%" only when every ray agrees (or none ran).
  [[nodiscard]] std::string percent_text(int decimals = 3) const;
  /// The disagreements by cause, "11 edge-crack, 3 emu-miss-embree-hit"; empty when every ray agrees.
  [[nodiscard]] std::string causes_text() const;

  AgreementStats& operator+=(const AgreementStats& o);
  friend bool operator==(const AgreementStats&, const AgreementStats&) = default;
};

}  // namespace hwbvh::emu
