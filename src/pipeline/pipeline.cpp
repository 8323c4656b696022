#include "hwbvh/core/json_text.h"
#include "hwbvh/pipeline/pipeline.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include <glm/matrix.hpp>
#include <nlohmann/json.hpp>

#include "hwbvh/blob/blob_file.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/blob/opacity_sections.h"
#include "hwbvh/bvh_build/given_tree.h"
#include "hwbvh/bvh_build/instance_bounds.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/formats/rdna3/encode.h"
#include "hwbvh/formats/rdna4/box_node.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/xe3/bake.h"
#include "hwbvh/formats/xe3/encode.h"
#include "hwbvh/formats/xe3/tlas.h"

namespace hwbvh::pipeline {
namespace {

using Json = nlohmann::ordered_json;  // keys in the order written: stable bytes, readable output
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The double nearest to the shortest decimal that round-trips `f` (0.9f -> 0.9, not 0.8999999761581421).
double tidy(float f) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf - 1, f).ptr;
  *end = '\0';
  return std::strtod(buf, nullptr);
}

double ratio(double num, double den) { return den > 0.0 ? num / den : 0.0; }

Json vec_json(Vec3 v) { return Json::array({tidy(v.x), tidy(v.y), tidy(v.z)}); }

// Empty boxes (a geometry without triangles) become null rather than infinities, which JSON cannot hold.
Json box_json(const Aabb& box) {
  if (box.empty()) return nullptr;
  return Json{{"min", vec_json(box.min)}, {"max", vec_json(box.max)}};
}

// Alpha texture paths relative to the scene's directory, so the blob does not depend on where it was built.
std::string relative_to_scene(const std::string& path, const std::string& source) {
  const std::filesystem::path rel =
      std::filesystem::path(path).lexically_relative(std::filesystem::path(source).parent_path());
  return rel.empty() ? std::filesystem::path(path).filename().string() : rel.generic_string();
}

std::vector<std::byte> text_bytes(const std::string& text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

const Json& field(const Json& object, const char* key, const std::string& file) {
  const auto it = object.find(key);
  if (it == object.end()) throw_bad_input(file, std::string("build-meta section: missing field '") + key + "'");
  return *it;
}

// Reads field `key` into `value`. An integer field must hold an integer that fits its type: nlohmann's get_to
// would convert 1e300 or -1 with a cast, which for a float out of range is undefined behaviour.
template <class T>
void read_field(const Json& object, const char* key, const std::string& file, T& value) {
  const Json& j = field(object, key, file);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using Limits = std::numeric_limits<T>;
    const bool fits = j.is_number_unsigned()  ? j.get<uint64_t>() <= static_cast<uint64_t>(Limits::max())
                      : j.is_number_integer() ? j.get<int64_t>() >= static_cast<int64_t>(Limits::min())
                                              : !j.is_number();  // a non-number is get_to's type error below
    if (!fits) throw_bad_input(file, std::string("build-meta section: field '") + key + "' is not an integer in range");
  }
  j.get_to(value);
}

}  // namespace

const char* order_name(xe3::SubTriangleOrder order) {
  return order == xe3::SubTriangleOrder::Row ? "row" : "bird";
}

const char* quality_name(bvh_build::BuildQuality quality) {
  switch (quality) {
    case bvh_build::BuildQuality::Low: return "low";
    case bvh_build::BuildQuality::Medium: return "medium";
    case bvh_build::BuildQuality::High: return "high";
  }
  return "unknown";
}

std::string scene_meta_json(const Scene& scene) {
  uint64_t degenerate = 0;
  for (uint32_t i = 0; i < scene.triangles.size(); ++i) degenerate += scene.is_degenerate(i) ? 1 : 0;
  Json geometries = Json::array();
  for (const Geometry& g : scene.geometries) {
    Aabb bounds;
    for (uint32_t t = g.first_triangle; t < g.first_triangle + g.triangle_count; ++t)
      for (int k = 0; k < 3; ++k) bounds.grow(scene.vertex(t, k));
    geometries.push_back({{"name", g.name},
                          {"first_triangle", g.first_triangle},
                          {"triangles", g.triangle_count},
                          {"bounds", box_json(bounds)}});
  }
  Json materials = Json::array();
  for (const Material& m : scene.materials) {
    Json alpha = nullptr;
    if (m.alpha_tested()) alpha = relative_to_scene(scene.alpha_textures[m.alpha_texture].path, scene.source);
    materials.push_back(
        {{"name", m.name}, {"diffuse", vec_json(m.diffuse)}, {"alpha_texture", alpha}});
  }
  const Json meta = {{"source", std::filesystem::path(scene.source).filename().string()},
                     {"positions", scene.positions.size()},
                     {"triangles", scene.triangles.size()},
                     {"degenerate_triangles", degenerate},
                     {"bounds", box_json(scene.bounds())},
                     {"geometries", std::move(geometries)},
                     {"materials", std::move(materials)}};
  return json_text(meta, 1);
}

