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
#include "scene/polygon.h"
#include "scene/text_lines.h"

namespace hwbvh {
namespace {

using scene::fail_at_line;
using scene::quote;

// Statements that change nothing in a triangle scene (smoothing and merging groups, display and render
// attributes); they are accepted and ignored.
constexpr std::array<std::string_view, 10> kIgnoredStatements = {
    "s", "mg", "lod", "usemap", "maplib", "shadow_obj", "trace_obj", "bevel", "c_interp", "d_interp"};
// Valid OBJ (or common extensions) that a triangle scene cannot use: skipped, with one warning per keyword.
struct Unsupported {
  std::string_view keyword;
  std::string_view what;
};
constexpr std::array<Unsupported, 20> kSkippedStatements = {{{"cstype", "free-form geometry"},
                                                             {"deg", "free-form geometry"},
                                                             {"bmat", "free-form geometry"},
                                                             {"step", "free-form geometry"},
                                                             {"curv", "free-form geometry"},
                                                             {"curv2", "free-form geometry"},
                                                             {"surf", "free-form geometry"},
                                                             {"parm", "free-form geometry"},
                                                             {"trim", "free-form geometry"},
                                                             {"hole", "free-form geometry"},
                                                             {"scrv", "free-form geometry"},
                                                             {"sp", "free-form geometry"},
                                                             {"end", "free-form geometry"},
                                                             {"con", "free-form geometry"},
                                                             {"ctech", "free-form geometry"},
                                                             {"stech", "free-form geometry"},
                                                             {"vw", "vertex weights"},
                                                             {"t", "subdivision creases and tags"},
                                                             {"call", "file inclusion"},
                                                             {"csh", "shell commands"}}};

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

// An index problem found while reading, and where.
struct IndexProblem {
  std::size_t line = 0;  ///< 0: none
  std::string message;
};

// Texture coordinate indices of the faces of one `usemtl` name (or of none): out of range they are an error only
// if the material turns out to be alpha-tested, which is known once the MTL libraries are read.
struct TexcoordIndices {
  LargestIndex largest;
  IndexProblem problem;  ///< the first negative or unrepresentable index
};

// Stands for a texture coordinate index already known to be out of range (above every valid one).
constexpr uint32_t kBadTexcoord = kNoIndex - 1;

// A polygon of more than four corners, fanned while reading (its corners may not be defined yet) and
// triangulated again once every position is known.
struct Polygon {
  uint32_t group = 0;
  uint32_t first_triangle = 0;  ///< of its points.size() - 2 triangles in the group
  std::size_t first_corner = 0;  ///< in ObjReader::polygon_corners_
  std::size_t corner_count = 0;
  std::size_t line = 0;
};

// Unknown statements are reported one warning per keyword for the first few keywords; beyond that one warning sums
// up the rest, so that a file of vendor statements (or text that is no OBJ at all) cannot flood stderr.
constexpr std::size_t kReportedUnknownKeywords = 8;

// An `mtllib` file name and the line that names it.
struct MtlLibrary {
  std::string name;
  std::size_t line = 0;
};

// Warnings of one kind, reported once with their first line and how many there were.
struct RepeatedWarning {
  std::string kind;
  std::string message;
  std::size_t line = 0;
  std::size_t count = 0;
};

class ObjReader {
 public:
  ObjReader(std::string file, const WarningFn& warn) : file_(std::move(file)), warn_(warn) {}

