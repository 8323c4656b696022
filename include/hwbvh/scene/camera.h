#pragma once
// Pinhole camera: where primary rays come from. The CLI spells a camera as `--camera eye,target,up,fov`, i.e.
// ten comma-separated numbers "ex,ey,ez,tx,ty,tz,ux,uy,uz,fov" with fov the vertical field of view in degrees.
// Image rows run top to bottom: pixel row 0 looks towards +up.
#include <string>
#include <string_view>

#include "hwbvh/core/geometry.h"

namespace hwbvh {

struct Camera {
  Vec3 eye{0.0f, 0.0f, 1.0f};
  Vec3 target{0.0f};
  Vec3 up{0.0f, 1.0f, 0.0f};  ///< need not be orthogonal to the view direction, only not parallel to it
  float fov_deg = 45.0f;      ///< vertical field of view, degrees, in (0, 180)
};

/// The default camera, fitted to the scene's bounds (docs/rays.md "Default camera"): a deterministic three-quarter
/// view from the front-right and above (+y up, 35 degrees right of +z, looking towards -z as OBJ scenes usually
/// expect), at the lowest of the elevations 25, 30, .. 60 degrees unless a higher one fills 1.1 times as much of the
/// image (flat and long scenes); the box's corners fill the image to 5% of its border on the binding axis and their
/// projection is centred on both axes (the target moves in the view plane to do so). `aspect` is image width /
/// height and must be > 0. Throws hwbvh::Error(BadInput) for empty bounds or an eye beyond the float range.
[[nodiscard]] Camera auto_frame(const Aabb& scene_bounds, float aspect);

/// Parses "ex,ey,ez,tx,ty,tz,ux,uy,uz,fov" (spaces around numbers allowed). Throws hwbvh::Error(BadInput)
/// naming the problem for: a count other than 10, a token that is not a finite number, fov outside (0, 180),
/// eye == target, or up parallel to the view direction.
[[nodiscard]] Camera parse_camera(std::string_view text);

/// The camera in parse_camera's syntax, with shortest round-trip numbers (parse_camera gives it back exactly).
[[nodiscard]] std::string format_camera(const Camera& camera);

/// Throws hwbvh::Error(BadInput) if the camera cannot form an image (see parse_camera for the rules).
void validate_camera(const Camera& camera);

}  // namespace hwbvh
