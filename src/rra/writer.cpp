// Writes .rra files (docs/rra.md): the RDF container, ApiInfo, AsicInfo, one RawAccelStruct chunk per
// acceleration structure, and hwbvh's own sections chunk.
#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>
#include <zstd.h>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/geometry_section.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/formats/rdna4/node_section.h"
#include "hwbvh/rra/rra.h"
#include "layout.h"
#include "tree_walk.h"

namespace hwbvh::rra {
namespace {

using blob::append_le32;
using blob::append_le64;

// The device RRA names in its overview. An RDNA 4 part (Radeon RX 9070 XT, Navi 48: PCI id 0x7550, 2970 MHz
// boost, 16 GiB of 20 Gbps GDDR6 on a 256-bit bus), so RRA picks its RDNA 4 views.
constexpr char kDeviceName[] = "AMD Radeon RX 9070 XT (RDNA 4) - BVH written by hwbvh, not a capture";
constexpr uint32_t kDeviceId = 0x7550;
constexpr uint64_t kShaderClockHz = 2970000000ull;
constexpr uint64_t kMemoryClockHz = 2500000000ull;
constexpr uint64_t kVramBytes = 16ull << 30;
constexpr uint32_t kBusWidth = 256;
constexpr uint32_t kMemOpsPerClock = 16;  // GDDR6 in Mesa's ac_memory_ops_per_clock
constexpr uint32_t kMemTypeGddr6 = 9;     // RADV's rra_memory_type

void append_zeros(std::vector<std::byte>& out, std::size_t n) { out.insert(out.end(), n, std::byte{0}); }

std::vector<std::byte> asic_info() {
  std::vector<std::byte> out;
  append_le64(out, 0);  // min shader clock
  append_le64(out, 0);  // min memory clock
  append_zeros(out, 8);
  append_le64(out, kShaderClockHz);
  append_le64(out, kMemoryClockHz);
  append_le32(out, kDeviceId);
  append_le32(out, 0);  // revision
  append_zeros(out, 80);
  append_le64(out, kVramBytes);
  append_le32(out, kBusWidth);
  append_zeros(out, 12);
  const std::size_t name_at = out.size();
  append_zeros(out, 256);
  std::memcpy(out.data() + name_at, kDeviceName, sizeof kDeviceName - 1);
  append_zeros(out, 16);
  append_le32(out, kMemOpsPerClock);
  append_le32(out, kMemTypeGddr6);
  append_zeros(out, layout::kAsicInfoBytes - out.size());
  return out;
}

// Geometry flags of RRA's GeometryInfo (Vulkan's VK_GEOMETRY_OPAQUE_BIT): set when all its triangles are opaque.
constexpr uint32_t kGeometryOpaque = 1;

struct AccelStructChunk {
  std::vector<std::byte> header;  // the 28-byte chunk header
  std::vector<std::byte> data;
};

// The address an instance node names a BLAS chunk by, as RRA keys its BLAS map (bvh_bundle.cpp): the chunk's
// virtual address plus its header offset.
uint64_t header_address(std::size_t index) { return accel_struct_address(index) + layout::kMetadataBytes; }

// The top level's instance nodes follow its box nodes, as RRA's sideband indexing needs (rtip31/common.h,
// ComputeInstanceSidebandOffset): the nodes verbatim but for each BLAS address, re-based to its chunk.
void append_top_level_nodes(std::vector<std::byte>& out, const AccelStruct& as) {
  const std::size_t first = out.size() + std::size_t{as.box_nodes} * rdna4::kNodeBytes;
  out.insert(out.end(), as.nodes.begin() + layout::kHeaderBytes, as.nodes.end());
  for (std::size_t i = 0; i < as.instance_blas.size(); ++i)
    layout::set_instance_blas_address(out, first + i * rdna4::kNodeBytes, header_address(as.instance_blas[i]));
}

AccelStructChunk accel_struct_chunk(const AccelStruct& as, uint64_t va) {
  const uint32_t instances = static_cast<uint32_t>(as.sideband.size());
  const uint32_t geometries = as.bottom_level ? static_cast<uint32_t>(as.geometry_primitives.size()) : instances;
  const uint32_t primitives = as.bottom_level ? static_cast<uint32_t>(as.leaf_pointers.size()) : instances;
  const uint32_t node_end = static_cast<uint32_t>(as.nodes.size());  // header start to the end of the nodes
  // A BLAS's geometry infos, a top level's sideband records (RADV and GPURT put them where the geometry infos are).
  const uint32_t leaf_pointers_at = node_end + (as.bottom_level ? geometries * layout::kGeometryInfoBytes
                                                                : instances * uint32_t{blob::kSidebandRecordBytes});
  const uint32_t size = leaf_pointers_at + primitives * 4;

  AccelStructChunk chunk;
  append_le64(chunk.header, va);
  append_le32(chunk.header, 0);
  append_le32(chunk.header, layout::kMetadataUsedBytes);
  append_le32(chunk.header, layout::kMetadataBytes);
  append_le32(chunk.header, layout::kHeaderBytes);
  append_le32(chunk.header, as.bottom_level ? layout::kChunkFlagBottomLevel : 0);

  std::vector<std::byte>& out = chunk.data;
  append_le64(out, va);
  append_le32(out, layout::kMetadataBytes);  // GPURT: the metadata's size, i.e. the offset of the header
  append_zeros(out, layout::kMetadataBytes - out.size());

  std::array<uint32_t, layout::kHeaderBytes / 4> h{};
  h[layout::kHdrInfo] = as.bottom_level ? 1u : 0u;
  h[layout::kHdrMetadataSize] = layout::kMetadataBytes;
  h[layout::kHdrSize] = size;
  h[layout::kHdrPrimitives] = primitives;
  h[layout::kHdrActivePrimitives] = as.bottom_level ? as.active_primitives : instances;
  h[layout::kHdrDescs] = geometries;
  h[layout::kHdrGeometryType] = as.bottom_level ? layout::kGeometryTriangles : layout::kGeometryInstances;
  h[layout::kHdrInteriorNodes] = layout::kHeaderBytes;
  // A BLAS's box and primitive nodes are interleaved (no instance nodes); a top level's instance nodes follow its box nodes.
  h[layout::kHdrLeafNodes] = as.bottom_level ? node_end : layout::kHeaderBytes + as.box_nodes * rdna4::kNodeBytes;
  h[layout::kHdrGeometryInfo] = node_end;
  h[layout::kHdrLeafPointers] = leaf_pointers_at;
  h[layout::kHdrBoxNodes] = as.box_nodes;
  h[layout::kHdrLeafNodeCount] = as.bottom_level ? as.primitive_nodes : instances;
  h[layout::kHdrVersion] = layout::kAccelStructVersion;
  h[layout::kHdrRtIpLevel] = kRtIp31;
  for (int axis = 0; axis < 3; ++axis) {
    h[layout::kHdrBounds + axis] = std::bit_cast<uint32_t>(as.bounds.min[axis]);
    h[layout::kHdrBounds + 3 + axis] = std::bit_cast<uint32_t>(as.bounds.max[axis]);
  }
  h[layout::kHdrInfo2] = layout::kInfo2Bvh8;
  for (uint32_t d : h) append_le32(out, d);

  if (!as.bottom_level) {
    append_top_level_nodes(out, as);
    // GPURT's blasMetadataSize: the bytes before each BLAS chunk's header. RRA counts an instance whose record
    // says 0 (as hwbvh's blobs do, having no metadata) as inactive.
    std::vector<blob::InstanceSideband> records = as.sideband;
    for (blob::InstanceSideband& r : records) r.blas_metadata_size = layout::kMetadataBytes;
    const std::vector<std::byte> sideband = blob::encode_instance_sideband(records);
    out.insert(out.end(), sideband.begin(), sideband.end());
    for (uint32_t i = 0; i < instances; ++i)
      append_le32(out, rdna4::make_node_pointer(h[layout::kHdrLeafNodes] + i * rdna4::kNodeBytes, rdna4::kTypeInstance));
    return chunk;
  }
  out.insert(out.end(), as.nodes.begin() + layout::kHeaderBytes, as.nodes.end());
  uint32_t first = 0;
  for (uint32_t g = 0; g < geometries; ++g) {
    const uint32_t count = as.geometry_primitives[g];
    const bool opaque = (as.opaque_geometries.size() > g) && as.opaque_geometries[g];
    append_le32(out, count | (opaque ? kGeometryOpaque : 0u) << 29);
    append_le32(out, 0);
    append_le32(out, first * 4);  // this geometry's entries in the leaf-node list
    first += count;
  }
  for (uint32_t pointer : as.leaf_pointers) append_le32(out, pointer);
  return chunk;
}

// One zstd frame at zstd's default level, as libamdrdf compresses a chunk's data (ChunkFileWriter::EndChunk).
std::vector<std::byte> zstd_compress(std::span<const std::byte> data) {
  std::vector<std::byte> out(ZSTD_compressBound(data.size()));
  const std::size_t size = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), ZSTD_CLEVEL_DEFAULT);
  if (ZSTD_isError(size))
    throw Error(ErrorKind::Runtime, "", fmt::format("zstd compression: {}", ZSTD_getErrorName(size)));
  out.resize(size);
  return out;
}

