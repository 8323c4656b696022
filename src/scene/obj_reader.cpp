// OBJ reading. One strict pass over the text checks every statement (with its line number) and collects the
// scene; MTL libraries are read afterwards (mtl_reader.cpp). The pass does its own parsing rather than checking
// the text and then handing it to tinyobjloader: a check that reports index ranges and non-finite numbers has to
// tokenize every index and number anyway, and tinyobjloader 2.0 rc10 would then disagree with it in places
// (it splits quads on the shorter diagonal and ear-clips larger polygons instead of fanning, keeps only the first
// word of `usemtl`, ignores a bare `g`, keeps spaces around `o` names, and only warns about indices out of range).
#include <algorithm>
#include <array>
#include <span>
#include <unordered_map>

#include "hwbvh/core/error.h"
#include "hwbvh/scene/scene.h"
#include "scene/mtl_reader.h"
#include "scene/text_lines.h"

namespace hwbvh {
namespace {

using scene::fail_at_line;
using scene::quote;

// Statements that change nothing in a triangle scene (smoothing and merging groups, display and render
// attributes); they are accepted and ignored.
constexpr std::array<std::string_view, 10> kIgnoredStatements = {
    "s", "mg", "lod", "usemap", "maplib", "shadow_obj", "trace_obj", "bevel", "c_interp", "d_interp"};
// Free-form curves and surfaces: valid OBJ, but not triangles.
constexpr std::array<std::string_view, 16> kFreeFormStatements = {
    "cstype", "deg", "bmat", "step", "curv", "curv2", "surf", "parm",
    "trim",   "hole", "scrv", "sp",   "end",  "con",   "ctech", "stech"};

bool contains(std::span<const std::string_view> list, std::string_view word) {
  for (const std::string_view w : list) {
    if (w == word) return true;
  }
  return false;
}

// The elements a face corner can refer to.
enum Element : std::size_t { kPosition, kTexcoord, kNormal, kElementCount };
constexpr std::array<const char*, kElementCount> kElementNames = {"vertex", "texture coordinate", "normal"};
constexpr std::array<const char*, kElementCount> kElementPlurals = {"vertices", "texture coordinates", "normals"};

// Largest index usable for an element: it must fit in uint32 and stay below kNoIndex.
constexpr int64_t kMaxIndex = int64_t{kNoIndex} - 1;

// A face corner, resolved to 0-based indices.
struct Corner {
  uint32_t position = 0;
  uint32_t texcoord = kNoIndex;
};

// The triangles read for one `g`/`o` name. Triangle::material holds an index into ObjReader::usemtl_names_ until
// the MTL libraries are read.
struct Group {
  std::string name;
  std::vector<Triangle> triangles;
};

// The largest positive index seen for one element, and where: positive indices may refer to elements defined
// further down the file, so they are checked against the final counts.
struct LargestIndex {
  int64_t index = 0;
  std::size_t line = 0;
};

class ObjReader {
 public:
  explicit ObjReader(std::string file) : file_(std::move(file)) {}

  void read(std::string_view text) {
    scene::LineScanner lines(text);
    std::string_view line;
    while (lines.next(line)) {
      line_ = lines.line_number();
      scene::split_tokens(line, tokens_);
      if (tokens_.empty() || tokens_[0].starts_with('#')) continue;
      read_statement(line);
    }
    for (std::size_t e = 0; e < kElementCount; ++e) {
      if (largest_[e].index > static_cast<int64_t>(counts_[e])) {
        fail_at_line(file_, largest_[e].line,
                     std::string(kElementNames[e]) + " index " + std::to_string(largest_[e].index) +
                         " is out of range: the file has " + std::to_string(counts_[e]) + " " +
                         kElementPlurals[e]);
      }
    }
  }

