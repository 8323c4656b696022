// hwbvh.machine_presets and hwbvh.run_program: the machine model's presets and wave programs (api/machine.h);
// hwbvh.stats(machine=..., machine_params=...) in hwbvh_python.cpp uses machine_settings.
#include "bind_machine.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <utility>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/config.h"

namespace py = pybind11;

namespace hwbvh::python {
namespace {

// A parameter's value as the command line writes it: Python's True is the command line's true.
std::string parameter_text(const std::string& key, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(value) || py::isinstance<py::str>(value) || py::isinstance<py::float_>(value))
    return py::str(value);
  throw Error(ErrorKind::BadInput, "", "machine_params: '" + key + "': expected a str, int or bool value, not " +
                                           std::string(py::str(value.get_type().attr("__name__"))));
}

}  // namespace

api::MachineSettings machine_settings(const std::string& preset, const py::handle& parameters) {
  api::MachineSettings settings{.preset = preset, .parameters = {}};
  if (parameters.is_none()) return settings;
  const py::object pairs =
      py::isinstance<py::dict>(parameters) ? parameters.attr("items")() : py::reinterpret_borrow<py::object>(parameters);
  for (const py::handle& pair : pairs) {
    const auto [key, value] = pair.cast<std::pair<std::string, py::object>>();
    settings.parameters.push_back({key, parameter_text(key, value)});
  }
  return settings;
}

void bind_machine(py::module_& m) {
  m.def("machine_presets", &emu::builtin_machine_presets,
        "The names of the built-in machine presets (presets/*.json, compiled in).");
  m.def(
      "run_program",
      [](const py::object& program, const std::string& machine, const py::object& machine_params) {
        const api::MachineSettings settings = machine_settings(machine, machine_params);
        std::filesystem::path path;
        std::string text;
        if (py::isinstance<py::dict>(program)) {
          path = "<program>";
          text = py::str(py::module_::import("json").attr("dumps")(program));
        } else {
          path = program.cast<std::filesystem::path>();
        }
        std::string json;
        {
          py::gil_scoped_release release;
          const api::WaveProgramRun run = api::run_wave_program(path, settings, text);
          json = emu::to_json(run.result, run.config, run.program);
        }
        return py::module_::import("json").attr("loads")(json);
      },
      py::arg("program"), py::kw_only(), py::arg("machine"), py::arg("machine_params") = py::none(),
      "Runs a wave program (a file such as presets/programs/occupancy.json, or the program as a dict) on one compute "
      "unit of a machine preset with parameters replaced; returns the dictionary hwbvh machine run PROGRAM "
      "--machine PRESET --json prints.");
}

}  // namespace hwbvh::python