namespace {

// rtip31: what an instance of a BLAS takes from the BLAS's root: its box (the header's bounds), its children's boxes
// (full precision; the filter node's, once coarsened), the AND of its children's box flags (the instance's slot) and
// the node the instance enters at.
struct BlasRoot {
  Aabb bounds;
  std::vector<Aabb> children;
  uint32_t box_flags = 0xF;
  /// The root box node, or the primitive node of a BLAS that is one pair behind its root: entering there saves every
  /// ray that enters the instance a step on a box that only leads to it (rdna4/instance_node.h).
  uint32_t entry = rdna4::kRootPointer;
};

// What every target's build produces, in the report's terms.
struct TargetBuild {
  bvh_build::BuildStats build;
  std::vector<uint32_t> dwords;  // the Nodes section
  uint64_t box_nodes = 0;
  uint64_t leaf_nodes = 0;       // primitive / triangle / leaf nodes
  uint64_t leaf_triangles = 0;   // triangle references in them
  uint64_t pairs = 0;
  uint64_t obb_box_nodes = 0;
  uint64_t stoc_bytes = 0;       // xe3: STOC-only bytes in the Nodes section
  BlasRoot root;                 // rtip31
  double seconds_obb = 0.0;
  double seconds_encode = 0.0;
};

TargetBuild build_rtip31(const Scene& scene, const BuildBlobOptions& options, const ProgressCallback& progress) {
  bvh_build::BuildOptions build_options = options.build;
  rdna4::adapt_build_options(build_options);
  build_options.progress = progress;
  TargetBuild t;
  const bvh_build::BuildResult built = bvh_build::build_wide_bvh(scene, build_options);
  t.build = built.stats;
  rdna4::EncodeOptions encode_options = options.encode;
  encode_options.progress = progress;
  rdna4::EncodedBvh encoded = rdna4::encode(scene, built.bvh, encode_options);
  t.root.bounds = built.bvh.bounds;
  const auto& root = built.bvh.nodes.front();
  for (uint32_t c = 0; c < root.child_count; ++c) t.root.children.push_back(root.children[c].bounds);
  // The flags as encoded: the root box node in slot 1.
  rdna4::NodeDwords root_dwords{};
  std::copy_n(encoded.dwords.begin() + rdna4::kNodeDwords, rdna4::kNodeDwords, root_dwords.begin());
  const rdna4::DecodedBoxNode encoded_root = rdna4::decode_box_node(root_dwords);
  for (uint32_t k = 0; k < encoded_root.child_count; ++k) t.root.box_flags &= encoded_root.info[k].box_flags;
  // One pair in one primitive node (a range that would continue past the root could not be walked back out of).
  const uint32_t only_child = encoded_root.child_pointer[0];
  if (root.child_count == 1 && root.children[0].pair_count == 1 && rdna4::instance_root_encodable(only_child)) {
    t.root.entry = only_child;
  }
  t.dwords = std::move(encoded.dwords);
  t.box_nodes = encoded.stats.box_nodes;
  t.leaf_nodes = encoded.stats.primitive_nodes;
  t.leaf_triangles = encoded.stats.triangles;
  t.pairs = encoded.stats.pairs;
  t.obb_box_nodes = encoded.stats.obb_box_nodes;
  t.seconds_obb = encoded.stats.seconds_obb;
  t.seconds_encode = encoded.stats.seconds_encode;
  return t;
}

TargetBuild build_rtip20(const Scene& scene, const BuildBlobOptions& options, const ProgressCallback& progress) {
  bvh_build::BuildOptions build_options = options.build;
  rdna3::configure_build(build_options);
  build_options.progress = progress;
  TargetBuild t;
  const auto built = bvh_build::build_wide_bvh4(scene, build_options);
  t.build = built.stats;
  rdna3::EncodeOptions eo;
  eo.threads = options.encode.threads;
  eo.progress = progress;
  rdna3::EncodedBvh encoded = rdna3::encode(scene, built.bvh, eo);
  t.dwords = std::move(encoded.dwords);
  t.box_nodes = encoded.stats.box_nodes;
  t.leaf_nodes = encoded.stats.triangle_nodes;
  t.leaf_triangles = encoded.stats.triangles;
  t.pairs = encoded.stats.triangle_nodes;
  t.seconds_encode = encoded.stats.seconds_encode;
  return t;
}

// The alpha test and, where the target stores STOC, its bake (states per scene triangle, bird order).
struct Opacity {
  AlphaTest alpha;
  uint32_t stoc_level = 0;
  uint32_t bake_level = 0;
  std::vector<std::vector<xe3::SubTriangleState>> states;  // empty: no bake
};

Opacity prepare_opacity(const Scene& scene, const BuildBlobOptions& options, const ProgressCallback& progress) {
  Opacity o;
  o.alpha = make_alpha_test(scene, options.alpha_cutoff);
  if (options.opacity_level > xe3::kMaxStocLevel)
    throw_bad_input(scene.source, "opacity level " + std::to_string(options.opacity_level) + " is above 12");
  o.stoc_level = options.target == blob::Target::Xe3      ? options.xe3_stoc_level
                 : options.target == blob::Target::Rtip31 ? options.rtip31_stoc_level
                                                          : 0;
  if (o.stoc_level > xe3::kMaxStocLevel)
    throw_bad_input(scene.source, "STOC level " + std::to_string(o.stoc_level) + " is above 12");
  if (o.stoc_level > 0 && o.alpha.any_tested()) {
    o.bake_level = std::max(o.stoc_level, options.opacity_level);
    o.states = xe3::bake_all(o.alpha, o.bake_level, options.encode.threads, progress);
  }
  return o;
}

TargetBuild build_xe3(const Scene& scene, const BuildBlobOptions& options, const Opacity& opacity,
                      const ProgressCallback& progress) {
  bvh_build::BuildOptions build_options = options.build;
  xe3::configure_build(build_options, options.xe3_stoc_level);
  build_options.progress = progress;
  TargetBuild t;
  const auto built = bvh_build::build_wide_bvh6(scene, build_options);
  t.build = built.stats;
  xe3::Xe3EncodeOptions eo;
  eo.threads = options.encode.threads;
  eo.progress = progress;
  eo.stoc_level = options.xe3_stoc_level;
  eo.order = options.stoc_order;
  const std::vector<std::span<const xe3::SubTriangleState>> spans(opacity.states.begin(), opacity.states.end());
  eo.opacity = spans;
  xe3::Xe3Encoded encoded = xe3::encode(scene, built.bvh, eo);
  t.dwords = std::move(encoded.dwords);
  t.box_nodes = encoded.stats.internal_nodes;
  t.leaf_nodes = uint64_t{encoded.stats.quad_leaves} + encoded.stats.stoc3_leaves;
  t.leaf_triangles = encoded.stats.triangles;
  t.pairs = t.leaf_nodes;
  t.stoc_bytes = encoded.stats.stoc_data_bytes + uint64_t{encoded.stats.stoc3_leaves} * xe3::kBlockBytes;
  t.seconds_encode = encoded.stats.seconds_encode;
  return t;
}

OpacityReport opacity_report(const Opacity& o, const BuildBlobOptions& options) {
  OpacityReport r;
  r.alpha_tested_triangles = o.alpha.tested_count();
  r.cutoff = tidy(o.alpha.cutoff);
  r.stoc_level = o.stoc_level;
  r.order = order_name(options.stoc_order);
  r.bake_level = o.bake_level;
  uint64_t opaque = 0, transparent = 0;
  for (const auto& states : o.states) {
    r.baked_sub_triangles += states.size();
    for (xe3::SubTriangleState s : states) {
      opaque += s == xe3::SubTriangleState::Opaque ? 1 : 0;
      transparent += s == xe3::SubTriangleState::Transparent ? 1 : 0;
    }
  }
  const auto n = static_cast<double>(r.baked_sub_triangles);
  r.opaque_share = ratio(static_cast<double>(opaque), n);
  r.transparent_share = ratio(static_cast<double>(transparent), n);
  r.unknown_share = ratio(static_cast<double>(r.baked_sub_triangles - opaque - transparent), n);
  return r;
}

TargetBuild build_target(const Scene& scene, const BuildBlobOptions& options, const Opacity& opacity,
                         const ProgressCallback& progress) {
  return options.target == blob::Target::Rtip20 ? build_rtip20(scene, options, progress)
         : options.target == blob::Target::Xe3  ? build_xe3(scene, options, opacity, progress)
                                                : build_rtip31(scene, options, progress);
}

// The report's node figures of one build (the sum over all levels for a two-level one).
BuildReport node_report(const Scene& scene, const TargetBuild& built, const BuildBlobOptions& options) {
  BuildReport r;
  r.source = std::filesystem::path(scene.source).filename().string();
  r.target = blob::target_name(options.target);
  r.triangles = scene.triangles.size();
  r.degenerate_triangles = built.build.degenerate_triangles;
  r.box_nodes = built.box_nodes;
  r.primitive_nodes = built.leaf_nodes;
  r.node_bytes = uint64_t{built.dwords.size()} * 4;
  r.bytes_per_triangle = ratio(static_cast<double>(r.node_bytes), static_cast<double>(built.build.bvh_triangles));
  r.triangles_per_primitive_node = ratio(static_cast<double>(built.leaf_triangles), static_cast<double>(built.leaf_nodes));
  r.pairs = built.pairs;
  r.obb_box_share = ratio(static_cast<double>(built.obb_box_nodes), static_cast<double>(built.box_nodes));
  r.sah_cost = built.build.sah_cost;
  r.spatial_split_references = built.build.references - built.build.bvh_triangles;
  r.quality = quality_name(options.build.quality);
  r.obb = options.target == blob::Target::Rtip31 && options.encode.obb;
  r.obb_ratio = tidy(options.encode.obb_accept_ratio);
  return r;
}

// The sections every blob has besides Nodes, and the report's opacity and run figures: Geometry, SceneMeta,
// BuildMeta, AlphaTest and Stoc of `scene` (all meshes' triangles for a two-level build).
BuildBlobResult assemble_blob(const Scene& scene, const TargetBuild& built, const Opacity& opacity,
                              std::vector<uint32_t> node_dwords, std::string scene_meta, BuildReport r,
                              const BuildBlobOptions& options, double bake_seconds) {

  std::vector<std::byte> stoc_section;
  if (options.target == blob::Target::Rtip31 && !opacity.states.empty()) {
    stoc_section = blob::encode_stoc_sideband(
        blob::make_stoc_sideband(opacity.states, opacity.stoc_level, options.stoc_order));
  }
  if (opacity.alpha.any_tested()) {
    r.opacity = opacity_report(opacity, options);
    r.opacity->stoc_bytes = built.stoc_bytes + stoc_section.size();
  }

  BuildBlobResult out;
  out.blob.target = options.target;
  out.blob.sections.push_back(
      {blob::SectionType::Nodes, blob::kNodesAlignment, blob::dwords_to_bytes(node_dwords)});
  out.blob.sections.push_back({blob::SectionType::Geometry, 16, blob::encode_geometry(scene)});
  out.blob.sections.push_back({blob::SectionType::SceneMeta, 16, text_bytes(scene_meta)});
  out.blob.sections.push_back({blob::SectionType::BuildMeta, 16, text_bytes(report_to_json(r))});  // no run info
  if (opacity.alpha.any_tested())
    out.blob.sections.push_back({blob::SectionType::AlphaTest, 16, blob::encode_alpha_test(opacity.alpha)});
  if (!stoc_section.empty()) out.blob.sections.push_back({blob::SectionType::Stoc, 16, std::move(stoc_section)});

  if (options.build.tree) {  // reported, never stored (BuildReport::tree)
    r.tree = GivenTreeReport{.source = options.build.tree->source,
                             .kind = options.build.tree->binary() ? "binary" : "wide",
                             .nodes = options.build.tree->node_count(),
                             .split_leaves = built.build.split_leaves};
  }
  RunInfo run;
  run.threads = Executor(options.build.threads).threads();
  run.seconds.bvh = built.build.seconds_binary;
  run.seconds.collapse = built.build.seconds_collapse;
  run.seconds.obb = built.seconds_obb;
  run.seconds.encode = built.seconds_encode + bake_seconds;  // the bake is part of encoding
  r.run = run;
  out.report = std::move(r);
  return out;
}

}  // namespace

