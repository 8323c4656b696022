// .rra export: the round trip on the project's scenes, every chunk decoded here independently of the writer and
// checked against the fields RRA's loader validates, golden bytes for a one-triangle BLAS, and ray history: golden
// bytes of its two chunks and a stats run read back ray by ray (docs/rra.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "fixtures/rra_capture.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/formats/rdna4/decode.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/rra/rra.h"
#include "hwbvh/scene/ray_gen.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::rra {
namespace {

blob::Blob build(const Scene& scene, bool obb) {
  pipeline::BuildBlobOptions o;
  o.encode.obb = obb;
  o.encode.threads = 1;
  return pipeline::build_blob(scene, o).blob;
}

// An OBJ scene builds one level; a glTF scene two, its meshes BLASes under a top level (docs/blob-format.md §6.6).
blob::Blob build_scene(const std::string& name, bool obb) {
  const std::filesystem::path path = test::project_scene(name);
  if (path.extension() != ".gltf") return build(load_obj(path), obb);
  pipeline::BuildBlobOptions o;
  o.encode.obb = obb;
  o.encode.threads = 1;
  return pipeline::build_instanced_blob(load_gltf_instanced(path), o).blob;
}

std::vector<std::byte> export_bytes(const blob::Blob& b, bool compress = false) {
  return export_blob(b, "test", {compress});
}

bool same_ray(const emu::OracleHit& a, const emu::OracleHit& b) {
  return a.hit == b.hit && a.t == b.t && a.geometry == b.geometry && a.primitive == b.primitive;
}

struct RoundTripCase {
  std::string scene;
  bool obb;
};

void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << c.scene << (c.obb ? " OBB on" : " OBB off"); }

class RraRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(RraRoundTrip, NodeBytesAndPerRayCountersAreIdentical) {
  const blob::Blob original = build_scene(GetParam().scene, GetParam().obb);
  const blob::Blob back = to_blob(parse(export_bytes(original), "test.rra"), "test.rra");
  ASSERT_EQ(back.sections.size(), original.sections.size());
  for (std::size_t i = 0; i < original.sections.size(); ++i) {
    EXPECT_EQ(back.sections[i].type, original.sections[i].type);
    EXPECT_TRUE(back.sections[i].data == original.sections[i].data) << blob::section_type_name(back.sections[i].type);
  }
  const emu::LoadedBvh a = emu::load_bvh(original, "original"), b = emu::load_bvh(back, "back");
  const RayBatch rays = primary_rays(auto_frame(a.bounds, 4.0f / 3.0f), 64, 48);
  const auto ta = a.trace(rays.rays, rays.wave_begin, {}, Executor(1));
  const auto tb = b.trace(rays.rays, rays.wave_begin, {}, Executor(1));
  ASSERT_EQ(ta.rays.size(), tb.rays.size());
  for (std::size_t i = 0; i < ta.rays.size(); ++i) ASSERT_TRUE(ta.rays[i] == tb.rays[i]) << "ray " << i;
  EXPECT_GT(ta.total_counters().box_tests, 0u);

  // Compressed: the same blob read back, from a smaller file.
  const std::vector<std::byte> plain = export_bytes(original), compressed = export_bytes(original, true);
  const File zstd = parse(compressed, "zstd.rra");
  EXPECT_LT(compressed.size(), plain.size());
  for (const Chunk& c : zstd.chunks) {
    const bool bulky = c.name == kAccelStructChunk || c.name == kHwbvhSectionsChunk;
    EXPECT_EQ(c.compression, bulky ? kCompressionZstd : 0u) << c.name;
    EXPECT_EQ(c.uncompressed_size > c.data_size, bulky) << c.name;
  }
  const blob::Blob unzipped = to_blob(zstd, "zstd.rra");
  ASSERT_EQ(unzipped.sections.size(), original.sections.size());
  for (std::size_t i = 0; i < original.sections.size(); ++i)
    EXPECT_TRUE(unzipped.sections[i].data == original.sections[i].data) << i;
}