  void read(std::string_view text, const ProgressCallback& progress) {
    scene::LineScanner lines(text);
    ProgressCounter parsed(progress, "loading", text.size());
    std::string_view line;
    while (lines.next(line)) {
      line_ = lines.line_number();
      if (line_ % 65536 == 0) parsed.reach(text.size() - lines.remaining());
      scene::split_tokens(line, tokens_);
      if (!tokens_.empty()) read_statement(line);
    }
    parsed.finish();
    if (largest_[kPosition].index > static_cast<int64_t>(counts_[kPosition])) {
      fail_at_line(file_, largest_[kPosition].line, beyond_count(kPosition, largest_[kPosition].index));
    }
    if (largest_[kNormal].index > static_cast<int64_t>(counts_[kNormal])) {
      warn_index(kNormal, {largest_[kNormal].line, beyond_count(kNormal, largest_[kNormal].index)});
    }
    triangulate_polygons();
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
    std::vector<scene::MtlMaterial> definitions;
    if (!base_dir.empty()) definitions = read_materials(scene, base_dir, usemtl_to_material);
    for (Triangle& t : scene.triangles) {
      if (t.material != kNoIndex) t.material = usemtl_to_material[t.material];
    }
    load_alpha_textures(scene, definitions);
    check_texcoords(scene, usemtl_to_material);
    report_warnings();
    return scene;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { fail_at_line(file_, line_, problem); }

  void warn_at_line(const std::string& kind, std::size_t line, const std::string& message) {
    const auto same = [&](const RepeatedWarning& w) { return w.kind == kind; };
    const auto it = std::find_if(warnings_.begin(), warnings_.end(), same);
    if (it != warnings_.end()) {
      ++it->count;
    } else {
      warnings_.push_back({kind, message, line, 1});
    }
  }

  // A statement the OBJ format does not define (exporters write their own): skipped, counted per keyword (found by
  // a hash map: a file that is not OBJ at all may have one keyword per line).
  void skip_unknown(std::string_view keyword) {
    const auto [it, inserted] = unknown_ids_.try_emplace(std::string(keyword), unknown_.size());
    if (inserted) {
      unknown_.push_back({std::string(keyword), "unknown statement " + quote(keyword) + " skipped", line_, 1});
    } else {
      ++unknown_[it->second].count;
    }
  }

  void report_warnings() const {
    if (!warn_) return;
    const auto report = [&](const RepeatedWarning& w) {
      const std::string times = w.count > 1 ? " (" + std::to_string(w.count) + " times; the first is shown)" : "";
      warn_(file_ + ": line " + std::to_string(w.line) + ": " + w.message + times);
    };
    for (const RepeatedWarning& w : warnings_) report(w);
    const std::size_t reported = std::min(unknown_.size(), kReportedUnknownKeywords);
    for (std::size_t k = 0; k < reported; ++k) report(unknown_[k]);
    if (unknown_.size() > reported) {
      std::size_t lines = 0;
      for (std::size_t k = reported; k < unknown_.size(); ++k) lines += unknown_[k].count;
      warn_(file_ + ": line " + std::to_string(unknown_[reported].line) + ": " +
            std::to_string(unknown_.size() - reported) + " more unknown statement keywords skipped (" +
            std::to_string(lines) + " lines; the first is shown)");
    }
  }

  static std::string beyond_count(Element element, int64_t index, uint64_t count) {
    return std::string(kElementNames[element]) + " index " + std::to_string(index) +
           " is out of range: the file has " + std::to_string(count) + " " + kElementPlurals[element];
  }
  std::string beyond_count(Element element, int64_t index) const {
    return beyond_count(element, index, counts_[element]);
  }

  void warn_index(Element element, const IndexProblem& problem) {
    const std::string why = element == kNormal ? "normals are not used" : "the face's material is not alpha-tested";
    warn_at_line(kElementNames[element], problem.line, problem.message + "; ignored (" + why + ")");
  }

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
    } else if (keyword == "f") {
      read_corners(keyword, 3, args);
      add_face();
    } else if (keyword == "l" || keyword == "p") {
      read_corners(keyword, keyword == "l" ? 2 : 1, args);
    } else {
      read_other_statement(line, keyword, args);
    }
  }

