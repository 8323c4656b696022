#pragma once
// Bring your own tree (docs/tree-format.md): another builder's tree topology encoded through the same collapse and
// formats as hwbvh's own build, and the tree of hwbvh's own build exported. The tree file is an .npz archive with the
// arrays children, prim_begin, prim_count and primitives; the CLI (`hwbvh build --tree`, `hwbvh dump --tree`) and
// the Python module (hwbvh.export_tree, hwbvh.build(..., tree=...)) both come here.
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hwbvh/api/api.h"
#include "hwbvh/bvh_build/given_tree.h"
#include "hwbvh/core/npz.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::api {

using NamedArrays = std::vector<std::pair<std::string, NpyArray>>;

/// The tree that `arrays` describe, named `source`. Throws hwbvh::Error(BadInput) naming `source` for a missing or
/// unknown array, a shape other than children (N, W) with W in 2..8 and the others (N,) or (P,), or a non-integer
/// dtype. The topology itself is checked when it is built (bvh_build::check_topology).
bvh_build::TreeTopology tree_from_arrays(const NamedArrays& arrays, const std::string& source);
/// The arrays of a tree file: children int32 (N, W), prim_begin, prim_count and primitives uint32.
NamedArrays tree_arrays(const bvh_build::TreeTopology& tree);

/// read_npz + tree_from_arrays, named by the path.
bvh_build::TreeTopology read_tree_file(const std::filesystem::path& path);
/// tree_arrays written as an .npz (atomically).
void write_tree_file(const std::filesystem::path& path, const bvh_build::TreeTopology& tree);

/// The scene a tree can describe: `scene` when it has one level. Throws hwbvh::Error(BadInput) naming its file and
/// `what` for a two-level scene (load it flattened).
const Scene& one_level_scene(const AnyScene& scene, const std::string& what);

/// The binary tree hwbvh builds for `scene` at `quality` ("low" or "medium"; "high" is refused: spatial splits
/// reference triangles more than once) before the collapse, the same for every target. Refuses a two-level scene
/// (export the flattened one). `progress` hears "binary BVH".
bvh_build::TreeTopology export_tree(const AnyScene& scene, const std::string& quality, int threads,
                                    const ProgressCallback& progress = {});

/// pipeline::build_any_blob of `scene` with `settings` and `tree` in place of the built-in builder (settings.quality
/// is recorded in the report only). A two-level scene is refused (pipeline::build_instanced_blob).
pipeline::BuildBlobResult build_tree_blob(const AnyScene& scene, std::shared_ptr<const bvh_build::TreeTopology> tree,
                                          const BuildSettings& settings);

}  // namespace hwbvh::api