BuildBlobResult build_blob(const Scene& scene, const BuildBlobOptions& options, const ProgressCallback& progress) {
  const auto bake_start = Clock::now();
  const Opacity opacity = prepare_opacity(scene, options, progress);
  const double bake_seconds = seconds_since(bake_start);
  TargetBuild built = build_target(scene, options, opacity, progress);
  announce(progress, "blob sections");
  BuildReport r = node_report(scene, built, options);
  std::vector<uint32_t> dwords = std::move(built.dwords);
  return assemble_blob(scene, built, opacity, std::move(dwords), scene_meta_json(scene), std::move(r), options,
                       bake_seconds);
}

namespace {

// All meshes of a two-level scene one after another, as one Scene: the triangles the Geometry, AlphaTest and Stoc
// sections describe. Geometries, materials and alpha textures are numbered across meshes; mesh m's geometries
// start at first_geometry[m] and its triangles at first_triangle[m].
Scene bottom_levels(const InstancedScene& scene, std::vector<uint32_t>& first_geometry,
                    std::vector<uint32_t>& first_triangle) {
  Scene all;
  all.source = scene.source;
  for (const Scene& mesh : scene.meshes) {
    const auto positions = static_cast<uint32_t>(all.positions.size());
    const auto texcoords = static_cast<uint32_t>(all.texcoords.size());
    const auto geometries = static_cast<uint32_t>(all.geometries.size());
    const auto triangles = static_cast<uint32_t>(all.triangles.size());
    const auto materials = static_cast<uint32_t>(all.materials.size());
    const auto textures = static_cast<uint32_t>(all.alpha_textures.size());
    first_geometry.push_back(geometries);
    first_triangle.push_back(triangles);
    all.positions.insert(all.positions.end(), mesh.positions.begin(), mesh.positions.end());
    all.texcoords.insert(all.texcoords.end(), mesh.texcoords.begin(), mesh.texcoords.end());
    for (Geometry g : mesh.geometries) {
      g.first_triangle += triangles;
      all.geometries.push_back(std::move(g));
    }
    for (Material m : mesh.materials) {
      if (m.alpha_texture != kNoIndex) m.alpha_texture += textures;
      all.materials.push_back(std::move(m));
    }
    all.alpha_textures.insert(all.alpha_textures.end(), mesh.alpha_textures.begin(), mesh.alpha_textures.end());
    for (Triangle t : mesh.triangles) {
      for (uint32_t& v : t.v) v += positions;
      for (uint32_t& uv : t.uv) uv = uv == kNoIndex ? kNoIndex : uv + texcoords;
      t.geometry += geometries;
      if (t.material != kNoIndex) t.material += materials;
      all.triangles.push_back(t);
    }
  }
  return all;
}

// Row-major 3x4 of an affine glm matrix (columns: glm's first index), rounded to float.
Mat3x4 rows_3x4(const glm::dmat4& m) {
  Mat3x4 out{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) out[r][c] = static_cast<float>(m[c][r]);
  return out;
}

// A box's eight corners mapped by `world`, rounded to float: the instance's points and candidate rotation for the
// OBB choice of RT IP 3.1 top-level box nodes.
std::array<Vec3, 8> world_corners(const Aabb& box, const glm::dmat4& world) {
  std::array<Vec3, 8> corners = box.corners();
  for (Vec3& c : corners) {
    const glm::dvec4 w = world * glm::dvec4(c.x, c.y, c.z, 1.0);
    for (int a = 0; a < 3; ++a) c[a] = static_cast<float>(w[a]);
  }
  return corners;
}

// DXR instance flags (D3D12_RAYTRACING_INSTANCE_FLAGS) as base-pointer flags (docs/rtip31-format.md §1.4), with
// SKIP_PROCEDURAL as GPURT sets it for a triangle BLAS.
uint32_t instance_pointer_flags(uint32_t dxr_flags) {
  uint32_t flags = rdna4::kPointerFlagSkipProcedural;
  if (dxr_flags & 1u) flags |= rdna4::kPointerFlagDisableTriangleCull;
  if (dxr_flags & 2u) flags |= rdna4::kPointerFlagFlipFacedness;
  if (dxr_flags & 4u) flags |= rdna4::kPointerFlagForceOpaque;
  if (dxr_flags & 8u) flags |= rdna4::kPointerFlagForceNonOpaque;
  return flags;
}

// The box flags of an instance's slot in its TLAS box node: those of the BLAS root's children AND-ed, with the
// instance's forced opacity.
uint32_t instance_box_flags(uint32_t root_flags, uint32_t dxr_flags) {
  uint32_t flags = root_flags;
  constexpr uint32_t kOpacity = rdna4::kBoxFlagOnlyOpaque | rdna4::kBoxFlagOnlyNonOpaque;
  if (dxr_flags & 4u) flags = (flags & ~kOpacity) | rdna4::kBoxFlagOnlyOpaque;
  if (dxr_flags & 8u) flags = (flags & ~kOpacity) | rdna4::kBoxFlagOnlyNonOpaque;
  return flags;
}

// SceneMeta of a two-level build: the meshes' triangles as one scene, plus its BLASes and instances.
std::string instanced_scene_meta(const InstancedScene& scene, const Scene& all,
                                 std::span<const uint32_t> first_geometry) {
  Json meta = Json::parse(scene_meta_json(all));
  Json blases = Json::array();
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    // Never the path the file was named by (docs/blob-format.md §5): the glTF mesh, or a made-up mesh's own name.
    const std::string name = scene.origins.empty()
                                 ? std::filesystem::path(scene.meshes[m].source).filename().string()
                                 : scene.origins[m].name;
    blases.push_back({{"name", name},
                      {"first_geometry", first_geometry[m]},
                      {"geometries", scene.meshes[m].geometries.size()},
                      {"triangles", scene.meshes[m].triangles.size()}});
  }
  Json instances = Json::array();
  for (const MeshInstance& i : scene.instances) {
    instances.push_back({{"name", i.name}, {"node", i.node}, {"blas", i.mesh}, {"instance_id", i.instance_id},
                         {"mask", i.mask}, {"flags", i.flags}});
  }
  meta["blases"] = std::move(blases);
  meta["instances"] = std::move(instances);
  return json_text(meta, 1);
}

