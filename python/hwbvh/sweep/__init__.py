"""hwbvh.sweep: design-space sweeps on Dask (docs/sweeps.md).

run(spec) runs every combination of scenes x targets x build options x machine presets and their parameters x ray
sets as one Dask task, on a local cluster it starts or on any cluster a distributed.Client reaches, and returns one
tidy pandas DataFrame (one row per task). Every task's result is written to the results directory as it completes,
under a hash of its inputs, so an interrupted or partly failed sweep resumes without running a finished task again.
"""
import datetime
import json
import os
import pathlib
import sys
import time
import uuid

from .. import BadInputError
from . import spec as _spec
from .tasks import run_task

DEFAULT_RESULTS_DIR = "hwbvh-sweep-results"
# Columns that describe a run rather than its result: they differ between two runs of the same task.
RUN_COLUMNS = ("elapsed_seconds", "host", "pid", "run_id", "blob_cached", "completed_at")


def _write_atomically(path, document):
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(document))  # in the order received: read back, a row has the same column order
    os.replace(tmp, path)


class _Progress:
    """A one-line progress bar on a terminal: counts, elapsed time and an ETA from the tasks run so far."""

    def __init__(self, total, reused, enabled, stream=sys.stderr):
        self.total, self.reused, self.done, self.failed = total, reused, reused, 0
        self.enabled, self.stream, self.start = enabled, stream, time.monotonic()
        self.show()

    def step(self, failed):
        self.done += 1
        self.failed += failed
        self.show()

    def show(self):
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        ran = self.done - self.reused
        eta = "?" if ran == 0 else str(datetime.timedelta(seconds=round(elapsed / ran * (self.total - self.done))))
        width = 30
        filled = width * self.done // max(self.total, 1)
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} tasks "
                          f"({self.reused} reused, {self.failed} failed) "
                          f"{datetime.timedelta(seconds=round(elapsed))} elapsed, ETA {eta} ")
        self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\n")


def _flatten(value, prefix, row):
    """Scalars of a nested document as columns "a.b.c"; lists (histograms) stay in the result files."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, row)
    elif not isinstance(value, list):
        row[prefix] = value


def _row(task, result):
    """One tidy row: every option of the task, every statistic, the run's figures."""
    row = {"task": task["key"], "scene": task["scene"], "flatten": task["flatten"], "target": task["target"]}
    row.update({f"build.{k}": v for k, v in task["build"].items()})
    row["machine"] = task["machine"]
    row.update({f"machine.{k}": v for k, v in task["machine_params"].items()})
    row.update({f"rays.{k}": v for k, v in task["rays"].items()})
    row["status"] = result["status"]
    row["error"] = result.get("error")
    for column in RUN_COLUMNS:
        row[column] = result.get(column)
    if result["status"] == "ok":
        _flatten(result["build_report"], "report", row)
        stats = result["stats"]
        for kind in stats.get("ray_types", []):
            _flatten({k: v for k, v in kind.items() if k != "ray_type"}, kind["ray_type"], row)
        # "file" is where the worker read the scene (a temporary file when shipped): the scene column says which.
        _flatten({k: v for k, v in stats.items() if k not in ("ray_types", "file")}, "stats", row)
    return row


def _scene_refs(client, scenes, transfer):
    """What each task is given to find its scene: the path (read by the worker), or the scene's files scattered to
    every worker once (a worker fetches a scattered value from a peer once, not once per task)."""
    if transfer == "path":
        return {w: {"path": str(s.path), "hash": s.content_hash} for w, s in scenes.items()}
    return {w: client.scatter(s.pack(), broadcast=True, hash=False) for w, s in scenes.items()}


def _start_local_cluster(workers):
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return cluster, Client(cluster)