// A driver's capture (no HwbvhSections chunk): the same node bytes, and the triangles decoded from the primitive
// nodes give the oracle the same hits as the scene's own Geometry section. Scenes without alpha-tested geometry:
// a capture carries no any-hit shader data.
class RraCapture : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(RraCapture, WithoutHwbvhSectionsTracesTheSame) {
  const blob::Blob original = build_scene(GetParam().scene, GetParam().obb);
  const blob::Blob capture = to_blob(parse(test::without_hwbvh_sections(export_bytes(original)), "c.rra"), "c.rra");
  // The nodes (instance nodes' BLAS addresses re-based back) and the decoded geometry; for two levels also the
  // levels and the instance sideband, as the blob has them.
  const bool two_level = original.find(blob::SectionType::Levels) != nullptr;
  ASSERT_EQ(capture.sections.size(), two_level ? 4u : 2u);
  for (const blob::SectionType type : {blob::SectionType::Nodes, blob::SectionType::Levels,
                                       blob::SectionType::InstanceSideband}) {
    if (type == blob::SectionType::Nodes || two_level) {
      EXPECT_TRUE(capture.require(type, "c").data == original.require(type, "o").data) << blob::section_type_name(type);
    }
  }
  const emu::LoadedBvh a = emu::load_bvh(original, "original"), b = emu::load_bvh(capture, "capture");
  ASSERT_EQ(b.geometry.triangles.size(), a.geometry.triangles.size());
  const emu::Oracle oa = emu::Oracle::of(a, 1), ob = emu::Oracle::of(b, 1);
  const RayBatch rays = primary_rays(auto_frame(a.bounds, 4.0f / 3.0f), 64, 48);
  const auto ta = a.trace(rays.rays, rays.wave_begin, {}, Executor(1));
  const auto tb = b.trace(rays.rays, rays.wave_begin, {}, Executor(1));
  std::size_t hits = 0;
  for (std::size_t i = 0; i < rays.rays.size(); ++i) {
    ASSERT_TRUE(ta.rays[i] == tb.rays[i]) << "ray " << i;
    const emu::OracleHit ha = oa.trace_closest(rays.rays[i]);
    ASSERT_TRUE(same_ray(ha, ob.trace_closest(rays.rays[i]))) << "ray " << i;
    hits += ha.hit;
  }
  EXPECT_GT(hits, 0u);
}

std::string case_name(const ::testing::TestParamInfo<RoundTripCase>& info) {
  std::string name = info.param.scene.substr(0, info.param.scene.find('.'));
  std::replace(name.begin(), name.end(), '-', '_');
  return name + (info.param.obb ? "_obb" : "_aabb");
}

INSTANTIATE_TEST_SUITE_P(Scenes, RraRoundTrip,
                         ::testing::Values(RoundTripCase{"rotated-objects.obj", true},
                                           RoundTripCase{"rotated-objects.obj", false},
                                           RoundTripCase{"cornell-box.obj", true}, RoundTripCase{"cornell-box.obj", false},
                                           RoundTripCase{"alpha-cards.obj", true}, RoundTripCase{"alpha-cards.obj", false},
                                           RoundTripCase{"overflow-fan.obj", true},
                                           RoundTripCase{"overflow-fan.obj", false},
                                           RoundTripCase{"instanced-garden.gltf", true},
                                           RoundTripCase{"instanced-garden.gltf", false},
                                           RoundTripCase{"thousand-rocks.gltf", true},
                                           RoundTripCase{"thousand-rocks.gltf", false}),
                         case_name);
// Not alpha-cards nor instanced-garden: a capture carries no any-hit shader data (docs/rra.md §4).
INSTANTIATE_TEST_SUITE_P(Scenes, RraCapture,
                         ::testing::Values(RoundTripCase{"rotated-objects.obj", true},
                                           RoundTripCase{"rotated-objects.obj", false},
                                           RoundTripCase{"cornell-box.obj", true}, RoundTripCase{"cornell-box.obj", false},
                                           RoundTripCase{"overflow-fan.obj", true},
                                           RoundTripCase{"overflow-fan.obj", false},
                                           RoundTripCase{"thousand-rocks.gltf", true},
                                           RoundTripCase{"thousand-rocks.gltf", false}),
                         case_name);

