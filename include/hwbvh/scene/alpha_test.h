#pragma once
// The alpha test: the any-hit shader of alpha-tested geometry, and the ground truth of opacity that every other
// path (the STOC bake, the emulator's any-hit model, the Embree oracle's filter) must match. docs/opacity.md.
//
// A triangle is alpha-tested when its material has a map_d texture (Scene::is_alpha_tested) and it has texture
// coordinates. A hit at barycentrics (u, v) (weights of vertices 1 and 2) interpolates the texture coordinate
//   t = (1 - u - v) uv0 + u uv1 + v uv2
// (in float, in that order), wraps it into [0, 1) (repeat), and reads the nearest texel:
//   x = floor(frac(t.x) * width), y = floor((1 - frac(t.y)) * height)   (row 0 = top = v near 1), clamped to the
//   texture. The hit passes when float(alpha) / 255.0f >= cutoff, in float, as a shader comparing the UNORM8 texel
//   with the cutoff does (cutoff 0 passes everything, 1 only alpha 255; cutoffs outside [0, 1] are refused).
//   One cutoff per scene: the one given (--alpha-cutoff), else the file's own (glTF alphaCutoff, which every
//   alpha-tested material must then share), else kDefaultAlphaCutoff.
// A map_d triangle without texture coordinates is not alpha-tested (there is no texel to read): it is opaque, as
// an any-hit shader without UVs could only sample one constant texel and common loaders treat it as opaque.
#include <cstdint>
#include <optional>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh {

inline constexpr float kDefaultAlphaCutoff = 0.5f;

/// The any-hit shader's inputs: per triangle its alpha texture and texture coordinates. Ground truth of opacity.
struct AlphaTest {
  struct Tri {
    uint32_t texture = kNoIndex;  ///< index into textures; kNoIndex: not alpha-tested (every hit passes)
    Vec2 uv[3]{};
  };
  float cutoff = kDefaultAlphaCutoff;
  std::vector<AlphaTexture> textures;  ///< make_alpha_test: only those an alpha-tested triangle reads
  /// One per scene triangle, in Scene::triangles (= Geometry section) order; empty when no triangle is
  /// alpha-tested (make_alpha_test of an opaque scene).
  std::vector<Tri> triangles;

  [[nodiscard]] bool tested(uint32_t tri) const;  ///< alpha-tested triangle
  [[nodiscard]] bool any_tested() const;          ///< some triangle is alpha-tested
  /// Number of alpha-tested triangles.
  [[nodiscard]] uint32_t tested_count() const;
  /// Ground truth: a hit at barycentrics `bary` (weights of vertices 1 and 2) passes when the alpha of the nearest
  /// texel at the interpolated UV (wrapped) is >= cutoff. Always true for triangles that are not alpha-tested.
  [[nodiscard]] bool passes(uint32_t tri, Vec2 bary) const;
  /// The comparison: float(alpha) / 255.0f >= cutoff.
  [[nodiscard]] bool alpha_passes(uint8_t alpha) const;
  /// The smallest 8-bit alpha that passes (alpha_passes is monotone), 0..255 for a cutoff in [0, 1].
  [[nodiscard]] uint32_t alpha_threshold() const;
  /// The interpolated (unwrapped) texture coordinate of `tri` at `bary`, computed exactly as passes() does.
  [[nodiscard]] Vec2 texcoord(uint32_t tri, Vec2 bary) const;
};

/// The texel (x, y) that texture coordinate `t` samples in a width x height texture: nearest, wrapped, row 0 = top.
struct Texel {
  uint32_t x = 0;
  uint32_t y = 0;
};
Texel nearest_texel(Vec2 t, uint32_t width, uint32_t height);

/// From a loaded scene; `cutoff` in [0, 1] (else Error BadInput). Without `cutoff`: the alpha_cutoff of the
/// alpha-tested materials triangles use (Error BadInput naming two that differ), or kDefaultAlphaCutoff.
AlphaTest make_alpha_test(const Scene& scene, std::optional<float> cutoff = {});

}  // namespace hwbvh
