#!/usr/bin/env python3
"""Thread scaling of hwbvh's build and trace on the generated city and the large-scene soak (issue 32).

For each thread count the build and the trace are timed in rounds interleaved over the thread counts (the machine's
speed drifts), and the script prints the median time, the speedup over one thread and the efficiency (speedup /
threads). What it runs (bench/README.md, "thread_scaling.py"):

* city build: `hwbvh build CITY.glb --threads T --json`; the build's time is the sum of its phases but loading the
  file and writing the blob (`run.seconds` of the JSON: bvh, collapse, obb, encode);
* city trace: `bench_emulate --two-level-only --threads T CITY.glb`, which traces the same primary and random rays
  with the emulator and with Embree over the same instances, single-threaded and with T threads;
* soak build and trace: `bench_soak --triangles N --threads T --no-oracle --no-embree-build`, its `build` and
  `trace` phases.

Every figure is wall-clock time of one phase, so it only means something on an otherwise idle machine.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BUILD_PHASES = ("bvh", "collapse", "obb", "encode")


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"thread_scaling: {' '.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def city_build_seconds(hwbvh, city, threads, output):
    report = json.loads(run([hwbvh, "build", str(city), "-o", str(output), "--threads", str(threads), "--json",
                             "--quiet"]))
    return sum(report["run"]["seconds"][phase] for phase in BUILD_PHASES)


def soak_seconds(bench_soak, triangles, rays, threads):
    out = run([bench_soak, "--triangles", str(triangles), "--rays", str(rays), "--threads", str(threads),
               "--no-oracle", "--no-embree-build"])
    phases = dict(re.findall(r"^(build|trace)\s+([0-9.]+) s", out, re.MULTILINE))
    if set(phases) != {"build", "trace"}:
        sys.exit(f"thread_scaling: bench_soak printed no build and trace phases:\n{out}")
    return float(phases["build"]), float(phases["trace"])


def print_row(name, medians, thread_counts):
    one = medians[thread_counts[0]]
    cells = []
    for t in thread_counts:
        speedup = one / medians[t]
        cells.append(f"{t} thread{'s' if t > 1 else ''} {medians[t]:8.3f} s  speedup {speedup:5.2f}x  "
                     f"efficiency {speedup / t * thread_counts[0]:5.1%}")
    print(f"{name:14s} " + "   ".join(cells), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", type=Path, default=Path("build/bin"), help="directory of hwbvh and the benchmarks")
    parser.add_argument("--city", type=Path, help="the city .glb (scripts/generate_scenes.py --city); none: skip")
    parser.add_argument("--soak-triangles", type=int, default=2_000_000, help="0: skip the soak")
    parser.add_argument("--soak-rays", type=int, default=524288)
    parser.add_argument("--trace-size", type=int, default=512, help="city primary rays: SIZE x SIZE")
    parser.add_argument("--trace-random", type=int, default=65536, help="city random rays")
    parser.add_argument("--threads", type=str, default="1,2", help="thread counts, the first the reference")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    hwbvh, bench_soak, bench_emulate = (str(args.bin / name) for name in ("hwbvh", "bench_soak", "bench_emulate"))

    print(f"# thread_scaling: threads {thread_counts}, {args.rounds} rounds interleaved, medians of wall time")
    if args.city:
        with tempfile.TemporaryDirectory() as scratch:
            times = {t: [] for t in thread_counts}
            for _ in range(args.rounds):
                for t in thread_counts:
                    times[t].append(city_build_seconds(hwbvh, args.city, t, Path(scratch) / "city.hwbvh"))
        print_row("city build", {t: statistics.median(v) for t, v in times.items()}, thread_counts)
        for t in thread_counts[1:]:
            out = run([bench_emulate, "--two-level-only", "--threads", str(t), "--runs", str(args.rounds),
                       "--size", str(args.trace_size), "--random", str(args.trace_random), str(args.city)])
            print(f"city trace, bench_emulate --threads {t}:")
            print("\n".join("  " + line for line in out.splitlines() if not line.startswith("#")), flush=True)
    if args.soak_triangles > 0:
        build = {t: [] for t in thread_counts}
        trace = {t: [] for t in thread_counts}
        for _ in range(args.rounds):
            for t in thread_counts:
                b, r = soak_seconds(bench_soak, args.soak_triangles, args.soak_rays, t)
                build[t].append(b)
                trace[t].append(r)
        print_row("soak build", {t: statistics.median(v) for t, v in build.items()}, thread_counts)
        print_row("soak trace", {t: statistics.median(v) for t, v in trace.items()}, thread_counts)


if __name__ == "__main__":
    main()
