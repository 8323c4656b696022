#pragma once
// Per-ray memory of the any-hit shader's outcomes (any_hit.h), part of every target's lane state.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace hwbvh::emu {

/// The any-hit shader's outcomes for one ray, by primitive, kept when TraceOptions::no_duplicate_any_hit
/// (rtip31/traversal.h): a BVH with spatial splits (`--quality high`) references one triangle from several leaves,
/// and the ray meets it again at the same t and barycentrics; with the flag the shader runs once and the later
/// candidates take its outcome.
class AnyHitRecord {
 public:
  /// The outcome recorded for the primitive, or nullopt.
  [[nodiscard]] std::optional<bool> find(uint32_t geometry_id, uint32_t primitive_id) const;
  void add(uint32_t geometry_id, uint32_t primitive_id, bool accepted);
  void clear() { outcomes_.clear(); }

 private:
  std::vector<std::pair<uint64_t, bool>> outcomes_;  ///< (geometry << 32 | primitive, accepted); a ray runs few
};

}  // namespace hwbvh::emu
