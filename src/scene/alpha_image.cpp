#include "scene/alpha_image.h"

#include <climits>
#include <memory>

#include <stb_image.h>

namespace hwbvh::scene {

DecodedAlpha decode_alpha_texture(std::string_view bytes, const std::string& path, AlphaSource source) {
  DecodedAlpha out;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    out.problem = "file too large for an image";
    return out;
  }
  int width = 0;
  int height = 0;
  int channels = 0;
  const std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()), &width,
                            &height, &channels, 0),
      &stbi_image_free);
  if (!pixels) {
    const char* reason = stbi_failure_reason();
    out.problem = std::string("cannot decode image: ") + (reason ? reason : "unknown format");
    return out;
  }

  AlphaTexture& texture = out.texture;
  texture.path = path;
  texture.width = static_cast<uint32_t>(width);
  texture.height = static_cast<uint32_t>(height);
  texture.alpha.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  out.has_alpha_channel = channels == 2 || channels == 4;
  const auto stride = static_cast<std::size_t>(channels);
  for (std::size_t i = 0; i < texture.alpha.size(); ++i) {
    const stbi_uc* texel = pixels.get() + i * stride;
    switch (channels) {
      case 3:  // Rec. 709 weights in 1/256 steps; they sum to 256, so grey stays exactly grey
        texture.alpha[i] = static_cast<uint8_t>((54u * texel[0] + 183u * texel[1] + 19u * texel[2] + 128u) >> 8);
        break;
      case 4:
        texture.alpha[i] = texel[3];
        break;
      case 2:  // a map_d mask is its grey value; glTF's alpha is the second channel
        texture.alpha[i] = source == AlphaSource::Mask ? texel[0] : texel[1];
        break;
      default:  // 1 (grey)
        texture.alpha[i] = texel[0];
        break;
    }
  }
  return out;
}

}  // namespace hwbvh::scene