void append_chunk_entry(std::vector<std::byte>& table, const char* name, uint32_t compression, uint32_t version,
                        uint64_t offset, uint64_t header_size, uint64_t data_size, uint64_t uncompressed_size) {
  const std::size_t name_at = table.size();
  append_zeros(table, layout::kChunkNameBytes);
  std::memcpy(table.data() + name_at, name, std::min<std::size_t>(std::strlen(name), layout::kChunkNameBytes));
  append_le32(table, compression);
  append_le32(table, version);
  append_le64(table, offset);
  append_le64(table, header_size);
  append_le64(table, offset + header_size);
  append_le64(table, data_size);
  append_le64(table, uncompressed_size);  // RDF: 0 when not compressed
}

// One BLAS: a complete node section and its triangles, whose geometry ids are first_geometry ...
// first_geometry + geometry_count - 1.
AccelStruct bottom_level(std::span<const std::byte> nodes, std::span<const blob::GeometrySection::Tri> triangles,
                         uint32_t first_geometry, uint32_t geometry_count, const std::string& file) {
  AccelStruct as;
  as.nodes = nodes;
  const std::vector<uint32_t> section = blob::bytes_to_dwords(as.nodes);
  std::string error;
  const auto header = rdna4::read_node_section_header(section.data(), section.size(), &error);
  if (!header) throw_bad_input(file, "nodes section: " + error);
  as.box_nodes = header->box_nodes;
  as.primitive_nodes = header->primitive_nodes;
  as.bounds = header->bounds;

  as.geometry_primitives.assign(geometry_count, 0);
  for (const blob::GeometrySection::Tri& t : triangles) {
    const uint32_t g = t.geometry - first_geometry;  // wraps to a large value below first_geometry
    if (g >= geometry_count)
      throw_bad_input(file, fmt::format("geometry section: a triangle of geometry {} in a BLAS of geometries {}..{}",
                                        t.geometry, first_geometry, first_geometry + geometry_count - 1));
    ++as.geometry_primitives[g];
    if (!t.degenerate()) ++as.active_primitives;
  }
  std::vector<uint32_t> first(as.geometry_primitives.size(), 0);
  for (std::size_t g = 1; g < first.size(); ++g) first[g] = first[g - 1] + as.geometry_primitives[g - 1];
  as.leaf_pointers.assign(triangles.size(), rdna4::kInvalidNode);
  as.opaque_geometries.assign(as.geometry_primitives.size(), true);
  walk_tree(section, file, [&](uint32_t pointer, const rdna4::DecodedPair& pair) {
    for (const rdna4::DecodedTriangle& t : pair.tri) {
      if (!t.valid) continue;
      if (t.geometry_id >= first.size() || t.primitive_id >= as.geometry_primitives[t.geometry_id])
        throw_bad_input(file, fmt::format("pair 0x{:08x} names geometry {} primitive {}, not in the geometry section",
                                          pointer, t.geometry_id, t.primitive_id));
      as.leaf_pointers[first[t.geometry_id] + t.primitive_id] = pointer;
      if (!t.opaque) as.opaque_geometries[t.geometry_id] = false;
    }
  });
  return as;
}

