#pragma once
// The Python module's objects that more than one binding file uses (hwbvh_python.cpp, bind_tree.cpp).
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::python {

// A loaded scene file: one level (OBJ, flattened glTF) or two (glTF).
struct PyScene {
  AnyScene scene;
  std::string path;
  std::vector<std::string> warnings;  ///< the loader's warnings, also issued as Python warnings
};

// A blob in memory, with the name its messages and statistics use (its file, or the scene it was built from) and the
// report of the build that made it (absent when read from a file: hwbvh.info has the stored one).
struct PyBlob {
  blob::Blob blob;
  std::string name;
  std::optional<pipeline::BuildReport> report;
  mutable std::shared_ptr<const emu::LoadedBvh> loaded;  ///< the emulator's view, made on first use

  const emu::LoadedBvh& bvh() const {
    if (!loaded) loaded = std::make_shared<const emu::LoadedBvh>(emu::load_bvh(blob, name));
    return *loaded;
  }
};

/// The `tree` argument of hwbvh.build: None (hwbvh's own builder), a dict of numpy arrays (children, prim_begin,
/// prim_count, primitives) or the path of an .npz tree file (bind_tree.cpp).
std::shared_ptr<const bvh_build::TreeTopology> tree_argument(const pybind11::handle& tree);

/// Adds hwbvh.export_tree and the tree forms of hwbvh.build (bind_tree.cpp) to the module.
void register_tree_bindings(pybind11::module_& m);

}  // namespace hwbvh::python
