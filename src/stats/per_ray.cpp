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

// The rows of one batch.
template <class F>
void for_each_row(const TracedBatch& batch, F&& f) {
  for (std::size_t i = 0; i < batch.results.size(); ++i) {
    const auto verdict = batch.verdicts.empty() ? std::nullopt : std::optional(batch.verdicts[i]);
    f(Row{batch.kind, static_cast<uint32_t>(batch.first_ray + i), batch.rays[i], batch.results[i], verdict});
  }
}

// Each kind of a report that kept its results, as one batch.
template <class F>
void for_each_kind(const StatsReport& report, F&& f) {
  for (std::size_t k = 0; k < report.kinds.size(); ++k) {
    const KindStats& ks = report.kinds[k];
    if (ks.results.size() != ks.rays_traced.size() || (!ks.verdicts.empty() && ks.verdicts.size() != ks.results.size()))
      throw Error(ErrorKind::Runtime, "", "per-ray output needs the statistics run with keep_results");
    f(TracedBatch{.kind_index = k, .kind = ks.kind, .first_ray = 0, .rays = ks.rays_traced, .pixel = ks.pixel,
                  .results = ks.results, .verdicts = ks.verdicts});
  }
}

// Any row, to name the columns and their types when there are no rays.
template <class F>
void visit_column_names(F&& f) {
  const Ray ray;
  const emu::RayResult result;
  visit_columns(Row{RayKind::Primary, 0, ray, result, std::nullopt}, f);
}

std::string csv_header() {
  std::string out;
  visit_column_names([&](const char* name, const auto&) { out += (out.empty() ? "" : ",") + std::string(name); });
  return out + '\n';
}

void append_csv_rows(std::string& out, const TracedBatch& batch) {
  for_each_row(batch, [&](const Row& row) {
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
void append_records(std::string& out, const TracedBatch& batch) {
  for_each_row(batch, [&](const Row& row) {
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
}

void append_rows(std::string& out, const TracedBatch& batch, PerRayFormat format) {
  if (format == PerRayFormat::Csv) {
    append_csv_rows(out, batch);
  } else {
    append_records(out, batch);
  }
}

// NumPy's format 1.0: magic, version, a 16-bit header length and a Python dict literal padded with spaces and
// ended by a newline so that the data starts at a multiple of 64 bytes.
std::string npy_header(uint64_t rows) {
  std::string descr;
  for (const PerRayColumn& c : per_ray_columns()) descr += fmt::format("('{}', '{}'), ", c.name, c.numpy_type);
  std::string header = fmt::format("{{'descr': [{}], 'fortran_order': False, 'shape': ({},), }}", descr, rows);
  constexpr std::size_t kPreamble = 10;  // magic (6), version (2), header length (2)
  header.append(63 - (kPreamble + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  append_le(out, static_cast<uint16_t>(header.size()));
  return out + header;
}

// What precedes the rows: the CSV's column line, or the .npy header.
std::string file_header(PerRayFormat format, uint64_t rows) {
  return format == PerRayFormat::Csv ? csv_header() : npy_header(rows);
}

std::span<const std::byte> as_bytes(const std::string& text) { return std::as_bytes(std::span<const char>(text)); }

std::vector<std::byte> as_byte_vector(const std::string& text) {
  const auto bytes = as_bytes(text);
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

std::vector<std::byte> per_ray_records(const StatsReport& report) {
  std::string out;
  for_each_kind(report, [&](const TracedBatch& kind) { append_records(out, kind); });
  return as_byte_vector(out);
}

std::vector<std::byte> per_ray_bytes(const StatsReport& report, PerRayFormat format) {
  std::string rows;
  uint64_t count = 0;
  for_each_kind(report, [&](const TracedBatch& kind) {
    append_rows(rows, kind, format);
    count += kind.results.size();
  });
  return as_byte_vector(file_header(format, count) + rows);
}

PerRayWriter::PerRayWriter(const std::filesystem::path& path, std::size_t kinds)
    : format_(per_ray_format(path)), output_(path) {
  for (std::size_t k = 0; k < kinds; ++k) rows_.emplace_back(output_.scratch_directory());
}

void PerRayWriter::add(const TracedBatch& batch) {
  std::string rows;
  append_rows(rows, batch, format_);
  rows_.at(batch.kind_index).append(as_bytes(rows));
  row_count_ += batch.results.size();
}

uint64_t PerRayWriter::finish() {
  output_.write(as_bytes(file_header(format_, row_count_)));
  for (ScratchFile& kind : rows_) {
    kind.copy_to(output_);
    kind.clear();  // its disk space back before the next type is copied
  }
  output_.commit();
  return row_count_;
}

}  // namespace hwbvh::stats
