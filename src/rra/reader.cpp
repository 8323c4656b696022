// Reads .rra files (docs/rra.md §4): every check RRA's loader makes, plus the bounds it takes on trust, so a
// malformed file gets one clear message and never a crash.
#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <map>

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

using blob::load_le32;
using blob::load_le64;

// RRA refuses acceleration-structure chunks of a later major version (bvh_bundle.cpp, GPURT_ACCEL_STRUCT_MAJOR_VERSION).
constexpr uint32_t kMaxAccelStructMajor = 16;

// No zstd data expands by more than this: its largest gain is an RLE block, 4 bytes for 128 KiB (RFC 8878,
// RLE_Block and Block_Maximum_Size). A chunk claiming a larger uncompressed size is refused before allocating.
constexpr uint64_t kMaxZstdRatio = (128 * 1024) / 4;

// `size` bytes at `offset` lie inside `total` (written so that it cannot overflow).
bool fits(uint64_t offset, uint64_t size, uint64_t total) { return offset <= total && size <= total - offset; }

Chunk read_chunk_entry(std::span<const std::byte> entry) {
  Chunk c;
  const auto* name = reinterpret_cast<const char*>(entry.data());
  c.name.assign(name, strnlen(name, layout::kChunkNameBytes));
  c.compression = load_le32(entry, 16);
  c.version = load_le32(entry, 20);
  c.header_offset = load_le64(entry, 24);
  c.header_size = load_le64(entry, 32);
  c.data_offset = load_le64(entry, 40);
  c.data_size = load_le64(entry, 48);
  c.uncompressed_size = load_le64(entry, 56);
  return c;
}

// A chunk's data as stored (libamdrdf compresses the data, never the chunk header), decompressed into `buffer`
// when compressed; allocation is bounded by kMaxZstdRatio times the stored size.
std::span<const std::byte> chunk_data(std::span<const std::byte> bytes, const Chunk& c, std::vector<std::byte>& buffer,
                                      const std::string& name) {
  const auto stored = bytes.subspan(c.data_offset, c.data_size);
  if (c.compression == 0) return stored;
  const auto fail = [&](const std::string& problem) {
    throw_bad_input(name, fmt::format("chunk '{}' (zstd-compressed data at byte {}): {}", c.name, c.data_offset,
                                      problem));
  };
  if (c.compression != kCompressionZstd) fail(fmt::format("compression method {}: hwbvh reads 0 and 1", c.compression));
  if (c.uncompressed_size > c.data_size * kMaxZstdRatio)
    fail(fmt::format("uncompressed size {} from {} bytes is more than zstd can expand", c.uncompressed_size,
                     c.data_size));
  const unsigned long long frame_size = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (frame_size == ZSTD_CONTENTSIZE_ERROR) fail("not a zstd frame");
  if (frame_size != ZSTD_CONTENTSIZE_UNKNOWN && frame_size != c.uncompressed_size)
    fail(fmt::format("the zstd frame holds {} bytes, the chunk table says {}", frame_size, c.uncompressed_size));
  buffer.resize(c.uncompressed_size);
  const std::size_t size = ZSTD_decompress(buffer.data(), buffer.size(), stored.data(), stored.size());
  if (ZSTD_isError(size)) fail(fmt::format("zstd: {}", ZSTD_getErrorName(size)));
  if (size != buffer.size())
    fail(fmt::format("decompressed to {} bytes, the chunk table says {}", size, c.uncompressed_size));
  return buffer;
}

struct Offsets {
  uint32_t interior, leaf, geometry_info, leaf_pointers;  // from the acceleration-structure header
};

