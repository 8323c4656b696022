#pragma once
// The machine model's part of the Python module (bind_machine.cpp, docs/python.md "Machine model").
#include <pybind11/pybind11.h>

#include <string>

#include "hwbvh/api/machine.h"

namespace hwbvh::python {

/// A preset and its parameter overrides from Python: `parameters` is None, a dict {key: value} or a sequence of
/// (key, value) pairs; a value is a str, int or bool, written as on the command line (True -> "true").
api::MachineSettings machine_settings(const std::string& preset, const pybind11::handle& parameters);

/// Adds machine_presets and run_program to the module.
void bind_machine(pybind11::module_& m);

}  // namespace hwbvh::python
