// hwbvh build SCENE -o OUT.hwbvh: OBJ or (flattened) glTF scene -> encoded BVH of one target (RT IP 3.1 by default) in a blob file,
// with a report (and, for alpha-tested scenes, the opacity rows `hwbvh info` prints too).
#include <memory>
#include <optional>
#include <utility>

#include "commands.h"
#include "hwbvh/api/api.h"
#include "hwbvh/api/tree.h"
#include "hwbvh/pipeline/pipeline.h"
#include "option_checks.h"
#include "output.h"
#include "progress.h"

namespace hwbvh::cli {
namespace {

struct BuildArgs {
  std::string scene;
  std::string output;
  std::string tree;  // --tree TREE.npz: another builder's tree instead of hwbvh's
  std::string target = "rtip31";
  std::optional<uint32_t> stoc_level;  // default per target
  std::string stoc_order = "bird";
  uint32_t opacity_level = pipeline::BuildBlobOptions::kDefaultOpacityLevel;
  std::optional<float> alpha_cutoff;  // default: the file's alphaCutoff (glTF) or 0.5
  std::string quality = "medium";
  std::string obb = "on";
  float obb_ratio = rdna4::EncodeOptions{}.obb_accept_ratio;
  int threads = 0;
  bool flatten = false;
  bool json = false;
  bool quiet = false;
  // The options that some targets have no use for (refused there when given).
  CLI::Option* stoc_order_option = nullptr;
  CLI::Option* opacity_level_option = nullptr;
  CLI::Option* obb_option = nullptr;
  CLI::Option* obb_ratio_option = nullptr;
};

// The value of an option that was given on the command line; unset when it was left at its default.
template <class T>
std::optional<T> if_given(const CLI::Option* option, const T& value) {
  return option->count() > 0 ? std::optional<T>(value) : std::nullopt;
}

int run_build(const BuildArgs& a) {
  check_output_is_not_input(a.output, {a.scene, a.tree});
  pipeline::BuildBlobOptions options = api::build_options({
      .target = a.target,
      .quality = a.quality,
      .stoc_level = a.stoc_level,
      .stoc_order = if_given(a.stoc_order_option, a.stoc_order),
      .opacity_level = if_given(a.opacity_level_option, a.opacity_level),
      .alpha_cutoff = a.alpha_cutoff,
      .obb = if_given(a.obb_option, a.obb),
      .obb_ratio = if_given(a.obb_ratio_option, a.obb_ratio),
      .threads = a.threads,
  });
  if (!a.tree.empty()) options.build.tree = std::make_shared<const bvh_build::TreeTopology>(api::read_tree_file(a.tree));

  pipeline::BuildReport report;
  Warnings warnings;
  {
    Progress progress("hwbvh build", !a.quiet);
    report = pipeline::build_file(a.scene, {.flatten = a.flatten}, a.output, options, progress.callback(),
                                  warnings.collector());
  }
  warnings.print(a.quiet);
  if (a.json) {
    Json j = report_json(report);
    j["output"] = a.output;
    print_json(j);
  } else {
    Table t;
    t.row("output", a.output);
    add_report_rows(t, report);
    if (report.opacity) {  // the block `hwbvh info` prints from the stored report
      t.blank();
      for (auto& [label, value] : pipeline::opacity_rows(*report.opacity)) t.row(std::move(label), std::move(value));
    }
    t.print();
  }
  return 0;
}

}  // namespace

Command add_build_command(CLI::App& app) {
  auto args = std::make_shared<BuildArgs>();
  CLI::App* sub = app.add_subcommand("build", "Build a hardware-format BVH (RT IP 3.1 by default) from an OBJ or glTF scene into a blob file");
  sub->add_option("scene", args->scene, "scene file: .obj, .gltf or .glb")->required();
  add_flatten_flag(*sub, args->flatten);
  sub->add_option("-o,--output", args->output, "blob file to write (.hwbvh)")->required();
  sub->add_option("--tree", args->tree,
                  "encode this tree (.npz, docs/tree-format.md) instead of building one: a binary tree is collapsed as "
                  "hwbvh's own, a wide one taken as given; --quality then only labels the report");
  sub->add_option("--target", args->target,
                  "hardware format: rtip31 (RDNA 4 BVH8), rtip20 (RDNA 2/3 BVH4), xe3 (Intel QBVH6 + QuadLeaf)")
      ->check(CLI::IsMember({"rtip31", "rtip20", "xe3"}))
      ->capture_default_str();
  sub->add_option("--stoc-level", args->stoc_level,
                  "sub-triangle opacity (STOC) level of alpha-tested triangles. xe3: 0 none, 1 STOC1 (default), 3 STOC3 "
                  "leaves; rtip31: Stoc sideband level, 0 none, 1..12 (default 3); not rtip20")
      ->check(CLI::Range(0u, 12u));
  args->stoc_order_option =
      sub->add_option("--stoc-order", args->stoc_order, "sub-triangle bit order in leaf masks and the sideband")
      ->check(CLI::IsMember({"bird", "row"}))
      ->capture_default_str();
  args->opacity_level_option = sub->add_option("--opacity-level", args->opacity_level,
                  "opacity bake depth 0..12: full-resolution states (xe3 STOC3 leaves point to them)")
      ->check(CLI::Range(0u, 12u))
      ->capture_default_str();
  sub->add_option("--alpha-cutoff", args->alpha_cutoff, "alpha test: a hit passes where texel alpha / 255 >= C (default: glTF alphaCutoff, else 0.5)")
      ->check(number_between(0.0, 1.0));
  sub->add_option("--quality", args->quality, "BVH build quality; high adds spatial splits")
      ->check(CLI::IsMember({"low", "medium", "high"}))
      ->capture_default_str();
  args->obb_option = sub->add_option("--obb", args->obb, "oriented bounding boxes in box nodes (rtip31 only)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  args->obb_ratio_option = sub->add_option("--obb-ratio", args->obb_ratio,
                  "accept a node's OBB only if its children's OBB area < R x their AABB area")
      ->check(number_between(0.0, 1.0))
      ->capture_default_str();
  sub->add_option("--threads", args->threads, "worker threads; 0 = all (output is identical at any count)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  sub->add_flag("--json", args->json, "print the report as one JSON object");
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_build(*args); }};
}

}  // namespace hwbvh::cli