// A top level as RRA reads it (rtip31/encoded_rt_ip_31_top_level_bvh.cpp): box nodes, then from the leaf-node
// offset one 128-byte instance node per primitive, then at the geometry-info offset one sideband record per
// instance node, indexed by the node's place after the leaf-node offset.
void read_top_level(ReadAccelStruct& as, std::span<const uint32_t> section, std::span<const std::byte> sideband,
                    const Offsets& at, const std::function<void(const std::string&)>& fail, const std::string& name) {
  const uint64_t instance_bytes = uint64_t{as.primitives} * rdna4::kNodeBytes;
  if (at.leaf % rdna4::kNodeBytes != 0 || at.geometry_info - at.leaf != instance_bytes)
    fail(fmt::format("instance nodes at bytes {}..{}, not the {} nodes of 128 bytes its {} instances need", at.leaf,
                     at.geometry_info, as.primitives, as.primitives));
  if (uint64_t{at.leaf_pointers} - at.geometry_info != sideband.size())
    fail(fmt::format("instance sideband of {} bytes (offsets {}..{}), its {} instances need {}",
                     at.leaf_pointers - at.geometry_info, at.geometry_info, at.leaf_pointers, as.primitives,
                     sideband.size()));
  const WalkCounts counts = walk_tree(
      section, name,
      [&](uint32_t pointer, const rdna4::DecodedPair&) {
        fail(fmt::format("triangle pair 0x{:08x} in a top-level structure", pointer));
      },
      [&](uint32_t pointer) {
        const uint64_t byte = rdna4::node_byte_offset(pointer);
        if (byte < at.leaf || byte >= at.geometry_info)
          fail(fmt::format("instance node 0x{:08x} outside the instance nodes (bytes {}..{})", pointer, at.leaf,
                           at.geometry_info));
      });
  as.box_nodes = counts.box_nodes;
  as.depth = counts.depth;
  as.first_instance_node = at.leaf - at.interior;
  as.sideband = blob::decode_instance_sideband(sideband, name);
}