// The BLAS builds of a two-level scene as one phase, "BLASes", counted in triangles: those of the meshes built,
// plus the current mesh's triangles times the share of its build phases done (each phase an equal share).
class BlasProgress {
 public:
  BlasProgress(const ProgressCallback& progress, blob::Target target, uint64_t triangles)
      : counter_(progress, "BLASes", triangles),
        phases_(target == blob::Target::Rtip31 ? 4 : 3) {}  // build_blob's phases: OBB choice is rtip31's only

  // What mesh `mesh`'s build reports to, its triangles starting at `first` of all meshes'.
  ProgressCallback mesh(uint64_t first, const Scene& mesh) {
    counter_.reach(first);
    first_ = first;
    triangles_ = static_cast<double>(mesh.triangles.size());
    phase_ = 0;
    current_.clear();
    if (!counter_.active()) return {};
    return [this](std::string_view name, uint64_t done, uint64_t total) { heard(name, done, total); };
  }
  void finish() { counter_.finish(); }

 private:
  // One report of the current mesh's build (its copies of the callback share this state).
  void heard(std::string_view name, uint64_t done, uint64_t total) {
    if (name != current_) {  // a mesh's phases come in order
      phase_ += current_.empty() ? 0 : 1;
      current_ = name;
    }
    const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
    const double share = std::min((phase_ + fraction) / phases_, 1.0);
    counter_.reach(first_ + static_cast<uint64_t>(share * triangles_));
  }

