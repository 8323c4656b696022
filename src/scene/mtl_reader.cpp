#include "scene/mtl_reader.h"

#include <cstdio>
#include <map>
#include <sstream>

#include <glm/common.hpp>
#include <tiny_obj_loader.h>

#include "hwbvh/core/error.h"
#include "scene/alpha_image.h"
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

// Stands for an empty `newmtl` name in what tinyobjloader reads, which would otherwise not start a new material.
// No name in a file can be this: control bytes are refused (require_text).
constexpr std::string_view kUnnamed = "\x01";

// Linear sRGB from CIE XYZ (D65), for `Kd xyz`; negative components (colours outside sRGB) become 0.
Vec3 rgb_from_xyz(Vec3 xyz) {
  const Vec3 rgb(3.2404542f * xyz.x - 1.5371385f * xyz.y - 0.4985314f * xyz.z,
                 -0.9692660f * xyz.x + 1.8760108f * xyz.y + 0.0415560f * xyz.z,
                 0.0556434f * xyz.x - 0.2040259f * xyz.y + 1.0572252f * xyz.z);
  return glm::max(rgb, Vec3(0.0f));
}

// tinyobjloader accepts almost anything, so the statements we use are checked first, with line numbers, and it
// is handed the statements as LineScanner reads them (comments and continuations resolved) with the forms it does
// not know rewritten: `Kd xyz` as RGB, `Kd spectral` left out (the colour stays the default), an empty `newmtl`
// name as kUnnamed. Other statements (Ka, Ns, illum, map_Kd, PBR and vendor extensions...) are ignored; only their
// keyword must be well formed, which is enough to turn away text that is not an MTL file at all.
std::string check_mtl_lines(std::string_view text, const std::string& file) {
  LineScanner lines(text);
  std::vector<std::string_view> tokens;
  std::string_view line;
  std::string checked;
  checked.reserve(text.size());
  while (lines.next(line)) {
    split_tokens(line, tokens);
    if (tokens.empty()) continue;
    const std::string_view keyword = tokens[0];
    const auto fail = [&](const std::string& problem) { fail_at_line(file, lines.line_number(), problem); };
    const auto number = [&](std::string_view token) {
      float value = 0.0f;
      const NumberParse parsed = parse_float(token, value);
      if (parsed == NumberParse::NotANumber) fail("'Kd': " + quote(token) + " is not a number");
      if (parsed == NumberParse::NotFinite) fail("'Kd': non-finite value " + quote(token));
      return value;
    };
    if (!is_keyword(keyword)) fail("not an MTL statement: " + quote(keyword));
    if (keyword == "map_d" && tokens.size() < 2) fail("'map_d' needs a texture file name");
    if (keyword == "newmtl" && tokens.size() < 2) {
      checked.append("newmtl ").append(kUnnamed).push_back('\n');
      continue;
    }
    if (keyword == "Kd" && tokens.size() > 1 && tokens[1] == "spectral") {
      if (tokens.size() < 3 || tokens.size() > 4) fail("'Kd spectral' needs a file name and an optional factor");
      if (tokens.size() == 4) number(tokens[3]);
      continue;
    }
    if (keyword == "Kd" && tokens.size() > 1 && tokens[1] == "xyz") {
      // One value stands for all three, as in the MTL specification.
      if (tokens.size() != 3 && tokens.size() != 5) fail("'Kd xyz' needs 1 or 3 numbers (x y z)");
      const float x = number(tokens[2]);
      const Vec3 rgb = rgb_from_xyz(tokens.size() == 3 ? Vec3(x) : Vec3(x, number(tokens[3]), number(tokens[4])));
      char kd[96];
      std::snprintf(kd, sizeof kd, "Kd %.9g %.9g %.9g\n", rgb.x, rgb.y, rgb.z);
      checked += kd;
      continue;
    }
    if (keyword == "Kd") {
      if (tokens.size() != 4) fail("'Kd' needs 3 numbers (r g b), found " + std::to_string(tokens.size() - 1));
      for (std::size_t i = 1; i < tokens.size(); ++i) number(tokens[i]);
    }
    checked.append(line).push_back('\n');
  }
  return checked;
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
  std::map<std::string, int> by_name;
  std::vector<tinyobj::material_t> parsed;
  std::istringstream stream{check_mtl_lines(text, file)};
  std::string warnings;
  std::string errors;
  tinyobj::LoadMtl(&by_name, &parsed, &stream, &warnings, &errors);

  std::vector<MtlMaterial> materials;
  for (const tinyobj::material_t& m : parsed) {
    MtlMaterial material;
    material.library = file;
    const std::string_view name = trim(m.name);
    if (name.empty()) continue;  // statements before the first newmtl
    material.name = name == kUnnamed ? std::string{} : valid_utf8(name);
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

AlphaTexture load_alpha_texture(const MtlMaterial& material) {
  const std::filesystem::path& path = material.alpha_texture;
  const auto fail = [&](const std::string& problem) {
    throw_bad_input(material.library,
                    "material '" + material.name + "': map_d texture '" + path.string() + "': " + problem);
  };
  const FileRead file = read_file(path);
  if (file.status != ReadStatus::Ok) fail(file.problem);
  DecodedAlpha decoded = decode_alpha_texture(file.bytes, path.string(), AlphaSource::Mask);
  if (!decoded.problem.empty()) fail(decoded.problem);
  return std::move(decoded.texture);
}

}  // namespace hwbvh::scene
