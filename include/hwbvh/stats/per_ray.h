#pragma once
// `hwbvh stats --per-ray FILE`: every traced ray with its hit and every counter, one row per ray per ray type, as
// CSV or as a NumPy .npy structured array, chosen by the file's extension (docs/rays.md "Per-ray output").
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hwbvh/core/file_io.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::stats {

enum class PerRayFormat { Csv, Npy };

/// The format `path`'s extension names (.csv or .npy); throws hwbvh::Error(BadInput) naming the file otherwise.
PerRayFormat per_ray_format(const std::filesystem::path& path);

/// The rows of `report`, which must have been run with StatsOptions::keep_results, in ray-type then ray order.
/// Columns: ray_type, ray, origin_x/y/z, direction_x/y/z, tmin, tmax, hit, t, instance_id, geometry_id,
/// primitive_id, u, v, oracle (the oracle's verdict: agree, a disagreement's name, or off), fault (none or the node
/// fault that stopped the ray), fault_node, then emu::kRayCounterFields. CSV: a header line, then one line per ray, floats in their
/// shortest round-trip form. NPY: format version 1.0, a little-endian structured dtype with those field names.
std::vector<std::byte> per_ray_bytes(const StatsReport& report, PerRayFormat format);

/// One column of the per-ray rows: its name and its NumPy type ("<f4", "<u8", "|u1", "|S8").
struct PerRayColumn {
  std::string name;
  std::string numpy_type;
};
/// The columns per_ray_bytes writes, in order.
std::vector<PerRayColumn> per_ray_columns();
/// The rows of `report` (as per_ray_bytes) packed as NumPy lays out a structured array of per_ray_columns(): the
/// .npy file's data, without its header.
std::vector<std::byte> per_ray_records(const StatsReport& report);

/// `--per-ray FILE` while run_stats traces: a RaySink that turns each batch into rows at once. The rows of each ray
/// type go to a scratch file beside the output (core/file_io.h ScratchFile), and finish() writes the file in
/// per_ray_format(path) atomically: the header (.npy: with the row count, known only then), then each type's rows in
/// order. The bytes are per_ray_bytes' of the same run; memory stays one batch, the disk holds the rows twice for a
/// moment while finish() copies them.
class PerRayWriter : public RaySink {
 public:
  /// Opens the output (refusing a bad name or path before any work) for a run of `kinds` ray types.
  PerRayWriter(const std::filesystem::path& path, std::size_t kinds);
  void add(const TracedBatch& batch) override;
  /// Writes the file; returns its row count.
  uint64_t finish();

 private:
  PerRayFormat format_;
  AtomicOutput output_;
  std::vector<ScratchFile> rows_;  ///< per ray type
  uint64_t row_count_ = 0;
};

}  // namespace hwbvh::stats
