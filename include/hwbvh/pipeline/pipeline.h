#pragma once
// The build pipeline as one call: Scene -> bvh_build::build_wide_bvh (with the format's leaf-fit test) ->
// rdna4::encode -> a blob::Blob with the sections Nodes, Geometry, SceneMeta and BuildMeta
// (docs/blob-format.md), plus the BuildReport that `hwbvh build` prints and `hwbvh info` reads back.
// Alpha-tested scenes (docs/opacity.md) also get the AlphaTest section (every target), their opacity baked
// (xe3::bake_all) into the xe3 leaves' STOC bits or the rtip31 Stoc sideband section, and BuildReport::opacity.
//
// Determinism: blobs are byte-identical for the same scene and options at any thread count. The report's
// run-dependent part (RunInfo: thread count, wall-clock seconds per phase) is printed but never written into
// the BuildMeta section; everything else in the report is a pure function of the input.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/core/progress.h"
#include "hwbvh/formats/rdna4/encode.h"
#include "hwbvh/formats/xe3/stoc.h"
#include "hwbvh/scene/alpha_test.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh::pipeline {

struct BuildBlobOptions {
  blob::Target target = blob::Target::Rtip31;  ///< the hardware format of the Nodes section
  bvh_build::BuildOptions build;    ///< the target adapts it (leaf fit test, pairing, width)
  rdna4::EncodeOptions encode;  ///< rtip31 options; `threads` applies to every target
  uint32_t xe3_stoc_level = 1;  ///< xe3: 0 (no STOC bits), 1 (QuadLeaf STOC1) or 3 (128-byte STOC3 leaves)
  uint32_t rtip31_stoc_level = kDefaultSidebandLevel;  ///< rtip31: Stoc sideband level, 0 (none) or 1..12
  xe3::SubTriangleOrder stoc_order = xe3::SubTriangleOrder::Bird;  ///< bit order of leaf masks and sideband
  /// Bake depth (0..12): the full-resolution states xe3 STOC3 leaves point to; the bake runs at the larger of
  /// this and the target's STOC level, and coarser levels are reductions of it.
  uint32_t opacity_level = kDefaultOpacityLevel;
  /// AlphaTest::cutoff, in [0, 1]; unset: the scene's own (glTF alphaCutoff) or kDefaultAlphaCutoff
  std::optional<float> alpha_cutoff;

  static constexpr uint32_t kDefaultSidebandLevel = 3;  ///< 64 sub-triangles, as an Xe3 STOC3 leaf holds
  static constexpr uint32_t kDefaultOpacityLevel = 4;   ///< the shallowest level STOC3's full data holds (4..12)
};

/// What the opacity part of a build did (alpha-tested scenes only).
struct OpacityReport {
  uint64_t alpha_tested_triangles = 0;
  double cutoff = kDefaultAlphaCutoff;
  uint32_t stoc_level = 0;       ///< the target's STOC level (xe3 leaves, rtip31 sideband; 0 for rtip20)
  std::string order = "bird";    ///< "bird" or "row"
  uint32_t bake_level = 0;       ///< level the bake ran at; 0 and no shares when nothing was baked
  uint64_t baked_sub_triangles = 0;  ///< over all alpha-tested triangles at bake_level
  double opaque_share = 0.0;         ///< shares of baked_sub_triangles, 0..1
  double transparent_share = 0.0;
  double unknown_share = 0.0;
  /// Bytes that exist only for STOC: xe3 the second block of every STOC3 leaf plus the full-resolution data;
  /// rtip31 the Stoc section.
  uint64_t stoc_bytes = 0;
  friend bool operator==(const OpacityReport&, const OpacityReport&) = default;
};

/// The two levels of an instanced build (every BLAS built once, however many instances use it).
struct LevelsReport {
  uint64_t instances = 0;
  uint64_t blases = 0;
  uint64_t top_box_nodes = 0;  ///< box nodes of the top-level structure
  uint64_t top_bytes = 0;      ///< its node bytes: header, box nodes and instance nodes
  uint64_t sideband_bytes = 0;  ///< the InstanceSideband section
  friend bool operator==(const LevelsReport&, const LevelsReport&) = default;
};

/// A build from another builder's tree (bvh_build::BuildOptions::tree).
struct GivenTreeReport {
  std::string source;           ///< the tree's name (its file)
  std::string kind = "binary";  ///< "binary" (collapsed as Embree's tree is) or "wide" (taken as given)
  uint64_t nodes = 0;           ///< the given tree's nodes
  /// Leaves of several triangles split: a binary tree's into one-triangle leaves that the collapse sizes to the
  /// target, a wide tree's into runs of pairs that fit the target's leaves.
  uint64_t split_leaves = 0;
  friend bool operator==(const GivenTreeReport&, const GivenTreeReport&) = default;
};

/// Wall-clock seconds per pipeline phase.
struct PhaseSeconds {
  double load = 0.0;      ///< OBJ/MTL/texture loading (build_file only)
  double bvh = 0.0;       ///< Embree binary BVH
  double collapse = 0.0;  ///< collapse to the 8-wide tree + pairing
  double obb = 0.0;       ///< OBB selection
  double encode = 0.0;    ///< node encoding and layout
  double write = 0.0;     ///< serialising and writing the file (build_file only)
  [[nodiscard]] double total() const { return load + bvh + collapse + obb + encode + write; }
  friend bool operator==(const PhaseSeconds&, const PhaseSeconds&) = default;
};

