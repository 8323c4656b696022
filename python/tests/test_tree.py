"""Bring your own tree (docs/tree-format.md, docs/python.md): hwbvh's own tree exported and encoded again gives the
same blob; a tree from another builder (a median split written here in numpy) traces to Embree's hits with more
steps per ray than hwbvh's SAH build; hostile trees and tree files are refused with the offending node or file named."""
import zipfile

import numpy as np
import pytest

import hwbvh
from conftest import SCENES, TARGETS, run_cli


def one_level(path):
    return hwbvh.load_scene(path, flatten=True)


@pytest.mark.parametrize("scene_path", SCENES, ids=lambda p: p.name)
def test_the_exported_tree_gives_the_same_blob_on_every_target(scene_path):
    scene = one_level(scene_path)
    tree = hwbvh.export_tree(scene)
    assert tree["children"].dtype == np.int32 and tree["children"].shape[1] == 2
    assert sorted(tree) == ["children", "prim_begin", "prim_count", "primitives"]
    for target in TARGETS:
        own = hwbvh.build(scene, target=target)
        given = hwbvh.build(scene, target=target, tree=tree)
        assert given.to_bytes() == own.to_bytes(), target
        assert given.report["tree"] == {"source": "tree", "kind": "binary", "nodes": len(tree["prim_count"]),
                                        "split_leaves": 0}
        assert "tree" not in own.report


def test_the_cli_exports_and_encodes_the_same_tree(tmp_path):
    for scene_path in SCENES:
        tree_file = tmp_path / (scene_path.stem + ".npz")
        out = run_cli("dump", scene_path, "--flatten", "--tree", tree_file).stdout
        assert f"wrote {tree_file}" in out
        # The file the CLI wrote holds the arrays the Python export returns.
        exported = hwbvh.export_tree(one_level(scene_path))
        with np.load(tree_file) as npz:
            assert sorted(npz.files) == sorted(exported)
            for name in exported:
                assert np.array_equal(npz[name], exported[name]), name
        for target in TARGETS:
            own, given = tmp_path / "own.hwbvh", tmp_path / "given.hwbvh"
            run_cli("build", scene_path, "--flatten", "--target", target, "-o", own, "--quiet")
            report = run_cli("build", scene_path, "--flatten", "--target", target, "--tree", tree_file, "-o", given,
                             "--quiet").stdout
            assert f"{tree_file} (binary tree of" in report
            assert given.read_bytes() == own.read_bytes(), (scene_path.name, target)


def test_a_tree_saved_by_numpy_reads_as_hwbvh_writes_it(tmp_path):
    scene = one_level(SCENES[0])
    tree = hwbvh.export_tree(scene)
    np.savez_compressed(tmp_path / "numpy.npz", **{k: v.astype(np.int64) for k, v in tree.items()})
    hwbvh.save_tree(tmp_path / "hwbvh.npz", tree)
    for path in (tmp_path / "numpy.npz", tmp_path / "hwbvh.npz"):
        back = hwbvh.load_tree(path)
        for name in tree:
            assert np.array_equal(back[name], tree[name]), (path, name)
        assert hwbvh.build(scene, tree=path).to_bytes() == hwbvh.build(scene).to_bytes()


# ---- another builder: median split in numpy ----------------------------------------------------------------------

def median_split_tree(vertices, degenerate, leaf_size=4):
    """A binary tree by object median split on the longest axis of the centroids' bounds: a builder that ignores
    surface area. Returns the tree file's arrays."""
    centroids = vertices.mean(axis=1)
    children, prim_begin, prim_count, primitives = [], [], [], []

    def node(indices):
        n = len(children)
        children.append([-1, -1])
        prim_begin.append(0)
        prim_count.append(0)
        if len(indices) <= leaf_size:
            prim_begin[n] = len(primitives)
            prim_count[n] = len(indices)
            primitives.extend(indices.tolist())
            return n
        c = centroids[indices]
        axis = int(np.argmax(c.max(axis=0) - c.min(axis=0)))
        order = indices[np.argsort(c[:, axis], kind="stable")]
        half = len(order) // 2
        left = node(order[:half])
        right = node(order[half:])
        children[n] = [left, right]
        return n

    node(np.flatnonzero(~degenerate))
    return {"children": np.array(children, dtype=np.int64), "prim_begin": np.array(prim_begin, dtype=np.uint32),
            "prim_count": np.array(prim_count, dtype=np.uint32), "primitives": np.array(primitives, dtype=np.uint32)}


