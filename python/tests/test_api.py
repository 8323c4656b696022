"""The Python API gives what the CLI gives, on every shipped scene and target: the same blob bytes, the same info and
stats documents, the same per-ray hits and counters; bad input raises hwbvh errors with the CLI's messages."""
import json
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


def garden_blob(tmp_path, target):
    """The two-level garden built by the CLI for `target`: its file and the blob read from it."""
    blob_file = tmp_path / "b.hwbvh"
    run_cli("build", SOURCE_DIR / "scenes" / "instanced-garden.gltf", "-o", blob_file, "--target", target, "--quiet")
    return blob_file, hwbvh.load(blob_file)


@pytest.mark.parametrize("target", TARGETS)
def test_machine_model_matches_the_cli(tmp_path, target):
    blob_file, blob = garden_blob(tmp_path, target)
    rays = dict(rays="primary,shadow", width=32, height=32)
    cli_rays = ["--rays", "primary,shadow", "--width", "32", "--height", "32"]
    for preset in hwbvh.machine_presets():
        summary = hwbvh.stats(blob, machine=preset, **rays)
        cli = cli_json("stats", blob_file, *cli_rays, "--machine", preset, "--json", "--quiet")
        assert without_run_figures(summary) == without_run_figures(cli), preset
        assert summary["ray_types"][0]["machine_model"]["cycles"] > 0

    # A parameter replaced by key gives what `hwbvh machine sweep --param KEY --values V` gives at that value.
    key = "kernel.phases[hit_shading].vgprs"
    sweep = cli_json("machine", "sweep", blob_file, "--machine", "rdna4", "--param", key, "--values", "64,128",
                     "--rays", "primary", "--width", "32", "--height", "32", "--json", "--quiet")
    for point in sweep["points"]:
        summary = hwbvh.stats(blob, rays="primary", width=32, height=32, oracle=False, machine="rdna4",
                              machine_params={key: int(point["value"])})
        assert summary["ray_types"][0]["machine_model"]["cycles"] == point["cycles"]
    # Several keys at once, as a dict or pairs; booleans and words are written as on the command line.
    params = {key: 96, "vgpr_allocation.mode": "dynamic"}
    as_dict = hwbvh.stats(blob, rays="primary", width=8, height=8, machine="rdna4", machine_params=params)
    as_pairs = hwbvh.stats(blob, rays="primary", width=8, height=8, machine="rdna4", machine_params=list(params.items()))
    assert without_run_figures(as_dict) == without_run_figures(as_pairs)
    assert as_dict["ray_types"][0]["machine_model"]["vgpr_allocation"] != hwbvh.stats(
        blob, rays="primary", width=8, height=8, machine="rdna4")["ray_types"][0]["machine_model"]["vgpr_allocation"]


def test_wave_programs_match_the_cli(tmp_path):
    programs = sorted((SOURCE_DIR / "presets" / "programs").glob("*.json"))
    assert programs
    refused = 0
    for program in programs:
        for preset in ("rdna3", "rdna4"):
            cli = run_cli("machine", "run", program, "--machine", preset, "--json", check=False)
            if cli.returncode == 0:
                assert hwbvh.run_program(program, machine=preset) == json.loads(cli.stdout), (program.name, preset)
                continue
            refused += 1  # a program that does not fit the preset's compute unit: the same error
            with pytest.raises(hwbvh.BadInputError) as e:
                hwbvh.run_program(program, machine=preset)
            assert str(e.value) == cli_error("machine", "run", program, "--machine", preset, "--json")
    assert refused < len(programs)
    as_dict = json.loads(programs[0].read_text())
    from_dict = hwbvh.run_program(as_dict, machine="rdna4")
    from_file = hwbvh.run_program(programs[0], machine="rdna4")
    assert from_dict.pop("program") == "<program>" and from_file.pop("program") == str(programs[0])
    assert from_dict == from_file


