// Hostile two-level blobs: instance nodes whose BLAS base pointer lies outside the file or on the instance node
// itself, a filter node whose BLAS root is not a box node of the BLAS, and Levels sections that contradict the
// nodes. The reader refuses what it can check before tracing (load_bvh: every instance node must name a BLAS
// header the Levels section lists, every Xe3 InstanceLeaf its BLAS's root); what only a ray can find stops that
// ray with a fault naming the node.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <glm/gtc/matrix_transform.hpp>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/pipeline/pipeline.h"
#include "scene/scene_files.h"

namespace hwbvh {
namespace {

using emu::NodeFault;
using ::testing::HasSubstr;

// Eight instances of a 16-triangle strip, in a row along x, built for `target`.
pipeline::BuildBlobResult build_sample(blob::Target target) {
    Scene strip;
    strip.source = "strip";
    for (uint32_t i = 0; i <= 8; ++i) {
      strip.positions.push_back({static_cast<float>(i) * 0.1f, 0.0f, 0.0f});
      strip.positions.push_back({static_cast<float>(i) * 0.1f, 1.0f, 0.0f});
    }
    for (uint32_t i = 0; i < 16; ++i) {
      const uint32_t a = i / 2 * 2;
      strip.triangles.push_back(i % 2 == 0 ? Triangle{.v = {a, a + 2, a + 3}, .primitive = i}
                                           : Triangle{.v = {a, a + 3, a + 1}, .primitive = i});
    }
    strip.geometries = {Geometry{"strip", 0, 16}};
    InstancedScene s;
    s.source = "strip-row";
    s.meshes = {std::move(strip)};
    for (uint32_t i = 0; i < 8; ++i) {
      s.instances.push_back({.name = "i",
                             .mesh = 0,
                             .world = glm::translate(glm::dmat4(1.0), glm::dvec3(1.5 * i, 0, 0)),
                             .instance_id = i});
    }
    pipeline::BuildBlobOptions options;
    options.target = target;
    options.build.threads = 1;
    return pipeline::build_instanced_blob(s, options);
}

const pipeline::BuildBlobResult& sample() {
  static const pipeline::BuildBlobResult built = build_sample(blob::Target::Rtip31);
  return built;
}

std::vector<uint32_t> sample_nodes() {
  return blob::bytes_to_dwords(sample().blob.require(blob::SectionType::Nodes, "sample").data);
}

// `built` (the sample unless given) with its Nodes section replaced, read back as `hwbvh stats` reads a file.
emu::LoadedBvh load_with(const std::vector<uint32_t>& nodes, blob::Blob b = sample().blob) {
  for (blob::Section& s : b.sections)
    if (s.type == blob::SectionType::Nodes) s.data = blob::dwords_to_bytes(nodes);
  return emu::load_bvh(blob::parse(blob::serialize(b), "hostile.hwbvh"), "hostile.hwbvh");
}

// The dwords of instance node `n` (node order): the top level's header, box nodes, then the instance nodes.
uint32_t* instance_node(std::vector<uint32_t>& nodes, uint32_t n) {
  const uint32_t box_nodes = nodes[3];
  return nodes.data() + (uint64_t{box_nodes} + 1 + n) * 32;
}

// Rays down onto the row, one per instance.
std::vector<Ray> row_rays() {
  std::vector<Ray> rays;
  for (uint32_t i = 0; i < 8; ++i) rays.push_back({{1.5f * i + 0.35f, 0.5f, 2.0f}, {0, 0, -1}, 0.0f, 10.0f});
  return rays;
}

TEST(HostileInstances, TheSampleTracesCleanly) {
  const emu::LoadedBvh bvh = load_with(sample_nodes());
  const auto out = emu::trace_rays(bvh.memory(), bvh.root, row_rays(), {}, Executor(1));
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_TRUE(out.rays[i].hit) << i;
    EXPECT_EQ(out.rays[i].instance_index, i);
    EXPECT_EQ(out.rays[i].fault, NodeFault::None);
  }
}

TEST(HostileInstances, ABlasPointerOutsideTheFileIsRefused) {
  std::vector<uint32_t> nodes = sample_nodes();
  uint32_t* node = instance_node(nodes, 3);
  node[12] = 0xFFFFFFF0u;  // address bits far past the node section, flags kept
  test::expect_bad_input([&] { (void)load_with(nodes); }, "hostile.hwbvh", "instance node 3 points to byte");
}

TEST(HostileInstances, ABlasPointerToTheInstanceNodeItselfIsRefused) {
  std::vector<uint32_t> nodes = sample_nodes();
  uint32_t* node = instance_node(nodes, 0);
  const uint64_t own = uint64_t(node - nodes.data()) * 4;
  const uint64_t base = rdna4::make_base_pointer(own, rdna4::kPointerFlagSkipProcedural);
  node[12] = static_cast<uint32_t>(base);
  node[13] = static_cast<uint32_t>(base >> 32);
  test::expect_bad_input([&] { (void)load_with(nodes); }, "hostile.hwbvh",
                         "instance node 0 points to byte " + std::to_string(own) + ", not to the header of BLAS 0");
}

TEST(HostileInstances, AFilterRootThatIsNoBoxNodeOfTheBlasStopsTheRayOnIt) {
  // The filter children's node_type names the BLAS root's 128-byte index: 0xF makes the root 0xF5, past the end
  // of this small BLAS (its memory is bounded to its own range), and 2 makes it 0x25, the BLAS's primitive node
  // read as a box node. With child 0's range length 1 (GPURT's primitive-root form) the others name a primitive
  // root: 0xF0 past the end, or 0x10, the BLAS's root box node read as a primitive node.
  for (const bool primitive_form : {false, true}) {
    for (const uint32_t root_index : {0xFu, primitive_form ? 0x1u : 0x2u}) {
      SCOPED_TRACE(testing::Message() << "primitive form " << primitive_form << ", root index " << root_index);
      std::vector<uint32_t> nodes = sample_nodes();
      for (uint32_t n = 0; n < 8; ++n) {
        uint32_t* node = instance_node(nodes, n);
        for (uint32_t k = 0; k < 4; ++k) {
          uint32_t& info2 = node[20 + 3 * k + 2];
          info2 = (info2 & ~(0xFFu << 24)) | root_index << 24 | uint32_t{primitive_form && k == 0} << 28;
        }
      }
      const emu::LoadedBvh bvh = load_with(nodes);
      emu::TraceOptions options;
      options.step_limit = 200;
      const auto out = emu::trace_rays(bvh.memory(), bvh.root, row_rays(), options, Executor(1));
      for (const emu::RayResult& r : out.rays) {
        EXPECT_LE(r.counters.steps, 200u);
        if (root_index == 0xF && !primitive_form) {
          EXPECT_EQ(r.fault, NodeFault::OutOfRange);
          EXPECT_EQ(r.fault_node, 0xF5u);
        } else if (r.fault != NodeFault::None) {
          EXPECT_NE(r.fault_node, rdna4::kInvalidNode);
        }
      }
      if (root_index == 0xF && primitive_form) {
        // Rays that hit child 0 enter at the box root 0xF5, the others at the primitive root 0xF0: both past the end.
        std::size_t primitive_faults = 0;
        for (const emu::RayResult& r : out.rays) {
          EXPECT_EQ(r.fault, NodeFault::OutOfRange);
          primitive_faults += r.fault_node == 0xF0u ? 1 : 0;
        }
        EXPECT_GT(primitive_faults, 0u);
      }
    }
  }
}

TEST(HostileInstances, AnInstancePointerToABoxNodeSlotIsStray) {
  // The top box node's leaf base moved onto its own slot: its instance children now point at box nodes.
  std::vector<uint32_t> nodes = sample_nodes();
  nodes[32 + 1] = rdna4::kRootPointer & ~0xFu;
  const emu::LoadedBvh bvh = load_with(nodes);
  const auto out = emu::trace_rays(bvh.memory(), bvh.root, row_rays(), {}, Executor(1));
  std::size_t stray = 0;
  for (const emu::RayResult& r : out.rays) stray += r.fault == NodeFault::StrayInstance ? 1 : 0;
  EXPECT_GT(stray, 0u);
}

TEST(HostileInstances, AnInstanceNodeInsideABlasIsUnsupported) {
  // The BLAS root's children made instance children: instances cannot nest.
  std::vector<uint32_t> nodes = sample_nodes();
  const uint64_t blas = emu::load_bvh(sample().blob, "sample").levels->blases[0].address / 4;
  for (uint32_t k = 0; k < 8; ++k) {
    uint32_t& info2 = nodes[blas + 32 + 8 + 3 * k + 2];  // the BLAS root's child info k, third dword
    info2 = (info2 & ~(0xFu << 24)) | rdna4::kTypeInstance << 24;
  }
  const emu::LoadedBvh bvh = load_with(nodes);
  const auto out = emu::trace_rays(bvh.memory(), bvh.root, row_rays(), {}, Executor(1));
  std::size_t unsupported = 0;
  for (const emu::RayResult& r : out.rays) unsupported += r.fault == NodeFault::UnsupportedNode ? 1 : 0;
  EXPECT_GT(unsupported, 0u);
}

TEST(HostileInstances, ATraversalGivenNoSuchBlasFaultsTheRay) {
  // Through the library without the reader's check: a BLAS table that lacks the BLAS the instances name.
  const emu::LoadedBvh bvh = load_with(sample_nodes());
  emu::BlasTable empty;
  empty.first_instance_slot = bvh.memory().blases->first_instance_slot;
  empty.instance_index = bvh.memory().blases->instance_index;
  const emu::NodeMemory top{bvh.memory().dwords, &empty};
  const auto out = emu::trace_rays(top, bvh.root, row_rays(), {}, Executor(1));
  for (const emu::RayResult& r : out.rays) {
    EXPECT_EQ(r.fault, NodeFault::UnknownBlas);
    EXPECT_EQ(r.fault_node & 7u, rdna4::kTypeInstance);
  }
}

TEST(HostileInstances, LevelsThatContradictTheNodesAreRefused) {
  blob::Blob b = sample().blob;
  for (blob::Section& s : b.sections) {
    if (s.type != blob::SectionType::Levels) continue;
    blob::Levels levels = blob::decode_levels(s.data, "x", UINT64_MAX, UINT32_MAX, UINT32_MAX);
    levels.blases[0].address += 128;  // no longer the BLAS header the instance nodes name
    levels.blases[0].bytes -= 128;
    s.data = blob::encode_levels(levels);
  }
  test::expect_bad_input([&] { (void)emu::load_bvh(blob::parse(blob::serialize(b), "h.hwbvh"), "h.hwbvh"); },
                         "h.hwbvh", "BLAS 0: node section header has the wrong magic");
}

// Xe3: the loader walks the top level to its InstanceLeafs, so a leaf entering anything but its BLAS's root, or
// carrying another instance index than its sideband record, is refused before any ray meets it.
TEST(HostileInstances, AnXe3InstanceLeafThatMissesItsBlasRootIsRefused) {
  const pipeline::BuildBlobResult xe3_sample = build_sample(blob::Target::Xe3);
  const std::vector<uint32_t> nodes =
      blob::bytes_to_dwords(xe3_sample.blob.require(blob::SectionType::Nodes, "sample").data);
  const emu::LoadedBvh clean = load_with(nodes, xe3_sample.blob);
  const uint64_t root = clean.levels->blases[0].address + 2 * 64;  // the root block follows the 128-byte header
  // The leaves are the 128-byte records of the top level whose start node (bytes 8..15) is that root.
  std::vector<std::size_t> leaves;
  for (std::size_t dw = 0; dw + 32 <= clean.levels->top_bytes / 4; dw += 16) {
    if ((uint64_t{nodes[dw + 3]} << 32 | nodes[dw + 2]) == root) leaves.push_back(dw);
  }
  ASSERT_EQ(leaves.size(), 8u);
  std::vector<uint32_t> bad = nodes;
  bad[leaves[2] + 2] += 64;  // the root's first child, not the root
  test::expect_bad_input([&] { (void)load_with(bad, xe3_sample.blob); }, "hostile.hwbvh",
                         "instance leaf 2 enters byte " + std::to_string(root + 64) + ", not the root of BLAS 0");
  bad = nodes;
  std::swap(bad[leaves[0] + 19], bad[leaves[1] + 19]);  // bytes 76..79: the instance index
  test::expect_bad_input([&] { (void)load_with(bad, xe3_sample.blob); }, "hostile.hwbvh",
                         "instance leaf 0 has instance index");
}

}  // namespace
}  // namespace hwbvh
