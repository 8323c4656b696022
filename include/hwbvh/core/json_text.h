#pragma once
// JSON documents as text, whatever bytes their strings hold. File names come from the file system and may not be
// valid UTF-8 (Latin-1 names from older Windows tools); nlohmann's default dump() throws on them. Here each invalid
// byte becomes U+FFFD, as the OBJ loader does for names inside files (docs/cli.md).
#include <string>

namespace hwbvh {

/// `json.dump(indent)` with invalid UTF-8 replaced by U+FFFD. `Json` is nlohmann::json or nlohmann::ordered_json.
template <class Json>
[[nodiscard]] std::string json_text(const Json& json, int indent = -1) {
  return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace hwbvh