ReadAccelStruct read_accel_struct(std::span<const std::byte> bytes, const Chunk& c, std::span<const std::byte> data,
                                  const std::string& name) {
  const auto fail = [&](const std::string& problem) {
    throw_bad_input(name, fmt::format("{} chunk at byte {}: {}", c.name, c.header_offset, problem));
  };
  if ((c.version >> 16) > kMaxAccelStructMajor)
    fail(fmt::format("version 0x{:x}: major version above {} (RRA refuses it too)", c.version, kMaxAccelStructMajor));
  if (c.header_size < layout::kChunkHeaderBytes)
    fail(fmt::format("chunk header of {} bytes, needs {}", c.header_size, layout::kChunkHeaderBytes));
  const auto ch = bytes.subspan(c.header_offset, layout::kChunkHeaderBytes);
  const uint32_t meta_offset = load_le32(ch, 8), meta_size = load_le32(ch, 12);
  const uint32_t header_offset = load_le32(ch, 16), header_size = load_le32(ch, 20);
  const bool bottom_level = (load_le32(ch, 24) & layout::kChunkFlagBottomLevel) != 0;
  if (!fits(meta_offset, meta_size, data.size())) fail("driver metadata outside the chunk");
  if (!fits(header_offset, layout::kHeaderBytes, data.size()) || !fits(header_offset, header_size, data.size()))
    fail(fmt::format("acceleration-structure header at {} (+{} bytes) outside the chunk's {} bytes", header_offset,
                     std::max<uint32_t>(header_size, layout::kHeaderBytes), data.size()));
  std::array<uint32_t, layout::kHeaderBytes / 4> h{};
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = load_le32(data, header_offset + 4 * i);

  ReadAccelStruct as;
  as.bottom_level = bottom_level;
  as.rt_ip_level = h[layout::kHdrRtIpLevel];
  as.primitives = h[layout::kHdrPrimitives];
  as.active_primitives = h[layout::kHdrActivePrimitives];
  as.geometries = h[layout::kHdrDescs];
  for (int axis = 0; axis < 3; ++axis) {
    as.bounds.min[axis] = std::bit_cast<float>(h[layout::kHdrBounds + axis]);
    as.bounds.max[axis] = std::bit_cast<float>(h[layout::kHdrBounds + 3 + axis]);
  }
  if (as.rt_ip_level != kRtIp31)
    fail(fmt::format("RT IP level {}: hwbvh reads RT IP 3.1 ({}) structures only", as.rt_ip_level, kRtIp31));
  if (((h[layout::kHdrInfo] & 1u) != 0) != bottom_level)
    fail("the chunk header and the acceleration-structure header disagree on top or bottom level");
  // RRA's checks (rtip_common/acceleration_structure_header.cpp, IsValidImpl; bvh_bundle.cpp).
  const uint32_t interior = h[layout::kHdrInteriorNodes], leaf = h[layout::kHdrLeafNodes];
  const uint32_t geometry_info = h[layout::kHdrGeometryInfo], leaf_pointers = h[layout::kHdrLeafPointers];
  if (h[layout::kHdrSize] < layout::kMetadataBytes + layout::kHeaderBytes)
    fail(fmt::format("size {} below RRA's minimum of 256 bytes", h[layout::kHdrSize]));
  if (h[layout::kHdrMetadataSize] < layout::kMetadataBytes)
    fail(fmt::format("metadata size {} below 128", h[layout::kHdrMetadataSize]));
  if (h[layout::kHdrMetadataSize] != header_offset)
    fail(fmt::format("metadata size {} is not the header's offset {}", h[layout::kHdrMetadataSize], header_offset));
  if (h[layout::kHdrBoxNodes] == 0) fail("no box nodes (no root)");
  if (as.primitives < as.active_primitives)
    fail(fmt::format("{} active primitives of {}", as.active_primitives, as.primitives));
  if (!(interior >= layout::kHeaderBytes && leaf >= interior && geometry_info >= leaf && leaf_pointers >= geometry_info))
    fail(fmt::format("buffer offsets not ascending from 128: interior nodes {}, leaf nodes {}, geometry infos {}, "
                     "leaf-node list {}",
                     interior, leaf, geometry_info, leaf_pointers));
  // RRA reads the node data from the end of the header as one buffer up to the geometry infos, then the
  // geometry infos and the leaf-node list.
  const uint64_t nodes_at = uint64_t{header_offset} + header_size;
  const uint64_t node_bytes = geometry_info - interior;
  if (node_bytes == 0 || node_bytes % rdna4::kNodeBytes != 0)
    fail(fmt::format("node data of {} bytes, not a positive multiple of 128", node_bytes));
  // After the nodes: a BLAS's geometry infos, a top level's sideband records (one per instance node).
  const uint64_t infos_bytes = bottom_level ? uint64_t{as.geometries} * layout::kGeometryInfoBytes
                                            : uint64_t{as.primitives} * blob::kSidebandRecordBytes;
  const uint64_t tail = node_bytes + infos_bytes + uint64_t{as.primitives} * 4;
  if (!fits(nodes_at, tail, data.size()))
    fail(fmt::format("nodes, {} bytes of {} and {} leaf-node pointers need {} bytes after byte {}, the chunk has {}",
                     infos_bytes, bottom_level ? "geometry infos" : "instance sideband", as.primitives, tail, nodes_at,
                     data.size()));
  as.address = (uint64_t{load_le32(ch, 4)} << 32 | load_le32(ch, 0)) + header_offset;

  // Node section as hwbvh addresses it: a 128-byte header slot, then the nodes from pointer address 128.
  std::vector<uint32_t> section(layout::kHeaderBytes / 4 + node_bytes / 4, 0);
  for (std::size_t i = layout::kHeaderBytes / 4; i < section.size(); ++i)
    section[i] = load_le32(data, nodes_at + 4 * i - layout::kHeaderBytes);
  const uint64_t infos_at = nodes_at + node_bytes;
  if (!bottom_level) {
    read_top_level(as, section, data.subspan(infos_at, infos_bytes), {interior, leaf, geometry_info, leaf_pointers},
                   fail, name);
    as.nodes.assign(data.begin() + nodes_at, data.begin() + nodes_at + node_bytes);
    return as;
  }
  uint64_t primitive_sum = 0;
  for (uint32_t g = 0; g < as.geometries; ++g) {
    as.geometry_primitives.push_back(load_le32(data, infos_at + layout::kGeometryInfoBytes * g) & 0x1FFFFFFFu);
    primitive_sum += as.geometry_primitives.back();
  }
  if (primitive_sum != as.primitives)  // RRA: EncodedRtIp31BottomLevelBvh::Validate
    fail(fmt::format("geometry infos count {} primitives, the header {}", primitive_sum, as.primitives));
  // Ids inside the geometry infos' counts: a capture's triangles are placed by them (to_blob).
  const WalkCounts counts = walk_tree(section, name, [&](uint32_t pointer, const rdna4::DecodedPair& pair) {
    for (const rdna4::DecodedTriangle& t : pair.tri) {
      if (!t.valid) continue;
      if (t.geometry_id >= as.geometries)
        fail(fmt::format("pair 0x{:08x}: geometry {} of {}", pointer, t.geometry_id, as.geometries));
      if (t.primitive_id >= as.geometry_primitives[t.geometry_id])
        fail(fmt::format("pair 0x{:08x}: primitive {} of geometry {}, which has {}", pointer, t.primitive_id,
                         t.geometry_id, as.geometry_primitives[t.geometry_id]));
    }
  });
  as.box_nodes = counts.box_nodes;
  as.primitive_nodes = counts.primitive_nodes;
  as.depth = counts.depth;
  as.nodes.assign(data.begin() + nodes_at, data.begin() + nodes_at + node_bytes);
  const uint64_t pointers_at = infos_at + uint64_t{as.geometries} * layout::kGeometryInfoBytes;
  for (uint32_t i = 0; i < as.primitives; ++i) {
    const uint32_t p = load_le32(data, pointers_at + 4 * i);
    if (p == rdna4::kInvalidNode || p == 0) continue;  // 0: RADV leaves the list zeroed for RT IP 3.1
    const uint64_t byte = rdna4::node_byte_offset(p);
    if ((p & 7u) > 3u || byte < interior || byte >= interior + node_bytes)
      fail(fmt::format("leaf-node list entry {} (0x{:08x}) is not a primitive node inside the node data", i, p));
  }
  return as;
}

