#pragma once
// Validators for numeric options whose messages name the accepted range in plain numbers: CLI11's own print their
// bounds with std::to_string (PositiveNumber's upper bound is DBL_MAX in 300 digits, its lower one "0.000000").
#include <CLI/CLI.hpp>

namespace hwbvh::cli {

/// A finite number > 0: "must be a positive number (got 0)".
CLI::Validator positive_number();
/// A finite number >= 0.
CLI::Validator non_negative_number();
/// A number in [low, high]: "must be between 0 and 1 (got 2)".
CLI::Validator number_between(double low, double high);

}  // namespace hwbvh::cli
