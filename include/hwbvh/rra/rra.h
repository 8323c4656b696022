#pragma once
// Radeon Raytracing Analyzer (.rra) files: an AMD RDF chunk file holding RT IP 3.1 acceleration structures in
// the form Mesa's RADV writes them (src/amd/vulkan/radv_rra.c, radv_rra_gfx12.c) and RRA loads them
// (GPUOpen-Tools/radeon_raytracing_analyzer, source/backend/bvh/bvh_bundle.cpp and bvh/rtip31/). Layout,
// field values and what RRA shows for our files: docs/rra.md. Node bytes are copied verbatim, never re-encoded:
// hwbvh's node section already addresses nodes the way RRA does (root box node at byte 128 of the header). The one
// field re-based is an instance node's BLAS address, which RRA resolves as the virtual address of a BLAS chunk.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/geometry.h"
#include "hwbvh/rra/ray_history.h"

namespace hwbvh::rra {

inline constexpr uint64_t kRdfMagic = 0x204644525F444D41ull;  ///< "AMD_RDF "
inline constexpr uint32_t kRdfVersion = 3;
inline constexpr uint32_t kAccelStructChunkVersion = 0xF0005;  ///< RADV's; RRA accepts majors <= 16
inline constexpr uint32_t kRtIp31 = 6;                          ///< RRA's RayTracingIpLevel::RtIp3_1
inline constexpr char kAccelStructChunk[] = "RawAccelStruct";
inline constexpr char kAccelStructChunkOld[] = "RawAccelStruc";  ///< the 13-character name older RADV writes
inline constexpr char kApiInfoChunk[] = "ApiInfo";
inline constexpr char kAsicInfoChunk[] = "AsicInfo";
/// Ours: the blob's sections other than its nodes, so `hwbvh stats` on the file has the scene's triangles,
/// alpha data and reports. RRA looks chunks up by name and never reads this one.
inline constexpr char kHwbvhSectionsChunk[] = "HwbvhSections";

/// One acceleration structure to write: a BLAS, or the top level of a two-level blob (docs/rra.md §2, §3).
struct AccelStruct {
  bool bottom_level = true;
  /// The RT IP 3.1 node section as in a blob (docs/blob-format.md §6): slot 0 is hwbvh's own header, which the
  /// file replaces by the GPURT-style header; the nodes from byte 128 are written verbatim, but for the BLAS
  /// address of each instance node.
  std::span<const std::byte> nodes;
  uint32_t box_nodes = 0;
  uint32_t primitive_nodes = 0;
  Aabb bounds;
  /// Top level: per instance node, in node order (they follow the box nodes), its sideband record and the index
  /// in serialize()'s `structs` of the BLAS it points at, whose chunk address replaces the node's BLAS address.
  std::vector<blob::InstanceSideband> sideband;
  std::vector<uint32_t> instance_blas;
  /// Per geometry, its primitives (triangles, degenerate ones included: they keep their ids).
  std::vector<uint32_t> geometry_primitives;
  uint32_t active_primitives = 0;  ///< primitives in the tree
  std::vector<bool> opaque_geometries;  ///< per geometry: all its triangles opaque (RRA's geometry flag)
  /// Per primitive, geometry after geometry: the pointer of the pair holding it, 0xFFFFFFFF if it is in none.
  std::vector<uint32_t> leaf_pointers;
};

/// The acceleration structures of an rtip31 blob: its one BLAS, or for a two-level blob its top level followed by
/// its BLASes in the Levels section's order. Throws hwbvh::Error(BadInput) naming `file` for another target or a
/// node section whose tree is malformed.
std::vector<AccelStruct> accel_structs_from_blob(const blob::Blob& blob, const std::string& file);

inline constexpr uint32_t kCompressionZstd = 1;  ///< RDF chunk-table compression method

struct WriteOptions {
  /// zstd-compress the data of the RawAccelStruct and HwbvhSections chunks (RDF compression method 1).
  bool compress = false;
};

/// The made-up virtual address of the `index`-th structure written: its own 4 GiB range, the first at 2^32. RRA
/// matches instances to BLASes, and ray-history rays to the structure they traced, by address.
inline uint64_t accel_struct_address(std::size_t index) { return uint64_t{index + 1} << 32; }

/// The whole file: header, ApiInfo, AsicInfo, one RawAccelStruct chunk per structure in order, then the
/// HwbvhSections chunk when `hwbvh_sections` is not empty, then per ray-history dispatch a HistoryMetadata and a
/// HistoryTokensRaw chunk (uncompressed, as RADV writes them), then the chunk table.
std::vector<std::byte> serialize(std::span<const AccelStruct> structs, std::span<const std::byte> hwbvh_sections,
                                 const WriteOptions& options = {}, std::span<const HistoryDispatch> ray_history = {});
/// An rtip31 blob as a .rra file: its BVH plus its other sections, and the ray history if given.
std::vector<std::byte> export_blob(const blob::Blob& blob, const std::string& blob_name,
                                   const WriteOptions& options = {}, std::span<const HistoryDispatch> ray_history = {});
/// export_blob, written atomically.
void write_file(const std::filesystem::path& path, const blob::Blob& blob, const std::string& blob_name,
                const WriteOptions& options = {}, std::span<const HistoryDispatch> ray_history = {});

/// `stats --export-rra FILE` while the rays are traced: the blob's .rra file (export_blob) with one ray-history
/// dispatch per ray type, its rays added batch by batch. Each dispatch's tokens go to a scratch file beside the
/// output (core/file_io.h ScratchFile) and finish() writes the file atomically: the bytes export_blob gives for the
/// same dispatches, with memory bounded by the BVH and one batch.
class HistoryFileWriter {
 public:
  /// A dispatch: an image's width x height (rays at their pixel), or width 0 for rays without one (rays x 1).
  struct Dispatch {
    uint32_t width = 0, height = 0;
    bool any_hit = false;  ///< occlusion rays
  };
  /// Refuses (hwbvh::Error(BadInput)) a blob export_blob refuses and images with more pixels than 30-bit ray ids,
  /// and opens the output, before any ray is traced.
  HistoryFileWriter(const std::filesystem::path& path, const blob::Blob& blob, const std::string& blob_name,
                    std::vector<Dispatch> dispatches, uint32_t cull_mask, const WriteOptions& options = {});
  ~HistoryFileWriter();
  HistoryFileWriter(const HistoryFileWriter&) = delete;
  HistoryFileWriter& operator=(const HistoryFileWriter&) = delete;