// A driver's capture has no Geometry section: the triangles the oracle needs, decoded from the primitive nodes
// (bit-exact positions), placed by the ids the nodes carry (read_accel_struct keeps them inside the geometry
// infos' counts); a second pair naming the same id does not replace the first. Ids no node holds get a zero-area
// placeholder: a capture does not say what they were, and neither the emulator nor the oracle can hit them.
// Appends the structure's geometries and triangles to `scene`, numbering its geometries after those there.
void append_capture_geometry(Scene& scene, const ReadAccelStruct& as, std::span<const uint32_t> section,
                             const std::string& name) {
  if (scene.positions.empty()) scene.positions.push_back(Vec3{0.0f});  // the placeholders' one vertex
  const uint32_t first_geometry = static_cast<uint32_t>(scene.geometries.size());
  std::vector<uint32_t> first(as.geometries + 1, static_cast<uint32_t>(scene.triangles.size()));
  for (uint32_t g = 0; g < as.geometries; ++g) {
    first[g + 1] = first[g] + as.geometry_primitives[g];
    scene.geometries.push_back({fmt::format("geometry {}", first_geometry + g), first[g], as.geometry_primitives[g]});
  }
  scene.triangles.resize(first[as.geometries]);
  for (uint32_t g = 0; g < as.geometries; ++g)
    for (uint32_t p = 0; p < as.geometry_primitives[g]; ++p) {
      scene.triangles[first[g] + p].geometry = first_geometry + g;
      scene.triangles[first[g] + p].primitive = p;
    }
  std::vector<bool> placed(as.primitives, false);
  walk_tree(section, name, [&](uint32_t, const rdna4::DecodedPair& pair) {
    for (const rdna4::DecodedTriangle& t : pair.tri) {
      if (!t.valid) continue;
      const uint32_t i = first[t.geometry_id] + t.primitive_id;
      if (placed[i - first[0]]) continue;
      placed[i - first[0]] = true;
      for (int k = 0; k < 3; ++k) {
        scene.triangles[i].v[k] = static_cast<uint32_t>(scene.positions.size());
        scene.positions.push_back(t.vertex[k]);
      }
    }
  });
}