def test_machine_errors_are_exceptions_with_the_clis_message(tmp_path):
    blob_file = tmp_path / "b.hwbvh"
    run_cli("build", SOURCE_DIR / "scenes" / "cornell-box.obj", "-o", blob_file, "--quiet")
    blob = hwbvh.load(blob_file)
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.stats(blob, machine="rdna9")
    assert str(e.value) == cli_error("stats", blob_file, "--machine", "rdna9")
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.stats(blob, machine="rdna4", machine_params={"memory.levels[L9].bytes": 1})
    assert str(e.value) == cli_error("machine", "sweep", blob_file, "--machine", "rdna4", "--param",
                                     "memory.levels[L9].bytes", "--values", "1")
    with pytest.raises(hwbvh.BadInputError, match="needs machine"):
        hwbvh.stats(blob, machine_params={"vgpr_allocation.mode": "dynamic"})
    with pytest.raises(hwbvh.BadInputError, match="expected a str, int or bool"):
        hwbvh.stats(blob, machine="rdna4", machine_params={"vgpr_allocation.mode": [1]})
    with pytest.raises(hwbvh.BadInputError) as e:
        hwbvh.run_program(tmp_path / "none.json", machine="rdna4")
    assert str(e.value) == cli_error("machine", "run", tmp_path / "none.json", "--machine", "rdna4")


def write_binary_rays(path, origins, directions):
    rows = np.zeros((len(origins), 8), np.float32)
    rows[:, 0:3], rows[:, 3:6], rows[:, 7] = origins, directions, np.inf
    path.write_bytes(b"HWRAYS1\0" + np.uint32(len(rows)).tobytes() + rows.astype("<f4").tobytes())


@pytest.mark.parametrize("target", TARGETS)
def test_per_ray_instance_masks_trace_as_the_cli_does_with_each_mask(tmp_path, target):
    blob_file, blob = garden_blob(tmp_path, target)
    _, generated = hwbvh.stats(blob, rays="primary", width=16, height=16, per_ray=True)
    origins = np.stack([generated[f"origin_{c}"] for c in "xyz"], axis=1)
    directions = np.stack([generated[f"direction_{c}"] for c in "xyz"], axis=1)
    masks = np.random.default_rng(5).choice([0x00, 0x01, 0x80, 0xFF], size=len(origins))
    traced = hwbvh.trace(blob, origins, directions, instance_mask=masks)
    assert np.array_equal(traced["ray"], np.arange(len(origins)))
    assert traced["hit"][masks != 0].any() and not traced["hit"][masks == 0].any()
    for mask in np.unique(masks):
        rows = np.nonzero(masks == mask)[0]
        rays_file = tmp_path / f"rays-{mask}.bin"
        write_binary_rays(rays_file, origins[rows], directions[rows])
        cli_rows = tmp_path / f"cli-{mask}.npy"
        run_cli("stats", blob_file, "--rays", "file", "--rays-file", rays_file, "--instance-mask", mask, "--per-ray",
                cli_rows, "--quiet")
        expected = np.load(cli_rows)
        for field in expected.dtype.names:
            if field not in ("ray_type", "ray"):
                assert np.array_equal(traced[field][rows], expected[field]), (mask, field)


