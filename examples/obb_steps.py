#!/usr/bin/python3
"""Steps per ray with and without OBBs across the shipped scenes (docs/python.md).

Builds every scene of scenes/ for RT IP 3.1 twice, with oriented bounding boxes (the default) and without
(obb="off"), traces the same primary and random rays through both, and writes a bar chart of the mean steps per ray.

    python3 examples/obb_steps.py [-o out/obb-steps.png] [--width 128 --height 128 --random-rays 4096]
"""
import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import hwbvh  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def mean_steps(blob, args):
    """Mean steps per ray of each ray type, from the dictionary `hwbvh stats --json` prints."""
    summary = hwbvh.stats(blob, rays="primary,random", width=args.width, height=args.height,
                          random_rays=args.random_rays)
    return {kind["ray_type"]: kind["steps"]["mean"] for kind in summary["ray_types"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default="out/obb-steps.png", help="image to write (.png, .svg, .pdf)")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--height", type=int, default=128)
    parser.add_argument("--random-rays", type=int, default=4096)
    args = parser.parse_args()

    scenes = sorted(p for p in (ROOT / "scenes").iterdir() if p.suffix in (".obj", ".gltf"))
    rows = []
    for path in scenes:
        scene = hwbvh.load_scene(str(path))
        with_obb = mean_steps(hwbvh.build(scene), args)
        without_obb = mean_steps(hwbvh.build(scene, obb="off"), args)
        rows.append((path.stem, with_obb, without_obb))
        print(f"{path.stem:20} primary {with_obb['primary']:7.2f} / {without_obb['primary']:7.2f}   "
              f"random {with_obb['random']:7.2f} / {without_obb['random']:7.2f}   (with / without OBBs)")

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=False)
    x = np.arange(len(rows))
    for ax, ray_type in zip(axes, ("primary", "random")):
        ax.bar(x - 0.2, [r[1][ray_type] for r in rows], 0.4, label="with OBBs")
        ax.bar(x + 0.2, [r[2][ray_type] for r in rows], 0.4, label="axis-aligned only")
        ax.set_xticks(x, [r[0] for r in rows], rotation=30, ha="right")
        ax.set_ylabel("mean steps per ray")
        ax.set_title(f"{ray_type} rays, RT IP 3.1")
        ax.legend()
    fig.tight_layout()
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
