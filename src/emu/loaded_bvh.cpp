#include "hwbvh/emu/loaded_bvh.h"

#include <algorithm>

#include <glm/geometric.hpp>
#include <glm/mat3x3.hpp>
#include <glm/matrix.hpp>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/formats/xe3/decode.h"
#include "hwbvh/formats/xe3/tlas.h"
#include "hwbvh/formats/xe3/tree_check.h"
#include "hwbvh/formats/rdna3/decode.h"
#include "hwbvh/formats/rdna3/instance_node.h"
#include "hwbvh/formats/rdna4/instance_node.h"
#include "hwbvh/formats/rdna4/node_section.h"

namespace hwbvh::emu {

uint32_t LoadedBvh::triangle_index(uint32_t geometry_id, uint32_t primitive_id) const {
  if (geometry_id >= triangle_index_.size() || primitive_id >= triangle_index_[geometry_id].size()) return kNoIndex;
  return triangle_index_[geometry_id][primitive_id];
}

uint32_t LoadedBvh::instance_node(uint32_t instance_index) const {
  return instance_index < instance_node_.size() ? instance_node_[instance_index] : instance_index;
}

uint32_t LoadedBvh::global_geometry(uint32_t instance_index, uint32_t geometry_id) const {
  if (!levels || instance_index >= instance_node_.size()) return geometry_id;
  return levels->blases[levels->instances[instance_node_[instance_index]].blas].first_geometry + geometry_id;
}

std::vector<Vec3> LoadedBvh::world_positions() const {
  if (!levels) return geometry.positions;
  std::vector<Vec3> out;
  for (uint32_t n = 0; n < sideband.size(); ++n) {
    const blob::BlasRange& blas = levels->blases[levels->instances[n].blas];
    const Mat3x4& m = sideband[n].object_to_world;
    for (uint32_t t = blas.first_triangle; t < blas.first_triangle + blas.triangle_count; ++t) {
      for (uint32_t v : geometry.triangles[t].v) out.push_back(affine_point(m, geometry.positions[v]));
    }
  }
  return out;
}

std::vector<SurfaceHit> LoadedBvh::surface_hits(std::span<const Ray> rays, std::span<const RayResult> results) const {
  std::vector<SurfaceHit> hits(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const RayResult& r = results[i];
    if (!r.hit) continue;
    hits[i].position = rays[i].origin + rays[i].direction * r.t;
    hits[i].normal = hit_normal(r);  // world space, also through an instance
    hits[i].valid = true;
  }
  return hits;
}

Vec3 LoadedBvh::hit_normal(const RayResult& hit) const {
  const Vec3 n = triangle_normal(global_geometry(hit.instance_index, hit.geometry_id), hit.primitive_id);
  if (!levels || hit.instance_index >= instance_node_.size()) return n;
  // The inverse transpose of the linear part, up to a positive factor: the cofactor matrix of the object-to-world
  // matrix times its determinant's sign, so that mirrored instances keep the normal's facing.
  const Mat3x4& m = sideband[instance_node_[hit.instance_index]].object_to_world;
  const glm::dmat3 a(m[0][0], m[1][0], m[2][0], m[0][1], m[1][1], m[2][1], m[0][2], m[1][2], m[2][2]);
  const glm::dmat3 cof = glm::transpose(glm::inverse(a)) * glm::determinant(a);
  const glm::dvec3 w = cof * glm::dvec3(n.x, n.y, n.z);
  return Vec3{static_cast<float>(w.x), static_cast<float>(w.y), static_cast<float>(w.z)};
}

Vec3 LoadedBvh::triangle_normal(uint32_t geometry_id, uint32_t primitive_id) const {
  const uint32_t index = triangle_index(geometry_id, primitive_id);
  if (index == kNoIndex) return Vec3{0.0f};
  const auto& tri = geometry.triangles[index];
  const Vec3 a = geometry.positions[tri.v[0]], b = geometry.positions[tri.v[1]], c = geometry.positions[tri.v[2]];
  return hwbvh::triangle_normal(a, b, c);
}

TraceOutput LoadedBvh::trace(std::span<const Ray> rays, std::span<const uint32_t> wave_begin,
                             const TraceOptions& options, const Executor& executor) const {
  switch (target) {
    case blob::Target::Rtip20: return trace_rays_rtip20(bvh4_section(), rays, wave_begin, options, executor);
    case blob::Target::Xe3: return trace_rays_xe3(xe3_section(), rays, wave_begin, options, executor);
    case blob::Target::Rtip31: break;
  }
  return trace_rays(memory(), root, rays, wave_begin, options, executor);
}

namespace {

// An RT IP 2.0 level: its own node section at the start of `dwords` (a level is padded to whole 128-byte nodes in a
// two-level Nodes section); all of `dwords` when its header does not say, so that reading it reports the problem.
std::span<const uint32_t> rdna3_level(std::span<const uint32_t> dwords) {
  if (dwords.size() < rdna3::kBoxNodeDwords) return dwords;
  const std::size_t own = rdna3::node_section_dwords(dwords[2]);
  return own <= dwords.size() ? dwords.first(own) : dwords;
}

Bvh4Section top_section(const LoadedBvh& bvh) {
  if (!bvh.two_level()) return Bvh4Section::from(bvh.nodes, bvh.file);
  return Bvh4Section::from(rdna3_level(std::span<const uint32_t>(bvh.nodes).first(bvh.levels->top_bytes / 4)),
                           bvh.file + ": top level");
}

// A two-level RT IP 2.0 section's BLASes, each checked as a node section of its own, and its instance nodes, each
// naming its BLAS and the instance the sideband gives it. `instance_node`: per instance index, its node number.
std::shared_ptr<const Bvh4Blases> load_bvh4_levels(const LoadedBvh& out, std::vector<uint32_t>& instance_node) {
  const std::string& file = out.file;
  const Bvh4Section top = top_section(out);
  if (top.header.instance_nodes != out.sideband.size())
    throw_bad_input(file, "top level's header counts " + std::to_string(top.header.instance_nodes) +
                              " instance nodes, the sideband " + std::to_string(out.sideband.size()));
  auto blases = std::make_shared<Bvh4Blases>();
  for (std::size_t b = 0; b < out.levels->blases.size(); ++b) {
    const blob::BlasRange& range = out.levels->blases[b];
    const auto dwords = std::span<const uint32_t>(out.nodes).subspan(range.address / 4, range.bytes / 4);
    blases->blases.push_back(
        {range.address, Bvh4Section::from(rdna3_level(dwords), file + ": BLAS " + std::to_string(b)), range.first_geometry});
  }
  // Instance nodes follow the box nodes; each must name its BLAS's header and carry its sideband's instance index.
  instance_node.assign(out.sideband.size(), 0);
  const uint32_t first_slot = rdna3::kHeaderSlots + 2 * top.header.box_nodes;
  for (uint32_t n = 0; n < out.sideband.size(); ++n) {
    const std::size_t first = (std::size_t{first_slot} + 2 * std::size_t{n}) * rdna3::kSlotBytes / 4;
    rdna3::InstanceNodeDwords node;
    std::copy_n(top.memory.dwords.begin() + static_cast<std::ptrdiff_t>(first), node.size(), node.begin());
    const rdna3::DecodedInstanceNode inst = rdna3::decode_instance_node(node);
    const uint64_t address = rdna4::base_pointer_address(inst.blas_base_pointer);
    const uint32_t blas = out.levels->instances[n].blas;
    if (address != out.levels->blases[blas].address)
      throw_bad_input(file, "instance node " + std::to_string(n) + " points to byte " + std::to_string(address) +
                                ", not to the header of BLAS " + std::to_string(blas));
    if (inst.instance_index != out.sideband[n].instance_index)
      throw_bad_input(file, "instance node " + std::to_string(n) + " has instance index " +
                                std::to_string(inst.instance_index) + ", its sideband record " +
                                std::to_string(out.sideband[n].instance_index));
    instance_node[inst.instance_index] = n;
  }
  return blases;
}

// A two-level blob's Levels and InstanceSideband sections, checked against each other and the nodes: every BLAS a
// valid node section of its own, the top level's header counting the instance nodes both sections describe.
void load_two_levels(const blob::Blob& blob, const std::string& file, LoadedBvh& out, BlasTable& table,
                     std::vector<uint32_t>& instance_node) {
  const blob::Section* levels = blob.find(blob::SectionType::Levels);
  const blob::Section* sideband = blob.find(blob::SectionType::InstanceSideband);
  if (levels == nullptr && sideband == nullptr) return;
  if (levels == nullptr || sideband == nullptr)
    throw_bad_input(file, "a two-level blob needs both the levels and the instance-sideband sections");
  uint32_t geometry_count = 0;
  for (const auto& tri : out.geometry.triangles) geometry_count = std::max(geometry_count, tri.geometry + 1);
  out.levels = blob::decode_levels(levels->data, file, uint64_t{out.nodes.size()} * 4, geometry_count,
                                   static_cast<uint32_t>(out.geometry.triangles.size()));
  out.sideband = blob::decode_instance_sideband(sideband->data, file);
  if (out.sideband.size() != out.levels->instances.size())
    throw_bad_input(file, "the instance-sideband and levels sections describe different instance counts");
  if (out.target != blob::Target::Rtip31) return;  // the other targets' instance forms check their own nodes
  std::string error;
  const auto top = rdna4::read_node_section_header(out.nodes.data(), out.levels->top_bytes / 4, &error);
  if (!top) throw_bad_input(file, "top level: " + error);
  if (top->instance_nodes != out.sideband.size())
    throw_bad_input(file, "top level's header counts " + std::to_string(top->instance_nodes) +
                              " instance nodes, the sideband " + std::to_string(out.sideband.size()));
  table.first_instance_slot = top->box_nodes + 1;
  for (std::size_t b = 0; b < out.levels->blases.size(); ++b) {
    const blob::BlasRange& range = out.levels->blases[b];
    const std::span<const uint32_t> dwords = std::span<const uint32_t>(out.nodes).subspan(range.address / 4, range.bytes / 4);
    if (!rdna4::read_node_section_header(dwords.data(), dwords.size(), &error))
      throw_bad_input(file, "BLAS " + std::to_string(b) + ": " + error);
    table.blases.push_back({range.address, NodeMemory{dwords}, range.first_geometry});
  }
  // Every instance node must name one of these BLASes (the traversal would stop a ray on any other).
  const NodeMemory top_memory{std::span<const uint32_t>(out.nodes).first(out.levels->top_bytes / 4)};
  instance_node.assign(out.sideband.size(), 0);
  for (uint32_t n = 0; n < out.sideband.size(); ++n) {
    instance_node[out.sideband[n].instance_index] = n;
    table.instance_index.push_back(out.sideband[n].instance_index);
    const uint32_t pointer = rdna4::make_node_pointer(uint64_t{table.first_instance_slot + n} * rdna4::kNodeBytes,
                                                      rdna4::kTypeInstance);
    NodeFault fault;
    const uint32_t* node = top_memory.find(pointer, fault);
    if (node == nullptr) throw_bad_input(file, "instance node " + std::to_string(n) + " lies outside the top level");
    const rdna4::DecodedInstanceNode inst = rdna4::decode_instance_node(node);
    const uint64_t address = rdna4::base_pointer_address(inst.blas_base_pointer);
    const uint32_t blas = table.find(address);
    if (blas != out.levels->instances[n].blas)
      throw_bad_input(file, "instance node " + std::to_string(n) + " points to byte " + std::to_string(address) +
                                ", not to the header of BLAS " + std::to_string(out.levels->instances[n].blas));
  }
}

// Every InstanceLeaf of an Xe3 top level, in block order (the sideband's order), must enter its Levels BLAS at its
// root and carry its sideband record's instance index: refused here, so that no ray meets a hostile leaf.
void check_xe3_instance_leaves(const LoadedBvh& out, const Xe3Section& top, const Xe3Blases& table) {
  const xe3::TreeCheckResult check = xe3::check_encoded_tree(top.dwords, nullptr);
  if (!check.ok()) throw_bad_input(out.file, "top level: " + check.problems.front());
  // A clean check reached exactly the header's InstanceLeafs, each inside the top level.
  for (uint32_t n = 0; n < check.instance_leaf_blocks.size(); ++n) {
    const std::size_t first = std::size_t{check.instance_leaf_blocks[n]} * xe3::kBlockDwords;
    const xe3::DecodedInstanceLeaf leaf =
        xe3::decode_instance_leaf(top.dwords.subspan(first).first<xe3::kInstanceLeafDwords>());
    const uint32_t blas = out.levels->instances[n].blas;
    const Xe3Blases::Blas& b = table.blases[blas];
    const uint64_t root = b.address + uint64_t{b.section.header.root_block} * xe3::kBlockBytes;
    if (leaf.start_node != root || leaf.bvh != b.address)
      throw_bad_input(out.file, "instance leaf " + std::to_string(n) + " enters byte " +
                                    std::to_string(leaf.start_node) + ", not the root of BLAS " + std::to_string(blas));
    if (leaf.instance_index != out.sideband[n].instance_index)
      throw_bad_input(out.file, "instance leaf " + std::to_string(n) + " has instance index " +
                                    std::to_string(leaf.instance_index) + ", its sideband record " +
                                    std::to_string(out.sideband[n].instance_index));
  }
}

// The BLASes of a two-level Xe3 blob (docs/xe3-format.md, "Top level"), each a node section of its own (padded to
// 128-byte units), after a top level whose header counts the sideband's instances.
void load_xe3_blases(const LoadedBvh& out, const std::string& file, Xe3Blases& table,
                     std::vector<uint32_t>& instance_node) {
  const std::span<const uint32_t> nodes(out.nodes);
  const Xe3Section top = Xe3Section::from(xe3::unpadded_level(nodes.first(out.levels->top_bytes / 4)), file);
  if (top.header.instance_leaves != out.sideband.size())
    throw_bad_input(file, "top level's header counts " + std::to_string(top.header.instance_leaves) +
                              " instance leaves, the sideband " + std::to_string(out.sideband.size()));
  for (std::size_t b = 0; b < out.levels->blases.size(); ++b) {
    const blob::BlasRange& range = out.levels->blases[b];
    std::string error;
    const std::span<const uint32_t> dwords = xe3::unpadded_level(nodes.subspan(range.address / 4, range.bytes / 4));
    const auto header = xe3::read_node_section_header(dwords, &error);
    if (!header) throw_bad_input(file, "BLAS " + std::to_string(b) + ": " + error);
    table.blases.push_back({range.address, Xe3Section{dwords, *header}, range.first_geometry});
  }
  check_xe3_instance_leaves(out, top, table);
  instance_node.assign(out.sideband.size(), 0);
  for (uint32_t n = 0; n < out.sideband.size(); ++n) instance_node[out.sideband[n].instance_index] = n;
}

// The exact world bounds of the scene's triangles (degenerate ones left out), from which every ray generator and the
// default camera derive: a one-level blob's Geometry section is in world space; a two-level blob stores the bounds
// its flattened build would have (docs/blob-format.md §14). A version-3 two-level blob has no such section: its
// triangles are moved by the sideband's float matrices, which can differ in the last bits from the flattened build.
Aabb scene_bounds(const blob::Blob& blob, const std::string& file, const LoadedBvh& bvh) {
  const blob::Section* stored = blob.find(blob::SectionType::WorldBounds);
  if (stored != nullptr && !bvh.two_level()) throw_bad_input(file, "a world-bounds section in a one-level blob");
  if (stored != nullptr) return blob::decode_world_bounds(stored->data, file);
  Aabb box;
  if (bvh.two_level()) {
    for (const Vec3& p : bvh.world_positions()) box.grow(p);
    return box;
  }
  for (const auto& tri : bvh.geometry.triangles) {
    if (tri.degenerate()) continue;
    for (uint32_t v : tri.v) box.grow(bvh.geometry.positions[v]);
  }
  return box;
}

}  // namespace

Xe3Section LoadedBvh::xe3_section() const {
  if (!xe3_blases_) return Xe3Section::from(nodes, file);
  const std::span<const uint32_t> top_level = std::span<const uint32_t>(nodes).first(levels->top_bytes / 4);
  Xe3Section top = Xe3Section::from(xe3::unpadded_level(top_level), file);
  top.blases = xe3_blases_.get();
  return top;
}

void LoadedBvh::load_levels(const blob::Blob& blob, const std::string& file, LoadedBvh& out) {
  auto table = std::make_unique<BlasTable>();
  load_two_levels(blob, file, out, *table, out.instance_node_);
  if (out.levels && out.target == blob::Target::Rtip20) out.bvh4_blases_ = load_bvh4_levels(out, out.instance_node_);
  if (out.levels && out.target == blob::Target::Rtip31) out.blas_table_ = std::move(table);
  if (out.levels && out.target == blob::Target::Xe3) {
    auto blases = std::make_unique<Xe3Blases>();
    load_xe3_blases(out, file, *blases, out.instance_node_);
    out.xe3_blases_ = std::move(blases);
  }
}

Bvh4Section LoadedBvh::bvh4_section() const {
  Bvh4Section section = top_section(*this);
  section.blases = bvh4_blases_.get();
  return section;
}

LoadedBvh load_bvh(const blob::Blob& blob, const std::string& file) {
  LoadedBvh out;
  out.file = file;
  out.target = blob.target;
  const std::vector<std::byte>& node_bytes = blob.require(blob::SectionType::Nodes, file).data;
  // Checked on bytes: converting to dwords would silently drop a trailing partial dword. Each target's header
  // check below then checks the size in dwords.
  if (node_bytes.size() % 4 != 0) {
    throw_bad_input(file, "node section is not a whole number of dwords (" + std::to_string(node_bytes.size()) +
                              " bytes)");
  }
  out.nodes = blob::bytes_to_dwords(node_bytes);
  out.geometry = blob::decode_geometry(blob.require(blob::SectionType::Geometry, file).data, file);
  // Each target checks its own section header here, so a bad one is reported before any tracing.
  switch (blob.target) {
    case blob::Target::Rtip31: {
      std::string error;
      LoadedBvh::load_levels(blob, file, out);  // a two-level section's own header covers its top level
      const std::span<const uint32_t> top = out.memory().dwords;
      const auto header = rdna4::read_node_section_header(top.data(), top.size(), &error);
      if (!header) throw_bad_input(file, error);
      out.root = header->root_pointer;
      break;
    }
    case blob::Target::Rtip20:
      LoadedBvh::load_levels(blob, file, out);
      (void)out.bvh4_section();
      break;
    case blob::Target::Xe3: {
      LoadedBvh::load_levels(blob, file, out);  // a two-level section's own header covers its top level
      (void)out.xe3_section();
      break;
    }
  }
  const auto triangle_count = static_cast<uint32_t>(out.geometry.triangles.size());
  if (const blob::Section* s = blob.find(blob::SectionType::AlphaTest))
    out.alpha_test = blob::decode_alpha_test(s->data, file, triangle_count);
  if (const blob::Section* s = blob.find(blob::SectionType::Stoc))
    out.stoc = blob::decode_stoc_sideband(s->data, file, triangle_count);
  out.bounds = scene_bounds(blob, file, out);
  for (uint32_t i = 0; i < out.geometry.triangles.size(); ++i) {
    const auto& tri = out.geometry.triangles[i];
    // Ids number triangles 0..n-1 per geometry, so neither can reach the triangle count.
    if (tri.geometry >= out.geometry.triangles.size() || tri.primitive >= out.geometry.triangles.size()) {
      throw_bad_input(file, "Geometry section triangle " + std::to_string(i) + " has an out-of-range id");
    }
    if (tri.geometry >= out.triangle_index_.size()) out.triangle_index_.resize(tri.geometry + std::size_t{1});
    auto& prims = out.triangle_index_[tri.geometry];
    if (tri.primitive >= prims.size()) prims.resize(tri.primitive + std::size_t{1}, kNoIndex);
    prims[tri.primitive] = i;
  }
  return out;
}

LoadedBvh load_bvh_file(const std::filesystem::path& path) {
  return load_bvh(blob::read_file(path), path.string());
}

}  // namespace hwbvh::emu
