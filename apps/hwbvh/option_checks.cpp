#include "option_checks.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace hwbvh::cli {
namespace {

// A validator accepting the finite numbers `accept` holds for; `range` describes them in the message.
CLI::Validator number_check(std::function<bool(double)> accept, const std::string& range, const std::string& name) {
  return CLI::Validator(
      [accept, range](std::string& input) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(input, value) || !std::isfinite(value) || !accept(value))
          return "must be " + range + " (got " + input + ")";
        return {};
      },
      name);
}

}  // namespace

CLI::Validator positive_number() {
  return number_check([](double v) { return v > 0.0; }, "a positive number", "> 0");
}

CLI::Validator non_negative_number() {
  return number_check([](double v) { return v >= 0.0; }, "a number >= 0", ">= 0");
}

CLI::Validator number_between(double low, double high) {
  return number_check([low, high](double v) { return v >= low && v <= high; },
                      fmt::format("between {} and {}", low, high), fmt::format("in [{} - {}]", low, high));
}

}  // namespace hwbvh::cli
