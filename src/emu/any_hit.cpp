#include "hwbvh/emu/any_hit.h"

namespace hwbvh::emu {

std::optional<AnyHitShader> AnyHitShader::of(const LoadedBvh& bvh) {
  if (!bvh.alpha_test) return std::nullopt;
  return AnyHitShader(bvh);
}

bool AnyHitShader::passes(uint32_t geometry_id, uint32_t primitive_id, Vec2 barycentrics) const {
  const uint32_t tri = bvh_->triangle_index(geometry_id, primitive_id);
  return tri == kNoIndex || bvh_->alpha_test->passes(tri, barycentrics);
}

std::optional<xe3::SubTriangleState> AnyHitShader::sideband_state(uint32_t geometry_id, uint32_t primitive_id,
                                                                  Vec2 barycentrics) const {
  if (!bvh_->stoc) return std::nullopt;
  const uint32_t tri = bvh_->triangle_index(geometry_id, primitive_id);
  if (tri == kNoIndex) return std::nullopt;
  return bvh_->stoc->state(tri, barycentrics);
}

TraceOptions with_shader(TraceOptions options, const std::optional<AnyHitShader>& shader) {
  options.any_hit_shader = shader ? &*shader : nullptr;
  return options;
}

bool resolve_non_opaque(const TraceOptions& options, uint32_t geometry_id, uint32_t primitive_id, Vec2 barycentrics,
                        std::optional<xe3::SubTriangleState> state, RayCounters& c) {
  if (!options.any_hit_shader) return true;
  if (options.stoc && state == xe3::SubTriangleState::Transparent) {
    ++c.stoc_skipped_transparent;
    return false;
  }
  if (options.stoc && state == xe3::SubTriangleState::Opaque) {
    ++c.stoc_accepted_opaque;
    return true;
  }
  ++c.any_hit_invocations;
  return options.any_hit_shader->passes(geometry_id, primitive_id, barycentrics);
}

}  // namespace hwbvh::emu
