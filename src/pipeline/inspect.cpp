#include "hwbvh/pipeline/inspect.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>

namespace hwbvh::pipeline {
namespace {

using rdna4::NodeKind;

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string node_name(NodeKind kind, uint64_t offset) {
  const char* name = kind == NodeKind::Box ? "box node @" : kind == NodeKind::Instance ? "instance node @"
                                                                                       : "primitive node @";
  return name + hex(offset);
}

// How the walk reached a pointer; turned into text only when there is a problem to report.
struct Pending {
  enum class Via { Root, Child, RangeContinuation, Request };
  uint32_t pointer = 0;
  Via via = Via::Root;
  uint64_t from_offset = 0;  ///< the node holding the pointer (Child, RangeContinuation)
  uint32_t slot = 0;         ///< child slot (Child)

  [[nodiscard]] std::string describe() const {
    switch (via) {
      case Via::Root: return "root pointer";
      case Via::Child: return "child " + std::to_string(slot) + " of " + node_name(NodeKind::Box, from_offset);
      case Via::RangeContinuation: return "range continuing after " + node_name(NodeKind::Primitive, from_offset);
      case Via::Request: return "pointer " + hex(pointer);
    }
    return {};
  }
};

class Walker {
 public:
  Walker(std::span<const uint32_t> dwords, bool keep_nodes) : dwords_(dwords), keep_nodes_(keep_nodes) {
    out_.section_bytes = uint64_t{dwords.size()} * 4;
    std::string error;
    out_.header = rdna4::read_node_section_header(dwords.data(), dwords.size(), &error);
    if (out_.header) {
      out_.root_pointer = out_.header->root_pointer;
    } else {
      problem("node section header: " + error + "; assuming root pointer 0x15");
    }
  }

  /// Breadth-first from the root, keeping the first max_nodes decoded nodes (0 = no limit). The walk goes on past
  /// them, so that not_shown counts every node reachable from the root that was left out, and problems deeper in
  /// the tree are still found.
  void walk(std::size_t max_nodes) {
    std::deque<Pending> queue{{out_.root_pointer, Pending::Via::Root}};
    std::size_t visited = 0;
    while (!queue.empty()) {
      const Pending next = queue.front();
      queue.pop_front();
      const bool shown = max_nodes == 0 || visited < max_nodes;
      if (!visit(next, &queue, shown)) continue;
      if (shown) ++visited;
      else ++out_.not_shown;
    }
  }

  /// Decodes one node without following its children.
  void visit_one(uint32_t pointer) { visit({pointer, Pending::Via::Request}, nullptr); }

  [[nodiscard]] std::optional<NodeKind> kind_at(uint64_t offset) const {
    const auto it = seen_.find(offset);
    return it == seen_.end() ? std::nullopt : std::optional(it->second);
  }

  NodeDump take() { return std::move(out_); }

 private:
  void problem(std::string text) {
    if (out_.problem_count++ < kMaxProblems) out_.problems.push_back(std::move(text));
  }

  // Checks the pointer and decodes its node, kept in the dump when `keep`; children are appended to `queue` when
  // given. False if the node was not decoded (bad pointer, or already visited).
  bool visit(const Pending& at, std::deque<Pending>* queue, bool keep = true) {
    const uint32_t p = at.pointer;
    const NodeKind kind = rdna4::node_kind(p);
    const uint64_t offset = rdna4::node_byte_offset(p);
    if (p >= rdna4::kEndSearch) {
      problem(at.describe() + ": sentinel " + hex(p) + " where a node pointer was expected");
      return false;
    }
    // Instance nodes are the leaves of a top level (its header counts them); a BLAS has none.
    const bool top_level = out_.header && out_.header->instance_nodes > 0;
    if (kind == NodeKind::Unsupported || (kind == NodeKind::Instance && !top_level)) {
      problem(at.describe() + ": pointer " + hex(p) + " has node type " + std::to_string(p & 7) + ", which " +
              (kind == NodeKind::Instance ? "a bottom-level" : "an") + " RT IP 3.1 BVH does not use");
      return false;
    }
    if (kind != NodeKind::Primitive && (p & 8u) != 0) {
      problem(at.describe() + ": box pointer " + hex(p) + " has bit 3 set: it addresses the middle of a 128-byte node");
      return false;
    }
    if (offset == 0) {
      problem(at.describe() + ": pointer " + hex(p) + " addresses the node-section header (offset 0)");
      return false;
    }
    if (out_.section_bytes < rdna4::kNodeBytes || offset > out_.section_bytes - rdna4::kNodeBytes) {
      problem(at.describe() + ": pointer " + hex(p) + " addresses offset " + hex(offset) +
              ", past the end of the node section (" + std::to_string(out_.section_bytes) + " bytes)");
      return false;
    }
    if (const auto it = seen_.find(offset); it != seen_.end()) {
      if (it->second != kind) {
        problem(at.describe() + ": " + node_name(kind, offset) + " was already reached as " +
                node_name(it->second, offset));
      } else if (kind != NodeKind::Primitive) {
        problem(at.describe() + ": " + node_name(kind, offset) + " is reached a second time (cycle or shared subtree)");
      } else {
        check_pair_index(at, offset);
      }
      return false;  // several ranges may share a primitive node: decoded once
    }
    seen_.emplace(offset, kind);

    rdna4::NodeDwords node{};
    std::copy_n(dwords_.begin() + static_cast<std::ptrdiff_t>(offset / 4), rdna4::kNodeDwords, node.begin());
    DumpedNode d;
    d.offset = offset;
    d.pointer = p;
    d.kind = kind;
    if (kind == NodeKind::Box) {
      d.box = rdna4::decode_box_node(node);
      for (uint32_t k = 0; queue && k < d.box->child_count; ++k)
        queue->push_back({d.box->child_pointer[k], Pending::Via::Child, offset, k});
    } else if (kind == NodeKind::Instance) {
      d.instance = rdna4::decode_instance_node(node.data());  // a leaf here: its BLAS is dumped with --blas
    } else {
      decode_primitive(node, at, d, queue);
    }
    if (keep_nodes_ && keep) out_.nodes.push_back(std::move(d));
    return true;
  }

