#pragma once
// MTL material libraries and their alpha textures: only what a BVH study needs, i.e. a material's name, its
// diffuse colour (Kd, for debug shading) and its map_d texture (which makes the material alpha-tested).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwbvh/core/geometry.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::scene {

struct MtlMaterial {
  std::string library;  ///< the MTL file that defines it, for messages
  std::string name;     ///< valid UTF-8: other bytes are replaced by U+FFFD (valid_utf8); may be empty
  Vec3 diffuse{0.0f};                   ///< Kd as tinyobjloader reads it (0 when absent, 0.6 with only map_Kd)
  std::filesystem::path alpha_texture;  ///< the map_d file resolved against the MTL's folder; empty without map_d
};

/// Reads the MTL library at `path`. Returns nullopt when the file does not exist (an OBJ naming a missing
/// library loads without materials); throws BadInput naming the MTL, with the line, when it exists but cannot be
/// read or is malformed.
std::optional<std::vector<MtlMaterial>> read_mtl(const std::filesystem::path& path);

/// Checks MTL text line by line (`file` names it in messages), then parses it with tinyobjloader. Texture names
/// are resolved against `dir`. Statements before the first `newmtl` are dropped.
std::vector<MtlMaterial> parse_mtl(std::string_view text, const std::string& file, const std::filesystem::path& dir);

/// Loads the map_d image of `material` as an alpha mask: the alpha channel of an RGBA image, the grey value of a
/// grey or grey+alpha image, the Rec. 709 luminance of an RGB image. Throws BadInput naming the MTL, the material
/// and the texture when the image is missing or cannot be decoded.
AlphaTexture load_alpha_texture(const MtlMaterial& material);

}  // namespace hwbvh::scene
