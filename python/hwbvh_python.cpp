// The Python module hwbvh._hwbvh (docs/python.md): the library facade (include/hwbvh/api/api.h) with numpy arrays in
// and out. Options keep the command line's names (without the dashes) and its defaults; errors are hwbvh.Error
// subclasses carrying the CLI's message. The GIL is released while scenes load, BVHs build and rays trace.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bind_machine.h"
#include "hwbvh/api/api.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/scene/rays_file.h"
#include "hwbvh/scene/scene.h"
#include "hwbvh/stats/per_ray.h"
#include "hwbvh/stats/stats_output.h"
#include "py_objects.h"

namespace py = pybind11;

namespace hwbvh::python {
namespace {

py::object json_loads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

// The per-ray rows of a report that kept its results, as one numpy structured array (stats::per_ray_columns).
py::array per_ray_array(const stats::StatsReport& report) {
  py::list fields;
  for (const stats::PerRayColumn& c : stats::per_ray_columns()) fields.append(py::make_tuple(c.name, c.numpy_type));
  const py::dtype dtype = py::dtype::from_args(fields);
  std::vector<std::byte> records;
  {
    py::gil_scoped_release release;
    records = stats::per_ray_records(report);
  }
  const auto rows = static_cast<py::ssize_t>(records.size() / static_cast<std::size_t>(dtype.itemsize()));
  py::array out(dtype, std::vector<py::ssize_t>{rows});
  std::memcpy(out.mutable_data(), records.data(), records.size());
  return out;
}

// (n, 3) float32 rows of `name`, or a Python exception naming it.
py::array_t<float, py::array::c_style | py::array::forcecast> vectors(const py::handle& value, const char* name) {
  auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a || a.ndim() != 2 || a.shape(1) != 3)
    throw Error(ErrorKind::BadInput, "", std::string(name) + ": expected an array of shape (n, 3)");
  return a;
}

// tmin or tmax: one number for every ray or one per ray.
std::vector<float> per_ray_values(const py::handle& value, std::size_t rays, const char* name) {
  auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a || a.ndim() > 1 || (a.ndim() == 1 && static_cast<std::size_t>(a.shape(0)) != rays))
    throw Error(ErrorKind::BadInput, "", std::string(name) + ": expected a number or an array of " +
                                             std::to_string(rays) + " numbers");
  if (a.ndim() == 0) return std::vector<float>(rays, *a.data());
  return {a.data(), a.data() + rays};
}

std::vector<Ray> rays_from_arrays(const py::handle& origins, const py::handle& directions, const py::handle& tmin,
                                  const py::handle& tmax) {
  const auto o = vectors(origins, "origins");
  const auto d = vectors(directions, "directions");
  if (o.shape(0) != d.shape(0))
    throw Error(ErrorKind::BadInput, "", "origins and directions: different numbers of rays");
  const auto n = static_cast<std::size_t>(o.shape(0));
  const std::vector<float> t0 = per_ray_values(tmin, n, "tmin");
  const std::vector<float> t1 = per_ray_values(tmax, n, "tmax");
  std::vector<Ray> rays(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* po = o.data() + 3 * i;
    const float* pd = d.data() + 3 * i;
    rays[i] = Ray{{po[0], po[1], po[2]}, {pd[0], pd[1], pd[2]}, t0[i], t1[i]};
  }
  return rays;
}

