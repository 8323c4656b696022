"""A sweep specification (docs/sweeps.md) expanded into tasks: the product of scenes x targets x build options x
machine presets and their parameters x ray sets, each task a plain dict keyed by a hash of its inputs."""
import hashlib
import itertools
import json

import pathlib
import re

from .. import BadInputError, __version__

SPEC_KEYS = {"scenes", "targets", "build", "machines", "rays", "scene_transfer", "threads"}
BUILD_OPTIONS = {"quality", "stoc_level", "stoc_order", "opacity_level", "alpha_cutoff", "obb", "obb_ratio"}
RAY_OPTIONS = {"rays", "width", "height", "camera", "ao_samples", "ao_distance", "random_rays", "seed", "rays_file",
               "stack_size", "instance_mask", "heuristic", "triangle_test", "step_limit", "stoc",
               "no_duplicate_any_hit", "oracle"}
TRANSFERS = ("path", "ship")


def _fail(message):
    raise BadInputError(f"sweep spec: {message}")


def _as_list(value, what):
    if isinstance(value, list):
        if not value:
            _fail(f"'{what}' is an empty list")
        return value
    return [value]


def _option_sets(value, allowed, what, extra=()):
    """A dict of option -> value or list of values (their product), or a list of such dicts (each expanded in
    turn). Returns a list of plain option dicts."""
    if value is None:
        return [{}]
    entries = value if isinstance(value, list) else [value]
    if not entries:
        _fail(f"'{what}' is an empty list")
    sets = []
    for entry in entries:
        if not isinstance(entry, dict):
            _fail(f"'{what}': expected an object of options or a list of them, got {json.dumps(entry)}")
        for key in entry:
            if key not in allowed and key not in extra:
                _fail(f"'{what}': unknown option '{key}' (options: {', '.join(sorted(allowed))})")
        keys = list(entry)
        for values in itertools.product(*(_as_list(entry[k], f"{what}.{k}") if k not in extra else [entry[k]]
                                          for k in keys)):
            sets.append(dict(zip(keys, values)))
    return sets


def _machines(value):
    """[None] without a machine model; else one (preset, params) per preset and product of its parameters."""
    if value is None:
        return [(None, {})]
    machines = []
    for entry in _as_list(value, "machines"):
        if entry is None or isinstance(entry, str):
            machines.append((entry, {}))
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("preset"), str):
            _fail(f"'machines': expected a preset name or {{\"preset\": NAME, \"params\": {{KEY: VALUES}}}}, got "
                  f"{json.dumps(entry)}")
        unknown = set(entry) - {"preset", "params"}
        if unknown:
            _fail(f"'machines': unknown key '{sorted(unknown)[0]}' (keys: preset, params)")
        params = entry.get("params", {})
        if not isinstance(params, dict):
            _fail(f"'machines': 'params' of {entry['preset']} must be an object of preset keys")
        keys = list(params)
        for values in itertools.product(*(_as_list(params[k], f"machines.params.{k}") for k in keys)):
            machines.append((entry["preset"], dict(zip(keys, values))))
    return machines


def _scene_files(path):
    """The scene file and the files it reads beside it (MTL files and their textures, glTF buffers and images),
    relative to its directory: what a worker without the client's file system needs."""
    files = [path.name]
    text = path.read_bytes().decode("utf-8", "replace")
    if path.suffix.lower() == ".obj":
        for mtl in re.findall(r"^\s*mtllib\s+(.+?)\s*$", text, re.M):
            files.append(mtl)
            mtl_path = path.parent / mtl
            if mtl_path.is_file():
                for texture in re.findall(r"^\s*(?:map_\w+|bump|disp|decal)\s+(?:-\S+\s+\S+\s+)*(\S.*?)\s*$",
                                          mtl_path.read_text(errors="replace"), re.M):
                    files.append(texture)
    elif path.suffix.lower() == ".gltf":
        try:
            document = json.loads(text)
        except ValueError:
            document = {}  # the loader names the problem when a worker reads it
        for item in document.get("buffers", []) + document.get("images", []):
            uri = item.get("uri", "") if isinstance(item, dict) else ""
            if uri and not uri.startswith("data:"):
                files.append(uri)
    return list(dict.fromkeys(f for f in files if (path.parent / f).is_file()))


