// The blob reader (blob::parse, docs/blob-format.md): any bytes are refused with hwbvh::Error(BadInput) or
// parsed into a blob that serialises back to exactly the same bytes when the file was laid out canonically, and
// always to bytes the reader accepts again. Each input is read twice: as given (the checksums guard everything),
// and resealed with correct checksums, so that mutations reach the structural checks behind them.
#include "fuzz_common.h"
#include "hwbvh/core/error.h"

namespace hwbvh::fuzz {
namespace {

void read(std::span<const std::byte> bytes) {
  blob::Blob parsed;
  blob::FileLayout layout;
  try {
    parsed = blob::parse(bytes, "fuzz.hwbvh", layout);
  } catch (const Error&) {
    return;
  }
  fuzz_check(layout.file_size == bytes.size() && layout.sections.size() == parsed.sections.size(),
             "the layout describes the file");
  const std::vector<std::byte> again = blob::serialize(parsed);
  fuzz_check(same_content(blob::parse(again, "round-trip"), parsed), "a parsed blob round-trips");
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = hwbvh::fuzz::input_bytes(data, size);
  hwbvh::fuzz::read(bytes);
  hwbvh::fuzz::read(hwbvh::fuzz::reseal(bytes));
  return 0;
}