/// The part of a report that differs between runs of the same input; never stored in blob files.
struct RunInfo {
  int threads = 0;  ///< worker threads used (0 in the options resolves to the hardware thread count)
  PhaseSeconds seconds;
  friend bool operator==(const RunInfo&, const RunInfo&) = default;
};

struct BuildReport {
  std::string source;                     ///< scene file name, without its directory
  std::string target = "rtip31";          ///< blob::target_name
  uint64_t triangles = 0;                 ///< triangles in the scene
  uint64_t degenerate_triangles = 0;      ///< zero-area triangles, kept out of the BVH
  uint64_t box_nodes = 0;
  uint64_t primitive_nodes = 0;
  uint64_t node_bytes = 0;                ///< Nodes section size, including its 128-byte header
  double bytes_per_triangle = 0.0;        ///< node_bytes / (triangles - degenerate_triangles)
  double triangles_per_primitive_node = 0.0;  ///< mean triangle references per primitive node
  uint64_t pairs = 0;                     ///< triangle pairs stored in primitive nodes
  double obb_box_share = 0.0;             ///< share of box nodes with an OBB, 0..1
  double sah_cost = 0.0;                  ///< SAH cost of the wide tree (bvh_build::BuildStats::sah_cost)
  uint64_t spatial_split_references = 0;  ///< triangle references added by spatial splits
  // Options used.
  std::string quality = "medium";  ///< "low", "medium" or "high"
  bool obb = true;
  double obb_ratio = 0.0;          ///< rdna4::EncodeOptions::obb_accept_ratio
  std::optional<OpacityReport> opacity;  ///< alpha-tested scenes only
  std::optional<LevelsReport> levels;    ///< two-level builds only; the counts above then sum over all levels
  /// Builds from a given tree only. Never stored in the BuildMeta section: the blob of a build's exported tree is
  /// that build's blob, byte for byte.
  std::optional<GivenTreeReport> tree;
  std::optional<RunInfo> run;      ///< set for a build just run; absent when read back from a file
  friend bool operator==(const BuildReport&, const BuildReport&) = default;
};

struct BuildBlobResult {
  blob::Blob blob;
  BuildReport report;
};

const char* quality_name(bvh_build::BuildQuality quality);  ///< "low", "medium", "high"
const char* order_name(xe3::SubTriangleOrder order);    ///< "bird", "row"

/// Builds and encodes `scene` and assembles the blob (target rtip31) with its four sections. `progress` hears the
/// phases "binary BVH" (per mille; not for a given tree), "collapse", "OBB choice" (rtip31) and "encoding", each
/// from 0 to its total (it replaces options.build.progress and options.encode.progress); the blob is the same
/// with or without it. Throws hwbvh::Error from the builder or encoder (e.g. BadInput for a scene without usable
/// triangles).
BuildBlobResult build_blob(const Scene& scene, const BuildBlobOptions& options, const ProgressCallback& progress = {});

/// Builds a two-level blob (docs/blob-format.md §6.6, §12, §13): each mesh of `scene` is a BLAS built and encoded
/// once as build_blob would build it alone, a top-level structure over the instances' world bounds points into them,
/// and the sections Geometry, SceneMeta, AlphaTest and Stoc describe all meshes' triangles one after another
/// (geometry ids numbered across meshes there; each BLAS numbers its own from 0). Throws hwbvh::Error (BadInput)
/// for a scene without instances or a target that has no instance form yet, and for options with a given tree (a tree
/// describes the triangles of a one-level scene: build the flattened scene). `progress` hears "BLASes" (in
/// triangles: those of the meshes built, plus the current mesh's share of its phases done) and then the top level's
/// phases as build_blob names them, prefixed "top level ".
BuildBlobResult build_instanced_blob(const InstancedScene& scene, const BuildBlobOptions& options,
                                     const ProgressCallback& progress = {});

/// build_blob for a one-level scene, build_instanced_blob for a two-level one.
BuildBlobResult build_any_blob(const AnyScene& scene, const BuildBlobOptions& options,
                               const ProgressCallback& progress = {});

/// load_any_scene(scene_path, load, warn) + build_any_blob + blob::write_file(output), with the load and write
/// phases timed and reported to `progress` ("loading": an OBJ's bytes parsed, a glTF announced; "writing": the
/// file's bytes). Nothing is written unless every earlier step succeeded, and a failed write leaves no file.
BuildReport build_file(const std::filesystem::path& scene_path, const SceneLoadOptions& load,
                       const std::filesystem::path& output,
                       const BuildBlobOptions& options, const ProgressCallback& progress = {},
                       const WarningFn& warn = {});

/// The report as one JSON object (docs/blob-format.md §9); `run` is included only when present.
std::string report_to_json(const BuildReport& report);
/// Parses report_to_json's output (e.g. a BuildMeta section). Throws hwbvh::Error(BadInput) naming `file`.
BuildReport report_from_json(std::string_view json, const std::string& file);

/// The opacity figures as label/value rows for text output (`hwbvh build`, `hwbvh info`): alpha-tested triangles
/// and cutoff; STOC level, order and bytes; and, when something was baked, the bake level, its sub-triangle count
/// and the opaque / transparent / unknown shares.
std::vector<std::pair<std::string, std::string>> opacity_rows(const OpacityReport& opacity);

/// The SceneMeta section's JSON for `scene` (docs/blob-format.md §8).
std::string scene_meta_json(const Scene& scene);

}  // namespace hwbvh::pipeline