  void decode_primitive(const rdna4::NodeDwords& node, const Pending& at, DumpedNode& d,
                        std::deque<Pending>* queue) {
    const std::string name = node_name(NodeKind::Primitive, d.offset);
    std::string error;
    d.primitive_header = rdna4::decode_primitive_header(node, &error);
    if (!d.primitive_header) {
      problem(at.describe() + ": " + name + ": " + error);
      return;
    }
    const uint32_t pair_count = d.primitive_header->pair_count;
    pair_counts_.emplace(d.offset, pair_count);
    check_pair_index(at, d.offset);
    for (uint32_t i = 0; i < pair_count; ++i) {
      d.pairs.push_back(rdna4::decode_primitive_pair(node, i, &error));
      if (!d.pairs.back()) {
        problem(name + " pair " + std::to_string(i) + ": " + error);
      } else if (queue && d.pairs.back()->navigation == rdna4::kNavEndOfNode) {
        // The last pair has no stop bit: its range continues at pair 0 of the next node (spec §4.7).
        queue->push_back({rdna4::make_node_pointer(d.offset + rdna4::kNodeBytes, 0),
                          Pending::Via::RangeContinuation, d.offset});
      }
    }
  }

  // Every pointer into a primitive node, not only the first, must name one of its pairs.
  void check_pair_index(const Pending& at, uint64_t offset) {
    const auto it = pair_counts_.find(offset);
    if (it == pair_counts_.end() || rdna4::pair_index(at.pointer) < it->second) return;  // header refused: reported
    problem(at.describe() + ": pointer " + hex(at.pointer) + " enters pair " +
            std::to_string(rdna4::pair_index(at.pointer)) + " but " + node_name(NodeKind::Primitive, offset) +
            " has " + std::to_string(it->second) + " pairs");
  }

  std::span<const uint32_t> dwords_;
  bool keep_nodes_;
  NodeDump out_;
  std::map<uint64_t, NodeKind> seen_;
  std::map<uint64_t, uint32_t> pair_counts_;  ///< primitive nodes with a valid header: their pair count
};

}  // namespace

NodeDump dump_tree(std::span<const uint32_t> dwords, std::size_t max_nodes) {
  Walker w(dwords, /*keep_nodes=*/true);
  w.walk(max_nodes);
  return w.take();
}

NodeDump dump_pointer(std::span<const uint32_t> dwords, uint32_t pointer) {
  Walker w(dwords, /*keep_nodes=*/true);
  w.visit_one(pointer);
  return w.take();
}

std::optional<NodeDump> dump_offset(std::span<const uint32_t> dwords, uint64_t offset) {
  Walker finder(dwords, /*keep_nodes=*/false);
  finder.walk(0);
  const std::optional<NodeKind> kind = finder.kind_at(offset);
  if (!kind) return std::nullopt;
  const uint32_t type = *kind == NodeKind::Box ? rdna4::kTypeBox : *kind == NodeKind::Instance ? rdna4::kTypeInstance : 0;
  return dump_pointer(dwords, rdna4::make_node_pointer(offset, type));
}

}  // namespace hwbvh::pipeline