  /// The next rays of `dispatch`, in order: `pixel` per ray for an image dispatch, else empty.
  void add(std::size_t dispatch, std::span<const uint32_t> pixel, std::span<const Ray> rays,
           std::span<const emu::RayResult> results);
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One chunk-table entry (64 bytes in the file).
struct Chunk {
  std::string name;
  uint32_t compression = 0;  ///< 0 none, kCompressionZstd
  uint32_t version = 0;
  uint64_t header_offset = 0, header_size = 0, data_offset = 0, data_size = 0;
  uint64_t uncompressed_size = 0;  ///< of the data, when compressed
};

/// An acceleration structure read back, after every check RRA makes and every child pointer checked.
struct ReadAccelStruct {
  bool bottom_level = true;
  uint32_t rt_ip_level = 0;
  std::vector<std::byte> nodes;  ///< from byte 128 of the header to the geometry infos
  uint32_t box_nodes = 0;        ///< reached from the root
  uint32_t primitive_nodes = 0;  ///< reached from the root
  uint32_t depth = 0;            ///< nodes on the longest path from the root to a primitive node
  uint32_t primitives = 0, active_primitives = 0, geometries = 0;
  std::vector<uint32_t> geometry_primitives;  ///< per geometry, from its geometry info
  Aabb bounds;
  /// The address instance nodes name this structure by: the chunk's virtual address plus its header offset.
  uint64_t address = 0;
  // Top level only (`primitives` counts its instance nodes):
  uint32_t first_instance_node = 0;  ///< byte in `nodes` of the first instance node; the others follow
  std::vector<blob::InstanceSideband> sideband;  ///< per instance node, as in the file
};

struct File {
  std::vector<Chunk> chunks;
  std::vector<ReadAccelStruct> accel_structs;
  std::vector<std::byte> hwbvh_sections;  ///< the HwbvhSections chunk's data, empty if absent
  std::vector<HistoryDispatch> ray_history;  ///< one per HistoryTokensRaw chunk, with the HistoryMetadata of its index
};

/// True if `bytes` starts with the RDF magic.
bool has_rdf_magic(std::span<const std::byte> bytes);
/// Parses and checks; throws hwbvh::Error(BadInput) naming `name` and the problem. Unknown chunks are skipped.
File parse(std::span<const std::byte> bytes, const std::string& name);
/// The file as a blob: its one bottom-level structure's nodes behind a rebuilt node-section header, or its one
/// top-level structure and every BLAS as a two-level blob (the instance nodes' BLAS addresses re-based from the
/// chunks' addresses to the node section's), plus the sections of its HwbvhSections chunk (whose section table
/// goes to `layout` if given). A file without that chunk (a driver's capture) gets a Geometry section of the
/// triangles decoded from its primitive nodes, with the geometry and primitive ids the nodes carry (ids no node
/// holds become degenerate placeholders), and for a top level the Levels and InstanceSideband sections. Throws
/// hwbvh::Error(BadInput) for anything else: several BLASes without a top level, an instance naming no BLAS.
blob::Blob to_blob(const File& file, const std::string& name, blob::FileLayout* layout = nullptr);
/// Reads a .hwbvh blob or a .rra file, told apart by their magic; `layout` as blob::read_file (for a .rra
/// file: its size and the sections of its HwbvhSections chunk).
blob::Blob read_blob_or_rra(const std::filesystem::path& path, blob::FileLayout& layout);
blob::Blob read_blob_or_rra(const std::filesystem::path& path);

}  // namespace hwbvh::rra
