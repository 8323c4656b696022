"""hwbvh.sweep (docs/sweeps.md): the spec's product, results and resumption on a local Dask cluster, failures kept
apart, plots, the command line; tests/test_sweep_cluster.py runs it on a separately started Dask cluster."""
import json
import subprocess
import sys

import pandas
import pytest

import hwbvh
import hwbvh.sweep
from hwbvh.sweep import spec as sweep_spec
from conftest import SOURCE_DIR

SCENES = SOURCE_DIR / "scenes"
SMALL_RAYS = {"rays": "primary,shadow", "width": 16, "height": 16}


def test_spec_expands_to_the_product_in_order():
    spec = {"scenes": ["cornell-box.obj", "alpha-cards.obj"], "targets": ["rtip31", "xe3"],
            "build": [{"quality": ["low", "medium"]}, {"obb": "off", "targets": ["rtip31"]}],
            "machines": ["rdna3", {"preset": "rdna4", "params": {"kernel.phases[hit_shading].vgprs": [64, 96]}}],
            "rays": {"rays": "primary", "width": [8, 16]}}
    tasks, scenes, transfer = sweep_spec.expand(spec, SCENES)
    # 2 scenes x (2 targets x 2 qualities + rtip31 x obb off) x 3 machines x 2 widths
    assert len(tasks) == 2 * (2 * 2 + 1) * 3 * 2
    assert transfer == "path" and set(scenes) == {"cornell-box.obj", "alpha-cards.obj"}
    first = tasks[0]
    assert (first["scene"], first["target"], first["build"], first["machine"], first["rays"]) == (
        "cornell-box.obj", "rtip31", {"quality": "low"}, "rdna3", {"rays": "primary", "width": 8})
    assert tasks[2]["machine_params"] == {"kernel.phases[hit_shading].vgprs": 64}
    assert not any(t["target"] == "xe3" and "obb" in t["build"] for t in tasks)
    assert len({t["key"] for t in tasks}) == len(tasks)
    # The alpha-tested scene's content hash covers its MTL file and texture.
    assert scenes["alpha-cards.obj"].files == ["alpha-cards.obj", "alpha-cards.mtl", "alpha-cards-mask.png"]
    # Keys are stable, and change with any input.
    again, _, _ = sweep_spec.expand(spec, SCENES)
    assert [t["key"] for t in again] == [t["key"] for t in tasks]
    other, _, _ = sweep_spec.expand(dict(spec, rays={"rays": "primary", "width": [8, 16], "seed": 2}), SCENES)
    assert not {t["key"] for t in other} & {t["key"] for t in tasks}


def test_files_a_task_reads_are_keyed_by_content_and_given_to_workers_as_absolute_paths(tmp_path):
    (tmp_path / "rays.txt").write_text("278 273 280 0 -1 0 0 inf\n")
    (tmp_path / "my-preset.json").write_text('{"base": "rdna4"}')
    spec = {"scenes": [str(SCENES / "cornell-box.obj")], "machines": ["my-preset.json"],
            "rays": {"rays": "file", "rays_file": "rays.txt"}}
    (task,), _, _ = sweep_spec.expand(spec, tmp_path)
    assert task["rays"]["rays_file"] == str(tmp_path / "rays.txt") and task["machine"] == str(tmp_path / "my-preset.json")
    (tmp_path / "rays.txt").write_text("278 273 280 0 -1 0 0 1000\n")
    (changed,), _, _ = sweep_spec.expand(spec, tmp_path)
    assert changed["key"] != task["key"]
    df = hwbvh.sweep.run(spec, results_dir=tmp_path / "results", base_dir=tmp_path, workers=1)
    assert (df["status"] == "ok").all(), df["error"].tolist()
    assert df["file.rays"].iloc[0] == 1 and df["file.hits"].iloc[0] == 1


def test_a_scene_files_content_is_part_of_the_key(tmp_path):
    scene = tmp_path / "box.obj"
    scene.write_bytes((SCENES / "cornell-box.obj").read_bytes())
    spec = {"scenes": ["box.obj"]}
    (before,), _, _ = sweep_spec.expand(spec, tmp_path)
    scene.write_bytes(scene.read_bytes() + b"\n# edited\n")
    (after,), _, _ = sweep_spec.expand(spec, tmp_path)
    assert before["key"] != after["key"]


@pytest.mark.parametrize("spec, message", [
    ({}, "'scenes' is missing"),
    ({"scenes": ["cornell-box.obj"], "target": "xe3"}, "unknown key 'target'"),
    ({"scenes": ["no-such.obj"]}, "scene 'no-such.obj': no such file"),
    ({"scenes": ["cornell-box.obj"], "build": {"qualty": "low"}}, "'build': unknown option 'qualty'"),
    ({"scenes": ["cornell-box.obj"], "rays": {"widht": 8}}, "'rays': unknown option 'widht'"),
    ({"scenes": ["cornell-box.obj"], "targets": []}, "'targets' is an empty list"),
    ({"scenes": ["cornell-box.obj"], "machines": [{"preset": "rdna4", "param": {}}]}, "unknown key 'param'"),
    ({"scenes": ["cornell-box.obj"], "scene_transfer": "mail"}, "'scene_transfer': 'mail'"),
    ({"scenes": ["cornell-box.obj"], "threads": -1}, "'threads'"),
])
def test_bad_specs_are_refused_before_any_work(tmp_path, spec, message):
    with pytest.raises(hwbvh.BadInputError, match=message.replace("[", r"\[")):
        hwbvh.sweep.run(spec, results_dir=tmp_path / "results", base_dir=SCENES)
    assert not list((tmp_path / "results").glob("*.json")) if (tmp_path / "results").exists() else True


