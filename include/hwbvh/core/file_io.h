#pragma once
// Atomic file output: every file hwbvh writes (blobs, PNGs, rays files, reports) goes to a temporary in the same
// directory first and is renamed over the target only when complete, so a failed or interrupted write never
// leaves a partial file under the requested name.
#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

namespace hwbvh {

/// Writes `bytes` to `path` through a temporary "<path>.tmp-<pid>" (flushed and fsync'ed) and a rename. On any
/// failure the temporary is removed and hwbvh::Error(Runtime) names `path`, the step and the system's reason.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);
/// The whole file. Throws hwbvh::Error(BadInput) naming `path` when it cannot be opened or read.
std::vector<std::byte> read_file_bytes(const std::filesystem::path& path);

}  // namespace hwbvh
