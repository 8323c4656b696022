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

namespace {

// A chunk as it goes into the file: its header and its data (compressed or not), or data waiting in a scratch file.
struct StoredChunk {
  const char* name = "";
  uint32_t version = 0;
  uint32_t compression = 0;
  std::vector<std::byte> header, data;
  uint64_t uncompressed_size = 0;         ///< of compressed data; 0 otherwise (RDF)
  const ScratchFile* scratch = nullptr;  ///< holds the data instead of `data`, when set
  [[nodiscard]] uint64_t data_size() const { return scratch ? scratch->size() : data.size(); }
};

StoredChunk stored_chunk(const char* name, uint32_t version, std::vector<std::byte> header,
                         std::span<const std::byte> data, bool compress) {
  StoredChunk c;
  c.name = name;
  c.version = version;
  c.header = std::move(header);
  if (compress) {
    c.compression = kCompressionZstd;
    c.data = zstd_compress(data);
    c.uncompressed_size = data.size();
  } else {
    c.data.assign(data.begin(), data.end());
  }
  return c;
}

// ApiInfo, AsicInfo, one RawAccelStruct chunk per structure, then the HwbvhSections chunk when there are sections.
// Only the bulky chunks are compressed: ApiInfo and AsicInfo would grow.
std::vector<StoredChunk> structure_chunks(std::span<const AccelStruct> structs,
                                          std::span<const std::byte> hwbvh_sections, const WriteOptions& options) {
  std::vector<StoredChunk> chunks;
  std::vector<std::byte> api;
  append_le64(api, layout::kApiVulkan);
  chunks.push_back(stored_chunk(kApiInfoChunk, 1, {}, api, false));
  chunks.push_back(stored_chunk(kAsicInfoChunk, layout::kAsicInfoVersion, {}, asic_info(), false));
  for (std::size_t i = 0; i < structs.size(); ++i) {
    AccelStructChunk chunk = accel_struct_chunk(structs[i], accel_struct_address(i));
    chunks.push_back(
        stored_chunk(kAccelStructChunk, kAccelStructChunkVersion, std::move(chunk.header), chunk.data, options.compress));
  }
  if (!hwbvh_sections.empty()) chunks.push_back(stored_chunk(kHwbvhSectionsChunk, 1, {}, hwbvh_sections, options.compress));
  return chunks;
}

// The file around `chunks` laid out one after another: the RDF header (pointing at the table) and the chunk table.
struct Framing {
  std::vector<std::byte> file_header, table;
};
Framing framing(std::span<const StoredChunk> chunks) {
  Framing f;
  uint64_t offset = layout::kFileHeaderBytes;
  for (const StoredChunk& c : chunks) {
    append_chunk_entry(f.table, c.name, c.compression, c.version, offset, c.header.size(), c.data_size(),
                       c.uncompressed_size);
    offset += c.header.size() + c.data_size();
  }
  append_le64(f.file_header, kRdfMagic);
  append_le32(f.file_header, kRdfVersion);
  append_le32(f.file_header, 0);
  append_le64(f.file_header, offset);  // the table follows the last chunk
  append_le64(f.file_header, f.table.size());
  append_zeros(f.file_header, layout::kFileHeaderBytes - f.file_header.size());
  return f;
}

// Calls write(bytes) for the whole file in order, and copy(scratch) where a chunk's data waits in a scratch file.
template <class Write, class Copy>
void emit(std::span<const StoredChunk> chunks, Write&& write, Copy&& copy) {
  const Framing f = framing(chunks);
  write(std::span<const std::byte>(f.file_header));
  for (const StoredChunk& c : chunks) {
    write(std::span<const std::byte>(c.header));
    if (c.scratch) {
      copy(*c.scratch);
    } else {
      write(std::span<const std::byte>(c.data));
    }
  }
  write(std::span<const std::byte>(f.table));
}

// hwbvh's sections of a blob other than its nodes, for the HwbvhSections chunk.
std::vector<std::byte> other_sections(const blob::Blob& b) {
  blob::Blob rest{b.target, {}};
  for (const blob::Section& s : b.sections)
    if (s.type != blob::SectionType::Nodes) rest.sections.push_back(s);
  return blob::serialize(rest);
}

}  // namespace

