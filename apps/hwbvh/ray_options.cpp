#include "ray_options.h"

#include <algorithm>

#include "hwbvh/emu/rtip31/intersect.h"
#include "hwbvh/render/render.h"
#include "option_checks.h"

namespace hwbvh::cli {
namespace {

// --heuristic by name or by the number of emu::SortHeuristic (the intersect instruction's field): the key the box
// path sorts children by.
CLI::Validator sort_heuristic_names() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        static constexpr std::pair<const char*, const char*> kNames[] = {
            {"closest", "0"}, {"largest-interval", "1"}, {"midpoint", "2"}, {"none", "3"}};
        for (const auto& [name, number] : kNames) {
          if (input == name) input = number;
          if (input == number) return {};
        }
        return "must be closest, largest-interval, midpoint or none, or their numbers 0..3 (got " + input + ")";
      },
      "closest|largest-interval|midpoint|none");
}

}  // namespace

std::vector<stats::RayKind> RayArgs::kinds() const {
  std::vector<stats::RayKind> list = stats::parse_ray_kinds(rays);
  if (!rays_file.empty() && std::find(list.begin(), list.end(), stats::RayKind::File) == list.end())
    list.push_back(stats::RayKind::File);
  return list;
}

std::optional<Camera> RayArgs::parsed_camera() const {
  return camera.empty() ? std::nullopt : std::optional(parse_camera(camera));
}

std::optional<float> RayArgs::parsed_ao_distance() const {
  return ao_distance > 0.0f ? std::optional(ao_distance) : std::nullopt;
}

emu::TraceOptions RayArgs::trace() const {
  emu::TraceOptions t;
  t.stack.size = stack_size;
  t.instance_mask = instance_mask;
  t.intersect.heuristic = static_cast<emu::SortHeuristic>(heuristic);
  if (!triangle_test.empty()) t.intersect.triangle_test = emu::parse_triangle_test(triangle_test);
  t.step_limit = step_limit;
  t.stoc = stoc == "on";
  t.no_duplicate_any_hit = no_duplicate_any_hit;
  return t;
}

void add_ray_options(CLI::App& c, RayArgs& a, unsigned groups, const std::string& default_rays) {
  if (groups & kRayTypes) {
    a.rays = default_rays;
    c.add_option("--rays", a.rays,
                 std::string("comma-separated ray types: primary, ao, shadow, reflection, random") +
                     ((groups & kRaysFile) ? ", file" : ""))
        ->capture_default_str();
  }
  if (groups & kImageRays) {
    c.add_option("--width", a.width, "primary-ray image width")
        ->check(CLI::Range(1u, render::kMaxImageSide))
        ->capture_default_str();
    c.add_option("--height", a.height, "primary-ray image height")
        ->check(CLI::Range(1u, render::kMaxImageSide))
        ->capture_default_str();
    c.add_option("--camera", a.camera, "eye,target,up,fov (ten numbers); default: framed from the scene bounds");
  }
  if (groups & kRayTypes) {
    c.add_option("--ao-samples", a.ao_samples, "ambient-occlusion rays per primary hit")
        ->check(CLI::Range(1u, 1024u))
        ->capture_default_str();
    c.add_option("--ao-distance", a.ao_distance, "AO ray length; default 0.1 x the scene diagonal")
        ->check(positive_number());
    c.add_option("--random-rays", a.random_rays, "number of random rays")
        ->check(CLI::Range(1u, 100000000u))
        ->capture_default_str();
    c.add_option("--seed", a.seed, "seed of the AO and random rays")->capture_default_str();
  }
  if (groups & kRaysFile) c.add_option("--rays-file", a.rays_file, "trace these rays too (format: docs/rays.md)");
  if (groups & kTrace) {
    a.target_options.instance_mask = add_instance_mask_option(c, a.instance_mask);
    a.target_options.stack_size =
        c.add_option("--stack-size", a.stack_size, "LDS stack ring entries per lane (rtip31, rtip20)")
            ->check(CLI::Range(2u, emu::kMaxStackSize))
            ->capture_default_str();
    a.target_options.heuristic =
        c.add_option("--heuristic", a.heuristic,
                     "box sort heuristic (rtip31, rtip20): closest (0), largest-interval (1), midpoint (2) or none (3)")
            ->transform(sort_heuristic_names())
            ->capture_default_str();
    c.add_option("--triangle-test", a.triangle_test,
                 "ray/triangle test: watertight (as DXR/Vulkan hardware must be) or gpurt (GPURT's emulation); "
                 "default: the target's own, watertight for rtip31 and xe3, gpurt for rtip20")
        ->check(CLI::IsMember({"watertight", "gpurt"}));
    c.add_option("--step-limit", a.step_limit, "stop (and report) a ray after this many steps")
        ->check(CLI::Range(1u, 1000000000u))
        ->capture_default_str();
    c.add_flag("--no-duplicate-any-hit", a.no_duplicate_any_hit,
               "run the any-hit shader at most once per primitive and ray (DXR's NO_DUPLICATE_ANYHIT_INVOCATION)");
  }
  if (groups & kStoc) {
    a.target_options.stoc =
        c.add_option("--stoc", a.stoc,
                     "skip any-hit work with STOC states (xe3 leaf masks, rtip31 sideband) on alpha-tested triangles")
            ->check(CLI::IsMember({"on", "off"}))
            ->capture_default_str();
  }
}

}  // namespace hwbvh::cli
