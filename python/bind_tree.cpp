// Bring your own tree from Python (docs/python.md, docs/tree-format.md): hwbvh.export_tree, hwbvh.load_tree,
// hwbvh.save_tree, and the `tree` argument of hwbvh.build. Trees are dicts of numpy integer arrays with the tree
// file's names (children, prim_begin, prim_count, primitives), checked by the same code as the CLI's .npz files.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hwbvh/api/tree.h"
#include "hwbvh/core/error.h"
#include "py_objects.h"

namespace py = pybind11;

namespace hwbvh::python {
namespace {

// A numpy array (or anything np.asarray takes) as the tree file's array type; its dtype is checked by
// api::tree_from_arrays as an .npz's is.
NpyArray npy_of(const py::handle& value) {
  const py::array a = py::array::ensure(value, py::array::c_style);
  if (!a) throw py::type_error("a tree's arrays must be numpy arrays");
  const py::dtype dtype = a.dtype();
  NpyArray out;
  out.kind = dtype.kind();
  out.item_bytes = static_cast<uint32_t>(dtype.itemsize());
  out.big_endian = dtype.byteorder() == '>';
  for (py::ssize_t i = 0; i < a.ndim(); ++i) out.shape.push_back(static_cast<uint64_t>(a.shape(i)));
  out.data.resize(static_cast<std::size_t>(a.nbytes()));
  if (!out.data.empty()) std::memcpy(out.data.data(), a.data(), out.data.size());
  return out;
}

py::dict tree_dict(const bvh_build::TreeTopology& tree) {
  py::dict out;
  for (const auto& [name, array] : api::tree_arrays(tree)) {
    std::vector<py::ssize_t> shape(array.shape.begin(), array.shape.end());
    py::array a(py::dtype(array.descr()), shape);
    std::memcpy(a.mutable_data(), array.data.data(), array.data.size());
    out[py::str(name)] = std::move(a);
  }
  return out;
}

// The tree a dict of arrays (named "tree" in messages) or an .npz path (named by it) holds.
std::shared_ptr<const bvh_build::TreeTopology> tree_of(const py::handle& tree) {
  if (py::isinstance<py::str>(tree) || py::hasattr(tree, "__fspath__")) {
    const auto path = tree.cast<std::filesystem::path>();
    py::gil_scoped_release release;
    return std::make_shared<const bvh_build::TreeTopology>(api::read_tree_file(path));
  }
  if (!py::isinstance<py::dict>(tree))
    throw py::type_error("tree: expected a dict of numpy arrays (children, prim_begin, prim_count, primitives) or "
                         "the path of an .npz tree file");
  api::NamedArrays arrays;
  for (const auto& [key, value] : tree.cast<py::dict>()) arrays.emplace_back(py::str(key), npy_of(value));
  return std::make_shared<const bvh_build::TreeTopology>(api::tree_from_arrays(arrays, "tree"));
}

}  // namespace

std::shared_ptr<const bvh_build::TreeTopology> tree_argument(const py::handle& tree) {
  return tree.is_none() ? nullptr : tree_of(tree);
}

void register_tree_bindings(py::module_& m) {
  m.def(
      "export_tree",
      [](const PyScene& scene, const std::string& quality, int threads) {
        bvh_build::TreeTopology tree;
        {
          py::gil_scoped_release release;
          tree = api::export_tree(scene.scene, quality, threads);
        }
        return tree_dict(tree);
      },
      py::arg("scene"), py::kw_only(), py::arg("quality") = "medium", py::arg("threads") = 0,
      "The binary tree hwbvh builds for a one-level scene before the collapse (the same for every target), as the "
      "dict of numpy arrays a tree file holds (hwbvh dump SCENE --tree OUT.npz). hwbvh.build(scene, tree=it) gives "
      "the blob of hwbvh.build(scene), byte for byte.");

  m.def(
      "scene_triangles",
      [](const PyScene& scene) {
        const Scene& s = api::one_level_scene(scene.scene, "scene_triangles");
        const auto count = static_cast<py::ssize_t>(s.triangles.size());
        py::array_t<float> vertices({count, py::ssize_t{3}, py::ssize_t{3}});
        py::array_t<bool> degenerate(count);
        float* v = vertices.mutable_data();
        bool* d = degenerate.mutable_data();
        for (uint32_t t = 0; t < s.triangles.size(); ++t) {
          for (int k = 0; k < 3; ++k)
            for (int a = 0; a < 3; ++a) *v++ = s.vertex(t, k)[a];
          d[t] = s.is_degenerate(t);
        }
        return py::make_tuple(vertices, degenerate);
      },
      py::arg("scene"),
      "A one-level scene's triangles as a tree builder needs them: vertices (T, 3, 3) float32 and which triangles are "
      "degenerate (T,) bool (a tree leaves those out).");

  m.def(
      "load_tree", [](const std::filesystem::path& path) { return tree_dict(*tree_of(py::str(path.string()))); },
      py::arg("path"), "Reads an .npz tree file (docs/tree-format.md) into a dict of numpy arrays.");

  m.def(
      "save_tree",
      [](const std::filesystem::path& path, const py::dict& tree) {
        const std::shared_ptr<const bvh_build::TreeTopology> t = tree_of(tree);
        py::gil_scoped_release release;
        api::write_tree_file(path, *t);
      },
      py::arg("path"), py::arg("tree"),
      "Writes a dict of tree arrays as an .npz tree file (np.savez writes one that reads the same).");
}

}  // namespace hwbvh::python
