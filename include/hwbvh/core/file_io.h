#pragma once
// Atomic file output: every file hwbvh writes (blobs, PNGs, rays and per-ray files, reports, SVGs, RRA files) goes
// to a temporary in the same directory first and is renamed over the target only when complete, so a failed or
// interrupted write never leaves a partial file under the requested name. The path keeps what it names: a symlink
// is followed and its target replaced, a character device or FIFO is written in place, a directory is refused.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace hwbvh {

/// Writes `bytes` to the file `path` names after following symlinks (/dev/stdout included): a regular or new file
/// through a temporary "<file>.tmp-<pid>-<n>" beside it (fsync'ed, with the replaced file's mode bits) and a rename;
/// a character device or FIFO (a pipe) by writing to it directly. On a failed write the temporary is removed and hwbvh::Error(Runtime) names the
/// file, the step and the system's reason (/dev/full: "No space left on device"). A directory or any other kind of
/// file is refused with hwbvh::Error(BadInput) and left untouched.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);
/// A file written piece by piece with write_file_atomically's guarantees, for output too large to hold: opened (a
/// temporary beside a regular or new file; a character device or FIFO in place; anything else refused as
/// write_file_atomically refuses it), appended to, and renamed over its path by commit(). Destroyed without commit(),
/// it removes the temporary: an interrupted or failed run never leaves a partial file under the requested name.
class AtomicOutput {
 public:
  explicit AtomicOutput(const std::filesystem::path& path);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  /// Appends `bytes`; throws hwbvh::Error(Runtime) naming the file and the system's reason.
  void write(std::span<const std::byte> bytes);
  /// Completes the file: fsync, close and rename (a device or FIFO is only closed). Call once, after the last write.
  void commit();
  /// Where scratch files for this output belong: the temporary's directory (same file system as the output), or
  /// the system's temporary directory for a device or FIFO.
  [[nodiscard]] const std::filesystem::path& scratch_directory() const { return scratch_directory_; }

 private:
  std::string name_;       ///< the file written: the path with its symlinks followed
  std::string temporary_;  ///< empty when writing in place
  std::filesystem::path scratch_directory_;
  int fd_ = -1;
};

/// An unnamed scratch file in `directory` (removed by the system when closed, even on a crash): bytes appended now,
/// copied into an AtomicOutput later. It lets a writer put rows that arrive interleaved into the order its format
/// needs without holding them in memory.
class ScratchFile {
 public:
  explicit ScratchFile(const std::filesystem::path& directory);
  ~ScratchFile();
  ScratchFile(ScratchFile&& other) noexcept;
  ScratchFile& operator=(ScratchFile&&) = delete;
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  void append(std::span<const std::byte> bytes);  ///< throws hwbvh::Error(Runtime) on a failed write
  [[nodiscard]] uint64_t size() const { return size_; }
  /// Appends everything written so far to `out`.
  void copy_to(AtomicOutput& out) const;
  /// Empties the file, giving its disk space back.
  void clear();

 private:
  std::string directory_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// The whole file. Throws hwbvh::Error(BadInput) naming `path` when it cannot be opened or read.
std::vector<std::byte> read_file_bytes(const std::filesystem::path& path);

}  // namespace hwbvh