// The top level of a two-level blob: its instance nodes must follow its box nodes in sideband order, as RRA
// indexes the sideband by an instance node's place after the box nodes.
AccelStruct top_level(std::span<const std::byte> nodes, const blob::Levels& levels,
                      std::vector<blob::InstanceSideband> sideband, const std::string& file) {
  AccelStruct as;
  as.bottom_level = false;
  as.nodes = nodes;
  const std::vector<uint32_t> section = blob::bytes_to_dwords(nodes);
  std::string error;
  const auto header = rdna4::read_node_section_header(section.data(), section.size(), &error);
  if (!header) throw_bad_input(file, "top level: " + error);
  if (header->instance_nodes != levels.instances.size() || sideband.size() != levels.instances.size())
    throw_bad_input(file, fmt::format("top level: {} instance nodes, the levels section {}, the sideband {}",
                                      header->instance_nodes, levels.instances.size(), sideband.size()));
  as.box_nodes = header->box_nodes;
  as.bounds = header->bounds;
  const uint64_t first_instance = uint64_t{1 + header->box_nodes} * rdna4::kNodeBytes;
  walk_tree(
      section, file,
      [&](uint32_t pointer, const rdna4::DecodedPair&) {
        throw_bad_input(file, fmt::format("top level: triangle pair 0x{:08x}", pointer));
      },
      [&](uint32_t pointer) {
        if (rdna4::node_byte_offset(pointer) < first_instance)
          throw_bad_input(file, fmt::format("top level: instance node 0x{:08x} among the box nodes", pointer));
      });
  as.sideband = std::move(sideband);
  // Structure 0 is this top level, BLAS k structure k + 1.
  for (const blob::InstanceLevel& instance : levels.instances) as.instance_blas.push_back(instance.blas + 1);
  return as;
}

}  // namespace

