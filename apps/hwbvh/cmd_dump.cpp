// hwbvh dump FILE: the decoded nodes of a blob's RT IP 3.1 node section (pipeline/inspect.h, which reads the
// bytes only through formats/rdna4/decode.h), breadth-first from the root or one node.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "commands.h"
#include "hwbvh/api/tree.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/blob/bytes.h"
#include "hwbvh/blob/instance_sections.h"
#include "hwbvh/core/error.h"
#include "hwbvh/pipeline/inspect.h"
#include "inputs.h"
#include "option_checks.h"
#include "output.h"
#include "progress.h"

namespace hwbvh::cli {
namespace {

using pipeline::DumpedNode;
using pipeline::NodeDump;
using rdna4::NodeKind;

struct DumpArgs {
  std::string file;
  std::string tree;     ///< --tree OUT.npz: FILE is a scene; write the binary tree of its build
  std::string quality = "medium";
  int threads = 0;
  bool flatten = false;
  bool quiet = false;
  std::string node;     ///< --node OFFSET
  std::string pointer;  ///< --pointer P
  std::optional<uint32_t> blas;  ///< --blas N: that BLAS of a two-level blob instead of the top level
  int64_t max_nodes = 64;
  bool json = false;
};

std::string vec(Vec3 v) { return fmt::format("({}, {}, {})", v.x, v.y, v.z); }
Json vec_json(Vec3 v) { return Json::array({v.x, v.y, v.z}); }
template <class T>
std::string triple(const std::array<T, 3>& a) {
  return fmt::format("({}, {}, {})", a[0], a[1], a[2]);
}

const char* child_type_name(uint32_t node_type) {
  if (node_type == rdna4::kTypeBox) return "box";
  if (node_type == rdna4::kTypeInstance) return "instance";
  return (node_type & 7) <= 3 ? "primitive" : "unsupported";
}

const char* nav_name(uint32_t nav) {
  switch (nav) {
    case rdna4::kNavEndOfPair: return "end-of-pair";
    case rdna4::kNavEndOfNode: return "end-of-node";
    case rdna4::kNavEndOfRange: return "end-of-range";
  }
  return "unknown";
}

std::string obb_text(uint32_t index) {
  return index == rdna4::kNoObb ? "none" : fmt::format("{} (boxes in its rotated frame)", index);
}

// ---- text ----------------------------------------------------------------------------------------------

void print_box(const DumpedNode& n) {
  const rdna4::DecodedBoxNode& b = *n.box;
  fmt::print("box node @{:#x}  pointer {:#x}  parent {:#x}  index in parent {}\n", n.offset, n.pointer,
             b.parent_pointer, b.index_in_parent);
  fmt::print("  origin {}  exponents {}  obb {}  children {}  internal base {:#x}  leaf base {:#x}  no-sort {}\n",
             vec(b.origin), triple(b.exponent), obb_text(b.obb_index), b.child_count, b.internal_base, b.leaf_base,
             b.no_sort ? 1 : 0);
  for (uint32_t k = 0; k < b.child_count; ++k) {
    const rdna4::ChildInfoFields& c = b.info[k];
    fmt::print("  child {}  pointer {:#x}  {} (type {})  range {}  flags {:#x}  mask {:#04x}  min {}  max {}\n", k,
               b.child_pointer[k], child_type_name(c.node_type), c.node_type, c.range_length, c.box_flags,
               c.instance_mask, vec(b.child_box[k].min), vec(b.child_box[k].max));
  }
}

void print_triangle(int k, const rdna4::DecodedTriangle& t) {
  if (!t.valid) {
    fmt::print("    tri{}  invalid\n", k);
    return;
  }
  fmt::print("    tri{}  indices {}  prim {}  geo {}  {}{}{}\n", k, triple(t.index), t.primitive_id, t.geometry_id,
             t.opaque ? "opaque" : "non-opaque", t.double_sided ? "  double-sided" : "",
             t.procedural ? "  procedural" : "");
  fmt::print("          v0 {}  v1 {}  v2 {}\n", vec(t.vertex[0]), vec(t.vertex[1]), vec(t.vertex[2]));
}

void print_primitive(const DumpedNode& n) {
  fmt::print("primitive node @{:#x}  pointer {:#x}\n", n.offset, n.pointer);
  if (!n.primitive_header) {
    fmt::print("  malformed header\n");
    return;
  }
  const rdna4::PrimitiveHeader& h = *n.primitive_header;
  fmt::print("  pairs {}  payload bits {}  prefix bits {}  trailing zeros {}  vertex type {}\n", h.pair_count,
             triple(h.payload_bits), triple(h.prefix_bits), h.trailing_zeros, h.vertex_type);
  fmt::print("  prim id anchor/payload bits {}/{}  geo id anchor/payload bits {}/{}  midpoint {}\n",
             h.prim_anchor_bits, h.prim_payload_bits, h.geo_anchor_bits, h.geo_payload_bits, h.midpoint);
  for (std::size_t i = 0; i < n.pairs.size(); ++i) {
    if (!n.pairs[i]) {
      fmt::print("  pair {}  malformed\n", i);
      continue;
    }
    const rdna4::DecodedPair& p = *n.pairs[i];
    fmt::print("  pair {}  stop {}  nav {}\n", i, p.range_stop ? 1 : 0, nav_name(p.navigation));
    for (int k = 0; k < 2; ++k) print_triangle(k, p.tri[k]);
  }
}

// The BLAS root an instance node's filter returns when it is hit: the last child's pointer byte names it in both of
// GPURT's forms (a primitive root's child 0 is never hit; rdna4/instance_node.h).
uint32_t filter_root(const rdna4::DecodedBoxNode& filter) {
  return rdna4::blas_root_from_filter_result(filter.child_pointer[filter.child_count - 1] & 0xFFu);
}

void print_instance(const DumpedNode& n) {
  const rdna4::DecodedInstanceNode& i = *n.instance;
  fmt::print("instance node @{:#x}  pointer {:#x}  parent {:#x}  mask {:#04x}  hit-group contribution {}\n", n.offset,
             n.pointer, i.parent_pointer, i.instance_mask, i.user_data);
  const rdna4::DecodedBoxNode filter = rdna4::decode_box_node(i.filter_box);
  fmt::print("  BLAS at byte {}  flags {:#x}  root {:#x}\n", rdna4::base_pointer_address(i.blas_base_pointer),
             rdna4::base_pointer_flags(i.blas_base_pointer), filter_root(filter));
  for (const auto& row : i.world_to_object)
    fmt::print("  world-to-object  {:>14} {:>14} {:>14} {:>14}\n", row[0], row[1], row[2], row[3]);
  for (uint32_t k = 0; k < filter.child_count; ++k) {
    fmt::print("  filter child {}  BLAS root index {}  range {}  min {}  max {}\n", k, filter.info[k].node_type,
               filter.info[k].range_length, vec(filter.child_box[k].min), vec(filter.child_box[k].max));
  }
}

void print_node(const DumpedNode& n) {
  if (n.kind == NodeKind::Box) {
    print_box(n);
  } else if (n.kind == NodeKind::Instance) {
    print_instance(n);
  } else {
    print_primitive(n);
  }
}

void print_text(const std::string& file, const NodeDump& d) {
  if (d.header) {
    const rdna4::NodeSectionHeader& h = *d.header;
    fmt::print("{}: node section {} bytes, {} slots, root {:#x}, {} box nodes, {} primitive nodes, {} instance nodes, "
               "bounds {} {}\n",
               file, d.section_bytes, h.node_slots, h.root_pointer, h.box_nodes, h.primitive_nodes, h.instance_nodes,
               vec(h.bounds.min), vec(h.bounds.max));
  } else {
    fmt::print("{}: node section {} bytes, malformed section header\n", file, d.section_bytes);
  }
  for (const DumpedNode& n : d.nodes) print_node(n);
  if (d.not_shown > 0) fmt::print("... {} more nodes not shown (--max-nodes)\n", d.not_shown);
  for (const std::string& p : d.problems) fmt::print("problem: {}\n", p);
  if (d.problem_count > d.problems.size())
    fmt::print("... {} more problems not shown\n", d.problem_count - d.problems.size());
}

// ---- JSON ----------------------------------------------------------------------------------------------

Json box_json(const rdna4::DecodedBoxNode& b) {
  Json children = Json::array();
  for (uint32_t k = 0; k < b.child_count; ++k) {
    const rdna4::ChildInfoFields& c = b.info[k];
    children.push_back({{"pointer", b.child_pointer[k]},
                        {"type", child_type_name(c.node_type)},
                        {"node_type", c.node_type},
                        {"range_length", c.range_length},
                        {"box_flags", c.box_flags},
                        {"instance_mask", c.instance_mask},
                        {"min", vec_json(b.child_box[k].min)},
                        {"max", vec_json(b.child_box[k].max)}});
  }
  return {{"internal_base", b.internal_base},
          {"leaf_base", b.leaf_base},
          {"parent_pointer", b.parent_pointer},
          {"origin", vec_json(b.origin)},
          {"exponents", b.exponent},
          {"no_sort", b.no_sort},
          {"index_in_parent", b.index_in_parent},
          {"obb_index", b.obb_index == rdna4::kNoObb ? Json(nullptr) : Json(b.obb_index)},
          {"children", std::move(children)}};
}

Json triangle_json(const rdna4::DecodedTriangle& t) {
  if (!t.valid) return nullptr;
  return {{"indices", t.index},
          {"vertices", {vec_json(t.vertex[0]), vec_json(t.vertex[1]), vec_json(t.vertex[2])}},
          {"primitive_id", t.primitive_id},
          {"geometry_id", t.geometry_id},
          {"opaque", t.opaque},
          {"double_sided", t.double_sided},
          {"procedural", t.procedural}};
}

Json primitive_json(const DumpedNode& n) {
  if (!n.primitive_header) return {{"header", nullptr}};
  const rdna4::PrimitiveHeader& h = *n.primitive_header;
  Json pairs = Json::array();
  for (const auto& p : n.pairs) {
    if (!p) {
      pairs.push_back(nullptr);
      continue;
    }
    pairs.push_back({{"range_stop", p->range_stop},
                     {"navigation", nav_name(p->navigation)},
                     {"tri0", triangle_json(p->tri[0])},
                     {"tri1", triangle_json(p->tri[1])}});
  }
  return {{"header",
           {{"pair_count", h.pair_count},
            {"payload_bits", h.payload_bits},
            {"prefix_bits", h.prefix_bits},
            {"trailing_zeros", h.trailing_zeros},
            {"vertex_type", h.vertex_type},
            {"prim_anchor_bits", h.prim_anchor_bits},
            {"prim_payload_bits", h.prim_payload_bits},
            {"geo_anchor_bits", h.geo_anchor_bits},
            {"geo_payload_bits", h.geo_payload_bits},
            {"midpoint", h.midpoint}}},
          {"pairs", std::move(pairs)}};
}

Json instance_json(const rdna4::DecodedInstanceNode& i) {
  const rdna4::DecodedBoxNode filter = rdna4::decode_box_node(i.filter_box);
  Json children = Json::array();
  for (uint32_t k = 0; k < filter.child_count; ++k) {
    children.push_back({{"blas_root_index", filter.info[k].node_type},
                        {"range_length", filter.info[k].range_length},
                        {"min", vec_json(filter.child_box[k].min)},
                        {"max", vec_json(filter.child_box[k].max)}});
  }
  return {{"world_to_object", i.world_to_object},
          {"blas_address", rdna4::base_pointer_address(i.blas_base_pointer)},
          {"blas_flags", rdna4::base_pointer_flags(i.blas_base_pointer)},
          {"blas_root", filter_root(filter)},
          {"parent_pointer", i.parent_pointer},
          {"hit_group_contribution", i.user_data},
          {"instance_mask", i.instance_mask},
          {"filter_children", std::move(children)}};
}

Json dump_json(const std::string& file, const NodeDump& d) {
  Json nodes = Json::array();
  for (const DumpedNode& n : d.nodes) {
    const char* kind = n.kind == NodeKind::Box ? "box" : n.kind == NodeKind::Instance ? "instance" : "primitive";
    Json j = {{"offset", n.offset}, {"pointer", n.pointer}, {"kind", kind}};
    j.update(n.kind == NodeKind::Box        ? box_json(*n.box)
             : n.kind == NodeKind::Instance ? instance_json(*n.instance)
                                            : primitive_json(n));
    nodes.push_back(std::move(j));
  }
  Json header = nullptr;
  if (d.header) {
    header = {{"root_pointer", d.header->root_pointer},
              {"node_slots", d.header->node_slots},
              {"box_nodes", d.header->box_nodes},
              {"primitive_nodes", d.header->primitive_nodes},
              {"instance_nodes", d.header->instance_nodes},
              {"bounds", {{"min", vec_json(d.header->bounds.min)}, {"max", vec_json(d.header->bounds.max)}}}};
  }
  return {{"file", file},
          {"section_bytes", d.section_bytes},
          {"header", std::move(header)},
          {"nodes", std::move(nodes)},
          {"not_shown", d.not_shown},
          {"problems", d.problems},
          {"problem_count", d.problem_count}};
}

// ---- command -------------------------------------------------------------------------------------------

// dump SCENE --tree OUT.npz: the binary tree hwbvh builds for the scene, before the collapse (api::export_tree).
int run_dump_tree(const DumpArgs& a) {
  check_output_is_not_input(a.tree, {a.file});
  Warnings warnings;
  bvh_build::TreeTopology tree;
  {
    Progress progress("hwbvh dump", !a.quiet);
    progress.phase("loading");
    const AnyScene scene = load_any_scene(a.file, {.flatten = a.flatten}, warnings.collector(), progress.callback());
    tree = api::export_tree(scene, a.quality, a.threads, progress.callback());
  }
  warnings.print(a.quiet);
  api::write_tree_file(a.tree, tree);
  fmt::print("wrote {} (binary tree of {} at quality {}: {} nodes, {} primitives)\n", a.tree, tree.source, a.quality,
             tree.node_count(), tree.primitives.size());
  return 0;
}

int run_dump(const DumpArgs& a) {
  if (!a.tree.empty()) return run_dump_tree(a);
  refuse_scene_input(a.file, "dump");
  const blob::Blob b = blob::read_file(a.file);
  if (b.target != blob::Target::Rtip31)
    throw Error(ErrorKind::BadInput, a.file,
                fmt::format("dump reads rtip31 node sections; this blob's target is {}", blob::target_name(b.target)));
  const blob::Section& nodes = b.require(blob::SectionType::Nodes, a.file);
  if (nodes.data.size() % rdna4::kNodeBytes != 0)
    throw Error(ErrorKind::BadInput, a.file,
                fmt::format("nodes section is {} bytes, not a whole number of 128-byte nodes", nodes.data.size()));
  const std::vector<uint32_t> all = blob::bytes_to_dwords(nodes.data);
  // A two-level blob: its top level, or with --blas N that BLAS's node section (offsets and pointers are then the
  // BLAS's own, relative to its header).
  std::span<const uint32_t> dwords = all;
  if (const blob::Section* levels_section = b.find(blob::SectionType::Levels)) {
    const blob::Levels levels =
        blob::decode_levels(levels_section->data, a.file, nodes.data.size(), UINT32_MAX, UINT32_MAX);
    if (a.blas && *a.blas >= levels.blases.size())
      throw Error(ErrorKind::BadInput, a.file, fmt::format("--blas {}: the blob has {} BLASes (0..{})", *a.blas,
                                                           levels.blases.size(), levels.blases.size() - 1));
    dwords = a.blas ? dwords.subspan(levels.blases[*a.blas].address / 4, levels.blases[*a.blas].bytes / 4)
                    : dwords.first(levels.top_bytes / 4);
  } else if (a.blas) {
    throw Error(ErrorKind::BadInput, a.file, "--blas applies to two-level blobs; this one has one level");
  }

  // One node (--pointer, --node) or the tree. For one node, a problem is about the node the user asked for.
  NodeDump d;
  std::string what = "malformed node section";
  if (!a.pointer.empty()) {
    const uint64_t p = parse_unsigned(a.pointer, "--pointer");
    if (p > 0xFFFFFFFFu) throw Error(ErrorKind::BadInput, "", "--pointer: node pointers are 32-bit values");
    d = pipeline::dump_pointer(dwords, static_cast<uint32_t>(p));
    what = "cannot decode --pointer " + a.pointer;
  } else if (!a.node.empty()) {
    const uint64_t offset = parse_unsigned(a.node, "--node");
    std::optional<NodeDump> one = pipeline::dump_offset(dwords, offset);
    if (!one) {
      throw Error(ErrorKind::BadInput, a.file,
                  fmt::format("--node {}: no node reachable from the root sits at byte offset {:#x} of the node "
                              "section (nodes are 128-byte aligned; --pointer decodes any node as the type its low "
                              "bits name)",
                              a.node, offset));
    }
    d = std::move(*one);
    what = "cannot decode --node " + a.node;
  } else {
    d = pipeline::dump_tree(dwords, static_cast<std::size_t>(a.max_nodes));
  }

  if (a.json) {
    print_json(dump_json(a.file, d));
  } else {
    print_text(a.file, d);
  }
  if (d.problem_count > 0) {
    throw Error(ErrorKind::BadInput, a.file,
                fmt::format("{}: {} problem(s); first: {}", what, d.problem_count, d.problems[0]));
  }
  return 0;
}

}  // namespace

Command add_dump_command(CLI::App& app) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* sub = app.add_subcommand("dump", "Print the decoded nodes of a blob file (RT IP 3.1)");
  sub->add_option("file", args->file, "blob file (.hwbvh); with --tree, a scene file")->required();
  auto* node = sub->add_option("--node", args->node,
                               "only the node at this byte offset of the node section (decimal or 0x hex)");
  auto* pointer = sub->add_option("--pointer", args->pointer,
                                  "only the node this node pointer addresses, e.g. 0x15 for the root");
  node->excludes(pointer);
  auto* max_nodes = sub->add_option("--max-nodes", args->max_nodes, "nodes to print, breadth-first from the root; 0 = all")
      ->check(non_negative_number())
      ->capture_default_str();
  auto* blas = sub->add_option("--blas", args->blas, "two-level blobs: dump BLAS N instead of the top level");
  auto* json = sub->add_flag("--json", args->json, "print one JSON object");
  auto* tree = sub->add_option("--tree", args->tree,
                               "FILE is a scene: write the binary tree hwbvh builds for it (before the collapse, the "
                               "same for every target) as an .npz tree file (docs/tree-format.md)");
  tree->excludes(node)->excludes(pointer)->excludes(max_nodes)->excludes(blas)->excludes(json);
  sub->add_option("--quality", args->quality, "with --tree: build quality (high's spatial splits cannot be exported)")
      ->check(CLI::IsMember({"low", "medium", "high"}))
      ->capture_default_str()
      ->needs(tree);
  sub->add_option("--threads", args->threads, "with --tree: worker threads; 0 = all (the tree is the same at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str()
      ->needs(tree);
  add_flatten_flag(*sub, args->flatten)->needs(tree);
  sub->add_flag("--quiet", args->quiet, "with --tree: no progress indicator and no warnings")->needs(tree);
  return {sub, [args] { return run_dump(*args); }};
}

}  // namespace hwbvh::cli
