// .npz tree files and .npy arrays (core/npz.h, docs/tree-format.md): any bytes are refused with hwbvh::Error(BadInput)
// or give arrays whose data is exactly their shape's size and that survive a round trip through npz_bytes. An input
// that does not start as a zip archive is read as one .npy file, so that the header parser is reached directly.
#include "fuzz_common.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/npz.h"

namespace hwbvh::fuzz {
namespace {

void check_array(const NpyArray& a) {
  fuzz_check(a.data.size() == a.element_count() * a.item_bytes, "data is the shape's size");
  if (a.kind != 'i' && a.kind != 'u') return;
  try {
    fuzz_check(int_values(a, "fuzz.npz", "a").size() == a.element_count(), "one value per element");
  } catch (const Error& e) {
    fuzz_check(e.kind() == ErrorKind::BadInput, "refusals are BadInput");
  }
}

bool same(const NpyArray& a, const NpyArray& b) {
  return a.descr() == b.descr() && a.shape == b.shape && a.data == b.data;
}

}  // namespace
}  // namespace hwbvh::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hwbvh;
  const auto bytes = fuzz::input_bytes(data, size);
  constexpr uint64_t kMaxBytes = uint64_t{1} << 24;  // a deflated entry may claim far more than the input holds
  std::vector<std::pair<std::string, NpyArray>> arrays;
  try {
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
      arrays = parse_npz(bytes, "fuzz.npz", kMaxBytes);
    } else {
      arrays.emplace_back("a", parse_npy(bytes, "fuzz.npz", "a.npy"));
    }
  } catch (const Error& e) {
    fuzz::fuzz_check(e.kind() == ErrorKind::BadInput, "refusals are BadInput");
    return 0;
  }
  for (const auto& [name, array] : arrays) fuzz::check_array(array);
  // Big-endian arrays are written as they are; every accepted array reads back the same.
  const auto back = parse_npz(npz_bytes(arrays), "round-trip.npz", kMaxBytes);
  fuzz::fuzz_check(back.size() == arrays.size(), "round trip keeps every array");
  for (std::size_t i = 0; i < back.size(); ++i)
    fuzz::fuzz_check(back[i].first == arrays[i].first && fuzz::same(back[i].second, arrays[i].second),
                     "round trip is exact");
  return 0;
}