// A structure's nodes behind a rebuilt node-section header (docs/blob-format.md §6.1).
std::vector<std::byte> with_node_section_header(const ReadAccelStruct& as) {
  const uint32_t slots = static_cast<uint32_t>(as.nodes.size() / rdna4::kNodeBytes + 1);
  const uint32_t instances = as.bottom_level ? 0 : as.primitives;
  const uint32_t box_nodes = as.bottom_level ? as.box_nodes : slots - 1 - instances;
  const rdna4::NodeDwords header = rdna4::write_node_section_header(
      {rdna4::kRootPointer, slots, box_nodes, slots - 1 - box_nodes - instances, as.bounds, instances});
  std::vector<std::byte> nodes = blob::dwords_to_bytes(header);
  nodes.insert(nodes.end(), as.nodes.begin(), as.nodes.end());
  return nodes;
}

// The blob of a file's sections: the HwbvhSections chunk's, or for a capture the ones decoded here (`decoded`),
// behind the Nodes section.
blob::Blob with_sections(const File& file, const std::string& name, blob::FileLayout* layout,
                         std::vector<std::byte> nodes, std::vector<blob::Section> decoded) {
  if (file.hwbvh_sections.empty()) {
    decoded.insert(decoded.begin(), {blob::SectionType::Nodes, blob::kNodesAlignment, std::move(nodes)});
    return {blob::Target::Rtip31, std::move(decoded)};
  }
  const std::string chunk_name = name + " (HwbvhSections chunk)";
  blob::Blob b = layout ? blob::parse(file.hwbvh_sections, chunk_name, *layout)
                        : blob::parse(file.hwbvh_sections, chunk_name);
  if (b.target != blob::Target::Rtip31 || b.find(blob::SectionType::Nodes))
    throw_bad_input(name, "HwbvhSections chunk: not the sections of an rtip31 blob without its nodes");
  b.sections.insert(b.sections.begin(), {blob::SectionType::Nodes, blob::kNodesAlignment, std::move(nodes)});
  return b;
}