def disagreements(summary):
    return {kind["ray_type"]: {cause: n for cause, n in kind["oracle"]["disagreements"].items() if n}
            for kind in summary["ray_types"]}


def mean_steps(summary):
    rays = sum(kind["rays"] for kind in summary["ray_types"])
    return sum(kind["totals"]["steps"] for kind in summary["ray_types"]) / rays


@pytest.mark.parametrize("scene_path", SCENES, ids=lambda p: p.name)
def test_a_median_split_tree_traces_to_embrees_hits_with_more_steps(scene_path):
    scene = one_level(scene_path)
    vertices, degenerate = hwbvh.scene_triangles(scene)
    tree = median_split_tree(vertices, degenerate)
    for target in TARGETS:
        sah = hwbvh.build(scene, target=target)
        median = hwbvh.build(scene, target=target, tree=tree)
        assert median.report["tree"]["split_leaves"] > 0  # leaves of 2..4 triangles, regrouped by the collapse
        rays = dict(width=64, height=64, ao_samples=2)
        sah_stats = hwbvh.stats(sah, **rays)
        median_stats = hwbvh.stats(median, **rays)
        # Every ray agrees with Embree, as every ray through hwbvh's own tree does (on 2026-11-28: 5920 to 11884
        # rays a scene, none disagreeing on any scene or target).
        assert disagreements(median_stats) == disagreements(sah_stats) == {k: {} for k in ("primary", "ao", "shadow")}
        for kind in median_stats["ray_types"]:
            assert kind["oracle"]["agreeing"] == kind["rays"] > 0, (scene_path.name, target, kind["ray_type"])
        assert mean_steps(median_stats) > mean_steps(sah_stats), (scene_path.name, target)


# ---- hostile trees --------------------------------------------------------------------------------------------

def cornell():
    return one_level(next(p for p in SCENES if p.name == "cornell-box.obj"))


def refusal(tree, **options):
    with pytest.raises(hwbvh.BadInputError) as error:
        hwbvh.build(cornell(), tree=tree, **options)
    return str(error.value)


def test_hostile_trees_are_refused_naming_the_node():
    good = hwbvh.export_tree(cornell())
    leaves = np.flatnonzero(good["prim_count"] > 0)

    twice = {k: v.copy() for k, v in good.items()}
    twice["primitives"][1] = twice["primitives"][0]
    assert "is in two leaves, node" in refusal(twice)

    # A leaf of the median tree (leaves of up to four triangles) that gives up its last triangle.
    vertices, degenerate = hwbvh.scene_triangles(cornell())
    missing = median_split_tree(vertices, degenerate)
    leaf = int(np.flatnonzero(missing["prim_count"] > 1)[0])
    dropped = int(missing["primitives"][missing["prim_begin"][leaf] + missing["prim_count"][leaf] - 1])
    missing["prim_count"][leaf] -= 1
    assert f"tree: triangle {dropped} is in no leaf" in refusal(missing)

    cycle = {k: v.copy() for k, v in good.items()}
    cycle["children"][1, 1] = 0
    assert "a cycle: node 1 names node 0, its own ancestor, as a child" in refusal(cycle)

    unreachable = {k: np.concatenate([v, v[leaves[0]:leaves[0] + 1]]) for k, v in good.items() if k != "primitives"}
    unreachable["primitives"] = good["primitives"]
    assert f"node {len(good['prim_count'])} is not reached from the root (node 0)" in refusal(unreachable)

    # A wide tree whose root has five children is too wide for rtip20's four but fits rtip31's eight.
    n = 5
    wide = {"children": np.array([[1, 2, 3, 4, 5]] + [[-1] * 5] * n), "prim_begin": np.arange(-1, n),
            "prim_count": np.array([0] + [1] * n), "primitives": np.arange(n)}
    wide["prim_begin"][0] = 0
    scene = one_level(next(p for p in SCENES if p.name == "cornell-box.obj"))
    triangles = len(hwbvh.scene_triangles(scene)[0])
    wide["prim_count"][n] = triangles - (n - 1)
    wide["primitives"] = np.arange(triangles)
    with pytest.raises(hwbvh.BadInputError, match="tree: node 0 has 5 children; the target's nodes hold at most 4"):
        hwbvh.build(scene, target="rtip20", tree=wide)
    assert hwbvh.build(scene, target="rtip31", tree=wide).report["tree"]["kind"] == "wide"

    with pytest.raises(hwbvh.BadInputError, match="tree: children: dtype '<f4' is not an integer type"):
        hwbvh.build(scene, tree={**good, "children": good["children"].astype(np.float32)})
    with pytest.raises(hwbvh.BadInputError, match="tree: no array 'primitives'"):
        hwbvh.build(scene, tree={k: v for k, v in good.items() if k != "primitives"})


