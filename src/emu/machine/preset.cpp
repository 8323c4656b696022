// Machine presets: JSON text -> MachineConfig. The built-in presets are the files in presets/, compiled in at
// configure time (root CMakeLists.txt writes hwbvh_machine_presets.inc), so they work without the source tree.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/config.h"

namespace hwbvh::emu {
namespace {

using Json = nlohmann::json;

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

Json parse_json(std::string_view text, const std::string& origin) {
  // JSON allows repeated keys and the parser keeps the last; in a preset that is almost surely a mistake.
  std::vector<std::set<std::string>> keys;
  const Json::parser_callback_t reject_duplicates = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end) keys.pop_back();
    if (event == Json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second) {
      throw_bad_input(origin, "machine preset key '" + parsed.get<std::string>() + "' appears twice in one object");
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), reject_duplicates, true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    throw_bad_input(origin, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw_bad_input(origin, "a machine preset must be a JSON object");
  return j;
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
  Json merged = resolve_base(parse_json(text, base_name), base_name, depth + 1);
  j.erase("base");
  merge_into(merged, j);
  return merged;
}

// One JSON object of the preset: every key must be read exactly by the schema below; finish() rejects the rest.
class Section {
 public:
  Section(const Json& j, std::string path, const std::string& origin)
      : j_(j), path_(std::move(path)), origin_(origin) {
    if (!j.is_object()) fail(path_, "must be an object");
  }

  [[nodiscard]] bool has(const char* key) const { return j_.contains(key); }

  uint32_t u32(const char* key) { return static_cast<uint32_t>(whole(key, UINT32_MAX)); }
  uint64_t u64(const char* key) { return whole(key, UINT64_MAX); }
  uint32_t u32_or(const char* key, uint32_t fallback) { return has(key) ? u32(key) : fallback; }

  bool flag(const char* key) {
    const Json& v = value(key);
    if (!v.is_boolean()) fail(name(key), "must be true or false");
    return v.get<bool>();
  }
  bool flag_or(const char* key, bool fallback) { return has(key) ? flag(key) : fallback; }

  std::string text(const char* key) {
    const Json& v = value(key);
    if (!v.is_string()) fail(name(key), "must be a string");
    return v.get<std::string>();
  }

  Section section(const char* key) { return {raw(key), name(key), origin_}; }

  const Json& array(const char* key) {
    const Json& v = raw(key);
    if (!v.is_array()) fail(name(key), "must be an array");
    return v;
  }

  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!used_.count(it.key())) fail(name(it.key()), "is not a machine parameter");
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw_bad_input(origin_, "machine preset key '" + key + "' " + problem);
  }
  [[nodiscard]] std::string name(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const Json& raw(const char* key) {
    used_.insert(key);
    const auto it = j_.find(key);
    if (it == j_.end()) fail(name(key), "is missing");
    return *it;
  }

  // The plain value, or the "value" of a documented one (whose other keys may only be "unit" and "source").
  const Json& value(const char* key) {
    const Json& v = raw(key);
    if (!v.is_object()) return v;
    if (!v.contains("value")) fail(name(key), "must be a value or {\"value\": ..., \"unit\": ..., \"source\": ...}");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const bool note = it.key() == "unit" || it.key() == "source";
      if (it.key() != "value" && !note) fail(name(key) + "." + it.key(), "is not allowed (value, unit, source)");
      if (note && !it->is_string()) fail(name(key) + "." + it.key(), "must be a string");
    }
    return v["value"];
  }

  uint64_t whole(const char* key, uint64_t max) {
    const Json& v = value(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
      fail(name(key), "must be a whole number in 0.." + std::to_string(max) + ", not " + v.dump());
    }
    return v.get<uint64_t>();
  }

  const Json& j_;
  std::string path_;
  const std::string& origin_;
  std::set<std::string> used_;
};