std::vector<std::byte> serialize(std::span<const AccelStruct> structs, std::span<const std::byte> hwbvh_sections,
                                 const WriteOptions& options, std::span<const HistoryDispatch> ray_history) {
  std::vector<StoredChunk> chunks = structure_chunks(structs, hwbvh_sections, options);
  for (const HistoryDispatch& dispatch : ray_history) {  // uncompressed, as RADV writes them
    chunks.push_back(stored_chunk(kHistoryMetadataChunk, kHistoryChunkVersion, {}, history_metadata(dispatch), false));
    chunks.push_back(stored_chunk(kHistoryTokensChunk, kHistoryChunkVersion, {}, history_tokens(dispatch), false));
  }
  std::vector<std::byte> out;
  emit(chunks, [&](std::span<const std::byte> bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); },
       [](const ScratchFile&) {});
  return out;
}

std::vector<std::byte> export_blob(const blob::Blob& b, const std::string& blob_name, const WriteOptions& options,
                                   std::span<const HistoryDispatch> ray_history) {
  return serialize(accel_structs_from_blob(b, blob_name), other_sections(b), options, ray_history);
}

void write_file(const std::filesystem::path& path, const blob::Blob& b, const std::string& blob_name,
                const WriteOptions& options, std::span<const HistoryDispatch> ray_history) {
  write_file_atomically(path, export_blob(b, blob_name, options, ray_history));
}

struct HistoryFileWriter::Impl {
  explicit Impl(const std::filesystem::path& path) : output(path) {}
  AtomicOutput output;
  std::vector<StoredChunk> structure;
  std::vector<Dispatch> dispatches;
  std::vector<ScratchFile> tokens;  ///< per dispatch
  std::vector<uint64_t> rays;       ///< per dispatch
  uint32_t cull_mask = 0xFF;
};

HistoryFileWriter::HistoryFileWriter(const std::filesystem::path& path, const blob::Blob& blob,
                                     const std::string& blob_name, std::vector<Dispatch> dispatches,
                                     uint32_t cull_mask, const WriteOptions& options) {
  for (const Dispatch& d : dispatches)
    if (uint64_t{d.width} * d.height > kMaxHistoryRays)
      throw_bad_input("", fmt::format("a {}x{} dispatch: ray-history ray ids have 30 bits", d.width, d.height));
  std::vector<StoredChunk> structure =
      structure_chunks(accel_structs_from_blob(blob, blob_name), other_sections(blob), options);
  impl_ = std::make_unique<Impl>(path);
  impl_->structure = std::move(structure);
  impl_->cull_mask = cull_mask;
  for (std::size_t i = 0; i < dispatches.size(); ++i) impl_->tokens.emplace_back(impl_->output.scratch_directory());
  impl_->rays.assign(dispatches.size(), 0);
  impl_->dispatches = std::move(dispatches);
}

HistoryFileWriter::~HistoryFileWriter() = default;

void HistoryFileWriter::add(std::size_t dispatch, std::span<const uint32_t> pixel, std::span<const Ray> rays,
                            std::span<const emu::RayResult> results) {
  const Dispatch& d = impl_->dispatches.at(dispatch);
  uint64_t& count = impl_->rays[dispatch];
  if (count + rays.size() > kMaxHistoryRays)
    throw_bad_input("", fmt::format("{} rays in a dispatch: ray-history ray ids have 30 bits", count + rays.size()));
  // Rays without an image are a row of the dispatch: x is their index, at any width beyond it.
  const uint32_t width = d.width != 0 ? d.width : kMaxHistoryRays;
  std::vector<std::byte> bytes;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const uint32_t launch = d.width != 0 ? pixel[i] : static_cast<uint32_t>(count + i);
    append_history_tokens(bytes, history_ray(launch, rays[i], results[i], d.any_hit, impl_->cull_mask,
                                             accel_struct_address(0)),
                          width);
  }
  impl_->tokens[dispatch].append(bytes);
  count += rays.size();
}

void HistoryFileWriter::finish() {
  std::vector<StoredChunk> chunks = std::move(impl_->structure);
  for (std::size_t i = 0; i < impl_->dispatches.size(); ++i) {
    const Dispatch& d = impl_->dispatches[i];
    const uint64_t rays = impl_->rays[i];
    const uint32_t width = d.width != 0 ? d.width : static_cast<uint32_t>(rays);
    chunks.push_back(stored_chunk(kHistoryMetadataChunk, kHistoryChunkVersion, {},
                                  history_metadata(width, d.width != 0 ? d.height : 1, rays), false));
    StoredChunk tokens;
    tokens.name = kHistoryTokensChunk;
    tokens.version = kHistoryChunkVersion;
    tokens.scratch = &impl_->tokens[i];
    chunks.push_back(std::move(tokens));
  }
  AtomicOutput& out = impl_->output;
  emit(chunks, [&](std::span<const std::byte> bytes) { out.write(bytes); },
       [&](const ScratchFile& scratch) { scratch.copy_to(out); });
  out.commit();
}

}  // namespace hwbvh::rra