// A top level and its BLASes as one node section (docs/blob-format.md §6.6): the top level, then every BLAS in
// file order. Each instance node's BLAS address, a chunk's address in the file, is re-based to that BLAS's byte
// in the node section, its flags kept.
blob::Blob two_level_blob(const File& file, const std::string& name, blob::FileLayout* layout) {
  const ReadAccelStruct* top = nullptr;
  std::vector<const ReadAccelStruct*> blases;
  for (const ReadAccelStruct& as : file.accel_structs) {
    if (as.bottom_level) {
      blases.push_back(&as);
    } else if (top != nullptr) {
      throw_bad_input(name, "several top-level structures: hwbvh reads one TLAS with its BLASes, or one BLAS");
    } else {
      top = &as;
    }
  }
  if (blases.empty()) throw_bad_input(name, "a top-level structure without any BLAS chunk");

  std::vector<std::byte> nodes = with_node_section_header(*top);
  blob::Levels levels;
  levels.top_bytes = nodes.size();
  std::map<uint64_t, uint32_t> blas_at;  // chunk address -> BLAS index
  Scene scene;
  for (const ReadAccelStruct* as : blases) {
    if (!blas_at.emplace(as->address, static_cast<uint32_t>(levels.blases.size())).second)
      throw_bad_input(name, fmt::format("two BLAS chunks at address 0x{:x}", as->address));
    std::vector<std::byte> blas = with_node_section_header(*as);
    const uint32_t first_geometry = static_cast<uint32_t>(scene.geometries.size());
    const uint32_t first_triangle = static_cast<uint32_t>(scene.triangles.size());
    if (file.hwbvh_sections.empty()) append_capture_geometry(scene, *as, blob::bytes_to_dwords(blas), name);
    levels.blases.push_back({nodes.size(), blas.size(), first_geometry, as->geometries, first_triangle,
                             as->primitives});
    nodes.insert(nodes.end(), blas.begin(), blas.end());
  }
  for (uint32_t i = 0; i < top->primitives; ++i) {
    const std::size_t at = layout::kHeaderBytes + top->first_instance_node + std::size_t{i} * rdna4::kNodeBytes;
    const uint64_t base_pointer = blob::load_le64(nodes, at + layout::kInstanceBasePointer);
    const uint64_t address = rdna4::base_pointer_address(base_pointer);
    const auto blas = blas_at.find(address);
    if (blas == blas_at.end())
      throw_bad_input(name, fmt::format("instance node {} (top-level byte {}) points at address 0x{:x}, the header of "
                                        "no BLAS chunk in the file",
                                        i, at, address));
    layout::set_instance_blas_address(nodes, at, levels.blases[blas->second].address);
    levels.instances.push_back({blas->second, static_cast<uint32_t>(nodes[at + layout::kInstanceMaskByte])});
  }
  if (!file.hwbvh_sections.empty()) return with_sections(file, name, layout, std::move(nodes), {});
  // hwbvh's blobs have no driver metadata before a BLAS (docs/blob-format.md §12).
  std::vector<blob::InstanceSideband> sideband = top->sideband;
  for (blob::InstanceSideband& r : sideband) r.blas_metadata_size = 0;
  return with_sections(file, name, layout, std::move(nodes),
                       {{blob::SectionType::Geometry, 16, blob::encode_geometry(scene)},
                        {blob::SectionType::InstanceSideband, 16, blob::encode_instance_sideband(sideband)},
                        {blob::SectionType::Levels, 16, blob::encode_levels(levels)}});
}

}  // namespace

bool has_rdf_magic(std::span<const std::byte> bytes) {
  return bytes.size() >= 8 && load_le64(bytes, 0) == kRdfMagic;
}

