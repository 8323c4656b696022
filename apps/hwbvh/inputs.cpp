#include "inputs.h"

#include <filesystem>

#include "hwbvh/core/error.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::cli {

blob::Blob read_traced_input(const std::string& file, const CLI::Option* flatten, bool flatten_value, int threads,
                             const WarningFn& warn, const ProgressCallback& progress) {
  if (!is_scene_file(file)) {
    if (flatten != nullptr && flatten->count() > 0)
      throw Error(ErrorKind::BadInput, file, "--flatten applies to scene inputs (.gltf, .glb), not to a blob");
    return rra::read_blob_or_rra(file);
  }
  const AnyScene scene = load_any_scene(file, {.flatten = flatten_value}, warn, progress);
  pipeline::BuildBlobOptions options;
  options.build.threads = threads;
  options.encode.threads = threads;
  return pipeline::build_any_blob(scene, options, progress).blob;
}

void refuse_scene_input(const std::string& file, const std::string& command) {
  if (!is_scene_file(file)) return;
  const std::string blob = std::filesystem::path(file).replace_extension(".hwbvh").string();
  throw Error(ErrorKind::BadInput, file,
              "a scene, not a blob: `hwbvh " + command + "` reads blobs; build one first with `hwbvh build " + file +
                  " -o " + blob + "`");
}

}  // namespace hwbvh::cli
