// The alpha test, ground truth of opacity (docs/opacity.md §1).
#include "hwbvh/scene/alpha_test.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

// Index of the texel along an axis of `size` texels for a coordinate already wrapped into [0, 1]; frac() of a tiny
// negative coordinate rounds to 1.0, which is the last texel, as wrapping says.
uint32_t texel_index(float f, uint32_t size) {
  const float scaled = f * static_cast<float>(size);
  if (!(scaled > 0.0f)) return 0;  // also NaN
  return std::min(static_cast<uint32_t>(scaled), size - 1);
}

float wrap(float t) { return std::isfinite(t) ? t - std::floor(t) : 0.0f; }

// The cutoff the scene's files give: that of every alpha-tested material in use, which must agree.
std::optional<float> scene_cutoff(const Scene& scene) {
  std::optional<uint32_t> first;
  for (uint32_t t = 0; t < scene.triangles.size(); ++t) {
    if (!scene.is_alpha_tested(t)) continue;
    const uint32_t m = scene.triangles[t].material;
    const Material& material = scene.materials[m];
    if (!first) {
      first = m;
    } else if (const Material& seen = scene.materials[*first]; seen.alpha_cutoff != material.alpha_cutoff) {
      const auto describe = [](const Material& x) {
        return "'" + x.name + "' (alphaCutoff " + (x.alpha_cutoff ? std::to_string(*x.alpha_cutoff) : "none") + ")";
      };
      throw_bad_input(scene.source, "alpha-tested materials " + describe(seen) + " and " + describe(material) +
                                        " have different cutoffs; hwbvh tests one cutoff per scene: pass --alpha-cutoff");
    }
  }
  return first ? scene.materials[*first].alpha_cutoff : std::nullopt;
}

}  // namespace

Texel nearest_texel(Vec2 t, uint32_t width, uint32_t height) {
  // Columns count from u = 0 (left); rows from v = 0 counted upwards, then flipped: row 0 of the image is the top.
  const uint32_t x = texel_index(wrap(t.x), width);
  const uint32_t j = texel_index(wrap(t.y), height);
  return {x, height - 1 - j};
}

bool AlphaTest::tested(uint32_t tri) const { return !triangles.empty() && triangles[tri].texture != kNoIndex; }

bool AlphaTest::any_tested() const {
  return std::any_of(triangles.begin(), triangles.end(), [](const Tri& t) { return t.texture != kNoIndex; });
}

uint32_t AlphaTest::tested_count() const {
  return static_cast<uint32_t>(
      std::count_if(triangles.begin(), triangles.end(), [](const Tri& t) { return t.texture != kNoIndex; }));
}

bool AlphaTest::alpha_passes(uint8_t alpha) const { return static_cast<float>(alpha) / 255.0f >= cutoff; }

uint32_t AlphaTest::alpha_threshold() const {
  // alpha_passes is monotone in alpha: the first passing value.
  uint32_t a = 0;
  while (a < 256 && !alpha_passes(static_cast<uint8_t>(a))) ++a;
  return a;
}

Vec2 AlphaTest::texcoord(uint32_t tri, Vec2 bary) const {
  const Tri& t = triangles[tri];
  const float w = 1.0f - bary.x - bary.y;
  return Vec2{w * t.uv[0].x + bary.x * t.uv[1].x + bary.y * t.uv[2].x,
              w * t.uv[0].y + bary.x * t.uv[1].y + bary.y * t.uv[2].y};
}

bool AlphaTest::passes(uint32_t tri, Vec2 bary) const {
  if (triangles.empty()) return true;
  const Tri& t = triangles[tri];
  if (t.texture == kNoIndex) return true;
  const AlphaTexture& tex = textures[t.texture];
  const Texel texel = nearest_texel(texcoord(tri, bary), tex.width, tex.height);
  return alpha_passes(tex.alpha[std::size_t{texel.y} * tex.width + texel.x]);
}

AlphaTest make_alpha_test(const Scene& scene, std::optional<float> given) {
  const float cutoff = given ? *given : scene_cutoff(scene).value_or(kDefaultAlphaCutoff);
  if (!(cutoff >= 0.0f && cutoff <= 1.0f)) {
    throw_bad_input(scene.source, "alpha cutoff " + std::to_string(cutoff) + " is outside [0, 1]");
  }
  AlphaTest out;
  out.cutoff = cutoff;
  // Without texture coordinates there is no texel to read: such a triangle is opaque (alpha_test.h).
  const auto is_tested = [&scene](std::size_t i) {
    return scene.is_alpha_tested(static_cast<uint32_t>(i)) && scene.triangles[i].uv[0] != kNoIndex;
  };
  bool any = false;
  for (std::size_t i = 0; i < scene.triangles.size() && !any; ++i) any = is_tested(i);
  if (!any) return out;  // no per-triangle records: at 28 bytes a triangle they would weigh on large builds
  out.triangles.resize(scene.triangles.size());
  // Only textures some alpha-tested triangle reads, in order of first use (blobs carry them whole).
  std::vector<uint32_t> remap(scene.alpha_textures.size(), kNoIndex);
  for (std::size_t i = 0; i < scene.triangles.size(); ++i) {
    if (!is_tested(i)) continue;
    const Triangle& tri = scene.triangles[i];
    const uint32_t source = scene.materials[tri.material].alpha_texture;
    if (remap[source] == kNoIndex) {
      remap[source] = static_cast<uint32_t>(out.textures.size());
      out.textures.push_back(scene.alpha_textures[source]);
    }
    AlphaTest::Tri& t = out.triangles[i];
    t.texture = remap[source];
    for (int k = 0; k < 3; ++k) t.uv[k] = scene.texcoords[tri.uv[k]];
  }
  return out;
}

}  // namespace hwbvh
