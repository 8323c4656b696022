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

// A character device or FIFO is written in place: it cannot be replaced by a rename, and a partial write to it
// cannot be undone anyway. A failed write (ENOSPC from /dev/full) is reported.
void write_in_place(const std::string& name, std::span<const std::byte> bytes) {
  const int fd = ::open(name.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_write_error(name, "cannot open", errno);
  if (!write_all(fd, bytes)) {
    const int saved = errno;
    ::close(fd);
    throw_write_error(name, "", saved);
  }
  if (::close(fd) != 0) throw_write_error(name, "closing", errno);
}

// A regular file (or a new one) is written to a temporary beside it and renamed over it when complete, keeping the
// mode bits of a file it replaces.
void write_by_rename(const std::string& name, const struct stat* existing, std::span<const std::byte> bytes) {
  // Same directory as the target, so the final rename never crosses file systems; a counter keeps two writes of one
  // process apart, and O_EXCL never reuses a file left behind by another.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  do {
    tmp = name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  } while (fd < 0 && errno == EEXIST);
  if (fd < 0) throw_write_error(name, "cannot create " + tmp, errno);
  const auto fail = [&](const std::string& step, int error_number) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw_write_error(name, step, error_number);
  };
  if (existing && ::fchmod(fd, existing->st_mode & 07777) != 0) fail("setting the mode of " + tmp, errno);
  if (!write_all(fd, bytes) || ::fsync(fd) != 0) fail("writing " + tmp, errno);
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) fail("closing " + tmp, errno);
  if (std::rename(tmp.c_str(), name.c_str()) != 0) fail("renaming " + tmp, errno);
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  // stat follows every symlink, /proc's links to open files (/dev/stdout) included, to what the path names.
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    if (errno != ENOENT) throw_write_error(path.string(), "cannot inspect the output path", errno);
    write_by_rename(resolve_symlinks(path).string(), nullptr, bytes);  // a new file, or a dangling link's target
  } else if (S_ISREG(status.st_mode)) {
    write_by_rename(resolve_symlinks(path).string(), &status, bytes);
  } else if (S_ISCHR(status.st_mode) || S_ISFIFO(status.st_mode)) {
    write_in_place(path.string(), bytes);
  } else {
    throw Error(ErrorKind::BadInput, path.string(),
                S_ISDIR(status.st_mode) ? "cannot write: the output path is a directory"
                                        : "cannot write: the output path is neither a regular file, a character "
                                          "device nor a FIFO");
  }
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
