"""Shared fixtures of the Python API tests (run by ctest as python.api, docs/python.md).

ctest sets PYTHONPATH to the build tree's python/ directory, HWBVH_CLI to the hwbvh binary built with it and
HWBVH_SOURCE_DIR to the repository, so that the module and the CLI compared are the same build."""
import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("HWBVH_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SCENES = sorted(p for p in (SOURCE_DIR / "scenes").iterdir() if p.suffix in (".obj", ".gltf"))
TARGETS = ["rtip31", "rtip20", "xe3"]


def cli_path():
    cli = os.environ.get("HWBVH_CLI")
    if not cli:
        raise RuntimeError("HWBVH_CLI is not set: run these tests through ctest (python.api)")
    return cli


def run_cli(*args, check=True):
    """Runs the hwbvh CLI; returns the CompletedProcess (text)."""
    result = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"hwbvh {' '.join(map(str, args))} failed ({result.returncode}): {result.stderr}")
    return result


def cli_json(*args):
    return json.loads(run_cli(*args).stdout)


@pytest.fixture
def cli():
    return run_cli


def without_run_figures(value):
    """The document without what differs between runs: wall-clock figures and the thread count."""
    if isinstance(value, dict):
        return {k: without_run_figures(v) for k, v in value.items()
                if "seconds" not in k and k not in ("rays_per_second", "threads", "run")}
    if isinstance(value, list):
        return [without_run_figures(v) for v in value]
    return value
