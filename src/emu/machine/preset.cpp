// Machine presets: JSON text -> MachineConfig. The built-in presets are the files in presets/, compiled in at
// configure time (root CMakeLists.txt writes hwbvh_machine_presets.inc), so they work without the source tree.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emu/machine/json_section.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/config.h"

namespace hwbvh::emu {
namespace {

using Json = nlohmann::json;
using machine::JsonSection;
constexpr machine::JsonVocabulary kWhat{"machine preset", "is not a machine parameter"};

struct EmbeddedPreset {
  const char* name;
  const char* json;
};
constexpr EmbeddedPreset kEmbeddedPresets[] = {
#include "hwbvh_machine_presets.inc"
};

constexpr int kMaxBaseDepth = 8;

const char* find_builtin(std::string_view name) {
  for (const EmbeddedPreset& p : kEmbeddedPresets) {
    if (name == p.name) return p.json;
  }
  return nullptr;
}

std::string builtin_list() {
  std::string list;
  for (const std::string& n : builtin_machine_presets()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

// A documented value {"value": ..., "unit": ..., "source": ...} is a leaf: an override replaces it whole, so a value
// never keeps the unit or source of the value it replaced.
bool is_documented(const Json& j) { return j.is_object() && j.contains("value"); }

void merge_into(Json& base, const Json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) {
    const auto b = base.find(it.key());
    if (b != base.end() && b->is_object() && it->is_object() && !is_documented(*b) && !is_documented(*it)) {
      merge_into(*b, *it);
    } else {
      base[it.key()] = *it;
    }
  }
}

// Applies "base" chains: the named built-in preset first, this file's keys over it.
Json resolve_base(Json j, const std::string& origin, int depth) {
  const auto it = j.find("base");
  if (it == j.end()) return j;
  if (!it->is_string()) throw_bad_input(origin, "machine preset key 'base' must name a built-in preset");
  const std::string base_name = it->get<std::string>();
  const char* text = find_builtin(base_name);
  if (text == nullptr) {
    throw_bad_input(origin, "machine preset key 'base': no built-in preset '" + base_name + "' (built-in: " +
                                builtin_list() + ")");
  }
  if (depth >= kMaxBaseDepth) throw_bad_input(origin, "machine preset key 'base': chain too deep (a cycle?)");
  Json merged = resolve_base(machine::parse_json_object(text, base_name, kWhat), base_name, depth + 1);
  j.erase("base");
  merge_into(merged, j);
  return merged;
}

PhaseConfig read_phase(const Json& j, size_t index, const std::string& origin) {
  JsonSection s(j, "kernel.phases[" + std::to_string(index) + "]", origin, kWhat);
  PhaseConfig p;
  p.name = s.text("name");
  p.vgprs = s.u32("vgprs");
  p.alu_cycles = s.u32_or("alu_cycles", 0);
  p.wait_cycles = s.u32_or("wait_cycles", 0);
  p.traversal = s.flag_or("traversal", false);
  p.barrier = s.flag_or("barrier", false);
  if (s.has("description")) s.text("description");  // documentation only
  s.finish();
  return p;
}

SharedBy read_shared_by(JsonSection& s) {
  const std::string text = s.text("shared_by");
  for (const SharedBy b : {SharedBy::ComputeUnit, SharedBy::ShaderArray, SharedBy::Gpu}) {
    if (text == to_string(b)) return b;
  }
  s.fail(s.name("shared_by"), "must be \"cu\", \"shader_array\" or \"gpu\"");
}

// A memory level's keys; the scalar cache has no name or shared_by key (it is "scalar", one per CU).
MemoryLevelConfig read_level(const Json& j, const std::string& path, const std::string& origin, bool scalar) {
  JsonSection s(j, path, origin, kWhat);
  MemoryLevelConfig l;
  l.name = scalar ? "scalar" : s.text("name");
  if (!scalar) l.shared_by = read_shared_by(s);
  l.bytes = s.u64("bytes");
  l.line_bytes = s.u32("line_bytes");
  l.ways = s.u32("ways");
  l.hit_latency = s.u32("hit_latency");
  l.bytes_per_clock = s.u32("bytes_per_clock");
  l.misses_in_flight = s.u32("misses_in_flight");
  s.finish();
  return l;
}

MachineConfig read_config(const Json& j, const std::string& origin) {
  MachineConfig c;
  c.name = origin;
  JsonSection top(j, "", origin, kWhat);
  c.description = top.text("description");

  JsonSection cu = top.section("compute_unit");
  c.compute_unit.simds = cu.u32("simds");
  c.compute_unit.wave_slots = cu.u32("wave_slots");
  c.compute_unit.vgprs_per_lane = cu.u32("vgprs_per_lane");
  c.compute_unit.issue_burst = cu.u32("issue_burst");
  cu.finish();

  JsonSection ra = top.section("ray_accelerator");
  const std::string formats = ra.text("node_formats");
  for (std::size_t begin = 0; begin <= formats.size();) {
    const std::size_t end = std::min(formats.find(',', begin), formats.size());
    c.ray_accelerator.node_formats.push_back(formats.substr(begin, end - begin));
    begin = end + 1;
  }
  c.ray_accelerator.box_tests_per_clock = ra.u32("box_tests_per_clock");
  c.ray_accelerator.triangle_tests_per_clock = ra.u32("triangle_tests_per_clock");
  c.ray_accelerator.bvhcnt_limit = ra.u32("bvhcnt_limit");
  c.ray_accelerator.instance_transform_clocks = ra.u32("instance_transform_clocks");
  c.ray_accelerator.pipeline_latency = ra.u32("pipeline_latency");
  c.ray_accelerator.queue_depth = ra.u32("queue_depth");
  c.ray_accelerator.result_lanes_per_clock = ra.u32("result_lanes_per_clock");
  ra.finish();

  JsonSection mem = top.section("memory");
  const Json& levels = mem.array("levels");
  for (size_t i = 0; i < levels.size(); ++i) {
    c.memory.levels.push_back(read_level(levels[i], "memory.levels[" + std::to_string(i) + "]", origin, false));
  }
  if (mem.has("scalar_cache")) {
    c.memory.scalar_cache = read_level(mem.members("scalar_cache"), "memory.scalar_cache", origin, true);
  }
  c.memory.address_lanes_per_clock = mem.u32("address_lanes_per_clock");
  c.memory.in_order_returns = mem.flag("in_order_returns");
  const std::string counters = mem.text("wait_counters");
  if (counters != "split" && counters != "combined") {
    mem.fail("memory.wait_counters", "must be \"split\" or \"combined\"");
  }
  c.memory.wait_counters = counters == "split" ? WaitCounters::Split : WaitCounters::Combined;
  c.memory.scalar_returns_in_order = mem.flag("scalar_returns_in_order");
  c.memory.counter_limits = {mem.u32("load_counter_limit"), mem.u32("sample_counter_limit"),
                             mem.u32("lds_counter_limit"), mem.u32("scalar_counter_limit")};
  mem.finish();

  JsonSection lds = top.section("lds");
  c.lds.latency = lds.u32("latency");
  c.lds.busy_cycles = lds.u32("busy_cycles");
  lds.finish();

  JsonSection v = top.section("vgpr_allocation");
  const std::string mode = v.text("mode");
  if (mode != "static" && mode != "dynamic") v.fail("vgpr_allocation.mode", "must be \"static\" or \"dynamic\"");
  c.vgpr.mode = mode == "static" ? VgprAllocation::Static : VgprAllocation::Dynamic;
  c.vgpr.static_granule = v.u32("static_granule");
  c.vgpr.block_vgprs = v.u32("block_vgprs");
  c.vgpr.max_blocks = v.u32("max_blocks");
  c.vgpr.dynamic_wave_limit = v.u32("dynamic_wave_limit");
  c.vgpr.deadlock_avoidance = v.flag("deadlock_avoidance");
  c.vgpr.alloc_cycles = v.u32("alloc_cycles");
  c.vgpr.retry_cycles = v.u32("retry_cycles");
  v.finish();

  JsonSection k = top.section("kernel");
  c.kernel.rays_per_lane = k.u32("rays_per_lane");
  c.kernel.workgroup_waves = k.u32("workgroup_waves");
  c.kernel.loop_alu_cycles = k.u32("loop_alu_cycles");
  c.kernel.warm_caches = k.flag("warm_caches");
  const Json& phases = k.array("phases");
  for (size_t i = 0; i < phases.size(); ++i) c.kernel.phases.push_back(read_phase(phases[i], i, origin));
  k.finish();

  JsonSection limits = top.section("limits");
  c.max_cycles = limits.u64("max_cycles");
  limits.finish();

  JsonSection gpu = top.section("gpu");
  c.gpu.name = gpu.text("name");
  c.gpu.clock_mhz = gpu.u32("clock_mhz");
  c.gpu.shader_engines = gpu.u32("shader_engines");
  c.gpu.shader_arrays_per_engine = gpu.u32("shader_arrays_per_engine");
  c.gpu.cus_per_shader_array = gpu.u32("cus_per_shader_array");
  c.gpu.simulated_shader_arrays = gpu.u32("simulated_shader_arrays");
  gpu.finish();

  top.finish();
  return c;
}

// A built-in preset's text, or else the file's.
std::string preset_text(const std::string& name) {
  if (const char* text = find_builtin(name)) return text;
  std::optional<std::string> text = machine::read_regular_file(name);
  if (!text) {
    throw_bad_input(name, "no built-in machine preset of this name (built-in: " + builtin_list() +
                              ") and no readable file");
  }
  return std::move(*text);
}

// The single value `key` names in a resolved preset: "section.key", a nested section's "section.inner.key"
// (memory.scalar_cache.bytes), or "section.array[NAME].key" for an array of named objects
// (kernel.phases[trace].vgprs, memory.levels[L0].bytes).
Json& find_parameter(Json& preset, std::string_view key, const std::string& origin) {
  const auto fail = [&](const std::string& problem) {
    throw_bad_input(origin, "machine preset key '" + std::string(key) + "' " + problem);
  };
  const size_t dot = key.rfind('.');
  if (dot == std::string_view::npos) {
    fail("is not a machine parameter (keys are section.key, e.g. memory.levels[L0].bytes)");
  }
  const std::string outer(key.substr(0, dot)), inner(key.substr(dot + 1));
  Json* section = &preset;
  for (size_t begin = 0; begin <= outer.size();) {
    const size_t end = std::min(outer.find('.', begin), outer.size());
    const std::string part = outer.substr(begin, end - begin);
    const size_t open = part.find('[');
    const std::string list = outer.substr(0, begin + std::min(open, part.size()));
    begin = end + 1;
    const std::string member = part.substr(0, open);
    if (!section->is_object() || is_documented(*section) || !section->contains(member)) fail("is not a machine parameter");
    section = &(*section)[member];
    if (open == std::string::npos) continue;
    if (!part.ends_with("]") || !section->is_array()) fail("is not a machine parameter");
    const std::string element = part.substr(open + 1, part.size() - open - 2);
    Json* found = nullptr;
    for (Json& e : *section) {
      if (e.is_object() && e.contains("name") && e["name"] == element) found = &e;
    }
    if (found == nullptr) fail("names no element of " + list);
    section = found;
  }
  if (section == &preset || !section->is_object() || is_documented(*section) || !section->contains(inner) ||
      inner == "name" || inner == "description") {
    fail("is not a machine parameter");
  }
  Json& parameter = (*section)[inner];
  if (!(is_documented(parameter) ? parameter["value"] : parameter).is_primitive()) fail("is not a single value");
  return parameter;
}

// A primitive value as a command line writes it: 64, true, split.
std::string value_text(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// Every single value under `section`, keyed from `prefix`, in file order (find_parameter's key forms).
void collect_parameters(const Json& section, const std::string& prefix, std::vector<MachinePresetParameter>& out) {
  for (auto it = section.begin(); it != section.end(); ++it) {
    const std::string key = prefix + it.key();
    if (it.key() == "name" || it.key() == "description") continue;
    if (is_documented(*it)) {
      if (!(*it)["value"].is_primitive()) continue;  // a list (none in the shipped presets) is not a single value
      out.push_back({key, value_text((*it)["value"]), it->value("unit", ""), it->value("source", "")});
    } else if (it->is_object()) {
      collect_parameters(*it, key + ".", out);
    } else if (it->is_array()) {
      for (const Json& e : *it) {
        if (e.is_object() && e.contains("name") && e["name"].is_string()) {
          collect_parameters(e, key + "[" + e["name"].get<std::string>() + "].", out);
        }
      }
    } else {
      out.push_back({key, value_text(*it), "", ""});
    }
  }
}

}  // namespace

std::vector<std::string> builtin_machine_presets() {
  std::vector<std::string> names;
  for (const EmbeddedPreset& p : kEmbeddedPresets) names.emplace_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

MachineConfig parse_machine_preset(std::string_view json, const std::string& origin) {
  MachineConfig c = read_config(resolve_base(machine::parse_json_object(json, origin, kWhat), origin, 0), origin);
  c.validate();
  return c;
}

MachineConfig load_machine_preset(std::string_view name_or_path) {
  const std::string name(name_or_path);
  return parse_machine_preset(preset_text(name), name);
}

MachineConfig load_machine_preset(std::string_view name_or_path, std::string_view key, std::string_view value) {
  const ParameterOverride one{std::string(key), std::string(value)};
  return load_machine_preset(name_or_path, std::span(&one, 1));
}

MachineConfig load_machine_preset(std::string_view name_or_path, std::span<const ParameterOverride> overrides) {
  const std::string name(name_or_path);
  Json j = resolve_base(machine::parse_json_object(preset_text(name), name, kWhat), name, 0);
  std::string origin = name;
  for (const ParameterOverride& o : overrides) {
    Json& parameter = find_parameter(j, o.key, name);
    Json parsed = Json::parse(o.value, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_primitive() || parsed.is_null()) parsed = o.value;  // a word: "dynamic"
    (is_documented(parameter) ? parameter["value"] : parameter) = parsed;
    origin += (&o == overrides.data() ? " with " : ", ") + o.key + " = " + o.value;
  }
  MachineConfig c = read_config(j, origin);
  c.validate();
  c.name = name;
  return c;
}

std::vector<MachinePresetParameter> machine_preset_parameters(std::string_view name_or_path) {
  const std::string name(name_or_path);
  const Json j = resolve_base(machine::parse_json_object(preset_text(name), name, kWhat), name, 0);
  std::vector<MachinePresetParameter> parameters;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_object() && !is_documented(*it)) collect_parameters(*it, it.key() + ".", parameters);
  }
  return parameters;
}

std::string machine_parameter_unit(std::string_view name_or_path, std::string_view key) {
  const std::string name(name_or_path);
  Json j = resolve_base(machine::parse_json_object(preset_text(name), name, kWhat), name, 0);
  const Json& parameter = find_parameter(j, key, name);
  return is_documented(parameter) && parameter.contains("unit") ? parameter["unit"].get<std::string>() : "";
}

}  // namespace hwbvh::emu