// The tracing options of stats and trace (api::TraceSettings) from their keyword arguments; None leaves one at the
// CLI's default, and a keyword that is not one of them is refused as Python refuses unknown keywords.
api::TraceSettings trace_settings(const py::kwargs& kwargs) {
  api::TraceSettings s;
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    if (value.is_none()) continue;
    if (name == "stack_size") s.stack_size = value.cast<uint32_t>();
    else if (name == "instance_mask") s.instance_mask = value.cast<uint32_t>();
    else if (name == "heuristic") s.heuristic = value.cast<uint32_t>();
    else if (name == "triangle_test") s.triangle_test = value.cast<std::string>();
    else if (name == "step_limit") s.step_limit = value.cast<uint32_t>();
    else if (name == "stoc") s.stoc = value.cast<std::string>();
    else if (name == "no_duplicate_any_hit") s.no_duplicate_any_hit = value.cast<bool>();
    else if (name == "oracle") s.oracle = value.cast<bool>();
    else if (name == "ray_flags") s.ray_flags = value.cast<uint32_t>();
    else if (name == "threads") s.threads = value.cast<int>();
    else throw py::type_error("unexpected keyword argument '" + name + "'");
  }
  return s;
}

}  // namespace
}  // namespace hwbvh::python

using namespace hwbvh;
using namespace hwbvh::python;

