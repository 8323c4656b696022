#pragma once
// Decoding alpha masks from image files: shared by MTL map_d textures and glTF base-colour textures, which read
// different channels of the same images.
#include <string>
#include <string_view>

#include "hwbvh/scene/scene.h"

namespace hwbvh::scene {

/// Which value of a texel is its alpha.
enum class AlphaSource {
  /// MTL map_d: the alpha channel of an RGBA image, the grey value of a grey or grey+alpha image, the Rec. 709
  /// luminance of an RGB image (a map_d image is a mask whatever its channels).
  Mask,
  /// glTF base colour: the alpha channel of an RGBA or grey+alpha image; an image without one is opaque.
  AlphaChannel,
};

struct DecodedAlpha {
  AlphaTexture texture;            ///< valid when problem is empty
  bool has_alpha_channel = false;  ///< the image has one (2 or 4 channels)
  std::string problem;             ///< why the image could not be decoded
};

/// Decodes an image file's bytes (any format stb_image reads) into an alpha mask; `path` names it in the texture.
DecodedAlpha decode_alpha_texture(std::string_view bytes, const std::string& path, AlphaSource source);

}  // namespace hwbvh::scene
