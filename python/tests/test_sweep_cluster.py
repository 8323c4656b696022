"""hwbvh.sweep on a real Dask cluster started beside the test (a `dask scheduler` and two `dask worker` processes on
127.0.0.1): a worker killed while tasks run loses no result, and the results equal a local run's; a sweep killed
part-way resumes without running a finished task again (docs/sweeps.md)."""
import json
import os
import signal
import subprocess
import sys
import time

import pandas
import pytest

import hwbvh.sweep
from conftest import SOURCE_DIR

# 2 scenes x 3 targets x 2 qualities x 2 machine parameter values = 24 tasks, small enough for a loaded 2-core box.
SPEC = {"scenes": [str(SOURCE_DIR / "scenes" / "cornell-box.obj"), str(SOURCE_DIR / "scenes" / "alpha-cards.obj")],
        "targets": ["rtip31", "rtip20", "xe3"],
        "build": {"quality": ["low", "medium"]},
        "machines": [{"preset": "rdna4", "params": {"kernel.phases[hit_shading].vgprs": [64, 128]}}],
        "rays": {"rays": "primary,shadow", "width": 32, "height": 32},
        "scene_transfer": "ship"}
TASKS = 24
TIMEOUT = 240  # seconds for any one wait: generous, the machine is shared


def wait_for(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Processes:
    """Processes started by the test, each in its own session, all killed (with their children) at the end."""

    def __init__(self, log_dir):
        self.log_dir, self.started = log_dir, []

    def start(self, name, args):
        log = open(self.log_dir / f"{name}.log", "wb")
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.started.append((name, process))
        return process

    def kill(self, process):
        """SIGKILL to the process and what it started (its session), also when it has ended itself."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=60)

    def kill_all(self):
        for _, process in self.started:
            try:
                self.kill(process)
            except subprocess.TimeoutExpired:
                pass

    def logs(self):
        return "\n".join(f"--- {name}\n{(self.log_dir / f'{name}.log').read_text(errors='replace')[-3000:]}"
                         for name, _ in self.started)


@pytest.fixture
def processes(tmp_path):
    started = Processes(tmp_path)
    yield started
    started.kill_all()


@pytest.fixture(scope="module")
def local_result(tmp_path_factory):
    """The sweep on a local cluster started by hwbvh.sweep.run (the reference of the distributed runs)."""
    results = tmp_path_factory.mktemp("local") / "results"
    df = hwbvh.sweep.run(SPEC, results_dir=results, workers=2)
    assert len(df) == TASKS and (df["status"] == "ok").all(), df[df["status"] != "ok"]["error"].tolist()
    return df


def test_a_local_run_builds_each_blob_once_per_worker(local_result):
    builds = local_result[~local_result["blob_cached"].astype(bool)]
    per_worker = builds.groupby(["host", "pid", "scene", "target", "build.quality"]).size()
    assert (per_worker == 1).all()
    assert len(builds) < TASKS  # the machine parameter's two values share a blob


def test_a_worker_killed_mid_sweep_loses_nothing(tmp_path, processes, local_result):
    from distributed import Client
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = processes.start("scheduler", [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                                              "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file",
                                              str(scheduler_file)])
    wait_for(lambda: scheduler_file.is_file() or scheduler.poll() is not None, "the scheduler file")
    assert scheduler.poll() is None, processes.logs()
    workers = [processes.start(f"worker{i}", [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                              str(scheduler_file), "--host", "127.0.0.1", "--nthreads", "1",
                                              "--no-nanny", "--no-dashboard", "--name", f"worker{i}"])
               for i in range(2)]
    address = json.loads(scheduler_file.read_text())["address"]
    assert address.startswith("tcp://127.0.0.1:")

    client = Client(address, timeout=TIMEOUT)
    try:
        client.wait_for_workers(2, timeout=TIMEOUT)
        completed_at_kill = []

        def kill_a_worker_once(row):
            if not completed_at_kill:
                completed_at_kill.append(len(list((tmp_path / "results").glob("*.json"))))
                processes.kill(workers[0])

        df = hwbvh.sweep.run(SPEC, client, tmp_path / "results", on_result=kill_a_worker_once)
    finally:
        client.close()
    assert workers[0].poll() is not None and workers[1].poll() is None
    assert completed_at_kill and completed_at_kill[0] < TASKS  # killed while tasks were left to run
    assert len(df) == TASKS and (df["status"] == "ok").all(), (df[df["status"] != "ok"]["error"].tolist(),
                                                             processes.logs())
    assert len(list((tmp_path / "results").glob("*.json"))) == TASKS
    columns = hwbvh.sweep.result_columns(df)
    assert "primary.machine_model.cycles" in columns and "report.node_bytes" in columns
    pandas.testing.assert_frame_equal(df[columns], local_result[columns])


@pytest.mark.parametrize("interrupt", ["SIGINT", "SIGKILL"])
def test_an_interrupted_sweep_resumes_without_running_finished_tasks(tmp_path, processes, local_result, interrupt):
    spec_file = tmp_path / "study.json"
    spec_file.write_text(json.dumps(SPEC))
    results = tmp_path / "results"
    sweep = processes.start("sweep", [sys.executable, "-m", "hwbvh.sweep", str(spec_file), "--results-dir",
                                      str(results), "--workers", "2", "--quiet"])
    finished = lambda: list(results.glob("*.json"))  # noqa: E731
    wait_for(lambda: finished() or sweep.poll() is not None, "the first result")
    if interrupt == "SIGINT":  # Ctrl-C: the sweep stops its cluster and says how to resume
        sweep.send_signal(signal.SIGINT)
        assert sweep.wait(timeout=TIMEOUT) == 1
        assert "interrupted; the finished tasks' results are kept in" in processes.logs()
    processes.kill(sweep)  # SIGKILL to the sweep and its local cluster: nothing gets to clean up
    first = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in finished()}
    assert 0 < len(first) < TASKS, processes.logs()
    first_runs = {json.loads(data)["run_id"] for data, _ in first.values()}
    assert len(first_runs) == 1

    df = hwbvh.sweep.run(spec_file, results_dir=results, workers=2)
    assert len(df) == TASKS and (df["status"] == "ok").all()
    # The finished tasks' results are untouched, and the second run ran exactly the others.
    for name, (data, mtime) in first.items():
        assert (results / name).read_bytes() == data and (results / name).stat().st_mtime_ns == mtime
    reused = df["task"].map(lambda key: f"{key}.json" in first)
    assert (df.loc[reused, "run_id"] == first_runs.pop()).all()
    second_runs = set(df.loc[~reused, "run_id"])
    assert len(second_runs) == 1 and reused.sum() == len(first)
    columns = hwbvh.sweep.result_columns(df)
    pandas.testing.assert_frame_equal(df[columns], local_result[columns])

    # A third run runs nothing: every result is read back.
    again = hwbvh.sweep.run(spec_file, results_dir=results, workers=2)
    pandas.testing.assert_frame_equal(again, df)
