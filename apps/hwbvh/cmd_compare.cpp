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
#include "target_options.h"

namespace hwbvh::cli {
namespace {

struct CompareArgs {
  std::string scene;
  std::string rays = "primary,random";
  uint32_t width = 256;
  uint32_t height = 256;
  std::string camera;
  uint32_t random_rays = 16384;
  uint32_t stack_size = 16;
  uint32_t instance_mask = 0xFF;
  CLI::Option* instance_mask_option = nullptr;
  std::string quality = "medium";
  MachineArgs machine;
  int threads = 0;
  bool flatten = false;
  bool json = false;
  bool quiet = false;
};

int run_compare(const CompareArgs& a) {
  if (a.flatten || !is_instanced_scene_file(a.scene)) refuse_instance_mask(a.instance_mask_option, a.scene);
  stats::CompareOptions o;
  o.kinds = stats::parse_ray_kinds(a.rays);
  o.width = a.width;
  o.height = a.height;
  if (!a.camera.empty()) o.camera = parse_camera(a.camera);
  o.random_rays = a.random_rays;
  o.trace.stack.size = a.stack_size;
  o.trace.instance_mask = a.instance_mask;
  o.quality = a.quality == "low" ? bvh_build::BuildQuality::Low
              : a.quality == "high" ? bvh_build::BuildQuality::High : bvh_build::BuildQuality::Medium;
  o.machine = load_machine(a.machine);
  o.gpu_scale = a.machine.gpu_scale;
  o.threads = a.threads;
  stats::CompareReport report;
  Warnings warnings;
  {
    Progress progress("hwbvh compare", !a.quiet);
    progress.phase("loading");
    const AnyScene scene = load_any_scene(a.scene, {.flatten = a.flatten}, warnings.collector());
    progress.phase("building and tracing");
    report = stats::compare_targets(scene, o);
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
  sub->add_option("--rays", args->rays, "comma-separated ray types: primary, ao, shadow, random")->capture_default_str();
  sub->add_option("--width", args->width, "primary-ray image width")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--height", args->height, "primary-ray image height")->check(CLI::Range(1u, 16384u))->capture_default_str();
  sub->add_option("--camera", args->camera, "eye,target,up,fov (ten numbers); default: framed from the scene bounds");
  sub->add_option("--random-rays", args->random_rays, "number of random rays")->check(CLI::Range(1u, 100000000u))->capture_default_str();
  args->instance_mask_option = add_instance_mask_option(*sub, args->instance_mask);
  sub->add_option("--stack-size", args->stack_size,
                  "LDS stack ring entries per lane (the xe3 row keeps its 4-entry short stack)")
      ->check(CLI::Range(2u, 64u))
      ->capture_default_str();
  sub->add_option("--quality", args->quality, "BVH build quality")->check(CLI::IsMember({"low", "medium", "high"}))->capture_default_str();
  add_machine_options(*sub, args->machine);
  sub->add_option("--threads", args->threads, "worker threads; 0 = all")->check(CLI::Range(0, 4096))->capture_default_str();
  sub->add_flag("--json", args->json, "print one JSON document");
  sub->add_flag("--quiet", args->quiet, "no progress indicator and no warnings");
  return {sub, [args] { return run_compare(*args); }};
}

}  // namespace hwbvh::cli