def run(spec, client=None, results_dir=DEFAULT_RESULTS_DIR, *, base_dir=None, workers=None, progress=None,
        on_result=None):
    """Runs the sweep `spec` (a dict, or the path of a JSON file, docs/sweeps.md) and returns its pandas DataFrame,
    one row per task in product order.

    client: a distributed.Client of any cluster; None starts a LocalCluster of `workers` processes (default: the
    CPU count, at most the tasks to run) for the call. results_dir: where every task's result is written as it
    completes (results_dir/KEY.json; failures under results_dir/failed/, retried on the next run); tasks whose
    result is there already are not run again. base_dir: where relative paths of a spec dict start (a spec file's
    directory for a path; else the current directory). progress: show a progress bar (default: when stderr is a
    terminal). on_result(row): called in the client as each task completes.
    Raises hwbvh.BadInputError for a bad spec, before any task runs."""
    if isinstance(spec, (str, os.PathLike)):
        spec, spec_dir = _spec.load(spec)
        base_dir = spec_dir if base_dir is None else base_dir
    tasks, scenes, transfer = _spec.expand(spec, base_dir or ".")
    threads = _spec.threads(spec)
    results_dir = pathlib.Path(results_dir)
    failed_dir = results_dir / "failed"
    failed_dir.mkdir(parents=True, exist_ok=True)

    results = {}
    for task in tasks:
        done = results_dir / f"{task['key']}.json"
        if done.is_file():
            results[task["key"]] = json.loads(done.read_text())
    pending = [t for t in tasks if t["key"] not in results]
    bar = _Progress(len(tasks), len(results), sys.stderr.isatty() if progress is None else progress)

    if pending:
        run_id = uuid.uuid4().hex[:12]
        own = None
        if client is None:
            own = _start_local_cluster(workers or min(os.cpu_count() or 1, len(pending)))
            client = own[1]
        try:
            from distributed import as_completed
            refs = _scene_refs(client, scenes, transfer)
            futures = {client.submit(run_task, t, refs[t["scene"]], threads, key=f"hwbvh-sweep-{t['key']}-{run_id}",
                                     pure=False): t for t in pending}
            for future in as_completed(futures):
                task = futures[future]
                try:
                    result = future.result()
                except Exception as e:  # noqa: BLE001 (lost to the cluster: e.g. its workers died too often)
                    result = {"key": task["key"], "status": "failed", "error": f"{type(e).__name__}: {e}"}
                result.update(task=task, run_id=run_id,
                              completed_at=datetime.datetime.now(datetime.timezone.utc).isoformat())
                failed = result["status"] != "ok"
                _write_atomically((failed_dir if failed else results_dir) / f"{task['key']}.json", result)
                if not failed:
                    (failed_dir / f"{task['key']}.json").unlink(missing_ok=True)
                results[task["key"]] = result
                future.release()
                bar.step(failed)
                if on_result is not None:
                    on_result(_row(task, result))
        finally:
            bar.close()
            if own is not None:
                own[1].close()
                own[0].close()
    else:
        bar.close()

    import pandas
    return pandas.DataFrame([_row(t, results[t["key"]]) for t in tasks])


def result_columns(df):
    """The columns of `df` that a task's inputs determine: without the run's figures (RUN_COLUMNS) and wall-clock
    statistics (seconds, rays per second, thread counts), which differ between runs."""
    return [c for c in df.columns
            if c not in RUN_COLUMNS and "seconds" not in c and not c.endswith(("rays_per_second", ".threads"))]


def plot(df, x, y, hue=None, *, ax=None, output=None, aggregate="mean"):
    """Plots statistic `y` against swept option `x` (columns of `df`), one line per value of `hue`, `aggregate`
    over the rows that share them (tasks that failed are left out). A numeric x is a numeric axis, any other one
    an axis of its values in order of appearance. Writes `output` (.png, .svg, .pdf) when given; returns the
    matplotlib Axes."""
    for column in (x, y, hue):
        if column is not None and column not in df.columns:
            raise BadInputError(f"plot: no column '{column}' (columns: {', '.join(map(str, df.columns))})")
    import matplotlib
    if ax is None and output is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas
    ok = df[df["status"] == "ok"]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    numeric = pandas.api.types.is_numeric_dtype(ok[x]) and not pandas.api.types.is_bool_dtype(ok[x])
    order = list(dict.fromkeys(ok[x].astype(str)))
    groups = ok.groupby(hue, sort=False, dropna=False) if hue else [(None, ok)]
    for name, group in groups:
        series = group.groupby(x, sort=numeric, dropna=False)[y].agg(aggregate)
        xs = series.index if numeric else [order.index(str(v)) for v in series.index]
        ax.plot(xs, series.values, marker="o", label=None if hue is None else f"{hue} = {name}")
    if not numeric:
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels(order, rotation=30 if max(map(len, order), default=0) > 8 else 0, ha="right")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} ({aggregate})" if len(ok) > ok.groupby([c for c in (x, hue) if c]).ngroups else y)
    if hue is not None:
        ax.legend()
    ax.grid(True, alpha=0.3)
    if output is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(output)
    return ax


__all__ = ["DEFAULT_RESULTS_DIR", "RUN_COLUMNS", "plot", "result_columns", "run"]