// Little-endian reads written here, not shared with the reader under test.
uint32_t u32(std::span<const std::byte> b, uint64_t at) {
  uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t u64(std::span<const std::byte> b, uint64_t at) { return u32(b, at) | uint64_t{u32(b, at + 4)} << 32; }

// The node sections the file's RawAccelStruct chunks hold, in order: a one-level blob's nodes, or a two-level
// blob's top level and then each BLAS (docs/rra.md §2).
std::vector<std::span<const std::byte>> structures_of(const blob::Blob& source, blob::Levels& levels) {
  const std::vector<std::byte>& nodes = source.require(blob::SectionType::Nodes, "source").data;
  const blob::Section* levels_section = source.find(blob::SectionType::Levels);
  if (levels_section == nullptr) return {nodes};
  levels = blob::decode_levels(levels_section->data, "source", nodes.size(), ~0u, ~0u);
  std::vector<std::span<const std::byte>> out{std::span(nodes).first(levels.top_bytes)};
  for (const blob::BlasRange& blas : levels.blases) out.push_back(std::span(nodes).subspan(blas.address, blas.bytes));
  return out;
}

// Checks every chunk of `file` against the layouts of RADV's radv_rra.c and radv_rra_gfx12.c and RRA's loader
// (bvh_bundle.cpp, ibvh.h, gpurt_accel_struct.h, acceleration_structure_header.cpp IsValidImpl,
// rtip31/encoded_rt_ip_31_top_level_bvh.cpp), every node pointer, and every instance's BLAS address.
void check_every_chunk(std::span<const std::byte> file, const blob::Blob& source) {
  blob::Levels levels;
  const std::vector<std::span<const std::byte>> structures = structures_of(source, levels);
  const bool two_level = structures.size() > 1;
  ASSERT_GE(file.size(), 32u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()), 8), "AMD_RDF ");
  EXPECT_EQ(u32(file, 8), 3u);
  EXPECT_EQ(u32(file, 12), 0u);
  const uint64_t table = u64(file, 16), table_size = u64(file, 24);
  ASSERT_EQ(table + table_size, file.size()) << "chunk table at the end";
  ASSERT_EQ(table_size % 64, 0u);
  std::vector<std::string> names;
  std::vector<uint64_t> header_addresses;  // per RawAccelStruct chunk: its virtual address + header offset
  std::vector<uint64_t> instance_addresses;  // per instance node: the BLAS address it names
  uint64_t next = 32;  // chunks follow each other from the header to the table, offsets ascending
  for (uint64_t e = table; e < file.size(); e += 64) {
    const std::string name(reinterpret_cast<const char*>(file.data() + e), strnlen(reinterpret_cast<const char*>(file.data() + e), 16));
    names.push_back(name);
    const uint32_t compression = u32(file, e + 16), version = u32(file, e + 20);
    const uint64_t ho = u64(file, e + 24), hs = u64(file, e + 32), dof = u64(file, e + 40), ds = u64(file, e + 48);
    EXPECT_EQ(compression, 0u);
    EXPECT_EQ(u64(file, e + 56), 0u) << "size before compression, 0 when not compressed";
    EXPECT_EQ(ho, next) << name;
    EXPECT_EQ(dof, ho + hs) << name;
    next = dof + ds;
    const auto data = file.subspan(dof, ds);
    if (name == "ApiInfo") {
      EXPECT_EQ(version, 1u);
      ASSERT_EQ(ds, 8u);
      EXPECT_EQ(u64(data, 0), 3u);  // Vulkan
    } else if (name == "AsicInfo") {
      EXPECT_EQ(version, 1u);
      ASSERT_EQ(ds, 568u);
      const std::string device(reinterpret_cast<const char*>(data.data() + 152));
      EXPECT_NE(device.find("RDNA 4"), std::string::npos);
      EXPECT_NE(device.find("hwbvh"), std::string::npos);
    } else if (name == "RawAccelStruct") {
      const std::size_t index = header_addresses.size();
      ASSERT_LT(index, structures.size());
      const bool top = two_level && index == 0;  // the top level's chunk comes first
      const std::span<const std::byte> nodes = structures[index];
      EXPECT_EQ(version, 0xF0005u);
      EXPECT_LE(version >> 16, 16u);
      ASSERT_EQ(hs, 28u);
      const auto ch = file.subspan(ho, hs);
      const uint64_t va = u64(ch, 0);
      header_addresses.push_back(va + u32(ch, 16));  // RRA's key for the structure (bvh_bundle.cpp)
      EXPECT_EQ(u32(ch, 8), 0u);    // metadata offset
      EXPECT_EQ(u32(ch, 12), 12u);  // metadata bytes RRA reads
      EXPECT_EQ(u32(ch, 16), 128u);
      EXPECT_EQ(u32(ch, 20), 128u);
      EXPECT_EQ(u32(ch, 24), top ? 0u : 1u);  // TLAS 0, BLAS 1
      EXPECT_EQ(u64(data, 0), va);
      EXPECT_EQ(u32(data, 8), 128u);
      const auto h = data.subspan(128, 128);
      const uint32_t interior = u32(h, 32), leaf = u32(h, 36), geo = u32(h, 40), ptrs = u32(h, 44);
      EXPECT_EQ(u32(h, 0) & 1u, top ? 0u : 1u);
      EXPECT_EQ(u32(h, 4), 128u);  // metadata size = header offset
      EXPECT_EQ(interior, 128u);
      EXPECT_LE(interior, leaf);
      EXPECT_LE(leaf, geo);
      EXPECT_LE(geo, ptrs);
      EXPECT_EQ(geo, nodes.size());
      const uint32_t prims = u32(h, 12), descs = u32(h, 24);
      const uint32_t box_nodes = blob::load_le32(nodes, 12), instances = blob::load_le32(nodes, 44);
      EXPECT_EQ(u32(h, 8), ptrs + 4 * prims);  // size from the header to the end
      EXPECT_EQ(ds, 128 + uint64_t{u32(h, 8)});
      EXPECT_GE(u32(h, 8), 256u);
      EXPECT_LE(u32(h, 16), prims);
      EXPECT_EQ(u32(h, 48), box_nodes);  // from the node-section header
      EXPECT_EQ(u32(h, 72), 6u);         // RT IP 3.1
      EXPECT_EQ(u32(h, 100) & 2u, 2u);   // BVH8
      if (top) {
        // Instance nodes after the box nodes, one sideband record each where a BLAS has its geometry infos.
        EXPECT_EQ(u32(h, 28), 2u);  // VK_GEOMETRY_TYPE_INSTANCES_KHR
        EXPECT_EQ(prims, instances);
        EXPECT_EQ(u32(h, 56), instances);
        EXPECT_EQ(leaf, 128 + 128 * box_nodes);
        EXPECT_EQ(geo - leaf, 128 * instances);
        EXPECT_EQ(ptrs, geo + 64 * instances);
      } else {
        EXPECT_EQ(u32(h, 28), 0u);  // triangles
        EXPECT_EQ(leaf, geo);       // box and primitive nodes interleaved
        EXPECT_EQ(ptrs, geo + 12 * descs);
        EXPECT_EQ(u32(h, 56), blob::load_le32(nodes, 16));  // primitive nodes
        uint64_t sum = 0;
        for (uint32_t g = 0; g < descs; ++g) sum += u32(data, 128 + geo + 12 * g) & 0x1FFFFFFFu;
        EXPECT_EQ(sum, prims);
      }
      // Node bytes verbatim, but for each instance node's BLAS address (bytes 48..55, its flags kept).
      const auto node_data = data.subspan(128, geo);  // addressed from the header, like the pointers
      for (std::size_t at = 128; at < nodes.size(); ++at) {
        const std::size_t slot_byte = (at - 128) % 128;
        const bool base_pointer = top && at >= leaf && slot_byte >= 48 && slot_byte < 56;
        if (!base_pointer) {
          ASSERT_EQ(node_data[at], nodes[at]) << "node byte " << at;
        }
      }
      for (uint32_t i = 0; top && i < instances; ++i) {
        const uint64_t written = u64(node_data, leaf + 128 * i + 48), blob_pointer = u64(nodes, leaf + 128 * i + 48);
        EXPECT_EQ(written >> 54, blob_pointer >> 54) << "instance flags of node " << i;
        instance_addresses.push_back((written & ((1ull << 54) - 1)) << 3);
        // Sideband: the blob's record but for blasMetadataSize, the BLAS chunk's metadata bytes (0 = inactive).
        const auto record = data.subspan(128 + geo + 64 * i, 64);
        const auto blob_record = source.require(blob::SectionType::InstanceSideband, "s").data;
        EXPECT_EQ(u32(record, 8), 128u);
        EXPECT_TRUE(std::equal(record.begin(), record.begin() + 8, blob_record.begin() + 64 * i));
        EXPECT_TRUE(std::equal(record.begin() + 12, record.end(), blob_record.begin() + 64 * i + 12));
        EXPECT_EQ(u32(data, 128 + ptrs + 4 * i), (leaf + 128 * i) >> 3 | 6u) << "leaf-node list entry " << i;
      }
      // Every child pointer of every box node reached from the root lands on a node inside this chunk's nodes:
      // box nodes on box nodes, leaves in a BLAS on primitive nodes, in a TLAS on its instance nodes.
      const auto in_nodes = [&](uint32_t p) {
        const uint64_t byte = rdna4::node_byte_offset(p);
        if ((p & 7u) == rdna4::kTypeBox) return byte >= 128 && byte + 128 <= (top ? leaf : geo);
        if (top) return (p & 7u) == rdna4::kTypeInstance && byte >= leaf && byte + 128 <= geo;
        return (p & 7u) <= 3u && byte >= 128 && byte + 128 <= geo;
      };
      std::vector<uint32_t> boxes{rdna4::kRootPointer};
      std::set<uint32_t> leaves;
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        rdna4::NodeDwords node{};
        std::memcpy(node.data(), node_data.data() + rdna4::node_byte_offset(boxes[i]), 128);
        const rdna4::DecodedBoxNode box = rdna4::decode_box_node(node);
        for (uint32_t k = 0; k < box.child_count; ++k) {
          const uint32_t p = box.child_pointer[k];
          ASSERT_TRUE(in_nodes(p)) << "child " << k << " of box 0x" << std::hex << boxes[i];
          if ((p & 7u) == rdna4::kTypeBox) boxes.push_back(p);
          else leaves.insert(p);
        }
      }
      EXPECT_EQ(boxes.size(), box_nodes);
      if (top) {
        EXPECT_EQ(leaves.size(), instances) << "every instance node reached once";
      }
      for (uint32_t i = 0; !top && i < prims; ++i) {
        const uint32_t p = u32(data, 128 + ptrs + 4 * i);
        if (p == rdna4::kInvalidNode) continue;
        EXPECT_TRUE(in_nodes(p)) << "leaf-node list entry " << i;
      }
    }
  }
  EXPECT_EQ(next, table);
  std::vector<std::string> expected{"ApiInfo", "AsicInfo"};
  expected.insert(expected.end(), structures.size(), "RawAccelStruct");
  expected.push_back("HwbvhSections");
  while (expected.size() < names.size()) {  // ray-history dispatches, each a pair
    expected.push_back("HistoryMetadata");
    expected.push_back("HistoryTokensRaw");
  }
  EXPECT_EQ(names, expected);
  // Each instance names the header address of the BLAS chunk of its BLAS (structure blas + 1), as RRA resolves it.
  ASSERT_EQ(instance_addresses.size(), levels.instances.size());
  ASSERT_EQ(header_addresses.size(), structures.size());
  for (std::size_t i = 0; i < instance_addresses.size(); ++i)
    EXPECT_EQ(instance_addresses[i], header_addresses[levels.instances[i].blas + 1]) << "instance node " << i;
  EXPECT_EQ(std::set<uint64_t>(header_addresses.begin(), header_addresses.end()).size(), header_addresses.size())
      << "every structure at its own address";
}

