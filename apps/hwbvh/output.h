#pragma once
// Printing helpers shared by the subcommands: aligned two-column tables and the build report.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::cli {

using Json = nlohmann::ordered_json;

/// Label/value rows printed with the values aligned in one column; an empty label prints a blank line.
class Table {
 public:
  void row(std::string label, std::string value) { rows_.emplace_back(std::move(label), std::move(value)); }
  void blank() { rows_.emplace_back(); }
  /// Writes the table to stdout.
  void print() const;

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

/// Appends the report's rows (statistics, options, and the per-phase seconds when the report has run info).
void add_report_rows(Table& table, const pipeline::BuildReport& report);
/// The report as a JSON value (pipeline::report_to_json, parsed).
Json report_json(const pipeline::BuildReport& report);

/// Prints `json` to stdout, indented, followed by a newline.
void print_json(const Json& json);

/// Loader warnings, collected while a progress line may be showing and printed on stderr once the work is done
/// ("hwbvh: warning: ..."), unless --quiet.
class Warnings {
 public:
  [[nodiscard]] WarningFn collector() {
    return [this](const std::string& warning) { lines_.push_back(warning); };
  }
  void print(bool quiet) const;

 private:
  std::vector<std::string> lines_;
};

/// Refuses an output path that names one of `inputs` (empty ones are skipped), which the atomic rename would
/// otherwise replace: throws hwbvh::Error(BadInput) naming `output`.
void check_output_is_not_input(const std::string& output, const std::vector<std::string>& inputs);

/// A comma-separated list of values ("16,32"). Throws hwbvh::Error(BadInput) naming `option` for an empty list or
/// an empty value.
std::vector<std::string> split_values(const std::string& list, const std::string& option);

/// "0x" + lowercase hex.
std::string hex(uint64_t value);

/// Parses a non-negative integer written in decimal or with a 0x prefix (no octal). Throws hwbvh::Error
/// (BadInput) naming `option` when `text` is not such a number.
uint64_t parse_unsigned(const std::string& text, const std::string& option);

}  // namespace hwbvh::cli