def test_two_level_scenes_are_refused():
    garden = next(p for p in SCENES if p.name == "instanced-garden.gltf")
    scene = hwbvh.load_scene(garden)
    with pytest.raises(hwbvh.BadInputError, match="export_tree: a tree describes the triangles of a one-level scene"):
        hwbvh.export_tree(scene)
    tree = hwbvh.export_tree(one_level(garden))
    with pytest.raises(hwbvh.BadInputError, match="tree: a tree describes the triangles of a one-level scene"):
        hwbvh.build(scene, tree=tree)


def test_bad_tree_files_exit_2_naming_the_file(tmp_path):
    scene = next(p for p in SCENES if p.name == "cornell-box.obj")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip archive")
    truncated = tmp_path / "truncated.npz"
    hwbvh.save_tree(truncated, hwbvh.export_tree(cornell()))
    truncated.write_bytes(truncated.read_bytes()[:200])
    stray = tmp_path / "stray.npz"
    with zipfile.ZipFile(stray, "w") as z:
        z.writestr("readme.txt", "hello")
    for path, problem in [(garbage, "not an .npz file"), (truncated, "not an .npz file"),
                          (stray, "entry 'readme.txt' is not an .npy file"),
                          (tmp_path / "absent.npz", "absent.npz")]:
        result = run_cli("build", scene, "--tree", path, "-o", tmp_path / "out.hwbvh", check=False)
        assert result.returncode == 2, path
        assert f"{path}: " in result.stderr and problem in result.stderr, result.stderr
        assert not (tmp_path / "out.hwbvh").exists()
        with pytest.raises(hwbvh.BadInputError, match=problem):
            hwbvh.load_tree(path)


def test_dump_tree_options_apply_to_tree_exports_only(tmp_path):
    scene = next(p for p in SCENES if p.name == "cornell-box.obj")
    blob = tmp_path / "cornell.hwbvh"
    run_cli("build", scene, "-o", blob, "--quiet")
    for args in (["dump", blob, "--quality", "low"], ["dump", scene, "--tree", tmp_path / "t.npz", "--json"],
                 ["dump", scene, "--tree", tmp_path / "t.npz", "--max-nodes", "3"]):
        assert run_cli(*args, check=False).returncode == 2, args
    high = run_cli("dump", scene, "--tree", tmp_path / "t.npz", "--quality", "high", check=False)
    assert high.returncode == 2 and "quality high" in high.stderr
    garden = next(p for p in SCENES if p.name == "instanced-garden.gltf")
    two_level = run_cli("dump", garden, "--tree", tmp_path / "g.npz", check=False)
    assert two_level.returncode == 2 and "load it flattened (--flatten)" in two_level.stderr
    assert not (tmp_path / "t.npz").exists() and not (tmp_path / "g.npz").exists()
