"""The Python API gives what the CLI gives, on every shipped scene and target: the same blob bytes, the same info and
stats documents, the same per-ray hits and counters; bad input raises hwbvh errors with the CLI's messages."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import hwbvh
from conftest import SCENES, SOURCE_DIR, TARGETS, cli_json, run_cli, without_run_figures

# Small ray sets keep the suite quick; every ray type is traced.
RAY_OPTIONS = dict(rays="primary,ao,shadow,random", width=32, height=24, random_rays=500, ao_samples=2, seed=7)
CLI_RAY_OPTIONS = ["--rays", "primary,ao,shadow,random", "--width", "32", "--height", "24", "--random-rays", "500",
                   "--ao-samples", "2", "--seed", "7"]


def test_version_is_the_projects():
    assert hwbvh.__version__ == run_cli("--version").stdout.split()[-1]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("scene", SCENES, ids=lambda p: p.name)
def test_build_info_stats_and_per_ray_match_the_cli(tmp_path, scene, target):
    cli_blob = tmp_path / "cli.hwbvh"
    cli_report = cli_json("build", scene, "-o", cli_blob, "--target", target, "--json", "--quiet")
    blob = hwbvh.build(scene, target=target)
    assert blob.target == target
    assert blob.to_bytes() == cli_blob.read_bytes()
    cli_report.pop("output")
    assert without_run_figures(blob.report) == without_run_figures(cli_report)

    py_blob = tmp_path / "py.hwbvh"
    blob.save(py_blob)
    assert py_blob.read_bytes() == cli_blob.read_bytes()
    info = hwbvh.info(py_blob)
    assert info == cli_json("info", py_blob, "--json")

    cli_rays = tmp_path / "cli.npy"
    cli_stats = cli_json("stats", cli_blob, *CLI_RAY_OPTIONS, "--per-ray", cli_rays, "--json", "--quiet")
    assert cli_stats.pop("wrote") == [{"file": str(cli_rays), "contents": f"{len(np.load(cli_rays))} rays, one row each"}]
    loaded = hwbvh.load(cli_blob)
    summary, per_ray = hwbvh.stats(loaded, per_ray=True, **RAY_OPTIONS)
    assert without_run_figures(summary) == without_run_figures(cli_stats)
    expected = np.load(cli_rays)
    assert per_ray.dtype == expected.dtype
    assert np.array_equal(per_ray, expected)

    # The same rays given as arrays trace to the same hits and counters, closest-hit and any-hit alike.
    for ray_type, any_hit in (b"primary", False), (b"random", False), (b"shadow", True):
        rows = expected[expected["ray_type"] == ray_type]
        if len(rows) == 0:
            continue
        origins = np.stack([rows["origin_x"], rows["origin_y"], rows["origin_z"]], axis=1)
        directions = np.stack([rows["direction_x"], rows["direction_y"], rows["direction_z"]], axis=1)
        traced = hwbvh.trace(loaded, origins, directions, tmin=rows["tmin"], tmax=rows["tmax"], any_hit=any_hit)
        assert len(traced) == len(rows)
        for field in expected.dtype.names:
            if field not in ("ray_type", "ray"):
                assert np.array_equal(traced[field], rows[field]), (ray_type, field)


def test_trace_summary_counts_hits_and_agrees_with_the_oracle():
    blob = hwbvh.build(SOURCE_DIR / "scenes" / "cornell-box.obj")
    n = 256
    rng = np.random.default_rng(3)
    origins = np.tile(np.float32([278, 273, 280]), (n, 1))  # inside the box, on no surface
    directions = rng.normal(size=(n, 3)).astype(np.float32)
    per_ray, summary = hwbvh.trace(blob, origins, directions, summary=True)
    (kind,) = summary["ray_types"]
    assert kind["ray_type"] == "file" and kind["rays"] == n
    assert kind["oracle"]["agreeing"] == n
    assert kind["hits"] == int(per_ray["hit"].sum())
    assert per_ray["steps"].sum() > 0


def test_rra_round_trip(tmp_path):
    blob = hwbvh.build(SOURCE_DIR / "scenes" / "rotated-objects.obj")
    blob.save(tmp_path / "b.hwbvh")
    blob.export_rra(tmp_path / "py.rra")
    run_cli("export", tmp_path / "b.hwbvh", "-o", tmp_path / "cli.rra")
    assert hwbvh.info(tmp_path / "py.rra")["sections"] == cli_json("info", tmp_path / "cli.rra", "--json")["sections"]
    from_rra = hwbvh.load(tmp_path / "py.rra")
    assert from_rra.to_bytes() == blob.to_bytes()


def test_flattened_gltf_matches_the_cli(tmp_path):
    scene = SOURCE_DIR / "scenes" / "instanced-garden.gltf"
    run_cli("build", scene, "--flatten", "-o", tmp_path / "flat.hwbvh", "--quiet")
    assert hwbvh.build(scene, flatten=True).to_bytes() == (tmp_path / "flat.hwbvh").read_bytes()
    assert hwbvh.load_scene(scene).two_level
    assert not hwbvh.load_scene(scene, flatten=True).two_level


def cli_error(*args):
    result = run_cli(*args, check=False)
    assert result.returncode == 2, result.stderr
    prefix = "hwbvh: error: "
    assert result.stderr.startswith(prefix)
    return result.stderr[len(prefix):].strip()


def test_errors_are_exceptions_with_the_clis_message(tmp_path):
    missing = tmp_path / "missing.obj"
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.load_scene(str(missing))
    assert str(e.value) == cli_error("build", missing, "-o", tmp_path / "x.hwbvh")
    assert isinstance(e.value, hwbvh.Error) and isinstance(e.value, ValueError)

    scene = SOURCE_DIR / "scenes" / "cornell-box.obj"
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.build(scene, target="rtip20", obb="off")
    assert str(e.value) == cli_error("build", scene, "-o", tmp_path / "x.hwbvh", "--target", "rtip20", "--obb", "off")
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.build(scene, target="xe3", stoc_level=2)
    assert str(e.value) == cli_error("build", scene, "-o", tmp_path / "x.hwbvh", "--target", "xe3", "--stoc-level", "2")

    not_a_blob = tmp_path / "bad.hwbvh"
    not_a_blob.write_bytes(b"not a blob at all")
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.load(str(not_a_blob))
    assert str(e.value) == cli_error("stats", not_a_blob)
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.info(not_a_blob)
    assert str(e.value) == cli_error("info", not_a_blob)

    blob = hwbvh.build(scene, target="xe3")
    blob.save(tmp_path / "xe3.hwbvh")
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.stats(hwbvh.load(str(tmp_path / "xe3.hwbvh")), stack_size=8)
    assert str(e.value) == cli_error("stats", tmp_path / "xe3.hwbvh", "--stack-size", "8")
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.stats(blob, rays="primary,sideways")
    assert str(e.value) == cli_error("stats", tmp_path / "xe3.hwbvh", "--rays", "primary,sideways")


def test_bad_rays_and_ranges_are_refused():
    blob = hwbvh.build(SOURCE_DIR / "scenes" / "cornell-box.obj")
    origins = np.zeros((4, 3), np.float32)
    directions = np.ones((4, 3), np.float32)
    directions[2] = 0
    with pytest.raises(hwbvh.BadInputError, match="ray 2: direction is zero"):
        hwbvh.trace(blob, origins, directions)
    with pytest.raises(hwbvh.BadInputError, match="shape"):
        hwbvh.trace(blob, origins[:, :2], directions)
    with pytest.raises(hwbvh.BadInputError, match="tmin"):
        hwbvh.trace(blob, origins, np.ones((4, 3)), tmin=np.zeros(3))
    with pytest.raises(hwbvh.BadInputError, match="tmin > tmax"):
        hwbvh.trace(blob, origins, np.ones((4, 3)), tmin=2.0, tmax=1.0)
    with pytest.raises(hwbvh.BadInputError, match="--width"):
        hwbvh.stats(blob, width=0)
    with pytest.raises(hwbvh.BadInputError, match="--target"):
        hwbvh.build(SOURCE_DIR / "scenes" / "cornell-box.obj", target="rtip99")
    with pytest.raises(TypeError, match="stack_sise"):
        hwbvh.trace(blob, origins, np.ones((4, 3)), stack_sise=8)
    assert math.isinf(hwbvh.trace(blob, origins[:1], np.ones((1, 3)))["tmax"][0])


def test_cmake_install_gives_an_importable_module(tmp_path):
    binary_dir = os.environ["HWBVH_BINARY_DIR"]
    subprocess.run(["cmake", "--install", binary_dir, "--prefix", tmp_path, "--component", "python"], check=True,
                   capture_output=True)
    (site,) = list(tmp_path.glob("lib/python3*/dist-packages"))
    env = dict(os.environ, PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", "import hwbvh; print(hwbvh.__file__, hwbvh.__version__)"], env=env,
                         check=True, capture_output=True, text=True, cwd=tmp_path).stdout.split()
    assert out[0].startswith(str(site)) and out[1] == hwbvh.__version__


def test_obb_example_writes_its_plot(tmp_path):
    out = tmp_path / "obb-steps.png"
    result = subprocess.run([sys.executable, SOURCE_DIR / "examples" / "obb_steps.py", "-o", out, "--width", "16",
                             "--height", "16", "--random-rays", "256"], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert len(lines) == len(SCENES) + 1 and lines[-1] == f"wrote {out}"
    assert out.read_bytes().startswith(b"\x89PNG")
