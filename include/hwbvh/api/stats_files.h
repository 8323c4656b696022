#pragma once
// `hwbvh stats` with its output files: the statistics of stats::run_stats, and the per-ray file and the .rra ray
// history written as the rays are traced (stats::PerRayWriter, rra::HistoryFileWriter), so that memory stays
// bounded by a batch of rays whatever the image size.
#include <cstdint>
#include <string>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::api {

/// The files to write; an empty name writes nothing.
struct StatsFiles {
  std::string per_ray;     ///< --per-ray FILE (.csv or .npy)
  std::string export_rra;  ///< --export-rra FILE: `blob` as a .rra file with one ray-history dispatch per ray type
};

/// Refuses bad output names and paths and a blob the .rra export cannot take, opens the files, traces, and writes
/// them. `blob` and `blob_name` are what `bvh` was loaded from. Throws hwbvh::Error; no file is left half-written.
stats::StatsReport run_stats_with_files(const emu::LoadedBvh& bvh, const blob::Blob& blob, const std::string& blob_name,
                                        const stats::StatsOptions& options, const StatsFiles& files,
                                        const ProgressCallback& progress = {});

}  // namespace hwbvh::api
