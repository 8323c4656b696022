"""hwbvh: ray-tracing BVHs in the bit layouts GPU hardware reads, and their emulated traversal.

The same work as the `hwbvh` command line, from Python (docs/python.md): options keep the CLI's names without the
dashes, statistics come back as the dictionaries its --json prints, per-ray results as numpy structured arrays, and
bad input raises hwbvh.BadInputError (a hwbvh.Error and a ValueError) with the message the CLI prints.
"""
import enum

import numpy as _np

from ._hwbvh import (  # noqa: F401  (the package's API)
    BadInputError,
    Blob,
    Error,
    RuntimeFailure,
    Scene,
    __version__,
    export_tree,
    info,
    load,
    load_scene,
    load_tree,
    machine_presets,
    run_program,
    save_tree,
    scene_triangles,
    stats,
)
from ._hwbvh import _check_rays
from ._hwbvh import build as _build
from ._hwbvh import trace as _trace


def build(scene, *, flatten=False, **options):
    """Builds a blob from a Scene (hwbvh.load_scene) or a scene file's path, with the options of `hwbvh build`
    (target, quality, stoc_level, stoc_order, opacity_level, alpha_cutoff, obb, obb_ratio, threads, and tree: a
    dict of numpy arrays or an .npz path, encoded instead of hwbvh's own tree; docs/tree-format.md).
    flatten applies to a path: a Scene was loaded with or without it already."""
    if isinstance(scene, Scene):
        if flatten:
            raise BadInputError("flatten: the scene is loaded already; pass flatten to hwbvh.load_scene")
    else:
        scene = load_scene(scene, flatten=flatten)
    return _build(scene, **options)


class RayFlag(enum.IntFlag):
    """Ray flags for hwbvh.trace's ray_flags: the ten pointer flags of the BVH base pointer (RT IP 3.1 §1.4, the
    emulator's PointerFlags), which every target's emulator applies (docs/python.md "Ray flags")."""
    FORCE_OPAQUE = 1
    FORCE_NON_OPAQUE = 2
    DISABLE_TRIANGLE_CULL = 4
    FLIP_FACEDNESS = 8
    CULL_BACK_FACING = 16
    CULL_FRONT_FACING = 32
    CULL_OPAQUE = 64
    CULL_NON_OPAQUE = 128
    SKIP_TRIANGLES = 256
    SKIP_PROCEDURAL = 512


def _per_ray_integers(value, rays, name):
    """None, one whole number for every ray, or an array of one per ray (1-d, integers)."""
    if value is None:
        return None
    array = _np.asarray(value)
    if array.ndim == 0:
        if not _np.issubdtype(array.dtype, _np.integer):
            raise BadInputError(f"{name}: expected a whole number or an array of {rays} whole numbers")
        return int(array)
    if array.shape != (rays,) or not _np.issubdtype(array.dtype, _np.integer):
        raise BadInputError(f"{name}: expected a whole number or an array of {rays} whole numbers")
    return array.astype(_np.int64)


def trace(blob, origins, directions, *, tmin=0.0, tmax=float("inf"), instance_mask=None, ray_flags=None,
          any_hit=False, summary=False, **options):
    """Traces the given rays and returns one structured array of per-ray results (hwbvh stats --per-ray's columns);
    with summary, also the statistics dictionary (ray type 'file').

    origins, directions: (n, 3) arrays; tmin, tmax: a number or one per ray; instance_mask (two-level blobs, 0..255)
    and ray_flags (RayFlag bits, 0..1023; needs oracle=False): a number or one per ray. Rays are traced in waves of
    32 consecutive rays; with several masks or flags, the rays that share both are traced as one batch (in waves of
    32 of those rays): each ray's hit and counters are what it gives alone, the batch's wave figures are the
    batch's, so summary then needs one mask and one flag value for all rays. Tracing options (keywords) as for
    stats: stack_size, heuristic, triangle_test, step_limit, stoc, no_duplicate_any_hit, oracle, threads."""
    rays = len(origins) if hasattr(origins, "__len__") else 0
    masks = _per_ray_integers(instance_mask, rays, "instance_mask")
    flags = _per_ray_integers(ray_flags, rays, "ray_flags")
    if all(not isinstance(a, _np.ndarray) or len(_np.unique(a)) <= 1 for a in (masks, flags)):
        def one(value):  # the value every ray has (an empty array: none given)
            if isinstance(value, _np.ndarray):
                return int(value[0]) if len(value) else None
            return value
        return _trace(blob, origins, directions, tmin=tmin, tmax=tmax, any_hit=any_hit, summary=summary,
                      instance_mask=one(masks), ray_flags=one(flags), **options)
    if summary:
        raise BadInputError("summary: rays with different instance masks or ray flags are traced as separate "
                            "batches; trace each mask and flag value on its own for its statistics")
    origins = _np.ascontiguousarray(origins, dtype=_np.float32)
    directions = _np.ascontiguousarray(directions, dtype=_np.float32)
    tmin = _np.broadcast_to(_np.asarray(tmin, dtype=_np.float32), (rays,)) if _np.ndim(tmin) == 0 else tmin
    tmax = _np.broadcast_to(_np.asarray(tmax, dtype=_np.float32), (rays,)) if _np.ndim(tmax) == 0 else tmax
    _check_rays(origins, directions, tmin, tmax)  # the first bad ray by its index in the caller's arrays
    tmin, tmax = _np.asarray(tmin, dtype=_np.float32), _np.asarray(tmax, dtype=_np.float32)
    columns = [_np.broadcast_to(v, (rays,)) if v is not None and not isinstance(v, _np.ndarray) else v
               for v in (masks, flags)]
    keys = sum((c << (10 * i)) for i, c in enumerate(columns) if c is not None)
    result = None
    for key in _np.unique(keys):
        rows = _np.nonzero(keys == key)[0]
        batch = _trace(blob, origins[rows], directions[rows], tmin=tmin[rows], tmax=tmax[rows], any_hit=any_hit,
                       instance_mask=None if masks is None else int(columns[0][rows[0]]),
                       ray_flags=None if flags is None else int(columns[1][rows[0]]), **options)
        if result is None:
            result = _np.empty(rays, dtype=batch.dtype)
        batch["ray"] = rows
        result[rows] = batch
    return result


__all__ = ["BadInputError", "Blob", "Error", "RayFlag", "RuntimeFailure", "Scene", "__version__", "build", "export_tree",
           "info", "load", "load_scene", "load_tree", "machine_presets", "run_program", "save_tree", "scene_triangles",
           "stats", "trace"]
