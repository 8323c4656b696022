#pragma once
// Strict reading of the machine model's JSON files (presets, wave programs): repeated keys, unknown keys, missing
// keys and mistyped values are errors naming the file and the key.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <sstream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hwbvh/core/error.h"

namespace hwbvh::emu::machine {

/// How errors name the file's kind: "<what> key 'k' ..." and, for a key the schema does not read, `unknown`.
struct JsonVocabulary {
  const char* what;
  const char* unknown;
};

/// The text of a regular file, or nullopt if there is none at `path` or it cannot be read.
inline std::optional<std::string> read_regular_file(const std::string& path) {
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) in.open(path, std::ios::binary);
  if (!in.is_open()) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Parses a JSON object (`//` comments allowed), rejecting a key repeated in one object (the parser would keep the
/// last, almost surely a mistake).
inline nlohmann::json parse_json_object(std::string_view text, const std::string& origin, const JsonVocabulary& v) {
  using Json = nlohmann::json;
  std::vector<std::set<std::string>> keys;
  const Json::parser_callback_t reject_duplicates = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end) keys.pop_back();
    if (event == Json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second) {
      throw_bad_input(origin, std::string(v.what) + " key '" + parsed.get<std::string>() +
                                  "' appears twice in one object");
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), reject_duplicates, true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    throw_bad_input(origin, std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw_bad_input(origin, std::string("a ") + v.what + " must be a JSON object");
  return j;
}

/// One JSON object: every key must be read exactly by the schema; finish() rejects the rest. A value is plain or
/// documented ({"value": ..., "unit": ..., "source": ...}).
class JsonSection {
 public:
  using Json = nlohmann::json;

  JsonSection(const Json& j, std::string path, const std::string& origin, const JsonVocabulary& vocabulary)
      : j_(j), path_(std::move(path)), origin_(origin), vocabulary_(vocabulary) {
    if (!j.is_object()) fail(path_, "must be an object");
  }

  [[nodiscard]] bool has(const char* key) const { return j_.contains(key); }

  uint32_t u32(const char* key) { return static_cast<uint32_t>(whole(key, UINT32_MAX)); }
  uint64_t u64(const char* key) { return whole(key, UINT64_MAX); }
  uint32_t u32_or(const char* key, uint32_t fallback) { return has(key) ? u32(key) : fallback; }
  uint64_t u64_or(const char* key, uint64_t fallback) { return has(key) ? u64(key) : fallback; }

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
  std::string text_or(const char* key, const std::string& fallback) { return has(key) ? text(key) : fallback; }

  JsonSection section(const char* key) { return {raw(key), name(key), origin_, vocabulary_}; }

  const Json& array(const char* key) {
    const Json& v = raw(key);
    if (!v.is_array()) fail(name(key), "must be an array");
    return v;
  }

  /// The object itself, for keys the schema does not know in advance (names).
  const Json& members(const char* key) {
    const Json& v = raw(key);
    if (!v.is_object()) fail(name(key), "must be an object");
    return v;
  }

  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!used_.count(it.key())) fail(name(it.key()), vocabulary_.unknown);
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw_bad_input(origin_, std::string(vocabulary_.what) + " key '" + key + "' " + problem);
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
  JsonVocabulary vocabulary_;
  std::set<std::string> used_;
};

}  // namespace hwbvh::emu::machine