std::vector<AccelStruct> accel_structs_from_blob(const blob::Blob& b, const std::string& file) {
  if (b.target != blob::Target::Rtip31)
    throw_bad_input(file, fmt::format("target {}: .rra export needs an rtip31 blob (RRA reads RT IP 3.1 BVHs "
                                      "in this form; build with --target rtip31)",
                                      blob::target_name(b.target)));
  const std::span<const std::byte> nodes = b.require(blob::SectionType::Nodes, file).data;
  const blob::GeometrySection geometry =
      blob::decode_geometry(b.require(blob::SectionType::Geometry, file).data, file);
  uint32_t geometry_count = 0;
  for (const blob::GeometrySection::Tri& t : geometry.triangles) geometry_count = std::max(geometry_count, t.geometry + 1);
  const blob::Section* levels_section = b.find(blob::SectionType::Levels);
  if (levels_section == nullptr) return {bottom_level(nodes, geometry.triangles, 0, geometry_count, file)};

  const blob::Levels levels = blob::decode_levels(levels_section->data, file, nodes.size(), geometry_count,
                                                  static_cast<uint32_t>(geometry.triangles.size()));
  std::vector<AccelStruct> structs{top_level(
      nodes.first(levels.top_bytes), levels,
      blob::decode_instance_sideband(b.require(blob::SectionType::InstanceSideband, file).data, file), file)};
  for (const blob::BlasRange& blas : levels.blases)
    structs.push_back(bottom_level(nodes.subspan(blas.address, blas.bytes),
                                   std::span(geometry.triangles).subspan(blas.first_triangle, blas.triangle_count),
                                   blas.first_geometry, blas.geometry_count, file));
  return structs;
}

std::vector<std::byte> serialize(std::span<const AccelStruct> structs, std::span<const std::byte> hwbvh_sections,
                                 const WriteOptions& options, std::span<const HistoryDispatch> ray_history) {
  std::vector<std::byte> out(layout::kFileHeaderBytes, std::byte{0});
  std::vector<std::byte> table;
  const auto add = [&](const char* name, uint32_t version, std::span<const std::byte> header,
                       std::span<const std::byte> data, bool compressible) {
    const bool compress = compressible && options.compress;
    const std::vector<std::byte> stored = compress ? zstd_compress(data) : std::vector<std::byte>{};
    const std::span<const std::byte> body = compress ? std::span<const std::byte>(stored) : data;
    append_chunk_entry(table, name, compress ? kCompressionZstd : 0u, version, out.size(), header.size(),
                       body.size(), compress ? data.size() : 0u);
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), body.begin(), body.end());
  };
  // Only the bulky chunks are compressed: ApiInfo and AsicInfo would grow.
  std::vector<std::byte> api;
  append_le64(api, layout::kApiVulkan);
  add(kApiInfoChunk, 1, {}, api, false);
  add(kAsicInfoChunk, layout::kAsicInfoVersion, {}, asic_info(), false);
  for (std::size_t i = 0; i < structs.size(); ++i) {
    const AccelStructChunk chunk = accel_struct_chunk(structs[i], accel_struct_address(i));
    add(kAccelStructChunk, kAccelStructChunkVersion, chunk.header, chunk.data, true);
  }
  if (!hwbvh_sections.empty()) add(kHwbvhSectionsChunk, 1, {}, hwbvh_sections, true);
  for (const HistoryDispatch& dispatch : ray_history) {  // uncompressed, as RADV writes them
    add(kHistoryMetadataChunk, kHistoryChunkVersion, {}, history_metadata(dispatch), false);
    add(kHistoryTokensChunk, kHistoryChunkVersion, {}, history_tokens(dispatch), false);
  }

  const uint64_t table_offset = out.size();
  out.insert(out.end(), table.begin(), table.end());
  std::vector<std::byte> header;
  append_le64(header, kRdfMagic);
  append_le32(header, kRdfVersion);
  append_le32(header, 0);
  append_le64(header, table_offset);
  append_le64(header, table.size());
  std::copy(header.begin(), header.end(), out.begin());
  return out;
}

std::vector<std::byte> export_blob(const blob::Blob& b, const std::string& blob_name, const WriteOptions& options,
                                   std::span<const HistoryDispatch> ray_history) {
  const std::vector<AccelStruct> structs = accel_structs_from_blob(b, blob_name);
  blob::Blob rest{b.target, {}};
  for (const blob::Section& s : b.sections)
    if (s.type != blob::SectionType::Nodes) rest.sections.push_back(s);
  return serialize(structs, blob::serialize(rest), options, ray_history);
}

void write_file(const std::filesystem::path& path, const blob::Blob& b, const std::string& blob_name,
                const WriteOptions& options, std::span<const HistoryDispatch> ray_history) {
  write_file_atomically(path, export_blob(b, blob_name, options, ray_history));
}

}  // namespace hwbvh::rra
