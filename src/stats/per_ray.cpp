#include "hwbvh/stats/per_ray.h"

#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh::stats {
namespace {

// A text column: NumPy reads it as `bytes` wide byte strings (|S<bytes>), padded with zero bytes.
struct Label {
  const char* text;
  std::size_t bytes;
};
constexpr std::size_t kRayTypeBytes = 10;  // the longest ray_kind_name, "reflection"
constexpr std::size_t kOracleBytes = 28;   // the longest verdict, "different-primitive-farther"
constexpr std::size_t kFaultBytes = 20;    // the longest fault, "malformed-primitive"

struct Row {
  RayKind kind;
  uint32_t index;
  const Ray& ray;
  const emu::RayResult& result;
  std::optional<emu::Disagreement> verdict;  ///< nullopt when the oracle did not run
};

// The oracle's verdict: "agree", a disagreement's name, or "off" (--no-oracle).
const char* verdict_name(const std::optional<emu::Disagreement>& verdict) {
  if (!verdict) return "off";
  return *verdict == emu::Disagreement::None ? "agree" : emu::disagreement_name(*verdict);
}

// Short names of the node faults that stop a ray (emu::fault_name has the sentences for messages).
const char* fault_column(emu::NodeFault fault) {
  switch (fault) {
    case emu::NodeFault::None: return "none";
    case emu::NodeFault::OutOfRange: return "out-of-range";
    case emu::NodeFault::Misaligned: return "misaligned";
    case emu::NodeFault::MalformedPrimitive: return "malformed-primitive";
    case emu::NodeFault::UnsupportedNode: return "unsupported-node";
    case emu::NodeFault::UnknownBlas: return "unknown-blas";
    case emu::NodeFault::StrayInstance: return "stray-instance";
  }
  return "unknown";
}

// Calls f(column name, value) for every column of `row`, in order: the one list both formats are written from.
template <class F>
void visit_columns(const Row& row, F&& f) {
  const Ray& ray = row.ray;
  const emu::RayResult& r = row.result;
  f("ray_type", Label{ray_kind_name(row.kind), kRayTypeBytes});
  f("ray", row.index);
  f("origin_x", ray.origin.x);
  f("origin_y", ray.origin.y);
  f("origin_z", ray.origin.z);
  f("direction_x", ray.direction.x);
  f("direction_y", ray.direction.y);
  f("direction_z", ray.direction.z);
  f("tmin", ray.tmin);
  f("tmax", ray.tmax);
  f("hit", uint8_t{r.hit});
  f("t", r.t);
  f("instance_id", r.instance_index);  // two-level: the instance index (sideband); 0 for one-level BVHs
  f("geometry_id", r.geometry_id);
  f("primitive_id", r.primitive_id);
  f("u", r.barycentrics.x);
  f("v", r.barycentrics.y);
  f("oracle", Label{verdict_name(row.verdict), kOracleBytes});
  f("fault", Label{fault_column(r.fault), kFaultBytes});
  f("fault_node", r.fault == emu::NodeFault::None ? 0u : r.fault_node);  // the node pointer the ray stopped on
  for (const emu::RayCounterField& c : emu::kRayCounterFields) f(c.name, r.counters.*c.member);
}

template <class F>
void for_each_row(const StatsReport& report, F&& f) {
  for (const KindStats& k : report.kinds) {
    if (k.results.size() != k.rays_traced.size() || (!k.verdicts.empty() && k.verdicts.size() != k.results.size()))
      throw Error(ErrorKind::Runtime, "", "per-ray output needs the statistics run with keep_results");
    for (std::size_t i = 0; i < k.results.size(); ++i) {
      const auto verdict = k.verdicts.empty() ? std::nullopt : std::optional(k.verdicts[i]);
      f(Row{k.kind, static_cast<uint32_t>(i), k.rays_traced[i], k.results[i], verdict});
    }
  }
}

// Any row, to name the columns and their types when there are no rays.
template <class F>
void visit_column_names(F&& f) {
  const Ray ray;
  const emu::RayResult result;
  visit_columns(Row{RayKind::Primary, 0, ray, result, std::nullopt}, f);
}

std::string csv(const StatsReport& report) {
  std::string out;
  visit_column_names([&](const char* name, const auto&) { out += (out.empty() ? "" : ",") + std::string(name); });
  out += '\n';
  for_each_row(report, [&](const Row& row) {
    bool first = true;
    visit_columns(row, [&](const char*, const auto& value) {
      if (!first) out += ',';
      first = false;
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, Label>) {
        out += value.text;
      } else if constexpr (std::is_same_v<std::decay_t<decltype(value)>, uint8_t>) {
        out += fmt::format("{}", unsigned{value});
      } else {
        out += fmt::format("{}", value);  // floats: the shortest text that reads back to the same value
      }
    });
    out += '\n';
  });
  return out;
}

