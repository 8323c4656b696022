#include "hwbvh/emu/loaded_bvh.h"

#include <glm/geometric.hpp>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/rtip20/traversal.h"
#include "hwbvh/emu/xe3/traversal.h"
#include "hwbvh/formats/rdna4/node_section.h"

namespace hwbvh::emu {

uint32_t LoadedBvh::triangle_index(uint32_t geometry_id, uint32_t primitive_id) const {
  if (geometry_id >= triangle_index_.size() || primitive_id >= triangle_index_[geometry_id].size()) return kNoIndex;
  return triangle_index_[geometry_id][primitive_id];
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
    case blob::Target::Rtip20: return trace_rays_rtip20(Bvh4Section::from(nodes, file), rays, wave_begin, options, executor);
    case blob::Target::Xe3: return trace_rays_xe3(Xe3Section::from(nodes, file), rays, wave_begin, options, executor);
    case blob::Target::Rtip31: break;
  }
  return trace_rays(memory(), root, rays, wave_begin, options, executor);
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
      const auto header = rdna4::read_node_section_header(out.nodes.data(), out.nodes.size(), &error);
      if (!header) throw_bad_input(file, error);
      out.root = header->root_pointer;
      break;
    }
    case blob::Target::Rtip20: (void)Bvh4Section::from(out.nodes, file); break;
    case blob::Target::Xe3: (void)Xe3Section::from(out.nodes, file); break;
  }
  const auto triangle_count = static_cast<uint32_t>(out.geometry.triangles.size());
  if (const blob::Section* s = blob.find(blob::SectionType::AlphaTest))
    out.alpha_test = blob::decode_alpha_test(s->data, file, triangle_count);
  if (const blob::Section* s = blob.find(blob::SectionType::Stoc))
    out.stoc = blob::decode_stoc_sideband(s->data, file, triangle_count);
  for (const auto& tri : out.geometry.triangles) {
    if (tri.degenerate()) continue;
    for (uint32_t v : tri.v) out.bounds.grow(out.geometry.positions[v]);
  }
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
