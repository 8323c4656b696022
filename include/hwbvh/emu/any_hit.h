#pragma once
// Any-hit work on alpha-tested geometry (issue 6; docs/emulator.md "Any-hit shaders and STOC"). Every target's
// traversal hands each candidate hit that lies in the ray's current interval on a triangle its node encodes as
// non-opaque (after the ray's forced-opacity flags) to resolve_non_opaque():
//   - no any-hit shader in TraceOptions (e.g. a blob without an AlphaTest section): accepted, as before;
//   - TraceOptions::stoc and a STOC state for the hit's sub-triangle (Xe3: the leaf's STOC1 or STOC3 masks, in the
//     section's sub-triangle order; RT IP 3.1: the Stoc sideband section; RT IP 2.0: none): Transparent -> dropped
//     (counter stoc_skipped_transparent), Opaque -> accepted without the shader (stoc_accepted_opaque);
//   - otherwise (Unknown, STOC off, no STOC data) the any-hit shader runs (any_hit_invocations): the alpha test
//     AlphaTest::passes at the hit's barycentrics; the candidate is accepted iff it passes. An Xe3 triangle's swstoc
//     bit does not change this: the software STOC test runs inside the any-hit shader (docs/xe3-format.md §4), so an
//     unknown sub-triangle still costs one invocation.
// The shader reads the blob's AlphaTest section (LoadedBvh::alpha_test), never the node bytes: it is the
// application's shader. The bake is conservative, so hits are identical with STOC on and off.
#include <cstdint>
#include <optional>

#include "hwbvh/core/geometry.h"
#include "hwbvh/emu/any_hit_record.h"
#include "hwbvh/emu/counters.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/formats/xe3/stoc.h"

namespace hwbvh::emu {

/// The application's any-hit shader of a loaded blob: its alpha test, and the RT IP 3.1 STOC sideband if present.
class AnyHitShader {
 public:
  /// The shader of `bvh` (which must outlive it); nullopt when the blob has no AlphaTest section.
  static std::optional<AnyHitShader> of(const LoadedBvh& bvh);

  /// The alpha test of triangle (geometry_id, primitive_id) at `barycentrics` (weights of vertices 1 and 2);
  /// true for ids the blob does not know.
  [[nodiscard]] bool passes(uint32_t geometry_id, uint32_t primitive_id, Vec2 barycentrics) const;
  /// The RT IP 3.1 sideband's state at the hit; nullopt when the blob has no Stoc section or the ids are unknown.
  [[nodiscard]] std::optional<xe3::SubTriangleState> sideband_state(uint32_t geometry_id, uint32_t primitive_id,
                                                                    Vec2 barycentrics) const;

 private:
  explicit AnyHitShader(const LoadedBvh& bvh) : bvh_(&bvh) {}
  const LoadedBvh* bvh_;
};

/// Sets options.any_hit_shader to `shader` (or null when it is empty) and returns options, so that callers write
/// `trace(rays, with_shader(options, shader))` with `shader` alive for the call.
TraceOptions with_shader(TraceOptions options, const std::optional<AnyHitShader>& shader);

/// The contract above for one candidate on a non-opaque triangle: true if it is accepted. `state` is the STOC state
/// the traversal found for the hit's sub-triangle (nullopt: none); it is used only when options.stoc. Counts the
/// any-hit counters in `c`. With options.no_duplicate_any_hit, a primitive whose shader already ran for this ray
/// (in `record`) takes that outcome without running it again (DXR's NO_DUPLICATE_ANYHIT_INVOCATION).
bool resolve_non_opaque(const TraceOptions& options, uint32_t geometry_id, uint32_t primitive_id, Vec2 barycentrics,
                        std::optional<xe3::SubTriangleState> state, RayCounters& c, AnyHitRecord& record);

}  // namespace hwbvh::emu
