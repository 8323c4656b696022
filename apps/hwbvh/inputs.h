#pragma once
// The input files of the commands that read a BVH (docs/cli.md "Inputs"): stats and render trace a blob, a .rra file
// or a scene built on the fly; info, dump and export describe a file that exists, so they refuse a scene with the
// command that builds it.
#include <string>

#include <CLI/CLI.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::cli {

/// The blob `file` holds, or for a scene file (.obj, .gltf, .glb) the blob `hwbvh build` would write with its
/// default options (target rtip31; a glTF in two levels unless `flatten`), built on `threads` threads with the
/// loader's warnings going to `warn` and the build's progress to `progress`. `flatten` (the --flatten option, null
/// when the command has none) given for a blob or .rra input is refused: it would change nothing.
blob::Blob read_traced_input(const std::string& file, const CLI::Option* flatten, bool flatten_value, int threads,
                             const WarningFn& warn, const ProgressCallback& progress = {});

/// Throws hwbvh::Error(BadInput) for a scene file given to `command`, which reads blobs: "FILE is a scene, not a
/// blob: build it first with `hwbvh build FILE -o FILE.hwbvh`".
void refuse_scene_input(const std::string& file, const std::string& command);

}  // namespace hwbvh::cli
