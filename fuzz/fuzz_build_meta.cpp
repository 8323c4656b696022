// The BuildMeta JSON that `hwbvh info` reads back (pipeline::report_from_json, docs/blob-format.md §9): any text is
// refused with hwbvh::Error(BadInput) — wrong types and out-of-range numbers included — or gives a report that
// survives report_to_json unchanged.
#include <string_view>

#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/pipeline/pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hwbvh::pipeline::BuildReport report;
  try {
    report = hwbvh::pipeline::report_from_json(text, "fuzz.json");
  } catch (const hwbvh::Error&) {
    return 0;
  }
  const auto again = hwbvh::pipeline::report_from_json(hwbvh::pipeline::report_to_json(report), "round-trip");
  hwbvh::fuzz::fuzz_check(again == report, "a report read back round-trips");
  return 0;
}
