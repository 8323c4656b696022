#pragma once
// Atomic file output: every file hwbvh writes (blobs, PNGs, rays and per-ray files, reports, SVGs, RRA files) goes
// to a temporary in the same directory first and is renamed over the target only when complete, so a failed or
// interrupted write never leaves a partial file under the requested name. The path keeps what it names: a symlink
// is followed and its target replaced, a character device or FIFO is written in place, a directory is refused.
#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

namespace hwbvh {

/// Writes `bytes` to the file `path` names after following symlinks (/dev/stdout included): a regular or new file
/// through a temporary "<file>.tmp-<pid>-<n>" beside it (fsync'ed, with the replaced file's mode bits) and a rename;
/// a character device or FIFO (a pipe) by writing to it directly. On a failed write the temporary is removed and hwbvh::Error(Runtime) names the
/// file, the step and the system's reason (/dev/full: "No space left on device"). A directory or any other kind of
/// file is refused with hwbvh::Error(BadInput) and left untouched.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);
/// The whole file. Throws hwbvh::Error(BadInput) naming `path` when it cannot be opened or read.
std::vector<std::byte> read_file_bytes(const std::filesystem::path& path);

}  // namespace hwbvh
