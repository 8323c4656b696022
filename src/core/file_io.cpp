#include "hwbvh/core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <algorithm>

#include "hwbvh/core/error.h"

namespace hwbvh {
namespace {

// Linux's own limit on symlinks followed in one path lookup (ELOOP beyond it).
constexpr int kMaxSymlinkHops = 40;

// The file `path` finally names: symlinks followed (a relative link target is relative to the link's folder), so
// a write through a link updates the link's target and keeps the link. The result may not exist yet.
std::filesystem::path resolve_symlinks(const std::filesystem::path& path) {
  std::filesystem::path target = path;
  std::error_code ec;
  for (int hops = 0; std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec)); ++hops) {
    if (hops == kMaxSymlinkHops) {
      throw Error(ErrorKind::BadInput, path.string(), "cannot write: too many levels of symbolic links");
    }
    const std::filesystem::path link = std::filesystem::read_symlink(target, ec);
    if (ec) throw Error(ErrorKind::Runtime, target.string(), "cannot write: cannot read the link: " + ec.message());
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

// "cannot write: [step: ]reason", naming the file.
[[noreturn]] void throw_write_error(const std::string& name, const std::string& step, int error_number) {
  throw Error(ErrorKind::Runtime, name,
              "cannot write: " + (step.empty() ? std::string() : step + ": ") + std::strerror(error_number));
}

// Writes all of `bytes` to `fd`, retrying short writes and interruptions. Returns false with errno set on failure.
bool write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return true;
}

// A unique temporary beside `name`, so the final rename never crosses file systems; a counter keeps two writes of
// one process apart, and O_EXCL never reuses a file left behind by another.
int create_temporary(const std::string& name, std::string& tmp) {
  static std::atomic<unsigned> counter{0};
  int fd = -1;
  do {
    tmp = name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EEXIST);
  if (fd < 0) throw_write_error(name, "cannot create " + tmp, errno);
  return fd;
}

constexpr std::size_t kCopyChunk = std::size_t{1} << 20;

}  // namespace

// A regular file (or a new one) is written to a temporary beside it and renamed over it when complete, keeping the
// mode bits of a file it replaces. A character device or FIFO is written in place: it cannot be replaced by a
// rename, and a partial write to it cannot be undone anyway.
AtomicOutput::AtomicOutput(const std::filesystem::path& path) {
  // stat follows every symlink, /proc's links to open files (/dev/stdout) included, to what the path names.
  struct stat status {};
  const bool exists = ::stat(path.c_str(), &status) == 0;
  if (!exists && errno != ENOENT) throw_write_error(path.string(), "cannot inspect the output path", errno);
  if (!exists || S_ISREG(status.st_mode)) {
    name_ = resolve_symlinks(path).string();  // a new file, or a dangling link's target
    fd_ = create_temporary(name_, temporary_);
    std::filesystem::path directory = std::filesystem::path(temporary_).parent_path();
    scratch_directory_ = directory.empty() ? std::filesystem::path(".") : directory;
    if (exists && ::fchmod(fd_, status.st_mode & 07777) != 0) {
      const int saved = errno;
      ::close(fd_);
      fd_ = -1;
      ::unlink(temporary_.c_str());
      throw_write_error(name_, "setting the mode of " + temporary_, saved);
    }
  } else if (S_ISCHR(status.st_mode) || S_ISFIFO(status.st_mode)) {
    name_ = path.string();
    fd_ = ::open(name_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw_write_error(name_, "cannot open", errno);
    scratch_directory_ = std::filesystem::temp_directory_path();
  } else {
    throw Error(ErrorKind::BadInput, path.string(),
                S_ISDIR(status.st_mode) ? "cannot write: the output path is a directory"
                                        : "cannot write: the output path is neither a regular file, a character "
                                          "device nor a FIFO");
  }
}

AtomicOutput::~AtomicOutput() {
  if (fd_ < 0) return;  // committed, or never opened
  ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicOutput::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) throw Error(ErrorKind::Runtime, name_, "cannot write: the file is already complete");
  if (!write_all(fd_, bytes)) throw_write_error(name_, temporary_.empty() ? "" : "writing " + temporary_, errno);
}

void AtomicOutput::commit() {
  if (fd_ < 0) throw Error(ErrorKind::Runtime, name_, "cannot write: the file is already complete");
  if (temporary_.empty()) {
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) throw_write_error(name_, "closing", errno);
    return;
  }
  const auto fail = [&](const std::string& step, int error_number) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(temporary_.c_str());
    throw_write_error(name_, step, error_number);
  };
  if (::fsync(fd_) != 0) fail("writing " + temporary_, errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail("closing " + temporary_, errno);
  if (std::rename(temporary_.c_str(), name_.c_str()) != 0) fail("renaming " + temporary_, errno);
}

ScratchFile::ScratchFile(const std::filesystem::path& directory) : directory_(directory.string()) {
  fd_ = ::open(directory_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == ENOENT)) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string name = (directory / "hwbvh-scratch-XXXXXX").string();
    fd_ = ::mkstemp(name.data());
    if (fd_ >= 0) ::unlink(name.c_str());
  }
  if (fd_ < 0) throw_write_error(directory_, "cannot create a scratch file", errno);
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

ScratchFile::ScratchFile(ScratchFile&& other) noexcept
    : directory_(std::move(other.directory_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

void ScratchFile::append(std::span<const std::byte> bytes) {
  if (!write_all(fd_, bytes)) throw_write_error(directory_, "writing a scratch file", errno);
  size_ += bytes.size();
}

void ScratchFile::copy_to(AtomicOutput& out) const {
  std::vector<std::byte> chunk(static_cast<std::size_t>(std::min<uint64_t>(kCopyChunk, size_)));
  for (uint64_t at = 0; at < size_;) {
    const ssize_t n = ::pread(fd_, chunk.data(), static_cast<std::size_t>(std::min<uint64_t>(chunk.size(), size_ - at)),
                              static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ErrorKind::Runtime, directory_, std::string("cannot read a scratch file: ") +
                                                                (n == 0 ? "it ended early" : std::strerror(errno)));
    out.write(std::span(chunk).first(static_cast<std::size_t>(n)));
    at += static_cast<uint64_t>(n);
  }
}

void ScratchFile::clear() {
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
    throw_write_error(directory_, "emptying a scratch file", errno);
  size_ = 0;
}

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  AtomicOutput out(path);
  out.write(bytes);
  out.commit();
}

std::vector<std::byte> read_file_bytes(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::FILE* f = std::fopen(name.c_str(), "rb");
  if (!f) throw_bad_input(name, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::byte> bytes;
  std::error_code size_error;
  const auto expected = std::filesystem::file_size(path, size_error);
  if (!size_error) bytes.reserve(expected);
  std::byte chunk[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  const bool failed = std::ferror(f) != 0;
  const std::string why = failed ? std::strerror(errno) : std::string();
  std::fclose(f);
  if (failed) throw_bad_input(name, "cannot read: " + why);
  return bytes;
}

}  // namespace hwbvh