template <class T>
std::string npy_type([[maybe_unused]] const T& value) {
  if constexpr (std::is_same_v<T, Label>) return fmt::format("|S{}", value.bytes);
  if constexpr (std::is_same_v<T, uint8_t>) return "|u1";
  if constexpr (std::is_same_v<T, uint32_t>) return "<u4";
  if constexpr (std::is_same_v<T, float>) return "<f4";
  if constexpr (std::is_same_v<T, uint64_t>) return "<u8";
}

template <class T>
void append_le(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

// The rows packed as NumPy lays out a structured array of per_ray_columns() (no padding, little-endian).
std::string records(const StatsReport& report) {
  std::string out;
  for_each_row(report, [&](const Row& row) {
    visit_columns(row, [&](const char*, const auto& value) {
      using T = std::decay_t<decltype(value)>;
      if constexpr (std::is_same_v<T, Label>) {
        std::string text(value.text);
        text.resize(value.bytes, '\0');
        out += text;
      } else if constexpr (std::is_same_v<T, float>) {
        append_le(out, std::bit_cast<uint32_t>(value));
      } else {
        append_le(out, value);
      }
    });
  });
  return out;
}

// NumPy's format 1.0: magic, version, a 16-bit header length and a Python dict literal padded with spaces and
// ended by a newline so that the data starts at a multiple of 64 bytes.
std::string npy(const StatsReport& report) {
  std::string descr;
  for (const PerRayColumn& c : per_ray_columns()) descr += fmt::format("('{}', '{}'), ", c.name, c.numpy_type);
  std::size_t rows = 0;
  for (const KindStats& k : report.kinds) rows += k.results.size();
  std::string header = fmt::format("{{'descr': [{}], 'fortran_order': False, 'shape': ({},), }}", descr, rows);
  constexpr std::size_t kPreamble = 10;  // magic (6), version (2), header length (2)
  header.append(63 - (kPreamble + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  append_le(out, static_cast<uint16_t>(header.size()));
  out += header;
  return out + records(report);
}

std::vector<std::byte> as_byte_vector(const std::string& text) {
  const auto bytes = std::as_bytes(std::span<const char>(text));
  return {bytes.begin(), bytes.end()};
}

}  // namespace

PerRayFormat per_ray_format(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".csv") return PerRayFormat::Csv;
  if (ext == ".npy") return PerRayFormat::Npy;
  throw Error(ErrorKind::BadInput, path.string(), "--per-ray: the file name must end in .csv or .npy");
}

std::vector<PerRayColumn> per_ray_columns() {
  std::vector<PerRayColumn> columns;
  visit_column_names([&](const char* name, const auto& value) {
    columns.push_back({name, npy_type(value)});
  });
  return columns;
}

std::vector<std::byte> per_ray_records(const StatsReport& report) { return as_byte_vector(records(report)); }

std::vector<std::byte> per_ray_bytes(const StatsReport& report, PerRayFormat format) {
  return as_byte_vector(format == PerRayFormat::Csv ? csv(report) : npy(report));
}

void write_per_ray(const std::filesystem::path& path, const StatsReport& report) {
  write_file_atomically(path, per_ray_bytes(report, per_ray_format(path)));
}

}  // namespace hwbvh::stats