@pytest.mark.parametrize("target", TARGETS)
def test_per_ray_flags_cull_as_documented(target):
    blob = hwbvh.build(SOURCE_DIR / "scenes" / "cornell-box.obj", target=target)
    n = 512
    # Half the rays from inside the box, half from outside towards it: front and back faces are both hit.
    rng = np.random.default_rng(9)
    origins = np.tile(np.float32([278, 273, 280]), (n, 1))
    origins[n // 2:] = np.float32([278, 273, 2000])
    directions = rng.normal(size=(n, 3)).astype(np.float32)
    directions[n // 2:] = np.float32([278, 273, 280]) - origins[n // 2:] + rng.normal(scale=100, size=(n // 2, 3))
    Flag = hwbvh.RayFlag
    plain = hwbvh.trace(blob, origins, directions, oracle=False)
    assert plain["hit"].sum() > n // 2
    no_back = hwbvh.trace(blob, origins, directions, ray_flags=Flag.CULL_BACK_FACING, oracle=False)
    no_front = hwbvh.trace(blob, origins, directions, ray_flags=Flag.CULL_FRONT_FACING, oracle=False)
    flipped = hwbvh.trace(blob, origins, directions, ray_flags=Flag.CULL_BACK_FACING | Flag.FLIP_FACEDNESS,
                          oracle=False)
    # Facing depends on the rays and the winding: both culls remove hits here, neither removes them all.
    assert 0 < no_back["hit"].sum() < plain["hit"].sum() and 0 < no_front["hit"].sum() < plain["hit"].sum()
    assert np.array_equal(flipped["hit"], no_front["hit"]) and np.array_equal(flipped["t"], no_front["t"])
    for culls_all in (Flag.CULL_BACK_FACING | Flag.CULL_FRONT_FACING, Flag.SKIP_TRIANGLES, Flag.CULL_OPAQUE):
        assert not hwbvh.trace(blob, origins, directions, ray_flags=culls_all, oracle=False)["hit"].any()
    # Flags per ray: each ray gives what it gives with its flag for all rays.
    flags = np.where(np.arange(n) % 3 == 0, int(Flag.CULL_BACK_FACING), 0)
    flags[1::3] = Flag.CULL_FRONT_FACING
    mixed = hwbvh.trace(blob, origins, directions, ray_flags=flags, oracle=False)
    for flag, alone in ((0, plain), (int(Flag.CULL_BACK_FACING), no_back), (int(Flag.CULL_FRONT_FACING), no_front)):
        rows = flags == flag
        for field in alone.dtype.names:
            if field != "ray":
                assert np.array_equal(mixed[field][rows], alone[field][rows]), (flag, field)

    with pytest.raises(hwbvh.BadInputError, match="the Embree oracle does not model ray flags"):
        hwbvh.trace(blob, origins, directions, ray_flags=Flag.CULL_BACK_FACING)
    with pytest.raises(hwbvh.BadInputError, match="summary"):
        hwbvh.trace(blob, origins, directions, ray_flags=flags, oracle=False, summary=True)
    with pytest.raises(hwbvh.BadInputError, match="ray_flags: expected a whole number or an array of 512"):
        hwbvh.trace(blob, origins, directions, ray_flags=flags[:5], oracle=False)
    with pytest.raises(hwbvh.BadInputError, match="ray_flags: 4096 is not in"):
        hwbvh.trace(blob, origins, directions, ray_flags=4096, oracle=False)
    with pytest.raises(hwbvh.BadInputError, match="--instance-mask applies to two-level blobs only"):
        hwbvh.trace(blob, origins, directions, instance_mask=np.arange(n) % 2)
    bad = directions.copy()
    bad[300] = 0
    with pytest.raises(hwbvh.BadInputError, match="ray 300: direction is zero"):
        hwbvh.trace(blob, origins, bad, ray_flags=flags, oracle=False)


@pytest.mark.parametrize("call", ["stats_with_machine", "trace"])
def test_long_calls_release_the_gil(tmp_path, call):
    """While a call runs in another thread, this thread keeps running: the longest pause between two of its loop
    iterations is far shorter than the call (holding the GIL, it would be about the call's whole length)."""
    import threading
    import time
    blob_file, blob = garden_blob(tmp_path, "rtip31")
    n = 30000
    rng = np.random.default_rng(2)
    calls = {
        "stats_with_machine": lambda: hwbvh.stats(blob, rays="primary,shadow", width=128, height=128, oracle=False,
                                                  machine="rdna4", machine_params={"vgpr_allocation.mode": "dynamic"}),
        "trace": lambda: hwbvh.trace(blob, np.zeros((n, 3)), rng.normal(size=(n, 3)), instance_mask=0x7F),
    }
    done = threading.Event()
    took = []

    def work():
        start = time.perf_counter()
        calls[call]()
        took.append(time.perf_counter() - start)
        done.set()

    thread = threading.Thread(target=work)
    longest_pause, last = 0.0, time.perf_counter()
    thread.start()
    while not done.is_set():
        now = time.perf_counter()
        longest_pause, last = max(longest_pause, now - last), now
    thread.join()
    assert longest_pause < took[0] / 2, (longest_pause, took)