  Scene finish(const std::filesystem::path& base_dir) && {
    Scene scene;
    scene.source = file_;
    scene.positions = std::move(positions_);
    scene.texcoords = std::move(texcoords_);

    // Geometries in the order their names first appeared; groups that never got a face are dropped.
    std::size_t triangle_count = 0;
    for (const Group& group : groups_) triangle_count += group.triangles.size();
    if (triangle_count == 0) throw_bad_input(file_, "no triangles: the file has no faces");
    scene.triangles.reserve(triangle_count);
    for (Group& group : groups_) {
      if (group.triangles.empty()) continue;
      const auto geometry = static_cast<uint32_t>(scene.geometries.size());
      scene.geometries.push_back({group.name, static_cast<uint32_t>(scene.triangles.size()),
                                  static_cast<uint32_t>(group.triangles.size())});
      for (std::size_t p = 0; p < group.triangles.size(); ++p) {
        Triangle& t = scene.triangles.emplace_back(group.triangles[p]);
        t.geometry = geometry;
        t.primitive = static_cast<uint32_t>(p);
      }
      group.triangles = {};
    }
    if (scene.degenerate_count() == scene.triangles.size()) {
      throw_bad_input(file_, "all " + std::to_string(scene.triangles.size()) +
                                 " triangles are degenerate (zero area): nothing to build");
    }

    std::vector<uint32_t> usemtl_to_material(usemtl_names_.size(), kNoIndex);
    if (!base_dir.empty()) read_materials(scene, base_dir, usemtl_to_material);
    for (Triangle& t : scene.triangles) {
      if (t.material != kNoIndex) t.material = usemtl_to_material[t.material];
    }
    return scene;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { fail_at_line(file_, line_, problem); }

  void read_statement(std::string_view line) {
    const std::string_view keyword = tokens_[0];
    const auto args = std::span(tokens_).subspan(1);
    if (keyword == "v") {
      // x y z, optionally followed by w or by a vertex colour (r g b [a])
      std::array<float, 3> p{};
      read_numbers(keyword, args, 3, 7, p);
      add_element(kPosition);
      positions_.emplace_back(p[0], p[1], p[2]);
    } else if (keyword == "vt") {
      std::array<float, 2> uv{};
      read_numbers(keyword, args, 1, 3, uv);
      add_element(kTexcoord);
      texcoords_.emplace_back(uv[0], uv[1]);
    } else if (keyword == "vn") {
      read_numbers(keyword, args, 3, 3, {});
      add_element(kNormal);
    } else if (keyword == "vp") {
      read_numbers(keyword, args, 1, 3, {});
    } else if (keyword == "f" || keyword == "l" || keyword == "p") {
      read_corners(keyword, args);
      if (keyword == "f") add_face();
    } else if (keyword == "g") {
      // Several names put the faces in several groups at once; they become one geometry named by all of them.
      std::string name;
      for (const std::string_view arg : args) name += (name.empty() ? "" : " ") + std::string(arg);
      select_group(name);
    } else if (keyword == "o") {
      select_group(std::string(scene::after_keyword(line)));
    } else if (keyword == "usemtl") {
      select_material(std::string(scene::after_keyword(line)));
    } else if (keyword == "mtllib") {
      if (args.empty()) fail("'mtllib' needs a file name");
      // Names are split at whitespace, as other OBJ tools do: one statement may name several libraries.
      for (const std::string_view arg : args) {
        if (std::find(mtl_files_.begin(), mtl_files_.end(), arg) == mtl_files_.end()) mtl_files_.emplace_back(arg);
      }
    } else if (contains(kFreeFormStatements, keyword)) {
      fail("free-form geometry statement " + quote(keyword) + " is not supported (triangles and polygons only)");
    } else if (!contains(kIgnoredStatements, keyword)) {
      fail("unknown statement " + quote(keyword));
    }
  }

  // Checks that args are between min and max finite numbers and stores the first out.size() of them (missing
  // optional values stay as they were).
  void read_numbers(std::string_view keyword, std::span<const std::string_view> args, std::size_t min,
                    std::size_t max, std::span<float> out) const {
    if (args.size() < min || args.size() > max) {
      const std::string expected =
          min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
      fail(quote(keyword) + " needs " + expected + " numbers, found " + std::to_string(args.size()));
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      float value = 0.0f;
      switch (scene::parse_float(args[i], value)) {
        case scene::NumberParse::NotANumber:
          fail(quote(keyword) + ": " + quote(args[i]) + " is not a number");
        case scene::NumberParse::NotFinite:
          fail(quote(keyword) + ": " + quote(args[i]) + " is NaN, infinite or beyond the float range");
        case scene::NumberParse::Ok:
          break;
      }
      if (i < out.size()) out[i] = value;
    }
  }

  void add_element(Element element) {
    if (counts_[element] >= static_cast<uint64_t>(kMaxIndex)) {
      fail(std::string("too many ") + kElementPlurals[element]);
    }
    ++counts_[element];
  }

  // Parses the corners of an f, l or p statement into corners_: v, v/vt, v//vn or v/vt/vn, each index 1-based
  // from the start of the file or, when negative, counted back from the last element defined so far.
  void read_corners(std::string_view keyword, std::span<const std::string_view> args) {
    const std::size_t needed = keyword == "f" ? 3 : keyword == "l" ? 2 : 1;
    if (args.size() < needed) {
      fail(quote(keyword) + " needs at least " + std::to_string(needed) + " vertices, found " +
           std::to_string(args.size()));
    }
    corners_.clear();
    for (const std::string_view arg : args) {
      const auto slashes = static_cast<std::size_t>(std::count(arg.begin(), arg.end(), '/'));
      std::array<std::string_view, kElementCount> parts{};
      std::string_view rest = arg;
      for (std::size_t e = 0; e <= slashes && e < kElementCount; ++e) {
        const std::size_t slash = rest.find('/');
        parts[e] = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      }
      // The position is required; a texture coordinate may be left out only as "v//vn".
      const std::size_t count = slashes + 1;
      const bool well_formed = count <= kElementCount && !parts[kPosition].empty() &&
                               (count != 2 || !parts[kTexcoord].empty()) && (count != 3 || !parts[kNormal].empty());
      if (!well_formed) fail(quote(keyword) + ": " + quote(arg) + " is not v, v/vt, v//vn or v/vt/vn");
      Corner corner;
      for (std::size_t e = 0; e < count; ++e) {
        if (parts[e].empty()) continue;
        const uint32_t index = resolve(static_cast<Element>(e), parts[e], arg);
        if (e == kPosition) corner.position = index;
        if (e == kTexcoord) corner.texcoord = index;
      }
      corners_.push_back(corner);
    }
  }

  uint32_t resolve(Element element, std::string_view text, std::string_view corner) {
    const auto problem = [&](const std::string& what) {
      fail(std::string(kElementNames[element]) + " index " + what);
    };
    int64_t index = 0;
    if (!scene::parse_integer(text, index)) problem(quote(text) + " in " + quote(corner) + " is not an integer");
    if (index == 0) problem("0 in " + quote(corner) + ": OBJ indices start at 1");
    const auto count = static_cast<int64_t>(counts_[element]);
    if (index < 0) {
      if (index < -count) {
        problem(std::to_string(index) + " in " + quote(corner) + " is out of range: only " + std::to_string(count) +
                " " + kElementPlurals[element] + " defined so far");
      }
      return static_cast<uint32_t>(count + index);
    }
    if (index > kMaxIndex) problem(std::to_string(index) + " is out of range");
    if (index > largest_[element].index) largest_[element] = {index, line_};
    return static_cast<uint32_t>(index - 1);
  }

  // Fans the polygon in corners_ into triangles (0, k, k+1) for the current group and material.
  void add_face() {
    if (group_ == kNoIndex) select_group("");
    std::vector<Triangle>& triangles = groups_[group_].triangles;
    for (std::size_t k = 1; k + 1 < corners_.size(); ++k) {
      const std::array<const Corner*, 3> corner = {&corners_[0], &corners_[k], &corners_[k + 1]};
      Triangle t;
      t.material = material_;
      bool textured = true;
      for (std::size_t i = 0; i < 3; ++i) {
        t.v[i] = corner[i]->position;
        textured = textured && corner[i]->texcoord != kNoIndex;
      }
      for (std::size_t i = 0; textured && i < 3; ++i) t.uv[i] = corner[i]->texcoord;
      triangles.push_back(t);
    }
  }

  // An empty name (a bare `g` or `o`, or faces before any group) means the default group.
  void select_group(std::string name) {
    if (name.empty()) name = "default";
    const auto [it, inserted] = group_ids_.try_emplace(name, static_cast<uint32_t>(groups_.size()));
    if (inserted) groups_.push_back({std::move(name), {}});
    group_ = it->second;
  }

  void select_material(std::string name) {
    if (name.empty()) fail("'usemtl' needs a material name");
    const auto [it, inserted] = usemtl_ids_.try_emplace(name, static_cast<uint32_t>(usemtl_names_.size()));
    if (inserted) usemtl_names_.push_back(std::move(name));
    material_ = it->second;
  }

  // Reads the mtllib libraries in order; the first definition of a material name wins, and materials using the
  // same map_d file share one AlphaTexture. A library that does not exist is skipped, so its materials are
  // unknown and `usemtl` of them gives triangles no material.
  void read_materials(Scene& scene, const std::filesystem::path& base_dir,
                      std::vector<uint32_t>& usemtl_to_material) const {
    std::unordered_map<std::string, uint32_t> material_ids;
    std::unordered_map<std::string, uint32_t> texture_ids;
    for (const std::string& name : mtl_files_) {
      const std::filesystem::path path = scene::resolve_relative(base_dir, name);
      const auto library = scene::read_mtl(path);
      if (!library) continue;
      for (const scene::MtlMaterial& m : *library) {
        if (!material_ids.try_emplace(m.name, static_cast<uint32_t>(scene.materials.size())).second) continue;
        Material material{m.name, m.diffuse, kNoIndex};
        if (!m.alpha_texture.empty()) {
          const auto [it, inserted] =
              texture_ids.try_emplace(m.alpha_texture.string(), static_cast<uint32_t>(scene.alpha_textures.size()));
          if (inserted) scene.alpha_textures.push_back(scene::load_alpha_texture(m.alpha_texture, path.string()));
          material.alpha_texture = it->second;
        }
        scene.materials.push_back(std::move(material));
      }
    }
    for (std::size_t i = 0; i < usemtl_names_.size(); ++i) {
      const auto it = material_ids.find(usemtl_names_[i]);
      if (it != material_ids.end()) usemtl_to_material[i] = it->second;
    }
  }

  std::string file_;
  std::size_t line_ = 0;
  std::vector<std::string_view> tokens_;
  std::vector<Corner> corners_;
  std::vector<Vec3> positions_;
  std::vector<Vec2> texcoords_;
  std::array<uint64_t, kElementCount> counts_{};
  std::array<LargestIndex, kElementCount> largest_{};
  std::vector<Group> groups_;
  std::unordered_map<std::string, uint32_t> group_ids_;
  uint32_t group_ = kNoIndex;
  std::vector<std::string> usemtl_names_;
  std::unordered_map<std::string, uint32_t> usemtl_ids_;
  uint32_t material_ = kNoIndex;
  std::vector<std::string> mtl_files_;
};

Scene read_obj(std::string_view text, const std::string& name, const std::filesystem::path& base_dir) {
  scene::require_text(text, name);
  ObjReader reader(name);
  reader.read(text);
  return std::move(reader).finish(base_dir);
}

}  // namespace

Scene load_obj(const std::filesystem::path& path) {
  const std::string name = path.string();
  const scene::FileRead file = scene::read_file(path);
  if (file.status != scene::ReadStatus::Ok) throw_bad_input(name, file.problem);
  // Relative names in the OBJ are relative to its folder, which is "." for a bare file name.
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return read_obj(file.bytes, name, dir);
}

Scene load_obj_from_memory(std::string_view obj_text, const std::string& name, const std::filesystem::path& base_dir) {
  return read_obj(obj_text, name, base_dir);
}

}  // namespace hwbvh
