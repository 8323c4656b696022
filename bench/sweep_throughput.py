#!/usr/bin/env python3
"""A sweep's throughput on a local Dask cluster against running the same tasks one after another in one process
(bench/README.md "sweep_throughput"): tasks per second of hwbvh.sweep.run (cluster start-up included, and without
it) and of the plain loop over the same tasks (hwbvh.sweep.tasks.run_task, each blob built once, as a worker
caches it).

Run with the build's module: PYTHONPATH=build/python python3 bench/sweep_throughput.py [--workers N]"""
import argparse
import os
import pathlib
import tempfile
import time

import hwbvh.sweep
from hwbvh.sweep import spec as sweep_spec
from hwbvh.sweep.tasks import run_task

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--size", type=int, default=64, help="primary rays: SIZE x SIZE per task")
    args = parser.parse_args()
    spec = {"scenes": [str(ROOT / "scenes" / s) for s in ("cornell-box.obj", "alpha-cards.obj", "rotated-objects.obj",
                                                           "instanced-garden.gltf")],
            "targets": ["rtip31", "rtip20", "xe3"],
            "build": {"quality": ["low", "medium"]},
            "machines": [{"preset": "rdna4", "params": {"kernel.phases[hit_shading].vgprs": [64, 128]}}],
            "rays": {"rays": "primary,shadow", "width": args.size, "height": args.size, "oracle": False}}
    tasks, scenes, _ = sweep_spec.expand(spec)

    start = time.perf_counter()
    for task in tasks:
        result = run_task(task, {"path": str(scenes[task["scene"]].path), "hash": scenes[task["scene"]].content_hash},
                          1)
        assert result["status"] == "ok", result["error"]
    sequential = time.perf_counter() - start

    from distributed import Client, LocalCluster
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        df = hwbvh.sweep.run(spec, results_dir=pathlib.Path(tmp) / "a", workers=args.workers, progress=False)
        with_startup = time.perf_counter() - start
        assert (df["status"] == "ok").all()
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            start = time.perf_counter()
            hwbvh.sweep.run(spec, client, results_dir=pathlib.Path(tmp) / "b", progress=False)
            running = time.perf_counter() - start

    n = len(tasks)
    print(f"{n} tasks ({args.size}x{args.size} primary + shadow rays, machine model rdna4), {os.cpu_count()} CPUs")
    for name, seconds in (("one after another, one process", sequential),
                          (f"local cluster, {args.workers} workers, start-up included", with_startup),
                          (f"local cluster, {args.workers} workers, running already", running)):
        print(f"  {name:55} {seconds:7.2f} s  {n / seconds:6.2f} tasks/s  {sequential / seconds:5.2f} x sequential")


if __name__ == "__main__":
    main()