PYBIND11_MODULE(_hwbvh, m) {
  m.doc() = "hwbvh: hardware-format ray-tracing BVHs and their emulated traversal (docs/python.md)";
  bind_machine(m);
  m.attr("__version__") = HWBVH_VERSION;

  // hwbvh.Error, with BadInputError (the CLI's exit code 2) and RuntimeFailure (exit code 1) under it. The classes
  // live as long as the interpreter: their references are never released.
  static const py::handle error = PyErr_NewExceptionWithDoc("hwbvh.Error", "An error of hwbvh, with the CLI's message.",
                                                            nullptr, nullptr);
  static const py::handle bad_input = PyErr_NewExceptionWithDoc(
      "hwbvh.BadInputError", "Bad options or input (the CLI's exit code 2).",
      py::make_tuple(error, py::handle(PyExc_ValueError)).ptr(), nullptr);
  static const py::handle runtime_failure = PyErr_NewExceptionWithDoc(
      "hwbvh.RuntimeFailure", "Valid work that failed, e.g. a write error (the CLI's exit code 1).", error.ptr(),
      nullptr);
  if (!error || !bad_input || !runtime_failure) throw py::error_already_set();
  m.attr("Error") = error;
  m.attr("BadInputError") = bad_input;
  m.attr("RuntimeFailure") = runtime_failure;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString((e.kind() == ErrorKind::BadInput ? bad_input : runtime_failure).ptr(), e.what());
    }
  });

  py::class_<PyScene>(m, "Scene", "A scene file loaded (hwbvh.load_scene)")
      .def_property_readonly("path", [](const PyScene& s) { return s.path; })
      .def_property_readonly("two_level",
                             [](const PyScene& s) { return std::holds_alternative<InstancedScene>(s.scene); })
      .def_property_readonly("warnings", [](const PyScene& s) { return s.warnings; })
      .def("__repr__", [](const PyScene& s) {
        return "<hwbvh.Scene " + s.path + (std::holds_alternative<InstancedScene>(s.scene) ? " (two levels)>" : ">");
      });

  m.def(
      "load_scene",
      [](const std::filesystem::path& path, bool flatten) {
        auto scene = std::make_unique<PyScene>();
        scene->path = path.string();
        {
          py::gil_scoped_release release;
          scene->scene = load_any_scene(path, {.flatten = flatten},
                                        [&](const std::string& w) { scene->warnings.push_back(w); });
        }
        for (const std::string& w : scene->warnings)
          PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1);
        return scene;
      },
      py::arg("path"), py::kw_only(), py::arg("flatten") = false,
      "Loads an OBJ or glTF scene; glTF in two levels unless flatten (hwbvh build --flatten).");

  py::class_<PyBlob>(m, "Blob", "An encoded BVH with its sections (a .hwbvh file's content)")
      .def_property_readonly("target", [](const PyBlob& b) { return blob::target_name(b.blob.target); })
      .def_property_readonly("name", [](const PyBlob& b) { return b.name; })
      .def_property_readonly("report",
                             [](const PyBlob& b) -> py::object {
                               if (!b.report) return py::none();
                               return json_loads(pipeline::report_to_json(*b.report));
                             },
                             "The build report (hwbvh build --json without 'output'); None when read from a file")
      .def("to_bytes",
           [](const PyBlob& b) {
             const std::vector<std::byte> bytes = blob::serialize(b.blob);
             return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
           })
      .def(
          "save",
          [](const PyBlob& b, const std::filesystem::path& path) {
            py::gil_scoped_release release;
            blob::write_file(path, b.blob);
          },
          py::arg("path"), "Writes the blob atomically (.hwbvh).")
      .def(
          "export_rra",
          [](const PyBlob& b, const std::filesystem::path& path, bool compress) {
            py::gil_scoped_release release;
            rra::write_file(path, b.blob, b.name, {.compress = compress});
          },
          py::arg("path"), py::kw_only(), py::arg("compress") = false,
          "Writes an rtip31 blob as a Radeon Raytracing Analyzer file (hwbvh export).")
      .def("__repr__", [](const PyBlob& b) {
        return "<hwbvh.Blob " + std::string(blob::target_name(b.blob.target)) + " " + b.name + ">";
      });

  m.def(
      "load",
      [](const std::filesystem::path& path) {
        auto b = std::make_unique<PyBlob>();
        b->name = path.string();
        py::gil_scoped_release release;
        b->blob = rra::read_blob_or_rra(path);
        return b;
      },
      py::arg("path"), "Reads a blob (.hwbvh) or a .rra file (hwbvh export or a driver's RT IP 3.1 capture).");

  m.def(
      "build",
      [](const PyScene& scene, const std::string& target, const std::string& quality,
         std::optional<uint32_t> stoc_level, std::optional<std::string> stoc_order,
         std::optional<uint32_t> opacity_level, std::optional<float> alpha_cutoff, std::optional<std::string> obb,
         std::optional<float> obb_ratio, int threads, const py::handle& tree) {
        pipeline::BuildBlobOptions options = api::build_options({.target = target,
                                                                       .quality = quality,
                                                                       .stoc_level = stoc_level,
                                                                       .stoc_order = std::move(stoc_order),
                                                                       .opacity_level = opacity_level,
                                                                       .alpha_cutoff = alpha_cutoff,
                                                                       .obb = std::move(obb),
                                                                       .obb_ratio = obb_ratio,
                                                                       .threads = threads});
        options.build.tree = tree_argument(tree);
        auto b = std::make_unique<PyBlob>();
        b->name = scene.path;
        py::gil_scoped_release release;
        pipeline::BuildBlobResult result = pipeline::build_any_blob(scene.scene, options);
        b->blob = std::move(result.blob);
        b->report = std::move(result.report);
        return b;
      },
      py::arg("scene"), py::kw_only(), py::arg("target") = "rtip31", py::arg("quality") = "medium",
      py::arg("stoc_level") = py::none(), py::arg("stoc_order") = py::none(), py::arg("opacity_level") = py::none(),
      py::arg("alpha_cutoff") = py::none(), py::arg("obb") = py::none(), py::arg("obb_ratio") = py::none(),
      py::arg("threads") = 0, py::arg("tree") = py::none(),
      "Builds and encodes a scene with the options of hwbvh build; with tree (a dict of numpy arrays or an .npz "
      "path, docs/tree-format.md), that tree instead of hwbvh's own (hwbvh build --tree).");

  m.def(
      "info", [](const std::filesystem::path& path) { return json_loads(api::info_json(path)); }, py::arg("path"),
      "The dictionary hwbvh info FILE --json prints.");

  m.def(
      "stats",
      [](const PyBlob& b, const std::string& rays, uint32_t width, uint32_t height, const std::string& camera,
         uint32_t ao_samples, float ao_distance, uint32_t random_rays, uint64_t seed, const std::string& rays_file,
         bool per_ray, const std::optional<std::string>& machine, const py::object& machine_params,
         const py::kwargs& trace) -> py::object {
        const api::StatsSettings settings{.rays = rays,
                                          .width = width,
                                          .height = height,
                                          .camera = camera,
                                          .ao_samples = ao_samples,
                                          .ao_distance = ao_distance,
                                          .random_rays = random_rays,
                                          .seed = seed,
                                          .rays_file = rays_file,
                                          .trace = trace_settings(trace)};
        if (!machine && !machine_params.is_none())
          throw Error(ErrorKind::BadInput, "", "machine_params: needs machine, the preset they change");
        const std::optional<api::MachineSettings> model =
            machine ? std::optional(machine_settings(*machine, machine_params)) : std::nullopt;
        stats::StatsReport report;
        std::string json;
        {
          py::gil_scoped_release release;
          report = model ? api::run_stats(b.bvh(), settings, per_ray, *model)
                         : api::run_stats(b.bvh(), settings, per_ray);
          json = stats::stats_to_json(report);
        }
        py::object summary = json_loads(json);
        if (!per_ray) return summary;
        return py::make_tuple(summary, per_ray_array(report));
      },
      py::arg("blob"), py::kw_only(), py::arg("rays") = "primary,ao,shadow", py::arg("width") = 256,
      py::arg("height") = 256, py::arg("camera") = "", py::arg("ao_samples") = 4, py::arg("ao_distance") = 0.0f,
      py::arg("random_rays") = 16384, py::arg("seed") = 1, py::arg("rays_file") = "", py::arg("per_ray") = false,
      py::arg("machine") = py::none(), py::arg("machine_params") = py::none(),
      "Traces generated rays as hwbvh stats does and returns the dictionary hwbvh stats --json prints; with per_ray, "
      "also the structured array hwbvh stats --per-ray FILE.npy writes. With machine (a preset) also the machine "
      "model, as hwbvh stats --machine PRESET, with machine_params {key: value} replacing preset parameters as "
      "hwbvh machine sweep --param KEY --values VALUE does. Tracing options (keywords): stack_size, "
      "instance_mask, heuristic, triangle_test, step_limit, stoc, no_duplicate_any_hit, oracle, threads.");

  m.def(
      "_check_rays",
      [](const py::handle& origins, const py::handle& directions, const py::handle& tmin, const py::handle& tmax) {
        const std::vector<Ray> rays = rays_from_arrays(origins, directions, tmin, tmax);
        for (std::size_t i = 0; i < rays.size(); ++i) validate_ray(rays[i], "rays", "ray " + std::to_string(i));
      },
      "Refuses the first ray trace would refuse, with its message (hwbvh.trace checks all rays before it splits "
      "them by instance mask and ray flags).");

  m.def(
      "trace",
      [](const PyBlob& b, const py::handle& origins, const py::handle& directions, const py::handle& tmin,
         const py::handle& tmax, bool any_hit, bool summary, const py::kwargs& trace) -> py::object {
        std::vector<Ray> rays = rays_from_arrays(origins, directions, tmin, tmax);
        const api::TraceSettings settings = trace_settings(trace);
        stats::StatsReport report;
        std::string json;
        {
          py::gil_scoped_release release;
          report = api::trace_rays(b.bvh(), std::move(rays), any_hit, settings);
          if (summary) json = stats::stats_to_json(report);
        }
        py::array per_ray = per_ray_array(report);
        if (!summary) return per_ray;
        return py::make_tuple(per_ray, json_loads(json));
      },
      py::arg("blob"), py::arg("origins"), py::arg("directions"), py::kw_only(), py::arg("tmin") = 0.0f,
      py::arg("tmax") = std::numeric_limits<float>::infinity(), py::arg("any_hit") = false,
      py::arg("summary") = false,
      "Traces the given rays (waves of 32 consecutive rays) and returns one structured array of per-ray results; "
      "with summary, also the statistics dictionary (ray type 'file'). Tracing options as for stats.");

  register_tree_bindings(m);
}
