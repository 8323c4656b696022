#include "hwbvh/core/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "hwbvh/core/error.h"

namespace hwbvh {

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  const std::string name = path.string();
  // Same directory as the target, so the final rename never crosses file systems.
  const std::string tmp = name + ".tmp-" + std::to_string(::getpid());
  const auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error(ErrorKind::Runtime, name, "cannot write: " + what + ": " + why);
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("cannot create " + tmp);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                       ::fsync(::fileno(f)) == 0;
  if (!written) {
    const int saved = errno;
    std::fclose(f);
    errno = saved;
    fail("writing " + tmp);
  }
  if (std::fclose(f) != 0) fail("closing " + tmp);
  if (std::rename(tmp.c_str(), name.c_str()) != 0) fail("renaming " + tmp);
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
