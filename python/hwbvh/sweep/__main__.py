"""python3 -m hwbvh.sweep SPEC.json [--scheduler tcp://HOST:PORT] [-o results.csv] [--results-dir DIR]
[--plot FILE --x COLUMN --y COLUMN [--hue COLUMN]] (docs/sweeps.md)."""
import argparse
import pathlib
import sys

from .. import Error
from . import plot, run


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m hwbvh.sweep",
                                     description="Run a hwbvh design-space sweep on Dask (docs/sweeps.md)")
    parser.add_argument("spec", help="sweep spec (JSON)")
    parser.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://HOST:PORT); default: a local "
                        "cluster started for the sweep")
    parser.add_argument("--workers", type=int, help="processes of the local cluster (default: the CPU count)")
    parser.add_argument("-o", "--output", help="write the results table to this CSV file")
    parser.add_argument("--results-dir", help="where each task's result is kept (default: SPEC's name + '.results' "
                        "beside it); a second run resumes from it")
    parser.add_argument("--plot", help="write a plot (.png, .svg, .pdf) of --y against --x, per --hue")
    parser.add_argument("--x", help="plot: the swept option (a column, e.g. build.quality)")
    parser.add_argument("--y", help="plot: the statistic (a column, e.g. primary.steps.mean)")
    parser.add_argument("--hue", help="plot: one line per value of this column (e.g. target)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.plot and not (args.x and args.y):
        parser.error("--plot needs --x and --y")
    if args.workers is not None and (args.workers < 1 or args.scheduler):
        parser.error("--workers: a positive number, for the local cluster only (not with --scheduler)")
    spec = pathlib.Path(args.spec)
    results_dir = args.results_dir or spec.with_name(spec.stem + ".results")
    try:
        client = None
        if args.scheduler:
            from distributed import Client
            client = Client(args.scheduler, timeout="30s")
        try:
            df = run(spec, client, results_dir, workers=args.workers, progress=False if args.quiet else None)
        finally:
            if client is not None:
                client.close()
        if args.output:
            df.to_csv(args.output, index=False)
        if args.plot:
            plot(df, args.x, args.y, args.hue, output=args.plot)
    except Error as e:
        print(f"hwbvh.sweep: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"hwbvh.sweep: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\nhwbvh.sweep: interrupted; the finished tasks' results are kept in {results_dir}: run the same command "
              "again to resume", file=sys.stderr)
        return 1
    failed = df[df["status"] != "ok"]
    print(f"{len(df)} tasks: {len(df) - len(failed)} ok, {len(failed)} failed; results in {results_dir}"
          + (f", table in {args.output}" if args.output else "") + (f", plot in {args.plot}" if args.plot else ""))
    for _, row in failed.iterrows():
        print(f"failed: {row['task']} {row['scene']} {row['target']}: {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())
