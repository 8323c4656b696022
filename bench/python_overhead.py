#!/usr/bin/env python3
"""Per-ray overhead of the Python API against the CLI (bench/README.md "python_overhead"): the same rays (the CLI's
own random rays of a scene, 1M by default) traced through the same blob by `hwbvh stats --rays-file` and by
hwbvh.trace on numpy arrays, both without the oracle, rounds interleaved; medians of wall time per ray.

Run with the build's module and CLI: PYTHONPATH=build/python python3 bench/python_overhead.py [--rays N]"""
import argparse
import os
import pathlib
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

import hwbvh

ROOT = pathlib.Path(__file__).resolve().parents[1]


def write_rays_file(path, origins, directions):
    """docs/rays.md "Binary": magic, count, then ox oy oz dx dy dz tmin tmax per ray."""
    rows = np.zeros((len(origins), 8), np.float32)
    rows[:, 0:3], rows[:, 3:6], rows[:, 7] = origins, directions, np.inf
    with open(path, "wb") as f:
        f.write(b"HWRAYS1\0" + struct.pack("<I", len(rows)))
        f.write(rows.astype("<f4").tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=str(ROOT / "scenes" / "rotated-objects.obj"))
    parser.add_argument("--target", default="rtip31")
    parser.add_argument("--rays", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--cli", default=str(ROOT / "build" / "bin" / "hwbvh"))
    args = parser.parse_args()
    if args.rays < 1 or args.rounds < 1:
        parser.error("--rays and --rounds: at least 1")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        blob = hwbvh.build(args.scene, target=args.target)
        blob.save(tmp / "b.hwbvh")
        blob = hwbvh.load(tmp / "b.hwbvh")
        _, generated = hwbvh.stats(blob, rays="random", random_rays=args.rays, oracle=False, per_ray=True,
                                   threads=args.threads)
        origins = np.stack([generated[f"origin_{c}"] for c in "xyz"], axis=1)
        directions = np.stack([generated[f"direction_{c}"] for c in "xyz"], axis=1)
        write_rays_file(tmp / "rays.bin", origins, directions)
        cli = [args.cli, "stats", str(tmp / "b.hwbvh"), "--rays", "file", "--rays-file", str(tmp / "rays.bin"),
               "--no-oracle", "--threads", str(args.threads), "--json", "--quiet"]

        # Four ways to the same traversal: the CLI and the module, each with a summary only and with every ray's
        # row (the CLI writes them to a .npy file, the module returns them as a structured array).
        rays_file = str(tmp / "rays.bin")
        cases = {
            "cli stats --rays-file (summary)": lambda: subprocess.run(cli, check=True, capture_output=True),
            "cli stats --rays-file --per-ray F.npy": lambda: subprocess.run(
                cli + ["--per-ray", str(tmp / "rows.npy")], check=True, capture_output=True),
            "python hwbvh.stats(rays_file=...) (summary)": lambda: hwbvh.stats(
                blob, rays="file", rays_file=rays_file, oracle=False, threads=args.threads),
            "python hwbvh.trace(arrays) -> structured array": lambda: hwbvh.trace(
                blob, origins, directions, oracle=False, threads=args.threads),
        }
        times = {name: [] for name in cases}
        hwbvh.trace(blob, origins[:1024], directions[:1024], oracle=False, threads=args.threads)  # warm-up
        for _ in range(args.rounds):  # interleaved: a change in the machine's load hits every case alike
            for name, case in cases.items():
                start = time.perf_counter()
                case()
                times[name].append(time.perf_counter() - start)
        steps = {"cli": float(np.load(tmp / "rows.npy")["steps"].mean()),
                 "python": float(cases["python hwbvh.trace(arrays) -> structured array"]()["steps"].mean())}

    print(f"{args.rays} rays, {pathlib.Path(args.scene).name}, {args.target}, threads={args.threads or os.cpu_count()}"
          f", {args.rounds} rounds (median wall time); mean steps per ray: cli {steps['cli']:.4f}, "
          f"python {steps['python']:.4f}")
    medians = {name: statistics.median(t) for name, t in times.items()}
    names = list(medians)
    for name, m in medians.items():
        print(f"  {name:48} {m:8.3f} s  {m / args.rays * 1e9:8.1f} ns/ray")
    print(f"  python/cli, summary only: {medians[names[2]] / medians[names[0]]:.3f}x; "
          f"with every ray's row: {medians[names[3]] / medians[names[1]]:.3f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
