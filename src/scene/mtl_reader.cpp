#include "scene/mtl_reader.h"

#include <climits>
#include <map>
#include <memory>
#include <sstream>

#include <stb_image.h>
#include <tiny_obj_loader.h>

#include "hwbvh/core/error.h"
#include "scene/text_lines.h"

namespace hwbvh::scene {
namespace {

bool is_keyword(std::string_view token) {
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (token.empty() || !letter(token[0])) return false;
  for (const char c : token) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// tinyobjloader accepts almost anything, so the statements we use are checked first, with line numbers.
// Other statements (Ka, Ns, illum, map_Kd, PBR and vendor extensions...) are ignored; only their keyword must be
// well formed, which is enough to turn away text that is not an MTL file at all.
void check_mtl_lines(std::string_view text, const std::string& file) {
  LineScanner lines(text);
  std::vector<std::string_view> tokens;
  std::string_view line;
  while (lines.next(line)) {
    split_tokens(line, tokens);
    if (tokens.empty() || tokens[0].starts_with('#')) continue;
    const std::string_view keyword = tokens[0];
    const auto fail = [&](const std::string& problem) { fail_at_line(file, lines.line_number(), problem); };
    if (!is_keyword(keyword)) fail("not an MTL statement: " + quote(keyword));
    if (keyword == "newmtl" && tokens.size() < 2) fail("'newmtl' needs a material name");
    if (keyword == "map_d" && tokens.size() < 2) fail("'map_d' needs a texture file name");
    if (keyword == "Kd") {
      if (tokens.size() != 4) fail("'Kd' needs 3 numbers (r g b), found " + std::to_string(tokens.size() - 1));
      for (std::size_t i = 1; i < tokens.size(); ++i) {
        float value = 0.0f;
        const NumberParse parsed = parse_float(tokens[i], value);
        if (parsed == NumberParse::NotANumber) fail("'Kd': " + quote(tokens[i]) + " is not a number");
        if (parsed == NumberParse::NotFinite) fail("'Kd': non-finite value " + quote(tokens[i]));
      }
    }
  }
}

}  // namespace

std::optional<std::vector<MtlMaterial>> read_mtl(const std::filesystem::path& path) {
  const FileRead file = read_file(path);
  if (file.status == ReadStatus::NotFound) return std::nullopt;
  if (file.status != ReadStatus::Ok) throw_bad_input(path.string(), file.problem);
  return parse_mtl(file.bytes, path.string(), path.parent_path());
}

std::vector<MtlMaterial> parse_mtl(std::string_view text, const std::string& file, const std::filesystem::path& dir) {
  require_text(text, file);
  text = without_bom(text);
  check_mtl_lines(text, file);

  std::map<std::string, int> by_name;
  std::vector<tinyobj::material_t> parsed;
  std::istringstream stream{std::string(text)};
  std::string warnings;
  std::string errors;
  tinyobj::LoadMtl(&by_name, &parsed, &stream, &warnings, &errors);

  std::vector<MtlMaterial> materials;
  for (const tinyobj::material_t& m : parsed) {
    MtlMaterial material;
    material.name = trim(m.name);
    if (material.name.empty()) continue;  // statements before the first newmtl
    material.diffuse = Vec3(m.diffuse[0], m.diffuse[1], m.diffuse[2]);
    const std::string_view alpha = trim(m.alpha_texname);
    // tinyobjloader keeps the raw option text as the name when a map_d line has options but no file name.
    if (alpha.starts_with('-')) {
      throw_bad_input(file, "material '" + material.name + "': 'map_d' has texture options but no file name");
    }
    if (!alpha.empty()) material.alpha_texture = resolve_relative(dir, alpha);
    materials.push_back(std::move(material));
  }
  return materials;
}

AlphaTexture load_alpha_texture(const std::filesystem::path& path, const std::string& mtl) {
  const auto fail = [&](const std::string& problem) {
    throw_bad_input(mtl, "map_d texture '" + path.string() + "': " + problem);
  };
  const FileRead file = read_file(path);
  if (file.status != ReadStatus::Ok) fail(file.problem);
  if (file.bytes.size() > static_cast<std::size_t>(INT_MAX)) fail("file too large for an image");

  int width = 0;
  int height = 0;
  int channels = 0;
  const std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(file.bytes.data()), static_cast<int>(file.bytes.size()),
                            &width, &height, &channels, 0),
      &stbi_image_free);
  if (!pixels) {
    const char* reason = stbi_failure_reason();
    fail(std::string("cannot decode image: ") + (reason ? reason : "unknown format"));
  }

  AlphaTexture texture;
  texture.path = path.string();
  texture.width = static_cast<uint32_t>(width);
  texture.height = static_cast<uint32_t>(height);
  texture.alpha.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
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
      default:  // 1 (grey) or 2 (grey + alpha): masks are stored as grey values
        texture.alpha[i] = texel[0];
        break;
    }
  }
  return texture;
}

}  // namespace hwbvh::scene