File parse(std::span<const std::byte> bytes, const std::string& name) {
  if (!has_rdf_magic(bytes)) throw_bad_input(name, "not an RDF (.rra) file: no \"AMD_RDF \" magic");
  if (bytes.size() < layout::kFileHeaderBytes)
    throw_bad_input(name, fmt::format("truncated: {} bytes, the RDF header needs 32", bytes.size()));
  const uint32_t version = load_le32(bytes, 8);
  if (version != kRdfVersion)
    throw_bad_input(name, fmt::format("RDF version {}: hwbvh reads version {}", version, kRdfVersion));
  const uint64_t table_offset = load_le64(bytes, 16), table_size = load_le64(bytes, 24);
  if (!fits(table_offset, table_size, bytes.size()) || table_offset < layout::kFileHeaderBytes)
    throw_bad_input(name, fmt::format("chunk table at {} ({} bytes) outside the file's {} bytes", table_offset,
                                      table_size, bytes.size()));
  if (table_size % layout::kChunkEntryBytes != 0)
    throw_bad_input(name, fmt::format("chunk table of {} bytes, not a multiple of 64", table_size));

  File file;
  std::vector<std::pair<Chunk, std::vector<std::byte>>> history_metadata, history_tokens;
  for (uint64_t at = table_offset; at < table_offset + table_size; at += layout::kChunkEntryBytes) {
    Chunk c = read_chunk_entry(bytes.subspan(at, layout::kChunkEntryBytes));
    if (!fits(c.header_offset, c.header_size, bytes.size()) || !fits(c.data_offset, c.data_size, bytes.size()))
      throw_bad_input(name, fmt::format("chunk '{}': header {}+{} or data {}+{} outside the file's {} bytes", c.name,
                                        c.header_offset, c.header_size, c.data_offset, c.data_size, bytes.size()));
    std::vector<std::byte> buffer;
    if (c.name == kAccelStructChunk || c.name == kAccelStructChunkOld)
      file.accel_structs.push_back(read_accel_struct(bytes, c, chunk_data(bytes, c, buffer, name), name));
    if (c.name == kHwbvhSectionsChunk) {
      const auto data = chunk_data(bytes, c, buffer, name);
      file.hwbvh_sections.assign(data.begin(), data.end());
    }
    if (c.name == kHistoryMetadataChunk || c.name == kHistoryTokensChunk) {
      const auto data = chunk_data(bytes, c, buffer, name);
      (c.name == kHistoryMetadataChunk ? history_metadata : history_tokens)
          .emplace_back(c, std::vector(data.begin(), data.end()));
    }
    file.chunks.push_back(std::move(c));
  }
  // RRA reads dispatch i from the i-th chunk of each name.
  if (history_metadata.size() != history_tokens.size())
    throw_bad_input(name, fmt::format("{} {} chunks and {} {} chunks: ray-history dispatches need one of each",
                                      history_metadata.size(), kHistoryMetadataChunk, history_tokens.size(),
                                      kHistoryTokensChunk));
  for (std::size_t i = 0; i < history_tokens.size(); ++i)
    file.ray_history.push_back(read_history(history_metadata[i].first.version, history_metadata[i].second,
                                            history_tokens[i].first.version, history_tokens[i].second,
                                            fmt::format("{} (ray-history dispatch {})", name, i)));
  return file;
}

blob::Blob to_blob(const File& file, const std::string& name, blob::FileLayout* layout) {
  const std::size_t count = file.accel_structs.size();
  const bool has_top = std::any_of(file.accel_structs.begin(), file.accel_structs.end(),
                                   [](const ReadAccelStruct& as) { return !as.bottom_level; });
  if (has_top) return two_level_blob(file, name, layout);
  if (count != 1)
    throw_bad_input(name, count == 0 ? std::string("no acceleration structure")
                                     : fmt::format("{} BLASes and no top-level structure placing them: hwbvh reads "
                                                   "one BLAS, or one TLAS with its BLASes",
                                                   count));
  const ReadAccelStruct& as = file.accel_structs.front();
  std::vector<std::byte> nodes = with_node_section_header(as);
  if (!file.hwbvh_sections.empty()) return with_sections(file, name, layout, std::move(nodes), {});
  Scene scene;
  append_capture_geometry(scene, as, blob::bytes_to_dwords(nodes), name);
  return with_sections(file, name, layout, std::move(nodes),
                       {{blob::SectionType::Geometry, 16, blob::encode_geometry(scene)}});
}

blob::Blob read_blob_or_rra(const std::filesystem::path& path, blob::FileLayout& layout) {
  const std::vector<std::byte> bytes = read_file_bytes(path);
  const std::string name = path.string();
  if (!has_rdf_magic(bytes)) return blob::parse(bytes, name, layout);
  blob::Blob b = to_blob(parse(bytes, name), name, &layout);
  layout.file_size = bytes.size();
  return b;
}

blob::Blob read_blob_or_rra(const std::filesystem::path& path) {
  blob::FileLayout ignored;
  return read_blob_or_rra(path, ignored);
}

}  // namespace hwbvh::rra