  // Statements other than elements and faces: rare, and kept out of read_statement so that it stays small.
  void read_other_statement(std::string_view line, std::string_view keyword, std::span<const std::string_view> args) {
    if (keyword == "g") {
      // Several names put the faces in several groups at once; they become one geometry named by all of them.
      std::string name;
      for (const std::string_view arg : args) name += (name.empty() ? "" : " ") + std::string(arg);
      select_group(name);
    } else if (keyword == "o") {
      select_group(std::string(scene::after_keyword(line)));
    } else if (keyword == "usemtl") {
      // Named as the MTL reader names materials, so that Latin-1 names still match.
      select_material(scene::valid_utf8(scene::after_keyword(line)));
    } else if (keyword == "mtllib") {
      if (args.empty()) fail("'mtllib' needs a file name");
      // Names are split at whitespace, as other OBJ tools do: one statement may name several libraries.
      for (const std::string_view arg : args) {
        const auto same = [&](const MtlLibrary& library) { return library.name == arg; };
        if (std::none_of(mtl_files_.begin(), mtl_files_.end(), same)) mtl_files_.push_back({std::string(arg), line_});
      }
    } else if (const auto skipped = std::find_if(kSkippedStatements.begin(), kSkippedStatements.end(),
                                                 [&](const Unsupported& u) { return u.keyword == keyword; });
               skipped != kSkippedStatements.end()) {
      warn_at_line(std::string(keyword), line_,
                   quote(keyword) + " statement skipped: " + std::string(skipped->what) + " not supported");
    } else if (!contains(kIgnoredStatements, keyword)) {
      skip_unknown(keyword);
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

  // Parses the corners of an f, l or p statement (at least `needed` of them) into corners_: v, v/vt, v//vn or
  // v/vt/vn, each index 1-based from the start of the file or, when negative, counted back from the last element
  // defined so far.
  void read_corners(std::string_view keyword, std::size_t needed, std::span<const std::string_view> args) {
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
      return std::string(kElementNames[element]) + " index " + what;
    };
    int64_t index = 0;
    if (!scene::parse_integer(text, index)) fail(problem(quote(text) + " in " + quote(corner) + " is not an integer"));
    if (index == 0) fail(problem("0 in " + quote(corner) + ": OBJ indices start at 1"));
    const auto count = static_cast<int64_t>(counts_[element]);
    if (index < 0) {
      if (index < -count) {
        return out_of_range(element, problem(std::to_string(index) + " in " + quote(corner) + " is out of range: only " +
                                             std::to_string(count) + " " + kElementPlurals[element] +
                                             " defined so far"));
      }
      return static_cast<uint32_t>(count + index);
    }
    if (index > kMaxIndex) return out_of_range(element, problem(std::to_string(index) + " is out of range"));
    LargestIndex& largest = element == kTexcoord ? texcoords_by_material_[texcoord_slot_].largest : largest_[element];
    if (index > largest.index) largest = {index, line_};
    return static_cast<uint32_t>(index - 1);
  }

  // An index out of range is an error only for a vertex: normals are never used and texture coordinates only by
  // alpha-tested materials, which are known once the MTL libraries are read; so these are recorded instead, and
  // stand for no element (kBadTexcoord).
  uint32_t out_of_range(Element element, const std::string& message) {
    if (element == kPosition) fail(message);
    if (element == kNormal) {
      warn_index(kNormal, {line_, message});
    } else if (IndexProblem& first = texcoords_by_material_[texcoord_slot_].problem; first.line == 0) {
      first = {line_, message};
    }
    return kBadTexcoord;
  }

  // Fans the polygon in corners_ into triangles (0, k, k+1) for the current group and material; polygons of more
  // than four corners are remembered for triangulate_polygons().
  void add_face() {
    if (group_ == kNoIndex) select_group("");
    std::vector<Triangle>& triangles = groups_[group_].triangles;
    if (corners_.size() > 4) {
      polygons_.push_back({group_, static_cast<uint32_t>(triangles.size()), polygon_corners_.size(), corners_.size(),
                           line_});
      polygon_corners_.insert(polygon_corners_.end(), corners_.begin(), corners_.end());
    }
    for (std::size_t k = 1; k + 1 < corners_.size(); ++k) {
      Triangle t;
      t.material = material_;
      set_corners(t, {corners_[0], corners_[k], corners_[k + 1]});
      triangles.push_back(t);
    }
  }

  static void set_corners(Triangle& t, const std::array<Corner, 3>& corner) {
    bool textured = true;
    for (std::size_t i = 0; i < 3; ++i) {
      t.v[i] = corner[i].position;
      textured = textured && corner[i].texcoord != kNoIndex;
    }
    for (std::size_t i = 0; i < 3; ++i) t.uv[i] = textured ? corner[i].texcoord : kNoIndex;
  }

  // Replaces the fans of concave polygons by their ear clipping (convex ones keep their fan).
  void triangulate_polygons() {
    std::vector<Vec3> points;
    std::vector<std::array<uint32_t, 3>> triangles;
    for (const Polygon& polygon : polygons_) {
      const auto corners = std::span(polygon_corners_).subspan(polygon.first_corner, polygon.corner_count);
      points.clear();
      for (const Corner& c : corners) points.push_back(positions_[c.position]);
      const scene::PolygonTriangulation how = scene::triangulate_polygon(points, triangles);
      if (how == scene::PolygonTriangulation::Fan) continue;
      if (how != scene::PolygonTriangulation::EarClipped) {
        const std::string why = how == scene::PolygonTriangulation::TooLarge
                                    ? "concave with more than " + std::to_string(scene::kMaxClippedCorners) + " corners"
                                    : "degenerate or self-intersecting";
        warn_at_line("polygon", polygon.line,
                     "polygon of " + std::to_string(corners.size()) + " corners is " + why + ": fan-triangulated");
        continue;
      }
      for (std::size_t k = 0; k < triangles.size(); ++k) {
        const auto [a, b, c] = triangles[k];
        set_corners(groups_[polygon.group].triangles[polygon.first_triangle + k], {corners[a], corners[b], corners[c]});
      }
    }
  }

  // An empty name (a bare `g` or `o`, or faces before any group) means the default group. Groups are told apart
  // by their bytes; their names are made valid UTF-8 for the blob and JSON.
  void select_group(std::string name) {
    if (name.empty()) name = "default";
    const auto [it, inserted] = group_ids_.try_emplace(name, static_cast<uint32_t>(groups_.size()));
    if (inserted) groups_.push_back({scene::valid_utf8(name), {}});
    group_ = it->second;
  }

  // An empty name (Blender's `usemtl` for faces without a material) is a name like any other: it selects the
  // material of an empty `newmtl`, and none if there is no such material.
  void select_material(std::string name) {
    const auto [it, inserted] = usemtl_ids_.try_emplace(name, static_cast<uint32_t>(usemtl_names_.size()));
    if (inserted) usemtl_names_.push_back(std::move(name));
    material_ = it->second;
    texcoord_slot_ = material_ + 1;
    if (texcoord_slot_ >= texcoords_by_material_.size()) texcoords_by_material_.resize(texcoord_slot_ + 1);
  }

  // Reads the mtllib libraries in order; the first definition of a material name wins. A library that does not
  // exist is skipped with a warning naming it, so its materials are unknown and `usemtl` of them gives triangles no
  // material. Returns the definitions of scene.materials, whose textures are loaded once it is known which
  // materials faces use.
  std::vector<scene::MtlMaterial> read_materials(Scene& scene, const std::filesystem::path& base_dir,
                                                 std::vector<uint32_t>& usemtl_to_material) {
    std::unordered_map<std::string, uint32_t> material_ids;
    std::vector<scene::MtlMaterial> definitions;
    for (const MtlLibrary& mtl : mtl_files_) {
      const std::filesystem::path path = scene::resolve_relative(base_dir, mtl.name);
      auto library = scene::read_mtl(path);
      if (!library) {
        warn_at_line("mtllib " + mtl.name, mtl.line,
                     "material library " + quote(mtl.name) + " not found (" + path.string() +
                         "): its materials are unknown and faces using them get no material");
        continue;
      }
      for (scene::MtlMaterial& m : *library) {
        if (!material_ids.try_emplace(m.name, static_cast<uint32_t>(scene.materials.size())).second) continue;
        scene.materials.push_back({m.name, m.diffuse, kNoIndex});
        definitions.push_back(std::move(m));
      }
    }
    for (std::size_t i = 0; i < usemtl_names_.size(); ++i) {
      const auto it = material_ids.find(usemtl_names_[i]);
      if (it != material_ids.end()) usemtl_to_material[i] = it->second;
    }
    return definitions;
  }

  // Loads the map_d textures in material order; materials using the same file share one AlphaTexture. A texture
  // that cannot be loaded is an error for a material that faces use, and a warning (the material is then not
  // alpha-tested) for one that no face uses.
  void load_alpha_textures(Scene& scene, const std::vector<scene::MtlMaterial>& definitions) const {
    const auto textured = [](const scene::MtlMaterial& m) { return !m.alpha_texture.empty(); };
    if (std::none_of(definitions.begin(), definitions.end(), textured)) return;
    std::vector<bool> used(scene.materials.size(), false);
    for (const Triangle& t : scene.triangles) {
      if (t.material != kNoIndex) used[t.material] = true;
    }
    std::unordered_map<std::string, uint32_t> texture_ids;
    for (std::size_t m = 0; m < definitions.size(); ++m) {
      const scene::MtlMaterial& definition = definitions[m];
      if (definition.alpha_texture.empty()) continue;
      const auto it = texture_ids.find(definition.alpha_texture.string());
      if (it != texture_ids.end()) {
        scene.materials[m].alpha_texture = it->second;
        continue;
      }
      try {
        scene.alpha_textures.push_back(scene::load_alpha_texture(definition));
      } catch (const Error& e) {
        if (used[m]) throw;
        if (warn_) warn_(std::string(e.what()) + "; ignored: no face uses the material");
        continue;
      }
      const auto texture = static_cast<uint32_t>(scene.alpha_textures.size() - 1);
      texture_ids.emplace(definition.alpha_texture.string(), texture);
      scene.materials[m].alpha_texture = texture;
    }
  }

  // Texture coordinate indices out of range: an error on faces of an alpha-tested material, which need them;
  // elsewhere a warning, and the triangles concerned get no texture coordinates.
  void check_texcoords(Scene& scene, const std::vector<uint32_t>& usemtl_to_material) {
    const uint64_t count = scene.texcoords.size();
    bool any_out_of_range = false;
    for (std::size_t slot = 0; slot < texcoords_by_material_.size(); ++slot) {
      TexcoordIndices& indices = texcoords_by_material_[slot];
      if (indices.problem.line == 0 && indices.largest.index > static_cast<int64_t>(count)) {
        indices.problem = {indices.largest.line, beyond_count(kTexcoord, indices.largest.index, count)};
      }
      if (indices.problem.line == 0) continue;
      any_out_of_range = true;
      const uint32_t material = slot == 0 ? kNoIndex : usemtl_to_material[slot - 1];
      if (material != kNoIndex && scene.materials[material].alpha_tested()) {
        fail_at_line(file_, indices.problem.line,
                     indices.problem.message + " (alpha-tested material '" + scene.materials[material].name +
                         "' needs texture coordinates)");
      }
      warn_index(kTexcoord, indices.problem);
    }
    for (Triangle& t : scene.triangles) {
      if (any_out_of_range && t.uv[0] != kNoIndex && (t.uv[0] >= count || t.uv[1] >= count || t.uv[2] >= count)) {
        t.uv[0] = t.uv[1] = t.uv[2] = kNoIndex;
      }
    }
  }

  std::string file_;
  const WarningFn& warn_;
  std::vector<RepeatedWarning> warnings_;
  std::vector<RepeatedWarning> unknown_;                  // unknown statements, by keyword in order of appearance
  std::unordered_map<std::string, std::size_t> unknown_ids_;  // keyword -> index in unknown_
  std::size_t line_ = 0;
  std::vector<std::string_view> tokens_;
  std::vector<Corner> corners_;
  std::vector<Vec3> positions_;
  std::vector<Vec2> texcoords_;
  std::array<uint64_t, kElementCount> counts_{};
  std::array<LargestIndex, kElementCount> largest_{};  // texture coordinates: texcoords_by_material_
  std::vector<TexcoordIndices> texcoords_by_material_ = std::vector<TexcoordIndices>(1);  // by usemtl id + 1; 0: none
  std::size_t texcoord_slot_ = 0;                                                           // of the current usemtl
  std::vector<Polygon> polygons_;
  std::vector<Corner> polygon_corners_;
  std::vector<Group> groups_;
  std::unordered_map<std::string, uint32_t> group_ids_;
  uint32_t group_ = kNoIndex;
  std::vector<std::string> usemtl_names_;
  std::unordered_map<std::string, uint32_t> usemtl_ids_;
  uint32_t material_ = kNoIndex;
  std::vector<MtlLibrary> mtl_files_;
};

Scene read_obj(std::string_view text, const std::string& name, const std::filesystem::path& base_dir,
               const WarningFn& warn, const ProgressCallback& progress = {}) {
  scene::require_text(text, name);
  ObjReader reader(name, warn);
  reader.read(text, progress);
  return std::move(reader).finish(base_dir);
}

}  // namespace

Scene load_obj(const std::filesystem::path& path, const WarningFn& warn, const ProgressCallback& progress) {
  const std::string name = path.string();
  const scene::FileRead file = scene::read_file(path);
  if (file.status != scene::ReadStatus::Ok) throw_bad_input(name, file.problem);
  // Relative names in the OBJ are relative to its folder, which is "." for a bare file name.
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return read_obj(file.bytes, name, dir, warn, progress);
}

Scene load_obj_from_memory(std::string_view obj_text, const std::string& name, const std::filesystem::path& base_dir,
                           const WarningFn& warn) {
  return read_obj(obj_text, name, base_dir, warn);
}

}  // namespace hwbvh
