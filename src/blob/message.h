#pragma once
// Message building for validation errors (this module does not link fmt).
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

namespace hwbvh::blob::detail {

/// Concatenates the arguments as an ostream would print them.
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream s;
  (s << ... << args);
  return s.str();
}

/// "0x" followed by 16 hex digits, for checksums.
inline std::string hex64(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace hwbvh::blob::detail
