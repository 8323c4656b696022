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

}  // namespace hwbvh
