#pragma once
// Writing a blob with progress, apart from blob.h so that its many readers need not see core/progress.h.
#include <filesystem>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/progress.h"

namespace hwbvh::blob {

/// write_file(path, blob), reporting "writing" to `progress`: the file's bytes written (the header and section
/// table, then each section's padding and bytes, in pieces of 8 MiB), serialize(blob)'s bytes. The rename at the
/// end (after an fsync) follows the last count.
void write_file(const std::filesystem::path& path, const Blob& blob, const ProgressCallback& progress);

}  // namespace hwbvh::blob
