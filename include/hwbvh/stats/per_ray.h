#pragma once
// `hwbvh stats --per-ray FILE`: every traced ray with its hit and every counter, one row per ray per ray type, as
// CSV or as a NumPy .npy structured array, chosen by the file's extension (docs/rays.md "Per-ray output").
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

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

/// Writes per_ray_bytes in per_ray_format(path) atomically (core/file_io.h).
void write_per_ray(const std::filesystem::path& path, const StatsReport& report);

}  // namespace hwbvh::stats