  ProgressCounter counter_;
  double phases_;
  uint64_t first_ = 0;
  double triangles_ = 0.0;
  int phase_ = 0;
  std::string current_;
};

}  // namespace

BuildBlobResult build_instanced_blob(const InstancedScene& scene, const BuildBlobOptions& options,
                                     const ProgressCallback& progress) {
  if (scene.instances.empty()) throw_bad_input(scene.source, "the scene has no instances");
  if (options.build.tree)
    throw_bad_input(options.build.tree->source, "a tree describes the triangles of a one-level scene, and " +
                                                    std::filesystem::path(scene.source).filename().string() +
                                                    " has two levels (instances); build the flattened scene");
  // Every instance may be scaled to nothing (glTF exporters hide nodes so): then no ray could be aimed at the scene.
  const Aabb world_box = world_bounds(scene, Executor(options.build.threads));
  if (world_box.empty()) throw_bad_input(scene.source, "every triangle is degenerate (zero area) in world space");
  std::vector<uint32_t> first_geometry, first_triangle;
  const Scene all = bottom_levels(scene, first_geometry, first_triangle);
  const auto bake_start = Clock::now();
  const Opacity opacity = prepare_opacity(all, options, progress);
  const double bake_seconds = seconds_since(bake_start);

  // Every BLAS once, as it would be built alone; their figures sum into the report's.
  TargetBuild total;
  std::vector<std::vector<uint32_t>> blas_dwords;
  std::vector<BlasRoot> roots;  // rtip31; children coarsened to the filter node's boxes
  BlasProgress blas_progress(progress, options.target, all.triangles.size());
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    Opacity mesh_opacity;
    if (!opacity.states.empty()) {
      const auto first = opacity.states.begin() + first_triangle[m];
      mesh_opacity.states.assign(first, first + static_cast<std::ptrdiff_t>(scene.meshes[m].triangles.size()));
    }
    TargetBuild b =
        build_target(scene.meshes[m], options, mesh_opacity, blas_progress.mesh(first_triangle[m], scene.meshes[m]));
    b.root.children = bvh_build::coarsen_boxes(std::move(b.root.children), 4);
    roots.push_back(std::move(b.root));
    total.build.degenerate_triangles += b.build.degenerate_triangles;
    total.build.bvh_triangles += b.build.bvh_triangles;
    total.build.references += b.build.references;
    total.build.sah_cost += b.build.sah_cost;
    total.build.seconds_binary += b.build.seconds_binary;
    total.build.seconds_collapse += b.build.seconds_collapse;
    total.box_nodes += b.box_nodes;
    total.leaf_nodes += b.leaf_nodes;
    total.leaf_triangles += b.leaf_triangles;
    total.pairs += b.pairs;
    total.obb_box_nodes += b.obb_box_nodes;
    total.stoc_bytes += b.stoc_bytes;
    total.seconds_obb += b.seconds_obb;
    total.seconds_encode += b.seconds_encode;
    // rtip20 and xe3 sections are whole 64-byte slots: each level is padded to whole 128-byte nodes, which is what
    // the Levels section describes (rtip31 levels are whole nodes already).
    b.dwords.resize(blob::padded_level_bytes(uint64_t{b.dwords.size()} * 4) / 4, 0u);
    blas_dwords.push_back(std::move(b.dwords));
  }
  blas_progress.finish();

  // The top level over the instances' world bounds; the BLASes follow it in the Nodes section.
  std::vector<Aabb> world_boxes(scene.instances.size());
  std::vector<std::vector<Vec3>> cover(scene.meshes.size());
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) cover[m] = bvh_build::cover_points(scene.meshes[m]);
  Executor(options.build.threads).for_each(0, scene.instances.size(), [&](std::size_t i) {
    world_boxes[i] = bvh_build::transformed_bounds(cover[scene.instances[i].mesh], scene.instances[i].world);
  }, 256);
  blob::Levels levels;
  // The BLASes follow a top level of `top_bytes`.
  const auto place_blases = [&](uint64_t top_bytes) {
    levels.top_bytes = top_bytes;
    for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
      const uint64_t bytes = uint64_t{blas_dwords[m].size()} * 4;
      levels.blases.push_back({top_bytes, bytes, first_geometry[m],
                               static_cast<uint32_t>(scene.meshes[m].geometries.size()), first_triangle[m],
                               static_cast<uint32_t>(scene.meshes[m].triangles.size())});
      top_bytes += bytes;
    }
  };
  std::vector<uint32_t> dwords, instance_order;
  uint64_t top_box_nodes = 0;
  const ProgressCallback top_progress = prefixed(progress, "top level ");
  bvh_build::BuildOptions top_options = options.build;
  top_options.progress = top_progress;
  if (options.target == blob::Target::Xe3) {
    const auto tree = bvh_build::build_box_tree<6>(world_boxes, top_options, scene.source);
    place_blases(blob::padded_level_bytes(xe3::tlas_bytes(tree.bvh)));
    std::vector<xe3::TlasInstance> leaves(scene.instances.size());
    for (std::size_t i = 0; i < scene.instances.size(); ++i) {
      const MeshInstance& inst = scene.instances[i];
      const blob::BlasRange& blas = levels.blases[inst.mesh];
      leaves[i] = {world_boxes[i],
                   {.mask = inst.mask,
                    .flags = inst.flags,
                    .start_node = blas.address + uint64_t{xe3::kRootBlock} * xe3::kBlockBytes,
                    .bvh = blas.address,
                    .instance_id = inst.instance_id,
                    .instance_index = static_cast<uint32_t>(i),
                    .world_to_object = rows_3x4(glm::inverse(inst.world)),
                    .object_to_world = rows_3x4(inst.world)}};
    }
    announce(top_progress, "encoding");
    xe3::Xe3EncodedTlas top = xe3::encode_tlas(tree.bvh, leaves);
    dwords = std::move(top.dwords);
    dwords.resize(levels.top_bytes / 4);
    instance_order = std::move(top.instance_order);
    top_box_nodes = top.internal_nodes;
    total.build.seconds_binary += tree.stats.seconds_binary;
    total.build.seconds_collapse += tree.stats.seconds_collapse;
  } else if (options.target == blob::Target::Rtip20) {
    const auto tree = bvh_build::build_box_tree<4>(world_boxes, top_options, scene.source);
    place_blases(blob::padded_level_bytes(rdna3::tlas_bytes(tree.bvh)));
    announce(top_progress, "encoding");
    std::vector<rdna3::InstanceNodeInput> nodes(scene.instances.size());
    for (std::size_t i = 0; i < scene.instances.size(); ++i) {
      const MeshInstance& inst = scene.instances[i];
      nodes[i] = {.world_to_object = rows_3x4(glm::inverse(inst.world)),
                  .instance_id = inst.instance_id,
                  .instance_mask = inst.mask,
                  .instance_flags = inst.flags,
                  .blas_base_pointer = rdna4::make_base_pointer(levels.blases[inst.mesh].address,
                                                                instance_pointer_flags(inst.flags)),
                  .instance_index = static_cast<uint32_t>(i),
                  .object_to_world = rows_3x4(inst.world)};
    }
    rdna3::EncodedTlas top = rdna3::encode_tlas(tree.bvh, nodes);
    dwords = std::move(top.dwords);
    dwords.resize(levels.top_bytes / 4, 0u);
    instance_order = std::move(top.instance_order);
    top_box_nodes = top.box_nodes;
    total.build.seconds_binary += tree.stats.seconds_binary;
    total.build.seconds_collapse += tree.stats.seconds_collapse;
  } else {
    const auto tree = bvh_build::build_box_tree<8>(world_boxes, top_options, scene.source);
    place_blases(uint64_t{rdna4::tlas_slots(tree.bvh)} * rdna4::kNodeBytes);
    std::vector<rdna4::TlasInstanceInput> inputs(scene.instances.size());
    for (std::size_t i = 0; i < scene.instances.size(); ++i) {
      const MeshInstance& inst = scene.instances[i];
      const BlasRoot& root = roots[inst.mesh];
      inputs[i].world_corners = world_corners(root.bounds, inst.world);
      rdna4::InstanceNodeInput& node = inputs[i].node;
      node.world_to_object = rows_3x4(glm::inverse(inst.world));
      node.blas_base_pointer =
          rdna4::make_base_pointer(levels.blases[inst.mesh].address, instance_pointer_flags(inst.flags));
      node.instance_mask = inst.mask;
      std::copy(root.children.begin(), root.children.end(), node.filter_boxes.begin());
      node.filter_box_count = static_cast<uint32_t>(root.children.size());
      node.blas_root = root.entry;
      inputs[i].box_flags = instance_box_flags(root.box_flags, inst.flags);
    }
    rdna4::EncodeOptions encode_options = options.encode;
    encode_options.progress = top_progress;
    rdna4::EncodedTlas top = rdna4::encode_tlas(tree.bvh, inputs, encode_options);
    dwords = std::move(top.bvh.dwords);
    instance_order = std::move(top.instance_order);
    top_box_nodes = top.bvh.stats.box_nodes;
    total.obb_box_nodes += top.bvh.stats.obb_box_nodes;
    total.seconds_obb += top.bvh.stats.seconds_obb;
    total.seconds_encode += top.bvh.stats.seconds_encode;
    total.build.seconds_binary += tree.stats.seconds_binary;
    total.build.seconds_collapse += tree.stats.seconds_collapse;
  }

  announce(progress, "blob sections");
  std::vector<blob::InstanceSideband> sideband;
  for (uint32_t i : instance_order) {
    const MeshInstance& inst = scene.instances[i];
    sideband.push_back({i, inst.instance_id, inst.flags, 0, rows_3x4(inst.world)});
    levels.instances.push_back({inst.mesh, inst.mask});
  }
  for (const std::vector<uint32_t>& b : blas_dwords) dwords.insert(dwords.end(), b.begin(), b.end());
  total.box_nodes += top_box_nodes;
  BuildReport r = node_report(all, total, options);
  r.node_bytes = uint64_t{dwords.size()} * 4;
  r.bytes_per_triangle = ratio(static_cast<double>(r.node_bytes), static_cast<double>(total.build.bvh_triangles));
  std::vector<std::byte> sideband_bytes = blob::encode_instance_sideband(sideband);
  r.levels = LevelsReport{.instances = scene.instances.size(),
                          .blases = scene.meshes.size(),
                          .top_box_nodes = top_box_nodes,
                          .top_bytes = levels.top_bytes,
                          .sideband_bytes = sideband_bytes.size()};
  BuildBlobResult out = assemble_blob(all, total, opacity, std::move(dwords),
                                      instanced_scene_meta(scene, all, first_geometry), std::move(r), options,
                                      bake_seconds);
  out.blob.sections.push_back({blob::SectionType::InstanceSideband, 16, std::move(sideband_bytes)});
  out.blob.sections.push_back({blob::SectionType::Levels, 16, blob::encode_levels(levels)});
  out.blob.sections.push_back({blob::SectionType::WorldBounds, 16, blob::encode_world_bounds(world_box)});
  return out;
}