class Scene:
    """A scene of the sweep: its path as written, its absolute path, the files it reads and their content hash."""

    def __init__(self, written, base_dir):
        self.written = written
        self.path = (pathlib.Path(base_dir) / written).resolve()
        if not self.path.is_file():
            _fail(f"scene '{written}': no such file ({self.path})")
        self.files = _scene_files(self.path)
        digest = hashlib.sha256()
        for name in self.files:
            digest.update(name.encode() + b"\0")
            digest.update(hashlib.sha256((self.path.parent / name).read_bytes()).digest())
        self.content_hash = digest.hexdigest()

    def pack(self):
        """The scene's files as {relative name: bytes}, to ship to workers."""
        return {"name": self.path.name, "hash": self.content_hash,
                "files": {n: (self.path.parent / n).read_bytes() for n in self.files}}


def _file_hash(value, base_dir):
    path = pathlib.Path(base_dir) / value
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def expand(spec, base_dir="."):
    """The tasks of `spec` (a dict as in docs/sweeps.md), in product order, and the scenes they use by their
    written path. Each task: {"key", "scene", "flatten", "target", "build", "machine", "machine_params", "rays"};
    "key" hashes every input with hwbvh's version and the content of the files read (scene, preset file, rays
    file). Raises hwbvh.BadInputError naming the first problem."""
    if not isinstance(spec, dict):
        _fail("expected a JSON object")
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        _fail(f"unknown key '{sorted(unknown)[0]}' (keys: {', '.join(sorted(SPEC_KEYS))})")
    if "scenes" not in spec:
        _fail("'scenes' is missing")
    scene_entries = []
    for entry in _as_list(spec["scenes"], "scenes"):
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or set(entry) - {"path", "flatten"}:
            _fail(f"'scenes': expected a path or {{\"path\": P, \"flatten\": BOOL}}, got {json.dumps(entry)}")
        scene_entries.append((entry["path"], bool(entry.get("flatten", False))))
    targets = _as_list(spec.get("targets", "rtip31"), "targets")
    builds = _option_sets(spec.get("build"), BUILD_OPTIONS, "build", extra=("targets",))
    ray_sets = _option_sets(spec.get("rays"), RAY_OPTIONS, "rays")
    machines = _machines(spec.get("machines"))
    transfer = spec.get("scene_transfer", "path")
    if transfer not in TRANSFERS:
        _fail(f"'scene_transfer': '{transfer}' is not one of {', '.join(TRANSFERS)}")

    scenes = {}
    for written, _ in scene_entries:
        if written not in scenes:
            scenes[written] = Scene(written, base_dir)
    preset_hashes = {preset: _file_hash(preset, base_dir) for preset, _ in machines if preset}

    tasks = []
    for (written, flatten), target, build, (preset, params), rays in itertools.product(
            scene_entries, targets, builds, machines, ray_sets):
        only = build.get("targets")
        if only is not None and target not in _as_list(only, "build.targets"):
            continue
        build = {k: v for k, v in build.items() if k != "targets"}
        task = {"scene": written, "flatten": flatten, "target": target, "build": build, "machine": preset,
                "machine_params": params, "rays": rays}
        inputs = dict(task, hwbvh_version=__version__, scene_hash=scenes[written].content_hash,
                      preset_hash=preset_hashes.get(preset),
                      rays_file_hash=_file_hash(rays["rays_file"], base_dir) if "rays_file" in rays else None)
        task["key"] = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]
        # Files the worker reads by path, from wherever it runs: made absolute after keying, so that the key does
        # not change with the directory the spec is run from.
        if "rays_file" in rays:
            task["rays"] = dict(rays, rays_file=str((pathlib.Path(base_dir) / rays["rays_file"]).resolve()))
        if preset_hashes.get(preset):
            task["machine"] = str((pathlib.Path(base_dir) / preset).resolve())
        tasks.append(task)
    if not tasks:
        _fail("no task: every build entry is limited to targets the sweep does not have")
    if len({t["key"] for t in tasks}) != len(tasks):
        _fail("the same task twice: two entries of a list are equal")
    return tasks, scenes, transfer


def load(path):
    """A spec file: (the spec, the directory its relative paths start from)."""
    path = pathlib.Path(path)
    try:
        spec = json.loads(path.read_text())
    except OSError as e:
        raise BadInputError(f"{path}: cannot read the sweep spec: {e.strerror}") from None
    except ValueError as e:
        raise BadInputError(f"{path}: not a JSON document: {e}") from None
    return spec, path.parent


def threads(spec):
    value = spec.get("threads", 1)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 4096:
        _fail(f"'threads': {json.dumps(value)} is not a whole number in [0, 4096]")
    return value


__all__ = ["expand", "load", "threads", "Scene"]
