"""What a Dask worker runs for one task of a sweep (docs/sweeps.md). A worker process keeps the scenes shipped to it
(written once to a temporary directory) and the blobs it built, so that a (scene, target, build options) blob is
built once per worker, not once per task."""
import atexit
import collections
import os
import pathlib
import shutil
import socket
import tempfile
import threading
import time

import hwbvh

BLOB_CACHE_SIZE = 8  # blobs a worker keeps: tasks come in product order, so a few cover every reuse

_lock = threading.Lock()  # a worker may run tasks in several threads
_blobs = collections.OrderedDict()  # (scene hash, flatten, target, build options) -> hwbvh.Blob, least recent first
_shipped = {}  # scene content hash -> the scene file written in this process's temporary directory
_shipped_root = None


def _shipped_scene(pack):
    """The path of a shipped scene's file, written out (with the files it reads) once per worker process."""
    global _shipped_root
    path = _shipped.get(pack["hash"])
    if path is None:
        if _shipped_root is None:
            _shipped_root = tempfile.mkdtemp(prefix="hwbvh-sweep-")
            atexit.register(shutil.rmtree, _shipped_root, True)
        directory = pathlib.Path(_shipped_root) / pack["hash"]
        for name, data in pack["files"].items():
            target = directory / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        path = _shipped[pack["hash"]] = directory / pack["name"]
    return path


def _blob(task, scene, threads):
    """The task's blob and whether this worker had built it already."""
    key = (scene["hash"], task["flatten"], task["target"], tuple(sorted(task["build"].items())))
    with _lock:
        blob = _blobs.get(key)
        if blob is not None:
            _blobs.move_to_end(key)
            return blob, True
        path = _shipped_scene(scene) if "files" in scene else scene["path"]
        blob = hwbvh.build(str(path), flatten=task["flatten"], target=task["target"], threads=threads,
                           **task["build"])
        _blobs[key] = blob
        if len(_blobs) > BLOB_CACHE_SIZE:
            _blobs.popitem(last=False)
        return blob, False


def run_task(task, scene, threads):
    """One task: build (or reuse) the blob, trace the ray set with the machine model if any. Never raises: a failure
    is a result with status "failed" and the error's message, so that it stops no other task."""
    start = time.perf_counter()
    result = {"key": task["key"], "host": socket.gethostname(), "pid": os.getpid()}
    try:
        blob, cached = _blob(task, scene, threads)
        machine = {"machine": task["machine"], "machine_params": task["machine_params"] or None} \
            if task["machine"] else {}
        stats = hwbvh.stats(blob, threads=threads, **machine, **task["rays"])
        result.update(status="ok", blob_cached=cached, build_report=blob.report, stats=stats)
    except Exception as e:  # noqa: BLE001 (every failure is the task's result)
        message = str(e) if isinstance(e, hwbvh.Error) else f"{type(e).__name__}: {e}"
        result.update(status="failed", error=message)
    result["elapsed_seconds"] = time.perf_counter() - start
    return result
