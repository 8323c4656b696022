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

std::optional<bool> AnyHitRecord::find(uint32_t geometry_id, uint32_t primitive_id) const {
  const uint64_t key = uint64_t{geometry_id} << 32 | primitive_id;
  for (const auto& [k, accepted] : outcomes_)
    if (k == key) return accepted;
  return std::nullopt;
}

void AnyHitRecord::add(uint32_t geometry_id, uint32_t primitive_id, bool accepted) {
  outcomes_.emplace_back(uint64_t{geometry_id} << 32 | primitive_id, accepted);
}

bool resolve_non_opaque(const TraceOptions& options, uint32_t geometry_id, uint32_t primitive_id, Vec2 barycentrics,
                        std::optional<xe3::SubTriangleState> state, RayCounters& c, AnyHitRecord& record) {
  if (!options.any_hit_shader) return true;
  if (options.stoc && state == xe3::SubTriangleState::Transparent) {
    ++c.stoc_skipped_transparent;
    return false;
  }
  if (options.stoc && state == xe3::SubTriangleState::Opaque) {
    ++c.stoc_accepted_opaque;
    return true;
  }
  if (options.no_duplicate_any_hit) {
    if (const std::optional<bool> seen = record.find(geometry_id, primitive_id)) return *seen;
  }
  ++c.any_hit_invocations;
  const bool accepted = options.any_hit_shader->passes(geometry_id, primitive_id, barycentrics);
  if (options.no_duplicate_any_hit) record.add(geometry_id, primitive_id, accepted);
  return accepted;
}

}  // namespace hwbvh::emu