PhaseConfig read_phase(const Json& j, size_t index, const std::string& origin) {
  Section s(j, "kernel.phases[" + std::to_string(index) + "]", origin);
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

MachineConfig read_config(const Json& j, const std::string& origin) {
  MachineConfig c;
  c.name = origin;
  Section top(j, "", origin);
  c.description = top.text("description");

  Section cu = top.section("compute_unit");
  c.compute_unit.simds = cu.u32("simds");
  c.compute_unit.wave_slots = cu.u32("wave_slots");
  c.compute_unit.vgprs_per_lane = cu.u32("vgprs_per_lane");
  c.compute_unit.issue_burst = cu.u32("issue_burst");
  cu.finish();

  Section ra = top.section("ray_accelerator");
  c.ray_accelerator.box_tests_per_clock = ra.u32("box_tests_per_clock");
  c.ray_accelerator.triangle_tests_per_clock = ra.u32("triangle_tests_per_clock");
  c.ray_accelerator.bvhcnt_limit = ra.u32("bvhcnt_limit");
  ra.finish();

  Section mem = top.section("memory");
  c.memory.cache_bytes = mem.u32("cache_bytes");
  c.memory.line_bytes = mem.u32("line_bytes");
  c.memory.hit_latency = mem.u32("hit_latency");
  c.memory.miss_latency = mem.u32("miss_latency");
  c.memory.in_order_returns = mem.flag("in_order_returns");
  mem.finish();

  Section lds = top.section("lds");
  c.lds.latency = lds.u32("latency");
  c.lds.busy_cycles = lds.u32("busy_cycles");
  lds.finish();

  Section v = top.section("vgpr_allocation");
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

  Section k = top.section("kernel");
  c.kernel.rays_per_lane = k.u32("rays_per_lane");
  c.kernel.workgroup_waves = k.u32("workgroup_waves");
  c.kernel.loop_alu_cycles = k.u32("loop_alu_cycles");
  const Json& phases = k.array("phases");
  for (size_t i = 0; i < phases.size(); ++i) c.kernel.phases.push_back(read_phase(phases[i], i, origin));
  k.finish();

  Section limits = top.section("limits");
  c.max_cycles = limits.u64("max_cycles");
  limits.finish();

  if (top.has("gpu")) {
    Section gpu = top.section("gpu");
    c.gpu.name = gpu.text("name");
    c.gpu.compute_units = gpu.u32("compute_units");
    c.gpu.clock_mhz = gpu.u32("clock_mhz");
    gpu.finish();
  }

  top.finish();
  return c;
}

// A built-in preset's text, or else the file's.
std::string preset_text(const std::string& name) {
  if (const char* text = find_builtin(name)) return text;
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(name, ec)) in.open(name, std::ios::binary);
  if (!in.is_open()) {
    throw_bad_input(name, "no built-in machine preset of this name (built-in: " + builtin_list() +
                              ") and no readable file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The single value `key` names in a resolved preset: "section.key" or "kernel.phases[NAME].key".
Json& find_parameter(Json& preset, std::string_view key, const std::string& origin) {
  const auto fail = [&](const std::string& problem) {
    throw_bad_input(origin, "machine preset key '" + std::string(key) + "' " + problem);
  };
  const size_t dot = key.rfind('.');
  if (dot == std::string_view::npos) fail("is not a machine parameter (keys are section.key, e.g. memory.cache_bytes)");
  const std::string outer(key.substr(0, dot)), inner(key.substr(dot + 1));
  Json* section = nullptr;
  if (const size_t open = outer.find('['); open != std::string::npos && outer.starts_with("kernel.phases[") &&
                                           outer.ends_with("]")) {
    const std::string phase = outer.substr(open + 1, outer.size() - open - 2);
    for (Json& p : preset["kernel"]["phases"]) {
      if (p.is_object() && p.contains("name") && p["name"] == phase) section = &p;
    }
    if (section == nullptr) fail("names no phase of kernel.phases");
  } else if (preset.contains(outer) && preset[outer].is_object() && !is_documented(preset[outer])) {
    section = &preset[outer];
  }
  if (section == nullptr || !section->contains(inner) || inner == "name" || inner == "description") {
    fail("is not a machine parameter");
  }
  Json& parameter = (*section)[inner];
  if (!(is_documented(parameter) ? parameter["value"] : parameter).is_primitive()) fail("is not a single value");
  return parameter;
}

}  // namespace

std::vector<std::string> builtin_machine_presets() {
  std::vector<std::string> names;
  for (const EmbeddedPreset& p : kEmbeddedPresets) names.emplace_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

MachineConfig parse_machine_preset(std::string_view json, const std::string& origin) {
  MachineConfig c = read_config(resolve_base(parse_json(json, origin), origin, 0), origin);
  c.validate();
  return c;
}

MachineConfig load_machine_preset(std::string_view name_or_path) {
  const std::string name(name_or_path);
  return parse_machine_preset(preset_text(name), name);
}

MachineConfig load_machine_preset(std::string_view name_or_path, std::string_view key, std::string_view value) {
  const std::string name(name_or_path);
  Json j = resolve_base(parse_json(preset_text(name), name), name, 0);
  Json& parameter = find_parameter(j, key, name);
  const std::string text(value);
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_primitive() || parsed.is_null()) parsed = text;  // a word: "dynamic"
  (is_documented(parameter) ? parameter["value"] : parameter) = parsed;
  const std::string origin = name + " with " + std::string(key) + " = " + text;
  MachineConfig c = read_config(j, origin);
  c.validate();
  c.name = name;
  return c;
}

std::string machine_parameter_unit(std::string_view name_or_path, std::string_view key) {
  const std::string name(name_or_path);
  Json j = resolve_base(parse_json(preset_text(name), name), name, 0);
  const Json& parameter = find_parameter(j, key, name);
  return is_documented(parameter) && parameter.contains("unit") ? parameter["unit"].get<std::string>() : "";
}

}  // namespace hwbvh::emu