BuildBlobResult build_any_blob(const AnyScene& scene, const BuildBlobOptions& options,
                               const ProgressCallback& progress) {
  return std::holds_alternative<Scene>(scene) ? build_blob(std::get<Scene>(scene), options, progress)
                                              : build_instanced_blob(std::get<InstancedScene>(scene), options, progress);
}

BuildReport build_file(const std::filesystem::path& scene_path, const SceneLoadOptions& load,
                       const std::filesystem::path& output,
                       const BuildBlobOptions& options, const ProgressCallback& progress, const WarningFn& warn) {
  const auto load_start = Clock::now();
  const AnyScene scene = load_any_scene(scene_path, load, warn, progress);
  const double load_seconds = seconds_since(load_start);

  BuildBlobResult result = build_any_blob(scene, options, progress);

  const auto write_start = Clock::now();
  blob::write_file(output, result.blob, progress);
  result.report.run->seconds.load = load_seconds;
  result.report.run->seconds.write = seconds_since(write_start);
  return result.report;
}

std::string report_to_json(const BuildReport& r) {
  Json j = {{"source", r.source},
            {"target", r.target},
            {"triangles", r.triangles},
            {"degenerate_triangles", r.degenerate_triangles},
            {"box_nodes", r.box_nodes},
            {"primitive_nodes", r.primitive_nodes},
            {"node_bytes", r.node_bytes},
            {"bytes_per_triangle", r.bytes_per_triangle},
            {"triangles_per_primitive_node", r.triangles_per_primitive_node},
            {"pairs", r.pairs},
            {"obb_box_share", r.obb_box_share},
            {"sah_cost", r.sah_cost},
            {"spatial_split_references", r.spatial_split_references},
            {"options", {{"quality", r.quality}, {"obb", r.obb}, {"obb_ratio", r.obb_ratio}}}};
  if (r.opacity) {
    const OpacityReport& o = *r.opacity;
    j["opacity"] = {{"alpha_tested_triangles", o.alpha_tested_triangles},
                    {"cutoff", o.cutoff},
                    {"stoc_level", o.stoc_level},
                    {"order", o.order},
                    {"bake_level", o.bake_level},
                    {"baked_sub_triangles", o.baked_sub_triangles},
                    {"opaque_share", o.opaque_share},
                    {"transparent_share", o.transparent_share},
                    {"unknown_share", o.unknown_share},
                    {"stoc_bytes", o.stoc_bytes}};
  }
  if (r.levels) {
    const LevelsReport& l = *r.levels;
    j["levels"] = {{"instances", l.instances},
                   {"blases", l.blases},
                   {"top_box_nodes", l.top_box_nodes},
                   {"top_bytes", l.top_bytes},
                   {"sideband_bytes", l.sideband_bytes}};
  }
  if (r.tree) {
    j["tree"] = {{"source", r.tree->source},
                 {"kind", r.tree->kind},
                 {"nodes", r.tree->nodes},
                 {"split_leaves", r.tree->split_leaves}};
  }
  if (r.run) {
    const PhaseSeconds& s = r.run->seconds;
    j["run"] = {{"threads", r.run->threads},
                {"seconds",
                 {{"load", s.load},
                  {"bvh", s.bvh},
                  {"collapse", s.collapse},
                  {"obb", s.obb},
                  {"encode", s.encode},
                  {"write", s.write},
                  {"total", s.total()}}}};
  }
  return json_text(j, 1);
}

