#pragma once
// The one exception type of the library. Every message names the file (when there is one) and the problem,
// so the CLI can print it as a single line and choose the exit code from the kind.
#include <stdexcept>
#include <string>

namespace hwbvh {

enum class ErrorKind {
  BadInput,  ///< The user's input is missing, malformed or unsupported (CLI exit code 2).
  Runtime,   ///< Something failed while doing valid work, e.g. a write error (CLI exit code 1).
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string file, const std::string& problem)
      : std::runtime_error(file.empty() ? problem : file + ": " + problem), kind_(kind), file_(std::move(file)) {}
  [[nodiscard]] ErrorKind kind() const { return kind_; }
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  ErrorKind kind_;
  std::string file_;
};

/// Shorthand for the common case: bad input in a named file.
[[noreturn]] inline void throw_bad_input(const std::string& file, const std::string& problem) {
  throw Error(ErrorKind::BadInput, file, problem);
}

}  // namespace hwbvh