TEST(RraFile, EveryChunkDecodesWithTheFieldsRraValidates) {
  for (const char* name : {"rotated-objects.obj", "cornell-box.obj", "instanced-garden.gltf", "thousand-rocks.gltf"}) {
    SCOPED_TRACE(name);
    const blob::Blob b = build_scene(name, true);
    check_every_chunk(export_bytes(b), b);
  }
}

constexpr char kOneTriangle[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

// `bytes` equal tests/rra/golden/`file`, which must exist.
void expect_golden(const std::string& file, std::span<const std::byte> bytes) {
  const auto golden_path = test::source_dir() / "tests/rra/golden" / file;
  std::ifstream in(golden_path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << golden_path;
  const std::vector<char> golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(golden.size(), bytes.size());
  EXPECT_EQ(std::memcmp(golden.data(), bytes.data(), bytes.size()), 0);
}

// tests/rra/golden/one-triangle.rra was written by this writer and checked field by field against RADV's and
// RRA's layouts by check_every_chunk (docs/rra.md §5). A change to any byte must be deliberate.
TEST(RraFile, OneTriangleBlasMatchesTheGoldenBytes) {
  const blob::Blob b = build(load_obj_from_memory(kOneTriangle, "one-triangle.obj"), true);
  const std::vector<std::byte> bytes = export_bytes(b);
  check_every_chunk(bytes, b);
  expect_golden("one-triangle.rra", bytes);
}

TEST(RraFile, NonRtip31BlobIsRefusedNamingTheTarget) {
  pipeline::BuildBlobOptions o;
  o.target = blob::Target::Xe3;
  const blob::Blob b = pipeline::build_blob(load_obj_from_memory(kOneTriangle, "t.obj"), o).blob;
  try {
    (void)accel_structs_from_blob(b, "t.hwbvh");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("xe3"), std::string::npos) << e.what();
  }
}

// Ray history (docs/rra.md §6).

uint32_t f32(float v) { return std::bit_cast<uint32_t>(v); }

// The data of the `index`-th chunk named `name`.
std::span<const std::byte> chunk(std::span<const std::byte> file, const std::string& name, uint32_t* version) {
  for (uint64_t e = u64(file, 16); e < file.size(); e += 64) {
    if (std::string(reinterpret_cast<const char*>(file.data() + e)) != name) continue;
    EXPECT_EQ(u32(file, e + 16), 0u) << name << " stored uncompressed, as RADV writes it";
    *version = u32(file, e + 20);
    return file.subspan(u64(file, e + 40), u64(file, e + 48));
  }
  ADD_FAILURE() << "no chunk " << name;
  return {};
}

// The rays of tests/rra/golden/one-triangle-history.rra, as its rays file (tests/e2e: `hwbvh stats --rays-file`).
const std::vector<Ray> kTwoRays = {{{0.25f, 0.25f, -1.0f}, {0.0f, 0.0f, 1.0f}, 0.0f, 100.0f},
                                   {{2.0f, 2.0f, -1.0f}, {0.0f, 0.0f, 1.0f}, 0.0f, 100.0f}};

// tests/rra/golden/one-triangle-history.rra: the one-triangle BLAS of one-triangle.rra (docs/rra.md §5) with a
// history of two rays, one hitting the triangle from behind, one missing, as `hwbvh stats --rays file` writes it.
// Every field of the two history chunks is checked here against radv_rra.h radv_rra_ray_history_metadata and
// radv_rra.c's begin and end2 tokens; a change to any byte must be deliberate.
TEST(RraRayHistory, TwoRaysOnOneTriangleMatchTheGoldenBytes) {
  const blob::Blob b = build(load_obj_from_memory(kOneTriangle, "one-triangle.obj"), true);
  const emu::LoadedBvh bvh = emu::load_bvh(b, "one-triangle");
  const std::vector<uint32_t> wave_begin{0};
  const auto traced = bvh.trace(kTwoRays, wave_begin, {}, Executor(1));
  ASSERT_TRUE(traced.rays[0].hit);
  ASSERT_FALSE(traced.rays[0].front_face);
  ASSERT_FALSE(traced.rays[1].hit);
  const std::vector<HistoryDispatch> history = {
      history_dispatch(0, 0, {}, kTwoRays, traced.rays, false, 0xFF, accel_struct_address(0))};
  const std::vector<std::byte> bytes = export_blob(b, "test", {}, history);
  check_every_chunk(bytes, b);

  uint32_t version = 0;
  const auto meta = chunk(bytes, "HistoryMetadata", &version);
  EXPECT_EQ(version, 2u);
  ASSERT_EQ(meta.size(), 136u);
  const std::vector<uint32_t> expected_meta = {
      1, 0, 64, 0,                  // counter info record
      2, 1, 1, 0, 0, 0, 0, 0,       // dispatch 2 x 1 x 1, no shaders, pipeline hash
      1, 0, 0, 208, 0, 0, 0xFFFFFFFFu, 0,  // light ray history, token bytes, none lost, whole id range, RT pipeline
      2, 0, 16, 0, 2, 1, 1, 0,      // dispatch size record
      3, 0, 8, 0, 0, 0};            // traversal flags record
  for (std::size_t i = 0; i < expected_meta.size(); ++i) EXPECT_EQ(u32(meta, 4 * i), expected_meta[i]) << "dword " << i;

  const auto tokens = chunk(bytes, "HistoryTokensRaw", &version);
  EXPECT_EQ(version, 2u);
  ASSERT_EQ(tokens.size(), 208u);
  for (uint32_t ray = 0; ray < 2; ++ray) {
    const auto t = tokens.subspan(104 * ray, 104);
    const emu::RayResult& r = traced.rays[ray];
    const std::vector<uint32_t> expected = {
        0x80000000u | ray, 0x00100000u,  // id with the control bit, begin: type 0, 16 dwords
        0, ray, 0, 0,                    // wave, launch x y z
        0, 1, 0, 0xFF,                   // address 2^32 (the RawAccelStruct's), no flags, cull mask
        f32(kTwoRays[ray].origin.x), f32(kTwoRays[ray].origin.y), f32(-1.0f), f32(0.0f),
        f32(0.0f), f32(0.0f), f32(1.0f), f32(100.0f),
        0x80000000u | ray, 0x00060009u,  // end2: type 9, 6 dwords
        ray == 0 ? 0u : 0xFFFFFFFFu, ray == 0 ? 0u : 0xFFFFFFFFu,  // primitive, geometry
        ray == 0 ? 0xFF000000u : 0u,                                // instance 0, back-facing hit kind
        static_cast<uint32_t>(r.counters.steps), 0, f32(ray == 0 ? 1.0f : 0.0f)};
    for (std::size_t i = 0; i < expected.size(); ++i)
      EXPECT_EQ(u32(t, 4 * i), expected[i]) << "ray " << ray << " dword " << i;
  }
  EXPECT_GE(traced.rays[0].counters.steps, 2u);  // the root box, then the pair

  EXPECT_EQ(bytes.size(), 2936u);  // docs/rra.md §5: one-triangle.rra's 2464 bytes, 344 of history, 2 table entries
  expect_golden("one-triangle-history.rra", bytes);
  EXPECT_EQ(parse(bytes, "golden.rra").ray_history, history);
}

class RraRayHistoryRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

// A stats run with every generated ray type, written as history and read back: per ray the ray, its hit and the
// counters the tokens carry equal the stats run's, and the blob reads back unchanged beside the history.
TEST_P(RraRayHistoryRoundTrip, CountersAndHitsReadBackRayByRay) {
  const blob::Blob b = build_scene(GetParam().scene, GetParam().obb);
  stats::StatsOptions so;
  so.kinds = {stats::RayKind::Primary, stats::RayKind::AmbientOcclusion, stats::RayKind::Shadow,
              stats::RayKind::Random};
  so.width = 24;
  so.height = 16;
  so.ao_samples = 2;
  so.random_rays = 300;
  so.threads = 2;
  so.keep_results = true;
  const stats::StatsReport report = stats::run_stats(emu::load_bvh(b, "test"), so);
  std::vector<HistoryDispatch> history;
  for (const stats::KindStats& ks : report.kinds)
    history.push_back(history_dispatch(report.width, report.height, ks.pixel, ks.rays_traced, ks.results,
                                       stats::is_occlusion(ks.kind), 0xFF, accel_struct_address(0)));
  const std::vector<std::byte> whole = export_blob(b, "test", {}, history);
  {  // The same file written batch by batch while tracing, in batches of 64 rays (AO: their 2 samples).
    struct Sink : stats::RaySink {
      HistoryFileWriter* writer = nullptr;
      void add(const stats::TracedBatch& t) override { writer->add(t.kind_index, t.pixel, t.rays, t.results); }
    } sink;
    const test::ScratchDir dir("rra-streamed");
    std::vector<HistoryFileWriter::Dispatch> dispatches;
    for (const stats::RayKind kind : so.kinds)
      dispatches.push_back({.width = kind == stats::RayKind::Random ? 0u : so.width,
                            .height = kind == stats::RayKind::Random ? 0u : so.height,
                            .any_hit = stats::is_occlusion(kind)});
    HistoryFileWriter writer(dir / "streamed.rra", b, "test", dispatches, 0xFF);
    sink.writer = &writer;
    stats::StatsOptions batched = so;
    batched.keep_results = false;
    batched.batch_rays = 64;
    (void)stats::run_stats(emu::load_bvh(b, "test"), batched, &sink);
    writer.finish();
    EXPECT_TRUE(read_file_bytes(dir / "streamed.rra") == whole);
  }
  const File file = parse(whole, "test.rra");
  const blob::Blob back = to_blob(file, "test.rra");
  ASSERT_EQ(back.sections.size(), b.sections.size());
  for (std::size_t i = 0; i < b.sections.size(); ++i) EXPECT_TRUE(back.sections[i].data == b.sections[i].data) << i;
  ASSERT_EQ(file.ray_history.size(), report.kinds.size());
  for (std::size_t k = 0; k < report.kinds.size(); ++k) {
    const stats::KindStats& ks = report.kinds[k];
    const HistoryDispatch& d = file.ray_history[k];
    const bool camera = ks.kind != stats::RayKind::Random;
    EXPECT_EQ(d.width, camera ? so.width : so.random_rays);
    EXPECT_EQ(d.height, camera ? so.height : 1u);
    ASSERT_EQ(d.rays.size(), ks.results.size());
    ASSERT_GT(d.rays.size(), 0u);
    uint64_t steps = 0, instance_intersections = 0;
    for (std::size_t i = 0; i < d.rays.size(); ++i) {
      const HistoryRay& h = d.rays[i];
      const emu::RayResult& r = ks.results[i];
      const Ray& ray = ks.rays_traced[i];
      ASSERT_EQ(h.launch_index, camera ? ks.pixel[i] : i);
      ASSERT_EQ(h.ray.origin, ray.origin);
      ASSERT_EQ(h.ray.direction, ray.direction);
      ASSERT_EQ(h.ray.tmin, ray.tmin);
      ASSERT_EQ(h.ray.tmax, ray.tmax);
      ASSERT_EQ(h.ray_flags, stats::is_occlusion(ks.kind) ? 0xCu : 0u);
      ASSERT_EQ(h.iterations, r.counters.steps) << "ray " << i;
      ASSERT_EQ(h.instance_intersections, r.counters.instance_node_steps);
      ASSERT_EQ(h.hit, r.hit) << "ray " << i;
      ASSERT_EQ(h.accel_struct_address, accel_struct_address(0));  // the TLAS of a two-level blob
      steps += h.iterations;
      instance_intersections += h.instance_intersections;
      if (!r.hit) continue;
      ASSERT_EQ(h.t, r.t);
      ASSERT_EQ(h.primitive_index, r.primitive_id);
      ASSERT_EQ(h.geometry_index, r.geometry_id);
      ASSERT_EQ(h.instance_index, r.instance_index);
      ASSERT_EQ(h.hit_kind, r.front_face ? 0xFEu : 0xFFu);
    }
    EXPECT_GT(steps, 0u) << stats::ray_kind_name(ks.kind);
    EXPECT_EQ(instance_intersections > 0, b.find(blob::SectionType::Levels) != nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, RraRayHistoryRoundTrip,
                         ::testing::Values(RoundTripCase{"cornell-box.obj", true},
                                           RoundTripCase{"cornell-box.obj", false},
                                           RoundTripCase{"alpha-cards.obj", true},
                                           RoundTripCase{"instanced-garden.gltf", true}),
                         case_name);

}  // namespace
}  // namespace hwbvh::rra