def test_local_sweep_keeps_failures_apart_and_resumes(tmp_path):
    # obb=off on xe3 fails with the CLI's message; the other tasks are unaffected.
    spec = {"scenes": ["cornell-box.obj"], "targets": ["rtip31", "xe3"], "build": [{}, {"obb": "off"}],
            "machines": [{"preset": "rdna4", "params": {"kernel.phases[hit_shading].vgprs": [64, 96]}}],
            "rays": SMALL_RAYS}
    results = tmp_path / "results"
    seen = []
    df = hwbvh.sweep.run(spec, results_dir=results, base_dir=SCENES, workers=1, on_result=seen.append)
    assert len(df) == 8 and len(seen) == 8
    failed = df[df["status"] == "failed"]
    assert list(failed["target"]) == ["xe3", "xe3"] and (failed["build.obb"] == "off").all()
    assert (failed["error"] == "--obb applies to target rtip31 only (this build targets xe3)").all()
    assert len(list((results / "failed").glob("*.json"))) == 2 and len(list(results.glob("*.json"))) == 6
    ok = df[df["status"] == "ok"]
    assert ok["primary.rays"].eq(256).all() and ok["primary.machine_model.cycles"].gt(0).all()
    # The machine parameter changes the model's result, not the traversal's.
    by_vgprs = ok.set_index(["target", "build.obb", "machine.kernel.phases[hit_shading].vgprs"])
    assert (by_vgprs["primary.steps.mean"].xs(64, level=2) == by_vgprs["primary.steps.mean"].xs(96, level=2)).all()
    # The statistics are those of hwbvh.stats on the same blob.
    row = ok.iloc[0]
    blob = hwbvh.build(SCENES / "cornell-box.obj", target=row["target"])
    direct = hwbvh.stats(blob, machine="rdna4", machine_params={"kernel.phases[hit_shading].vgprs": 64}, **SMALL_RAYS)
    assert row["primary.steps.mean"] == direct["ray_types"][0]["steps"]["mean"]
    assert row["primary.machine_model.cycles"] == direct["ray_types"][0]["machine_model"]["cycles"]

    # Again: the six finished tasks are read back, only the two failed ones run (and fail) again.
    again = hwbvh.sweep.run(spec, results_dir=results, base_dir=SCENES, workers=1)
    cols = hwbvh.sweep.result_columns(df)
    pandas.testing.assert_frame_equal(again[cols], df[cols])
    assert (again.loc[again["status"] == "ok", "run_id"] == df.loc[df["status"] == "ok", "run_id"]).all()
    assert (again.loc[again["status"] == "failed", "run_id"] != df["run_id"].iloc[0]).all()


def test_plot_and_command_line(tmp_path):
    spec = {"scenes": ["scenes/cornell-box.obj", "scenes/rotated-objects.obj"], "targets": ["rtip31", "rtip20"],
            "build": {"quality": ["low", "high"]}, "rays": SMALL_RAYS, "scene_transfer": "ship"}
    spec_file = tmp_path / "study.json"
    spec_file.write_text(json.dumps(spec).replace("scenes/", str(SCENES) + "/"))
    csv = tmp_path / "out.csv"
    png = tmp_path / "plot.png"
    result = subprocess.run([sys.executable, "-m", "hwbvh.sweep", spec_file, "-o", csv, "--workers", "2", "--plot",
                             png, "--x", "build.quality", "--y", "primary.steps.mean", "--hue", "target"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"8 tasks: 8 ok, 0 failed; results in {tmp_path / 'study.results'}")
    df = pandas.read_csv(csv)
    assert len(df) == 8 and set(df["build.quality"]) == {"low", "high"} and (df["status"] == "ok").all()
    assert {"scene", "target", "elapsed_seconds", "host", "primary.steps.mean", "report.node_bytes"} <= set(df.columns)
    assert png.read_bytes().startswith(b"\x89PNG")
    ax = hwbvh.sweep.plot(df, x="build.quality", y="primary.steps.mean", hue="target")
    assert [line.get_label() for line in ax.get_lines()] == ["target = rtip31", "target = rtip20"]
    with pytest.raises(hwbvh.BadInputError, match="no column 'primary.stepz'"):
        hwbvh.sweep.plot(df, x="build.quality", y="primary.stepz")

    bad = tmp_path / "bad.json"
    bad.write_text('{"scenes": ["nowhere.obj"]}')
    result = subprocess.run([sys.executable, "-m", "hwbvh.sweep", bad], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith("hwbvh.sweep: error: sweep spec: scene 'nowhere.obj': no such file")


def test_progress_bar_counts_and_estimates():
    import io
    stream = io.StringIO()
    bar = hwbvh.sweep._Progress(total=10, reused=4, enabled=True, stream=stream)
    assert "4/10 tasks (4 reused, 0 failed)" in stream.getvalue() and "ETA ?" in stream.getvalue()
    bar.step(failed=False)
    bar.step(failed=True)
    bar.close()
    last = stream.getvalue().split("\r")[-1]
    assert "[##################............] 6/10 tasks (4 reused, 1 failed)" in last and "ETA 0:00:0" in last
    quiet = io.StringIO()
    hwbvh.sweep._Progress(total=3, reused=0, enabled=False, stream=quiet).step(failed=False)
    assert quiet.getvalue() == ""
