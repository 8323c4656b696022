#pragma once
// Debug images from emulated rays (docs/render.md): what is drawn is what the emulator counted, never an
// Embree result. A Frame holds one emulated primary ray per pixel, generated exactly as `hwbvh stats` does
// (scene/ray_gen.h primary_rays; camera auto_frame(the scene bounds, width / height) unless
// one is given; 256 x 256 by default), so a pixel's counters are the counters stats sums for that ray.
//
// Modes (docs/render.md):
//   shaded        head-light diffuse shading of the emulated hits (normal from the Geometry section triangle)
//   normals       the hit triangle's geometric normal (b - a) x (c - a), normalised, as rgb = 0.5 + 0.5 n
//   depth         hit distance t, grey from near (light) to far (dark), with a legend
//   primitive-id  a colour hashed from (geometry id, primitive id)
//   instance      a colour hashed from the hit's instance index (one colour for a one-level blob: index 0)
//   heatmaps      one per-ray counter (emu/counters.h) through viridis, with a legend:
//                 steps, box-tests, tri-tests, stack-depth (max live entries), overflows (stack entries lost to
//                 ring overflow), obb (box-node steps in an OBB frame), any-hit (any-hit shader invocations on
//                 alpha-tested triangles, emu/any_hit.h), instance-transitions (instance nodes whose BLAS the
//                 ray entered)
// A ray stopped by a node fault is drawn magenta in every mode. Scalar modes (heatmaps, depth) get a legend
// strip below the W x H render; the other modes are exactly W x H.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwbvh/core/progress.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/render/image.h"
#include "hwbvh/scene/camera.h"

namespace hwbvh::render {

enum class Mode : uint8_t {
  Shaded,
  Normals,
  Depth,
  PrimitiveId,
  Instance,
  Steps,       ///< RayCounters::steps
  BoxTests,    ///< RayCounters::box_tests
  TriTests,    ///< RayCounters::triangle_tests
  StackDepth,  ///< RayCounters::max_stack_depth
  Overflows,   ///< RayCounters::stack_lost
  Obb,         ///< RayCounters::obb_steps
  AnyHit,      ///< RayCounters::any_hit_invocations
  InstanceTransitions,  ///< RayCounters::instance_transitions
};

/// Every mode, in the order above.
[[nodiscard]] std::span<const Mode> all_modes();
/// The CLI spelling: "shaded", "normals", "depth", "primitive-id", "instance", "steps", "box-tests", "tri-tests",
/// "stack-depth", "overflows", "obb", "any-hit", "instance-transitions".
[[nodiscard]] const char* mode_name(Mode mode);
/// Parses a mode_name; throws hwbvh::Error(BadInput) listing the valid names.
[[nodiscard]] Mode parse_mode(std::string_view name);
/// True for the per-ray counter modes (steps .. instance-transitions).
[[nodiscard]] bool is_heatmap(Mode mode);
/// What the image shows, for legends: "steps per ray", "hit distance t", ...
[[nodiscard]] const char* mode_caption(Mode mode);
/// The counter a heatmap mode shows for one ray. Precondition: is_heatmap(mode).
[[nodiscard]] uint64_t counter_value(Mode mode, const emu::RayResult& ray);

/// The colour of a hit in instance mode: hashed from its instance index, so neighbouring indices differ.
[[nodiscard]] Rgb instance_color(uint32_t instance_index);

inline constexpr uint32_t kMaxImageSide = 16384;

/// Where the primary rays come from and how they are traced.
struct ViewOptions {
  uint32_t width = 256;
  uint32_t height = 256;
  std::optional<Camera> camera;  ///< default: auto_frame(bvh.bounds, width / height), as `hwbvh stats`
  /// Stack size, sort options, step limit, stoc (traced as closest-hit rays, with the blob's any-hit shader).
  emu::TraceOptions trace;
  int threads = 0;               ///< 0 = all hardware threads; images are identical at any count

  /// Throws hwbvh::Error(BadInput) for a side of 0 or above kMaxImageSide, an invalid camera or trace options.
  void validate() const;
};

/// The camera a view uses: options.camera, or auto_frame(bvh.bounds, width / height).
[[nodiscard]] Camera view_camera(const emu::LoadedBvh& bvh, const ViewOptions& options);

/// The emulated primary rays of one view, one per pixel, indexed y * width + x (row 0 at the top).
struct Frame {
  std::string label;  ///< the blob's file name (without directories), for titles
  uint32_t width = 0;
  uint32_t height = 0;
  Camera camera;
  std::vector<Vec3> directions;         ///< per pixel: the primary ray's normalised direction
  std::vector<emu::RayResult> results;  ///< per pixel: the emulator's result with its counters
  std::vector<Vec3> normals;            ///< per pixel: the hit triangle's world-space geometric normal; zero on a miss

  /// Number of rays stopped by a node fault.
  [[nodiscard]] uint64_t faulted_rays() const;
};

/// Generates the view's primary rays (8 x 4 tiles, scene/ray_gen.h) and traces them through the emulator of the
/// blob's target.
/// Throws hwbvh::Error(BadInput) for invalid options.
/// `progress` hears "tracing" (rays traced; the frame is the same with or without it).
[[nodiscard]] Frame trace_frame(const emu::LoadedBvh& bvh, const ViewOptions& options,
                                const ProgressCallback& progress = {});

/// One mode of a frame as an image: W x H, plus a legend strip below for heatmaps and depth. `max` (finite,
/// > 0) fixes the top of the scale: the heatmap value drawn in the brightest colour, or for depth the far
/// distance (the scale then starts at t = 0). Without it the scale spans the image's own values. The legend
/// says which: "max 163 (image)", "max 200 (--max)" (and "(shared)" for the common scale of a comparison).
/// `legend` false leaves the legend strip out: the image is then exactly W x H in every mode.
/// Throws hwbvh::Error(BadInput) for an invalid `max`.
[[nodiscard]] Image render(const Frame& frame, Mode mode, std::optional<double> max = {}, bool legend = true);

/// Why `a` and `b` look like different scenes, or nullopt when they look like the same one: the bounds of their
/// world-space vertices differ by more than 1e-4 of the larger diagonal (builds of one scene for other targets, with
/// other options, in two levels or flattened, share them). `hwbvh render --compare` warns then, since the difference
/// panel would compare unrelated hits.
[[nodiscard]] std::optional<std::string> scene_difference(const emu::LoadedBvh& a, const emu::LoadedBvh& b);

/// Side-by-side comparison, each panel with a title above and its legend below: "A" (mode_a of `a`),
/// "B" (mode_b of `b`), and a difference panel:
///   both modes heatmaps  -> B - A per pixel on a diverging map; A and B share one scale (or `max`);
///   otherwise, two frames -> the pixels whose hits differ (hit or miss, geometry or primitive id) in red;
///   otherwise (two non-heatmap modes of one frame) no difference panel.
/// Depth panels share one distance scale. `a` and `b` may be the same frame (two modes of one blob).
/// `legend` false leaves the legend strips out (the titles stay).
/// Throws hwbvh::Error(BadInput) if the frames differ in size or `max` is invalid.
[[nodiscard]] Image render_comparison(const Frame& a, Mode mode_a, const Frame& b, Mode mode_b,
                                      std::optional<double> max = {}, bool legend = true);

}  // namespace hwbvh::render
