// hwbvh compare SCENE (OBJ, or glTF in two levels or with --flatten in one): one table across hardware targets (RDNA 2/3
// BVH4, RDNA 4 BVH4x2, BVH8 with and without OBBs, Intel Xe3 QBVH6), the same rays through each. On an alpha-tested
// scene every row runs the alpha test as an any-hit shader, unbaked, and the table gains an any-hit column; on a
// two-level scene the per-level counters follow the table (stats/compare.h).
#include <cstdio>
#include <memory>

#include "commands.h"
#include "hwbvh/stats/compare.h"
#include "machine_options.h"
#include "output.h"
#include "progress.h"
#include "ray_options.h"

namespace hwbvh::cli {
namespace {

struct CompareArgs {
  std::string scene;
  RayArgs rays;
  std::string quality = "medium";
  MachineArgs machine;
  int threads = 0;
  bool flatten = false;
  bool json = false;
  bool quiet = false;
};

int run_compare(const CompareArgs& a) {
  if (a.flatten || !is_instanced_scene_file(a.scene))
    refuse_instance_mask(a.rays.target_options.instance_mask, a.scene);
  stats::CompareOptions o;
  o.kinds = a.rays.kinds();
  set_ray_generation(a.rays, o);
  o.trace = a.rays.trace();
  o.quality = a.quality == "low" ? bvh_build::BuildQuality::Low
              : a.quality == "high" ? bvh_build::BuildQuality::High : bvh_build::BuildQuality::Medium;
  o.machine = load_machine(a.machine);
  o.threads = a.threads;
  stats::CompareReport report;
  Warnings warnings;
  {
    Progress progress("hwbvh compare", !a.quiet);
    progress.phase("loading");
    const AnyScene scene = load_any_scene(a.scene, {.flatten = a.flatten}, warnings.collector(), progress.callback());
    report = stats::compare_targets(scene, o, progress.callback());
  }
  warnings.print(a.quiet);
  const std::string text = a.json ? stats::compare_to_json(report) + "\n" : stats::compare_to_text(report);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Build one scene for every target (rtip20 BVH4, rtip31 BVH4x2, BVH8, BVH8 + OBB, xe3) and compare traversal");
  sub->add_option("scene", args->scene, "scene file: .obj, .gltf or .glb (two levels unless --flatten)")->required();
  add_flatten_flag(*sub, args->flatten);
  add_ray_options(*sub, args->rays, kImageRays | kRayTypes | kTrace, "primary,random");
  sub->add_option("--quality", args->quality, "BVH build quality")->check(CLI::IsMember({"low", "medium", "high"}))->capture_default_str();
  add_machine_options(*sub, args->machine);
  sub->add_option("--threads", args->threads, "worker threads; 0 = all")->check(CLI::Range(0, 4096))->capture_default_str();
  sub->add_flag("--json", args->json, "print one JSON document");
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_compare(*args); }};
}

}  // namespace hwbvh::cli
