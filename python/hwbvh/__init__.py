"""hwbvh: ray-tracing BVHs in the bit layouts GPU hardware reads, and their emulated traversal.

The same work as the `hwbvh` command line, from Python (docs/python.md): options keep the CLI's names without the
dashes, statistics come back as the dictionaries its --json prints, per-ray results as numpy structured arrays, and
bad input raises hwbvh.BadInputError (a hwbvh.Error and a ValueError) with the message the CLI prints.
"""
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
    save_tree,
    scene_triangles,
    stats,
    trace,
)
from ._hwbvh import build as _build


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


__all__ = ["BadInputError", "Blob", "Error", "RuntimeFailure", "Scene", "__version__", "build", "export_tree", "info",
           "load", "load_scene", "load_tree", "save_tree", "scene_triangles", "stats",
           "trace"]
