#include "hwbvh/api/tree.h"

#include <algorithm>
#include <array>

#include "hwbvh/core/error.h"

namespace hwbvh::api {
namespace {

constexpr std::array<const char*, 4> kTreeArrays = {"children", "prim_begin", "prim_count", "primitives"};

std::string shape_text(const NpyArray& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(a.shape[i]);
  return s + (a.shape.size() == 1 ? ",)" : ")");
}

}  // namespace

const Scene& one_level_scene(const AnyScene& scene, const std::string& what) {
  if (const auto* s = std::get_if<Scene>(&scene)) return *s;
  throw_bad_input(std::get<InstancedScene>(scene).source,
                  what + ": a tree describes the triangles of a one-level scene, and this scene has two levels "
                         "(instances); load it flattened (--flatten)");
}

bvh_build::TreeTopology tree_from_arrays(const NamedArrays& arrays, const std::string& source) {
  const auto fail = [&](const std::string& problem) { throw_bad_input(source, problem); };
  for (const auto& [name, array] : arrays) {
    if (std::find(kTreeArrays.begin(), kTreeArrays.end(), name) == kTreeArrays.end())
      fail("unknown array '" + name + "'; a tree file holds children, prim_begin, prim_count and primitives");
  }
  const auto get = [&](const char* name, std::size_t dims) -> const NpyArray& {
    const auto it = std::find_if(arrays.begin(), arrays.end(), [&](const auto& a) { return a.first == name; });
    if (it == arrays.end()) fail(std::string("no array '") + name + "'; a tree file holds children, prim_begin, prim_count and primitives");
    if (it->second.shape.size() != dims)
      fail(std::string(name) + " has shape " + shape_text(it->second) + "; expected " +
           (dims == 2 ? "(nodes, 2..8)" : name == std::string("primitives") ? "(primitives,)" : "(nodes,)"));
    return it->second;
  };
  const NpyArray& children = get("children", 2);
  const NpyArray& prim_begin = get("prim_begin", 1);
  const NpyArray& prim_count = get("prim_count", 1);
  const NpyArray& primitives = get("primitives", 1);
  bvh_build::TreeTopology tree;
  tree.source = source;
  if (children.shape[1] < 2 || children.shape[1] > bvh_build::TreeTopology::kMaxWidth)
    fail("children has shape " + shape_text(children) + "; its rows hold 2 (binary) to 8 (wide) entries");
  tree.width = static_cast<uint32_t>(children.shape[1]);
  const uint64_t nodes = children.shape[0];
  if (prim_begin.shape[0] != nodes || prim_count.shape[0] != nodes)
    fail("children has " + std::to_string(nodes) + " rows, prim_begin " + std::to_string(prim_begin.shape[0]) +
         " and prim_count " + std::to_string(prim_count.shape[0]) + "; one per node each");
  tree.children = int_values(children, source, "children");
  tree.prim_begin = int_values(prim_begin, source, "prim_begin");
  tree.prim_count = int_values(prim_count, source, "prim_count");
  tree.primitives = int_values(primitives, source, "primitives");
  return tree;
}

NamedArrays tree_arrays(const bvh_build::TreeTopology& tree) {
  const uint64_t nodes = tree.node_count();
  return {{"children", make_int_array(tree.children, {nodes, tree.width}, 'i', 4)},
          {"prim_begin", make_int_array(tree.prim_begin, {nodes}, 'u', 4)},
          {"prim_count", make_int_array(tree.prim_count, {nodes}, 'u', 4)},
          {"primitives", make_int_array(tree.primitives, {tree.primitives.size()}, 'u', 4)}};
}

bvh_build::TreeTopology read_tree_file(const std::filesystem::path& path) {
  return tree_from_arrays(read_npz(path), path.string());
}

void write_tree_file(const std::filesystem::path& path, const bvh_build::TreeTopology& tree) {
  write_npz(path, tree_arrays(tree));
}

bvh_build::TreeTopology export_tree(const AnyScene& scene, const std::string& quality, int threads,
                                    const ProgressCallback& progress) {
  const Scene& s = one_level_scene(scene, "export_tree");
  BuildSettings settings;
  settings.quality = quality;
  settings.threads = threads;
  pipeline::BuildBlobOptions options = build_options(settings);
  options.build.progress = progress;
  return bvh_build::export_topology(s, options.build, std::filesystem::path(s.source).filename().string());
}

pipeline::BuildBlobResult build_tree_blob(const AnyScene& scene, std::shared_ptr<const bvh_build::TreeTopology> tree,
                                          const BuildSettings& settings) {
  pipeline::BuildBlobOptions options = build_options(settings);
  options.build.tree = std::move(tree);
  return pipeline::build_any_blob(scene, options);  // which refuses a two-level scene with a tree
}

}  // namespace hwbvh::api