BuildReport report_from_json(std::string_view json, const std::string& file) {
  const Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw_bad_input(file, "build-meta section is not a JSON object");
  BuildReport r;
  try {
    const auto get = [&](const char* key, auto& value) { read_field(j, key, file, value); };
    get("source", r.source);
    get("target", r.target);
    get("triangles", r.triangles);
    get("degenerate_triangles", r.degenerate_triangles);
    get("box_nodes", r.box_nodes);
    get("primitive_nodes", r.primitive_nodes);
    get("node_bytes", r.node_bytes);
    get("bytes_per_triangle", r.bytes_per_triangle);
    get("triangles_per_primitive_node", r.triangles_per_primitive_node);
    get("pairs", r.pairs);
    get("obb_box_share", r.obb_box_share);
    get("sah_cost", r.sah_cost);
    get("spatial_split_references", r.spatial_split_references);
    const Json& options = field(j, "options", file);
    read_field(options, "quality", file, r.quality);
    read_field(options, "obb", file, r.obb);
    read_field(options, "obb_ratio", file, r.obb_ratio);
    if (const auto it = j.find("opacity"); it != j.end()) {
      OpacityReport o;
      read_field(*it, "alpha_tested_triangles", file, o.alpha_tested_triangles);
      read_field(*it, "cutoff", file, o.cutoff);
      read_field(*it, "stoc_level", file, o.stoc_level);
      read_field(*it, "order", file, o.order);
      read_field(*it, "bake_level", file, o.bake_level);
      read_field(*it, "baked_sub_triangles", file, o.baked_sub_triangles);
      read_field(*it, "opaque_share", file, o.opaque_share);
      read_field(*it, "transparent_share", file, o.transparent_share);
      read_field(*it, "unknown_share", file, o.unknown_share);
      read_field(*it, "stoc_bytes", file, o.stoc_bytes);
      r.opacity = o;
    }
    if (const auto it = j.find("levels"); it != j.end()) {
      LevelsReport l;
      read_field(*it, "instances", file, l.instances);
      read_field(*it, "blases", file, l.blases);
      read_field(*it, "top_box_nodes", file, l.top_box_nodes);
      read_field(*it, "top_bytes", file, l.top_bytes);
      read_field(*it, "sideband_bytes", file, l.sideband_bytes);
      r.levels = l;
    }
    if (const auto it = j.find("tree"); it != j.end()) {
      GivenTreeReport t;
      read_field(*it, "source", file, t.source);
      read_field(*it, "kind", file, t.kind);
      read_field(*it, "nodes", file, t.nodes);
      read_field(*it, "split_leaves", file, t.split_leaves);
      r.tree = t;
    }
    if (const auto it = j.find("run"); it != j.end()) {
      RunInfo run;
      read_field(*it, "threads", file, run.threads);
      const Json& s = field(*it, "seconds", file);
      read_field(s, "load", file, run.seconds.load);
      read_field(s, "bvh", file, run.seconds.bvh);
      read_field(s, "collapse", file, run.seconds.collapse);
      read_field(s, "obb", file, run.seconds.obb);
      read_field(s, "encode", file, run.seconds.encode);
      read_field(s, "write", file, run.seconds.write);
      r.run = run;
    }
  } catch (const nlohmann::json::exception& e) {
    throw_bad_input(file, std::string("build-meta section: a field has the wrong type (") + e.what() + ")");
  }
  return r;
}

}  // namespace hwbvh::pipeline
