#!/usr/bin/env python3
"""Writes the project's own small test scenes into scenes/ (see scenes/README.md).

Deterministic: fixed seeds, fixed number formatting, and PNGs written with stored (uncompressed) deflate
blocks, so running it again reproduces every file byte for byte, whatever the zlib version. Python 3 standard
library only.

    python3 scripts/generate_scenes.py [output-folder]     (default: scenes/ next to this script's folder)
    python3 scripts/generate_scenes.py --mask-cards MASK_FOLDER OUTPUT_FOLDER
    python3 scripts/generate_scenes.py --city OUT.glb [--blocks N] [--detail F]
    python3 scripts/generate_scenes.py --interior OUT.glb [--rooms N] [--detail F]

The second form writes only mask-cards.obj and mask-cards.mtl: the alpha-cards layout with one material per
*.png mask in MASK_FOLDER (e.g. ../shared/scenes/masks), referenced by absolute path, so the files belong to
this machine and are not committed. The city and the interior (the machine model's stand-in workload, written at
build time) are binary glTF files generated on demand, not shipped (scenes/README.md).
"""

import argparse
import base64
import json
import math
import random
import struct
import sys
import zlib
from array import array
from pathlib import Path


class ObjWriter:
    """Collects OBJ statements; vertices and texture coordinates are numbered as they are added."""

    def __init__(self, header):
        self.lines = [f"# {line}" if line else "#" for line in header.splitlines()]
        self.vertex_count = 0
        self.texcoord_count = 0

    def statement(self, text):
        self.lines.append(text)

    def vertex(self, p, digits=4):
        self.lines.append("v " + " ".join(f"{c:.{digits}f}" for c in p))
        self.vertex_count += 1
        return self.vertex_count

    def texcoord(self, uv):
        self.lines.append(f"vt {uv[0]:.4f} {uv[1]:.4f}")
        self.texcoord_count += 1
        return self.texcoord_count

    def face(self, corners):
        """corners: vertex indices, or (vertex, texcoord) pairs."""
        refs = [f"{c[0]}/{c[1]}" if isinstance(c, tuple) else str(c) for c in corners]
        self.lines.append("f " + " ".join(refs))

    def write(self, path):
        path.write_text("\n".join(self.lines) + "\n", encoding="ascii", newline="\n")


def sub(a, b):
    return [a[i] - b[i] for i in range(3)]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return sum(a[i] * b[i] for i in range(3))


def facing(polygon, toward):
    """The polygon, reversed if needed so that its normal (counter-clockwise winding) points toward a point."""
    normal = cross(sub(polygon[1], polygon[0]), sub(polygon[2], polygon[0]))
    centre = [sum(p[i] for p in polygon) / len(polygon) for i in range(3)]
    return polygon if dot(normal, sub(toward, centre)) > 0 else polygon[::-1]


def random_rotation(rng):
    """Uniformly distributed rotation matrix (Shoemake's random unit quaternion)."""
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    x = math.sqrt(1 - u1) * math.sin(2 * math.pi * u2)
    y = math.sqrt(1 - u1) * math.cos(2 * math.pi * u2)
    z = math.sqrt(u1) * math.sin(2 * math.pi * u3)
    w = math.sqrt(u1) * math.cos(2 * math.pi * u3)
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]


def transform(m, p, offset):
    return [sum(m[r][c] * p[c] for c in range(3)) + offset[r] for r in range(3)]


# --- cornell-box ------------------------------------------------------------------------------------------------

CORNELL_MTL = """\
# Materials of cornell-box.obj (written by scripts/generate_scenes.py, CC0).
newmtl white
Kd 0.73 0.73 0.73

newmtl red
Kd 0.63 0.065 0.05

newmtl green
Kd 0.14 0.45 0.091

newmtl light
Kd 0.78 0.78 0.78
Ke 17 12 4
"""


def cornell_box(out):
    """The Cornell box room (walls, two blocks, a light quad), after the published measurements, rounded."""
    obj = ObjWriter("Cornell-box-like room: 5 walls, 2 blocks, 1 light quad; one group per object.\n"
                    "Written by scripts/generate_scenes.py (CC0). Units are millimetres, y is up, the open side\n"
                    "faces -z; a camera at (278, 273, -800) looking along +z sees the whole room.")
    obj.statement("mtllib cornell-box.mtl")
    inside = [278, 274, 280]
    s = 555.0
    walls = [
        ("floor", "white", [[0, 0, 0], [s, 0, 0], [s, 0, s], [0, 0, s]]),
        ("ceiling", "white", [[0, s, 0], [s, s, 0], [s, s, s], [0, s, s]]),
        ("back_wall", "white", [[0, 0, s], [s, 0, s], [s, s, s], [0, s, s]]),
        ("red_wall", "red", [[s, 0, 0], [s, 0, s], [s, s, s], [s, s, 0]]),
        ("green_wall", "green", [[0, 0, 0], [0, 0, s], [0, s, s], [0, s, 0]]),
    ]
    for name, material, quad in walls:
        obj.statement(f"g {name}")
        obj.statement(f"usemtl {material}")
        obj.face([obj.vertex(p, 1) for p in facing(quad, inside)])

    blocks = [
        ("short_block", 165.0, [[130, 65], [82, 225], [240, 272], [290, 114]]),
        ("tall_block", 330.0, [[423, 247], [265, 296], [314, 456], [472, 406]]),
    ]
    for name, height, footprint in blocks:
        obj.statement(f"g {name}")
        obj.statement("usemtl white")
        bottom = [[x, 0.0, z] for x, z in footprint]
        top = [[x, height, z] for x, z in footprint]
        centre = [sum(p[0] for p in bottom) / 4, height / 2, sum(p[2] for p in bottom) / 4]
        ids = {}
        for p in bottom + top:
            ids[tuple(p)] = obj.vertex(p, 1)
        faces = [top] + [[bottom[i], bottom[(i + 1) % 4], top[(i + 1) % 4], top[i]] for i in range(4)]
        for quad in faces:
            outward = facing(quad, centre)[::-1]
            obj.face([ids[tuple(p)] for p in outward])

    obj.statement("g light")
    obj.statement("usemtl light")
    light = [[213, 554, 227], [343, 554, 227], [343, 554, 332], [213, 554, 332]]
    obj.face([obj.vertex(p, 1) for p in facing(light, [278, 0, 280])])

    obj.write(out / "cornell-box.obj")
    (out / "cornell-box.mtl").write_text(CORNELL_MTL, encoding="ascii", newline="\n")


# --- rotated-objects --------------------------------------------------------------------------------------------

def rotated_objects(out):
    """Long thin cylinders and boxes (length:width 10:1) with uniformly random rotations."""
    rng = random.Random(31)
    obj = ObjWriter("400 long thin objects (cylinders with 8-16 segments and boxes, length 10x their width),\n"
                    "uniformly random rotations and positions in a 100-unit cube; one `o` per object.\n"
                    "Written by scripts/generate_scenes.py (CC0, seed 31). Made to reward oriented boxes.")
    for index in range(400):
        length = 8.0 + 8.0 * rng.random()
        width = length / 10.0
        centre = [100.0 * rng.random() - 50.0 for _ in range(3)]
        rotation = random_rotation(rng)
        if rng.random() < 2.0 / 3.0:
            segments = 8 + int(9 * rng.random())
            ring = [[0.5 * width * math.cos(2 * math.pi * k / segments),
                     0.5 * width * math.sin(2 * math.pi * k / segments)] for k in range(segments)]
            name = f"cylinder_{index:03d}"
        else:
            ring = [[-0.5 * width, -0.5 * width], [0.5 * width, -0.5 * width],
                    [0.5 * width, 0.5 * width], [-0.5 * width, 0.5 * width]]
            name = f"box_{index:03d}"
        obj.statement(f"o {name}")
        n = len(ring)
        low = [obj.vertex(transform(rotation, [x, y, -0.5 * length], centre)) for x, y in ring]
        high = [obj.vertex(transform(rotation, [x, y, 0.5 * length], centre)) for x, y in ring]
        obj.face(low[::-1])  # caps as one polygon each: the loader fans them
        obj.face(high)
        for k in range(n):
            obj.face([low[k], low[(k + 1) % n], high[(k + 1) % n], high[k]])
    obj.write(out / "rotated-objects.obj")


# --- alpha-cards ------------------------------------------------------------------------------------------------

ALPHA_CARDS_MTL = """\
# Materials of alpha-cards.obj (written by scripts/generate_scenes.py, CC0).
# leaf is alpha-tested (map_d); ground is opaque.
newmtl leaf
Kd 0.25 0.55 0.15
map_d alpha-cards-mask.png

newmtl ground
Kd 0.5 0.45 0.4
"""


def leaf_coverage(x, y):
    """1 inside the leaf mask, 0 outside; x, y in [0, 1], y down from the top row of the image."""
    # Leaf frame: s runs from the base (-1, bottom left) to the tip (+1, top right), t across the leaf.
    s = (x - y) / 0.7
    t = (x + y - 1.0) / 0.7
    blade = abs(t) < 0.5 * (1.0 - s * s) and abs(s) < 1.0
    stem = -1.3 < s <= -0.9 and abs(t) < 0.035
    holes = [(0.35, 0.12, 0.09), (-0.3, -0.14, 0.07)]
    bitten = any((s - hs) ** 2 + (t - ht) ** 2 < r * r for hs, ht, r in holes)
    return 1.0 if (blade or stem) and not bitten else 0.0


def png_grey8(width, height, rows, colour_type=0):
    """An 8-bit greyscale PNG (colour_type 4: grey + alpha, rows of interleaved values); the zlib stream uses
    stored blocks so the bytes never depend on zlib."""
    raw = b"".join(b"\x00" + bytes(row) for row in rows)  # filter type 0 on every row
    blocks = []
    for start in range(0, len(raw), 65535):
        block = raw[start:start + 65535]
        final = 1 if start + 65535 >= len(raw) else 0
        blocks.append(struct.pack("<BHH", final, len(block), 0xFFFF ^ len(block)) + block)
    stream = b"\x78\x01" + b"".join(blocks) + struct.pack(">I", zlib.adler32(raw))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


def leaf_mask(size, samples=4):
    """Rows of 8-bit leaf coverage, anti-aliased with samples x samples points per texel."""
    rows = []
    for py in range(size):
        row = []
        for px in range(size):
            covered = sum(leaf_coverage((px + (i + 0.5) / samples) / size, (py + (j + 0.5) / samples) / size)
                          for i in range(samples) for j in range(samples))
            row.append(round(255 * covered / (samples * samples)))
        rows.append(row)
    return rows


def alpha_cards(out):
    size = 128
    (out / "alpha-cards-mask.png").write_bytes(png_grey8(size, size, leaf_mask(size)))

    rng = random.Random(7)
    obj = ObjWriter("A 12 x 12 grid of alpha-tested leaf cards (quads with UVs, material `leaf` with map_d) at\n"
                    "random orientations above an opaque ground quad (material `ground`).\n"
                    "Written by scripts/generate_scenes.py (CC0, seed 7).")
    obj.statement("mtllib alpha-cards.mtl")
    corners_uv = [obj.texcoord(uv) for uv in [(0, 0), (1, 0), (1, 1), (0, 1)]]
    obj.statement("g cards")
    obj.statement("usemtl leaf")
    for i in range(12):
        for j in range(12):
            obj.face(list(zip(card_corners(rng, obj, i, j), corners_uv)))
    obj.statement("g ground")
    obj.statement("usemtl ground")
    ground = [[-7, 0, -7], [7, 0, -7], [7, 0, 7], [-7, 0, 7]]
    obj.face([obj.vertex(p) for p in facing(ground, [0, 1, 0])])
    obj.write(out / "alpha-cards.obj")
    (out / "alpha-cards.mtl").write_text(ALPHA_CARDS_MTL, encoding="ascii", newline="\n")


# --- overflow-fan -----------------------------------------------------------------------------------------------

def overflow_fan(out):
    """Slivers whose boxes all contain the z axis while the slivers themselves miss it, plus a backstop."""
    obj = ObjWriter("Stack-overflow scene: 40 layers (z = 1 .. 10.75) of 8 thin slivers fanned around the z axis.\n"
                    "Every sliver's bounding box contains the axis but the sliver does not touch it, so the ray\n"
                    "origin (0, 0, -1), direction (0, 0, 1) enters every box node and hits no sliver; its closest\n"
                    "hit is the backstop quad at z = 12. Written by scripts/generate_scenes.py (CC0).")
    obj.statement("g fan")
    for layer in range(40):
        z = 1.0 + 0.25 * layer
        half_length = 1.0 if layer % 2 == 0 else 0.6
        offset, width = 0.05 * half_length, 0.05 * half_length
        turn = 7.5 * (layer % 3 - 1)
        for k in range(8):
            angle = math.radians(22.5 + 45.0 * k + turn)
            # (a, b) = a along the sliver + b across it: the sliver keeps b >= offset, away from the axis.
            sliver = [[a * math.cos(angle) - b * math.sin(angle), a * math.sin(angle) + b * math.cos(angle), z]
                      for a, b in [(half_length, offset), (-half_length, offset), (0, offset + width)]]
            obj.face([obj.vertex(p, 5) for p in facing(sliver, [0, 0, -1])])
    obj.statement("g backstop")
    backstop = [[-2, -2, 12], [2, -2, 12], [2, 2, 12], [-2, 2, 12]]
    obj.face([obj.vertex(p) for p in facing(backstop, [0, 0, -1])])
    obj.write(out / "overflow-fan.obj")


def card_corners(rng, obj, i, j, half=0.45):
    """A card of the 12 x 12 grid at a random height, tilt and turn; returns its four vertex indices. The card
    lies in its local xy plane, is tilted about x, then turned about the vertical axis."""
    centre = [i - 5.5, 0.55 + 0.3 * rng.random(), j - 5.5]
    yaw = 2 * math.pi * rng.random()
    tilt = math.radians(-60 + 120 * rng.random())
    corners = []
    for x, y in [[-half, -half], [half, -half], [half, half], [-half, half]]:
        p = [x, y * math.cos(tilt), y * math.sin(tilt)]
        p = [p[0] * math.cos(yaw) + p[2] * math.sin(yaw), p[1], -p[0] * math.sin(yaw) + p[2] * math.cos(yaw)]
        corners.append(obj.vertex([p[k] + centre[k] for k in range(3)]))
    return corners


def mask_cards(mask_folder, out):
    """The alpha-cards layout, card k textured with mask k mod n of the sorted *.png files in mask_folder."""
    masks = sorted(Path(mask_folder).resolve().glob("*.png"))
    if not masks:
        sys.exit(f"generate_scenes.py: no *.png masks in {mask_folder}")
    rng = random.Random(11)
    obj = ObjWriter(f"A 12 x 12 grid of alpha-tested cards textured with the {len(masks)} masks of\n"
                    f"{Path(mask_folder).resolve()} (by absolute path), above an opaque ground quad.\n"
                    "Written by scripts/generate_scenes.py --mask-cards (seed 11); not for committing.")
    obj.statement("mtllib mask-cards.mtl")
    corners_uv = [obj.texcoord(uv) for uv in [(0, 0), (1, 0), (1, 1), (0, 1)]]
    obj.statement("g cards")
    for k in range(144):
        obj.statement(f"usemtl mask{k % len(masks)}")
        corners = card_corners(rng, obj, k // 12, k % 12)
        obj.face(list(zip(corners, corners_uv)))
    obj.statement("g ground")
    obj.statement("usemtl ground")
    ground = [[-7, 0, -7], [7, 0, -7], [7, 0, 7], [-7, 0, 7]]
    obj.face([obj.vertex(p) for p in facing(ground, [0, 1, 0])])
    out.mkdir(parents=True, exist_ok=True)
    obj.write(out / "mask-cards.obj")
    mtl = ["# Materials of mask-cards.obj (scripts/generate_scenes.py --mask-cards)."]
    for k, mask in enumerate(masks):
        mtl += ["", f"newmtl mask{k}", "Kd 0.25 0.55 0.15", f"map_d {mask}"]
    mtl += ["", "newmtl ground", "Kd 0.5 0.45 0.4"]
    (out / "mask-cards.mtl").write_text("\n".join(mtl) + "\n", encoding="utf-8", newline="\n")


# --- instanced-garden (glTF) ------------------------------------------------------------------------------------

def chain_link(segments=12, sides=6, length=1.2, radius=0.5, thickness=0.12):
    """A stadium-shaped torus: a tube of `sides` around a loop of two half circles joined by straight sides."""
    positions, indices = [], []
    for i in range(segments):
        a = 2 * math.pi * i / segments
        # centre line: half circles at x = +-length/2
        cx = math.cos(a) * radius + (length / 2 if math.cos(a) >= 0 else -length / 2)
        cy = math.sin(a) * radius
        for j in range(sides):
            b = 2 * math.pi * j / sides
            r = thickness * math.cos(b)
            positions.append([cx + r * math.cos(a), cy + r * math.sin(a), thickness * math.sin(b)])
    for i in range(segments):
        for j in range(sides):
            a, b = i * sides + j, ((i + 1) % segments) * sides + j
            c, d = ((i + 1) % segments) * sides + (j + 1) % sides, i * sides + (j + 1) % sides
            indices += [a, b, c, a, c, d]
    return positions, indices


def rock(rng):
    """An icosahedron subdivided once, vertices pushed in and out at random: 80 outward-facing triangles."""
    t = (1 + math.sqrt(5)) / 2
    verts = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t], [0, 1, -t],
             [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
             (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    midpoints = {}

    def midpoint(i, j):
        key = (min(i, j), max(i, j))
        if key not in midpoints:
            verts.append([(verts[i][k] + verts[j][k]) / 2 for k in range(3)])
            midpoints[key] = len(verts) - 1
        return midpoints[key]

    indices = []
    for a, b, c in faces:
        ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
        indices += [a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca]
    positions = []
    for v in verts:
        n = math.sqrt(dot(v, v))
        r = 0.5 * (0.8 + 0.35 * rng.random())
        positions.append([v[k] / n * r for k in range(3)])
    return positions, indices


def plant():
    """Three crossed vertical cards (1 x 1.2) sharing the leaf texture, as a triangle strip each would be; here
    listed as indexed triangles with UVs (glTF v = 0 is the top of the image)."""
    positions, uvs, indices = [], [], []
    for k in range(3):
        a = math.pi * k / 3
        dx, dz = 0.5 * math.cos(a), 0.5 * math.sin(a)
        base = len(positions)
        positions += [[-dx, 0, -dz], [dx, 0, -dz], [dx, 1.2, dz * 0.2], [-dx, 1.2, dz * 0.2]]
        uvs += [[0, 1], [1, 1], [1, 0], [0, 0]]
        indices += [base, base + 1, base + 2, base, base + 2, base + 3]
    return positions, uvs, indices


def quaternion(rng):
    """Uniformly distributed unit quaternion (x, y, z, w), Shoemake's method, as random_rotation."""
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    return [math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
            math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3)]


def rounded(values, digits=4):
    return [round(v, digits) for v in values]


class GltfWriter:
    """One glTF 2.0 file with a single buffer embedded as a base64 data URI."""

    def __init__(self):
        self.buffer = bytearray()
        self.doc = {"asset": {"version": "2.0", "generator": "hwbvh scripts/generate_scenes.py (CC0)"},
                    "scene": 0, "scenes": [{"nodes": []}], "nodes": [], "meshes": [], "accessors": [],
                    "bufferViews": [], "materials": [], "textures": [], "images": [], "samplers": []}

    def view(self, data):
        while len(self.buffer) % 4:
            self.buffer.append(0)
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.buffer), "byteLength": len(data)})
        self.buffer += data
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, values, kind):
        """kind: "VEC3", "VEC2" (float) or "SCALAR" (unsigned short indices)."""
        if kind == "SCALAR":
            data, component, count = struct.pack(f"<{len(values)}H", *values), 5123, len(values)
        else:
            flat = [round(c, 4) for v in values for c in v]
            data, component, count = struct.pack(f"<{len(flat)}f", *flat), 5126, len(values)
        accessor = {"bufferView": self.view(data), "componentType": component, "count": count, "type": kind}
        if kind == "VEC3":
            accessor["min"] = [min(round(v[k], 4) for v in values) for k in range(3)]
            accessor["max"] = [max(round(v[k], 4) for v in values) for k in range(3)]
        self.doc["accessors"].append(accessor)
        return len(self.doc["accessors"]) - 1

    def mesh(self, name, positions, indices, material, uvs=None):
        attributes = {"POSITION": self.accessor(positions, "VEC3")}
        if uvs:
            attributes["TEXCOORD_0"] = self.accessor(uvs, "VEC2")
        primitive = {"attributes": attributes, "indices": self.accessor(indices, "SCALAR"), "material": material}
        self.doc["meshes"].append({"name": name, "primitives": [primitive]})
        return len(self.doc["meshes"]) - 1

    def array_accessor(self, values, kind):
        """An accessor over a typed array: kind "VEC3" or "VEC2" (float) or "SCALAR" (unsigned int indices)."""
        components = {"VEC3": 3, "VEC2": 2, "SCALAR": 1}[kind]
        data = values.tobytes() if sys.byteorder == "little" else array(values.typecode, values).byteswap()
        accessor = {"bufferView": self.view(data), "componentType": 5125 if kind == "SCALAR" else 5126,
                    "count": len(values) // components, "type": kind}
        if kind == "VEC3":
            accessor["min"] = [min(values[k::3]) for k in range(3)]
            accessor["max"] = [max(values[k::3]) for k in range(3)]
        self.doc["accessors"].append(accessor)
        return len(self.doc["accessors"]) - 1

    def mesh_arrays(self, name, primitives):
        """A mesh of MeshBuilder primitives, each with its material index."""
        entries = []
        for mesh, material in primitives:
            attributes = {"POSITION": self.array_accessor(mesh.positions, "VEC3")}
            if mesh.uvs is not None:
                attributes["TEXCOORD_0"] = self.array_accessor(mesh.uvs, "VEC2")
            entries.append({"attributes": attributes, "indices": self.array_accessor(mesh.indices, "SCALAR"),
                            "material": material})
        self.doc["meshes"].append({"name": name, "primitives": entries})
        return len(self.doc["meshes"]) - 1

    def node(self, **members):
        self.doc["nodes"].append(members)
        return len(self.doc["nodes"]) - 1

    def write(self, path):
        self.doc["buffers"] = [{"byteLength": len(self.buffer),
                                "uri": "data:application/octet-stream;base64," +
                                       base64.b64encode(bytes(self.buffer)).decode("ascii")}]
        text = json.dumps(self.doc, separators=(",", ":"), sort_keys=False)
        path.write_text(text + "\n", encoding="ascii", newline="\n")

    def write_glb(self, path):
        """The binary form (glTF 2.0 §4.4): a 12-byte header, the JSON chunk padded with spaces, the buffer as
        the BIN chunk padded with zeros."""
        while len(self.buffer) % 4:
            self.buffer.append(0)
        self.doc["buffers"] = [{"byteLength": len(self.buffer)}]
        text = json.dumps(self.doc, separators=(",", ":")).encode("ascii")
        text += b" " * (-len(text) % 4)
        total = 12 + 8 + len(text) + 8 + len(self.buffer)
        with open(path, "wb") as f:
            f.write(struct.pack("<4sII", b"glTF", 2, total))
            f.write(struct.pack("<I4s", len(text), b"JSON") + text)
            f.write(struct.pack("<I4s", len(self.buffer), b"BIN\0"))
            f.write(self.buffer)


def instanced_garden(out):
    rng = random.Random(19)
    gltf = GltfWriter()
    gltf.doc["materials"] = [
        {"name": "metal", "pbrMetallicRoughness": {"baseColorFactor": [0.6, 0.6, 0.65, 1], "metallicFactor": 1}},
        {"name": "stone", "pbrMetallicRoughness": {"baseColorFactor": [0.45, 0.42, 0.4, 1]}},
        {"name": "leaf", "alphaMode": "MASK", "alphaCutoff": 0.5, "doubleSided": True,
         "pbrMetallicRoughness": {"baseColorFactor": [0.25, 0.55, 0.15, 1], "baseColorTexture": {"index": 0}}},
        {"name": "ground", "pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.45, 0.4, 1]}},
    ]
    # The leaf texture: grey + alpha, the alpha channel the leaf mask (the alpha test reads only alpha).
    size = 32
    rows = [[v for a in row for v in (200, a)] for row in leaf_mask(size)]
    png = png_grey8(size, size, rows, colour_type=4)
    gltf.doc["images"] = [{"name": "leaf", "mimeType": "image/png", "bufferView": gltf.view(png)}]
    gltf.doc["samplers"] = [{"magFilter": 9728, "minFilter": 9728, "wrapS": 10497, "wrapT": 10497}]
    gltf.doc["textures"] = [{"sampler": 0, "source": 0}]

    link = gltf.mesh("chain link", *chain_link(), material=0)
    stone = gltf.mesh("rock", *rock(rng), material=1)
    plant_positions, plant_uvs, plant_indices = plant()
    fern = gltf.mesh("plant", plant_positions, plant_indices, material=2, uvs=plant_uvs)
    ground = gltf.mesh("ground", [[-11, 0, -11], [11, 0, -11], [11, 0, 11], [-11, 0, 11]], [0, 2, 1, 0, 3, 2],
                       material=3)

    roots = [gltf.node(name="ground", mesh=ground)]
    # A 10 x 10 grid of plots, each a node (yaw and position) whose children are a rock or a chain link with an
    # arbitrary rotation and non-uniform scale (every fifth mirrored), and a plant.
    for i in range(10):
        for j in range(10):
            children = []
            scale = [0.6 + 0.8 * rng.random() for _ in range(3)]
            if rng.random() < 0.2:
                scale[0] = -scale[0]
            children.append(gltf.node(mesh=link if rng.random() < 0.4 else stone, translation=[0, 0.6, 0],
                                      rotation=rounded(quaternion(rng)), scale=rounded(scale)))
            children.append(gltf.node(mesh=fern, translation=rounded([0.6 * rng.random() - 0.3, 0, 0.7]),
                                      scale=rounded([1, 0.8 + 0.4 * rng.random(), 1])))
            yaw = math.pi * rng.random()
            roots.append(gltf.node(name=f"plot {i} {j}", translation=rounded([2 * i - 9, 0, 2 * j - 9]),
                                   rotation=rounded([0, math.sin(yaw / 2), 0, math.cos(yaw / 2)]),
                                   children=children))
    # Five hanging chains of six links, each link a child of the one above it: nested transforms five deep,
    # turned a quarter about the chain's axis at every link (given as a matrix).
    quarter_turn = [1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1]
    for c in range(5):
        parent = None
        for k in range(6):
            members = {"name": f"chain {c} link {k}", "mesh": link}
            if parent is None:
                members.update(translation=rounded([4 * c - 8, 6, -10]), rotation=[0, 0, 0.7071068, 0.7071068])
            else:
                members["matrix"] = quarter_turn[:12] + [1.4, 0, 0, 1]
            node = gltf.node(**members)
            if parent is None:
                roots.append(node)
            else:
                gltf.doc["nodes"][parent]["children"] = [node]
            parent = node
    # Four heaps of 25 pebbles (the rock, small), each pebble a child of its heap node; the second heap's matrix
    # mirrors, so its mirrored pebbles are mirrored twice (not mirrored in the world). Drawn after everything
    # above, so the instances before them stay as they were.
    for h in range(4):
        heap_scale = [-1.5 if h == 1 else 1.5, 1.5, 1.5]
        yaw = 2 * math.pi * rng.random()
        pebbles = []
        for _ in range(25):
            scale = [0.2 + 0.25 * rng.random() for _ in range(3)]
            if rng.random() < 0.25:
                scale[2] = -scale[2]
            pebbles.append(gltf.node(mesh=stone, translation=rounded([1.6 * rng.random() - 0.8, 0.1,
                                                                      1.6 * rng.random() - 0.8]),
                                     rotation=rounded(quaternion(rng)), scale=rounded(scale)))
        roots.append(gltf.node(name=f"heap {h}", translation=[7 * h - 10.5, 0, 11],
                               rotation=rounded([0, math.sin(yaw / 2), 0, math.cos(yaw / 2)]),
                               scale=heap_scale, children=pebbles))
    gltf.doc["scenes"][0]["nodes"] = roots
    gltf.write(out / "instanced-garden.gltf")


def thousand_rocks(out):
    """One rock mesh placed by 1,000 nodes on a 10 x 10 x 10 lattice, each at a random rotation and non-uniform
    scale (about one in five mirrored): a BLAS that a two-level build must store once."""
    rng = random.Random(1000)
    gltf = GltfWriter()
    gltf.doc["materials"] = [{"name": "stone", "pbrMetallicRoughness": {"baseColorFactor": [0.45, 0.42, 0.4, 1]}}]
    for key in ("textures", "images", "samplers"):
        del gltf.doc[key]
    stone = gltf.mesh("rock", *rock(rng), material=0)
    roots = []
    for i in range(1000):
        scale = [0.5 + 0.5 * rng.random() for _ in range(3)]
        if rng.random() < 0.2:
            scale[0] = -scale[0]
        roots.append(gltf.node(mesh=stone, translation=[2 * (i % 10), 2 * (i // 10 % 10), 2 * (i // 100)],
                               rotation=rounded(quaternion(rng), 3), scale=rounded(scale, 3)))
    gltf.doc["scenes"][0]["nodes"] = roots
    gltf.write(out / "thousand-rocks.gltf")


# --- city (glb, generated on demand, not shipped) --------------------------------------------------------------

CITY_BLOCK, CITY_STREET = 60.0, 12.0  # metres: a block's side, a street's width

class MeshBuilder:
    """One glTF primitive being built: float positions (and texture coordinates when `textured`), uint32 indices.
    Quads get four vertices of their own, so faces keep their own texture coordinates."""

    def __init__(self, textured=False):
        self.positions = array("f")
        self.uvs = array("f") if textured else None
        self.indices = array("I")

    def triangles(self):
        return len(self.indices) // 3

    def quad(self, a, b, c, d):
        """Corners counter-clockwise seen from the front; texture coordinates (0,1) (1,1) (1,0) (0,0)."""
        base = len(self.positions) // 3
        for p in (a, b, c, d):
            self.positions.extend(p)
        if self.uvs is not None:
            self.uvs.extend((0, 1, 1, 1, 1, 0, 0, 0))
        self.indices.extend((base, base + 1, base + 2, base, base + 2, base + 3))


def lathe(mesh, profile, sides, rings, offset=(0.0, 0.0, 0.0)):
    """A surface of revolution about the y axis: the (radius, height) polyline `profile` resampled to `rings`
    points evenly along its length, turned through `sides` segments; 2 * sides * (rings - 1) triangles."""
    lengths = [0.0]
    for (r0, y0), (r1, y1) in zip(profile, profile[1:]):
        lengths.append(lengths[-1] + math.hypot(r1 - r0, y1 - y0))
    samples, k = [], 0
    for i in range(rings):
        s = lengths[-1] * i / (rings - 1)
        while k < len(profile) - 2 and lengths[k + 1] < s:
            k += 1
        span = lengths[k + 1] - lengths[k]
        f = (s - lengths[k]) / span if span > 0 else 0.0
        samples.append((profile[k][0] + f * (profile[k + 1][0] - profile[k][0]),
                        profile[k][1] + f * (profile[k + 1][1] - profile[k][1])))
    ox, oy, oz = offset
    ring = [(math.cos(2 * math.pi * j / sides), math.sin(2 * math.pi * j / sides)) for j in range(sides + 1)]
    for (r0, y0), (r1, y1) in zip(samples, samples[1:]):
        for (c0, s0), (c1, s1) in zip(ring, ring[1:]):
            mesh.quad((ox + r0 * c0, oy + y0, oz - r0 * s0), (ox + r0 * c1, oy + y0, oz - r0 * s1),
                      (ox + r1 * c1, oy + y1, oz - r1 * s1), (ox + r1 * c0, oy + y1, oz - r1 * s0))


def rounded_box(mesh, half, steps, offset=(0.0, 0.0, 0.0), exponent=0.25):
    """A superellipsoid |x/a|^(2/e) + |y/b|^(2/e) + |z/c|^(2/e) = 1 (a box with rounded edges for small e) on a
    steps x 2*steps (latitude x longitude) grid: 4 * steps * steps triangles."""
    def signed_power(v, p):
        return math.copysign(abs(v) ** p, v)

    def point(i, j):
        lat = -math.pi / 2 + math.pi * i / steps
        lon = 2 * math.pi * j / (2 * steps)
        cl = signed_power(math.cos(lat), exponent)
        return (offset[0] + half[0] * cl * signed_power(math.cos(lon), exponent),
                offset[1] + half[1] * signed_power(math.sin(lat), exponent),
                offset[2] - half[2] * cl * signed_power(math.sin(lon), exponent))

    for i in range(steps):
        for j in range(2 * steps):
            mesh.quad(point(i, j), point(i, j + 1), point(i + 1, j + 1), point(i + 1, j))


def leaf_cards(mesh, rng, count, centre, radii, size):
    """`count` alpha-tested cards (quads of side `size`, random orientation) scattered in an ellipsoid."""
    for _ in range(count):
        while True:
            p = [2 * rng.random() - 1 for _ in range(3)]
            if dot(p, p) <= 1:
                break
        c = [centre[k] + radii[k] * p[k] for k in range(3)]
        m = random_rotation(rng)
        h = size / 2
        mesh.quad(*[transform(m, [x, y, 0], c) for x, y in ((-h, -h), (h, -h), (h, h), (-h, h))])


def window_walls(walls, glass, width, depth, columns, rows, row_height, inward=False, open_front=False):
    """The four walls of a width x depth box (centred on the origin, base at y = 0), each a grid of columns x rows
    recessed windows (9 quads a window: four frame quads, four reveals, the pane), facing out of the box or, with
    `inward`, into it; with `open_front`, no wall on the +z side."""
    up = (0.0, 1.0, 0.0)
    sides = (((0, 0, 1), width), ((1, 0, 0), depth), ((0, 0, -1), width), ((-1, 0, 0), depth))
    for outward, length in sides[1:] if open_front else sides:
        normal = tuple(-c for c in outward) if inward else outward
        right = cross(up, normal)
        half_other = (depth if length == width else width) / 2
        origin = [outward[k] * half_other - right[k] * length / 2 for k in range(3)]

        def at(u, v, inset):
            return tuple(origin[k] + right[k] * u + up[k] * v - normal[k] * inset for k in range(3))

        cell = length / columns
        mu, mv, recess = 0.2 * cell, 0.25 * row_height, 0.15
        for i in range(columns):
            for j in range(rows):
                u0, u1, v0, v1 = i * cell, (i + 1) * cell, j * row_height, (j + 1) * row_height
                a0, a1, b0, b1 = u0 + mu, u1 - mu, v0 + mv, v1 - mv
                for q in (((u0, v0), (u1, v0), (u1, b0), (u0, b0)), ((u0, b1), (u1, b1), (u1, v1), (u0, v1)),
                          ((u0, b0), (a0, b0), (a0, b1), (u0, b1)), ((a1, b0), (u1, b0), (u1, b1), (a1, b1))):
                    walls.quad(*[at(u, v, 0) for u, v in q])
                for (p, q) in (((a0, b0), (a1, b0)), ((a1, b0), (a1, b1)), ((a1, b1), (a0, b1)), ((a0, b1), (a0, b0))):
                    walls.quad(at(*p, 0), at(*p, recess), at(*q, recess), at(*q, 0))
                glass.quad(at(a0, b0, recess), at(a1, b0, recess), at(a1, b1, recess), at(a0, b1, recess))


def grid(mesh, width, depth, cells_x, cells_z, y=0.0, facing_up=True):
    """A horizontal width x depth rectangle centred on the y axis at height y, as cells_x x cells_z quads."""
    sx, sz = width / cells_x, depth / cells_z
    for i in range(cells_x):
        for j in range(cells_z):
            x0, z0 = -width / 2 + i * sx, -depth / 2 + j * sz
            corners = [(x0, y, z0 + sz), (x0 + sx, y, z0 + sz), (x0 + sx, y, z0), (x0, y, z0)]
            mesh.quad(*(corners if facing_up else corners[::-1]))


def building(columns, floors, width, depth, floor_height=3.2):
    """A tower on a width x depth footprint: four facades of columns x floors windows and a flat roof."""
    walls, glass = MeshBuilder(), MeshBuilder()
    window_walls(walls, glass, width, depth, columns, floors, floor_height)
    grid(walls, width, depth, 1, 1, y=floors * floor_height)
    return [(walls, "concrete"), (glass, "glass")]


def street_tile(size, cells):
    """The ground of one block and half its streets: a size x size grid of cells x cells quads, facing up."""
    ground = MeshBuilder()
    grid(ground, size, size, cells, cells)
    return [(ground, "asphalt")]


def lathe_prop(profile, sides, rings, material="metal"):
    mesh = MeshBuilder()
    lathe(mesh, profile, sides, rings)
    return [(mesh, material)]


def car(steps):
    body = MeshBuilder()
    rounded_box(body, (2.2, 0.55, 0.9), steps, offset=(0, 0.75, 0))
    rounded_box(body, (1.2, 0.45, 0.8), steps // 2, offset=(-0.2, 1.5, 0))
    wheels = MeshBuilder()
    for x in (-1.4, 1.4):
        for z in (-0.85, 0.85):
            rounded_box(wheels, (0.35, 0.35, 0.12), steps // 4, offset=(x, 0.35, z), exponent=1.0)
    return [(body, "paint"), (wheels, "rubber")]


def bench(steps):
    mesh = MeshBuilder()
    for half, offset in (((0.9, 0.04, 0.25), (0, 0.45, 0)), ((0.9, 0.25, 0.04), (0, 0.75, -0.25)),
                         ((0.05, 0.22, 0.22), (-0.8, 0.22, 0)), ((0.05, 0.22, 0.22), (0.8, 0.22, 0))):
        rounded_box(mesh, half, steps, offset=offset, exponent=0.3)
    return [(mesh, "wood")]


def tree(rng, cards, trunk_height, crown):
    trunk, leaves = MeshBuilder(), MeshBuilder(textured=True)
    lathe(trunk, [(0.35, 0), (0.25, 0.4 * trunk_height), (0.18, trunk_height), (0.05, trunk_height + crown)],
          16, 12)
    leaf_cards(leaves, rng, cards, (0, trunk_height + crown * 0.6, 0), (crown, crown * 0.8, crown), 0.5)
    return [(trunk, "bark"), (leaves, "leaf")]


def bush(rng, cards, radius):
    leaves = MeshBuilder(textured=True)
    leaf_cards(leaves, rng, cards, (0, radius * 0.6, 0), (radius, radius * 0.6, radius), 0.35)
    return [(leaves, "leaf")]


CITY_MATERIALS = {
    "concrete": {"pbrMetallicRoughness": {"baseColorFactor": [0.62, 0.6, 0.57, 1]}},
    "glass": {"pbrMetallicRoughness": {"baseColorFactor": [0.3, 0.4, 0.5, 1], "metallicFactor": 0.8}},
    "asphalt": {"pbrMetallicRoughness": {"baseColorFactor": [0.2, 0.2, 0.22, 1]}},
    "metal": {"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.5, 0.55, 1], "metallicFactor": 1}},
    "paint": {"pbrMetallicRoughness": {"baseColorFactor": [0.6, 0.1, 0.1, 1]}},
    "rubber": {"pbrMetallicRoughness": {"baseColorFactor": [0.05, 0.05, 0.05, 1]}},
    "wood": {"pbrMetallicRoughness": {"baseColorFactor": [0.45, 0.3, 0.15, 1]}},
    "bark": {"pbrMetallicRoughness": {"baseColorFactor": [0.35, 0.25, 0.15, 1]}},
    "leaf": {"alphaMode": "MASK", "alphaCutoff": 0.5, "doubleSided": True,
             "pbrMetallicRoughness": {"baseColorFactor": [0.25, 0.55, 0.15, 1], "baseColorTexture": {"index": 0}}},
}


# Towers: window columns per facade, floors, width, depth (metres); 1,440 to 99,360 triangles at detail 1.
CITY_BUILDINGS = ((4, 5, 14, 12), (6, 8, 18, 14), (8, 12, 20, 16), (10, 14, 16, 16), (12, 18, 18, 18),
                  (14, 20, 22, 18), (16, 24, 20, 20), (18, 28, 22, 22), (20, 32, 24, 20), (24, 36, 26, 24),
                  (28, 40, 28, 26), (30, 46, 30, 28))


def city_meshes(rng, detail):
    """The city's meshes by kind, each a list of (primitive, material); `detail` scales their triangle counts
    (1: 1k to 100k triangles each)."""
    def n(value, least=1):
        return max(least, round(value * detail))

    buildings = [building(n(c, 2), n(f, 2), w, d) for c, f, w, d in CITY_BUILDINGS]
    props = [
        lathe_prop([(0.15, 0), (0.1, 0.3), (0.07, 4.6), (0.35, 4.8), (0.0, 5.0)], n(32, 4), n(24, 3)),   # lamp
        lathe_prop([(0.12, 0), (0.12, 0.9), (0.0, 1.0)], n(24, 4), n(24, 3)),                          # bollard
        lathe_prop([(0.2, 0), (0.18, 0.5), (0.22, 0.6), (0.12, 0.75), (0.0, 0.8)], n(32, 4), n(40, 3)),  # hydrant
        lathe_prop([(0.3, 0), (0.33, 0.9), (0.35, 0.95), (0.0, 1.0)], n(40, 4), n(30, 3)),             # bin
        lathe_prop([(1.6, 0), (1.6, 0.5), (1.4, 0.55), (0.3, 0.6), (0.25, 1.8), (0.6, 1.9), (0.0, 2.0)],
                   n(96, 4), n(100, 3), "concrete"),                                                   # fountain
        lathe_prop([(0.1, 0), (0.08, 3.2), (0.3, 3.3), (0.3, 4.3), (0.0, 4.4)], n(32, 4), n(30, 3)),   # signal
        lathe_prop([(0.5, 0), (0.5, 0.6), (0.55, 0.65), (0.0, 0.7)], n(48, 4), n(30, 3), "concrete"),  # planter
        car(n(40, 4)), car(n(64, 4)), bench(n(12, 2)), bench(n(24, 2)),
    ]
    vegetation = [tree(rng, n(c, 2), h, r) for c, h, r in (
        (600, 2.5, 1.8), (1500, 3.0, 2.2), (3000, 3.5, 2.6), (5000, 4.0, 3.0), (8000, 4.5, 3.4), (12000, 5.0, 3.8))]
    vegetation += [bush(rng, n(c, 2), r) for c, r in ((500, 0.6), (1200, 0.8), (2500, 1.0), (6000, 1.3))]
    ground = [street_tile(CITY_BLOCK + CITY_STREET, n(24, 2))]
    return {"building": buildings, "prop": props, "vegetation": vegetation, "ground": ground}


def yaw_quaternion(angle):
    return [0.0, math.sin(angle / 2), 0.0, math.cos(angle / 2)]


def city_layout(rng, meshes, blocks):
    """Instances as (kind, index, translation, yaw, scale), block by block on a blocks x blocks grid: the block's
    ground; eight buildings on a 3 x 3 lot grid around a courtyard of four trees and eight bushes (a fountain in
    one block of four); and along each of its four sidewalks 15 props and 10 trees."""
    pitch = CITY_BLOCK + CITY_STREET
    lot = CITY_BLOCK / 3
    placed = []
    for bx in range(blocks):
        for bz in range(blocks):
            cx, cz = (bx - (blocks - 1) / 2) * pitch, (bz - (blocks - 1) / 2) * pitch
            placed.append(("ground", 0, (cx, 0, cz), 0.0, 1.0))
            for i in range(3):
                for j in range(3):
                    x, z = cx + (i - 1) * lot, cz + (j - 1) * lot
                    if i == 1 and j == 1:
                        if rng.random() < 0.25:
                            placed.append(("prop", 4, (x, 0, z), 0.0, 1.0))
                        for _ in range(4):
                            placed.append(("vegetation", rng.randrange(6), (x + 12 * rng.random() - 6, 0,
                                           z + 12 * rng.random() - 6), 2 * math.pi * rng.random(), 1.0))
                        for _ in range(8):
                            placed.append(("vegetation", 6 + rng.randrange(4), (x + 16 * rng.random() - 8, 0,
                                           z + 16 * rng.random() - 8), 2 * math.pi * rng.random(), 1.0))
                        continue
                    k = rng.randrange(len(meshes["building"]))
                    placed.append(("building", k, (x, 0, z), math.pi / 2 * rng.randrange(4),
                                   min(1.0, 0.9 * lot / max(CITY_BUILDINGS[k][2:]))))
            for side in range(4):
                angle = math.pi / 2 * side
                along, out = (math.cos(angle), -math.sin(angle)), (math.sin(angle), math.cos(angle))
                edge = CITY_BLOCK / 2 + 2
                for s in range(15):
                    t = -CITY_BLOCK / 2 + 2 + 4 * s
                    p = (cx + along[0] * t + out[0] * edge, 0, cz + along[1] * t + out[1] * edge)
                    if s % 5 == 0:
                        k = 0  # lamps at regular intervals
                    else:
                        k = rng.choice([1, 2, 3, 5, 6, 7, 8, 9, 10])
                    if k in (7, 8):  # cars park on the street, beyond the kerb
                        p = (p[0] + out[0] * 4, 0, p[2] + out[1] * 4)
                    placed.append(("prop", k, p, angle + (0.0 if k in (7, 8) else 2 * math.pi * rng.random()), 1.0))
                for s in range(10):
                    t = -CITY_BLOCK / 2 + 3 + 6 * s
                    p = (cx + along[0] * t + out[0] * (edge - 1), 0, cz + along[1] * t + out[1] * (edge - 1))
                    placed.append(("vegetation", rng.randrange(6), p, 2 * math.pi * rng.random(),
                                   0.8 + 0.4 * rng.random()))
    return placed


def write_instanced_glb(path, meshes, materials, placed):
    """One .glb of `meshes` ({kind: [[(MeshBuilder, material name), ...], ...]}) placed by `placed` (a list of
    (kind, index, translation, yaw, scale)); the `leaf` material's base colour is the 32 x 32 leaf mask. Returns
    (instances, meshes, unique triangles, instanced triangles)."""
    gltf = GltfWriter()
    names = list(materials)
    gltf.doc["materials"] = [dict(name=name, **materials[name]) for name in names]
    size = 32
    rows = [[v for a in row for v in (200, a)] for row in leaf_mask(size)]
    gltf.doc["images"] = [{"name": "leaf", "mimeType": "image/png",
                           "bufferView": gltf.view(png_grey8(size, size, rows, colour_type=4))}]
    gltf.doc["samplers"] = [{"magFilter": 9728, "minFilter": 9728, "wrapS": 10497, "wrapT": 10497}]
    gltf.doc["textures"] = [{"sampler": 0, "source": 0}]
    mesh_index, triangles = {}, {}
    for kind, variants in meshes.items():
        for k, primitives in enumerate(variants):
            mesh_index[kind, k] = gltf.mesh_arrays(f"{kind} {k}", [(m, names.index(mat)) for m, mat in primitives])
            triangles[kind, k] = sum(m.triangles() for m, _ in primitives)
    instanced = 0
    for kind, k, translation, yaw, scale in placed:
        members = {"mesh": mesh_index[kind, k], "translation": rounded(translation, 3)}
        if yaw:
            members["rotation"] = rounded(yaw_quaternion(yaw), 6)
        if scale != 1.0:
            members["scale"] = rounded([scale] * 3, 4)
        gltf.node(**members)
        instanced += triangles[kind, k]
    gltf.doc["scenes"][0]["nodes"] = list(range(len(placed)))
    gltf.write_glb(path)
    return len(placed), len(mesh_index), sum(triangles.values()), instanced


def city(path, blocks=32, detail=1.0):
    """A city of blocks x blocks blocks as one .glb (docs: scenes/README.md): 34 meshes (12 towers, 11 street
    props, 6 trees and 4 bushes with alpha-tested leaf cards, a street tile), placed by 121 to 125 instances a
    block. Returns (instances, meshes, unique triangles, instanced triangles)."""
    mesh_rng, layout_rng = random.Random(2026), random.Random(72)
    meshes = city_meshes(mesh_rng, detail)
    return write_instanced_glb(path, meshes, CITY_MATERIALS, city_layout(layout_rng, meshes, blocks))


def city_main(argv):
    parser = argparse.ArgumentParser(prog="generate_scenes.py --city",
                                     description="Writes the city scene (a .glb of instanced meshes).")
    parser.add_argument("output", type=Path, help="the .glb file to write")
    parser.add_argument("--blocks", type=int, default=32,
                        help="blocks per side of the square city (default 32: 1,024 blocks, 1.2 billion instanced "
                             "triangles)")
    parser.add_argument("--detail", type=float, default=1.0,
                        help="scale of every mesh's triangle count (default 1: meshes of 1k to 100k triangles)")
    args = parser.parse_args(argv)
    if args.blocks < 1 or not 0 < args.detail <= 4:
        parser.error("--blocks must be at least 1 and --detail in (0, 4]")
    instances, meshes, unique, instanced = city(args.output, args.blocks, args.detail)
    print(f"{args.output}: {instances:,} instances of {meshes} meshes, {unique:,} unique triangles, "
          f"{instanced:,} instanced triangles")


# --- interior (glb, generated on demand and at build time, not shipped) ----------------------------------------

# Metres: a room's side, a storey's height, the hall's width, the gallery's depth, a floor slab's thickness.
ROOM, STOREY, HALL, GALLERY, SLAB = 8.0, 4.0, 12.0, 2.0, 0.3

INTERIOR_MATERIALS = {
    "plaster": {"pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.77, 0.7, 1]}},
    "painting": {"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.3, 0.2, 1]}},
    "floor": {"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.35, 0.2, 1]}},
    "stone": {"pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.68, 0.65, 1]}},
    "wood": CITY_MATERIALS["wood"],
    "metal": CITY_MATERIALS["metal"],
    "terracotta": {"pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.35, 0.2, 1]}},
    "bark": CITY_MATERIALS["bark"],
    "leaf": CITY_MATERIALS["leaf"],
}


def boxes(parts, steps, material, exponent=0.2):
    """One primitive of rounded boxes, each (half extents, centre)."""
    mesh = MeshBuilder()
    for half, centre in parts:
        rounded_box(mesh, half, steps, offset=centre, exponent=exponent)
    return [(mesh, material)]


def room_shell(niches, cells):
    """A room open toward +z (the hall): floor, ceiling a slab below the next storey, and three walls of
    niches x 2 recessed panels, each holding a painting."""
    walls, paintings, floor = MeshBuilder(), MeshBuilder(), MeshBuilder()
    window_walls(walls, paintings, ROOM, ROOM, niches, 2, (STOREY - SLAB) / 2, inward=True, open_front=True)
    grid(floor, ROOM, ROOM, cells, cells)
    grid(walls, ROOM, ROOM, cells, cells, y=STOREY - SLAB, facing_up=False)
    return [(walls, "plaster"), (paintings, "painting"), (floor, "floor")]


def hall_shell(length, cells):
    """The hall between the two rows of rooms: its floor, the gallery slabs along both sides at the upper storey
    (top and underside), the roof over the galleries around an open skylight, and the two end walls."""
    stone, plaster = MeshBuilder(), MeshBuilder()
    grid(stone, length, HALL, cells * 2, cells // 2 + 1)
    side = HALL / 2 - GALLERY / 2
    strips = MeshBuilder()
    for y, up in ((STOREY, True), (STOREY - SLAB, False), (2 * STOREY - SLAB, False)):
        grid(strips, length, GALLERY, cells * 2, 1, y=y, facing_up=up)
    for z in (-side, side):
        positions = strips.positions
        for k in range(2, len(positions), 3):
            stone.positions.append(positions[k - 2])
            stone.positions.append(positions[k - 1])
            stone.positions.append(positions[k] + z)
        base = len(stone.positions) // 3 - len(positions) // 3
        stone.indices.extend(base + i for i in strips.indices)
    for x in (-length / 2, length / 2):
        inward = 1 if x < 0 else -1
        for i in range(cells):
            z0, z1 = -HALL / 2 + HALL * i / cells, -HALL / 2 + HALL * (i + 1) / cells
            a, b = (x, 0, z0), (x, 0, z1)
            c, d = (x, 2 * STOREY, z1), (x, 2 * STOREY, z0)
            plaster.quad(*((a, b, c, d) if inward < 0 else (b, a, d, c)))
    return [(stone, "stone"), (plaster, "plaster")]


def chair(steps):
    legs = [((0.03, 0.22, 0.03), (x, 0.22, z)) for x in (-0.2, 0.2) for z in (-0.2, 0.2)]
    return boxes([((0.24, 0.03, 0.24), (0, 0.46, 0)), ((0.24, 0.25, 0.03), (0, 0.74, -0.22))] + legs, steps, "wood")


def table(steps):
    legs = [((0.04, 0.37, 0.04), (x, 0.37, z)) for x in (-0.8, 0.8) for z in (-0.4, 0.4)]
    return boxes([((0.9, 0.03, 0.5), (0, 0.76, 0))] + legs, steps, "wood")


def bookcase(rng, steps, books):
    """A frame of five shelves holding `books` books of random size."""
    frame = [((0.6, 1.0, 0.03), (0, 1.0, -0.17)), ((0.03, 1.0, 0.2), (-0.6, 1.0, 0)), ((0.03, 1.0, 0.2), (0.6, 1.0, 0))]
    frame += [((0.6, 0.02, 0.2), (0, 0.4 * k + 0.02, 0)) for k in range(6)]
    volumes = []
    for i in range(books):
        shelf, slot = i % 5, i // 5
        width, height = 0.02 + 0.02 * rng.random(), 0.12 + 0.1 * rng.random()
        x = -0.55 + (1.1 * (slot + 0.5) / max(1, (books + 4) // 5))
        volumes.append(((width, height / 2, 0.1 + 0.05 * rng.random()), (x, 0.4 * shelf + 0.04 + height / 2, 0)))
    return boxes(frame, steps, "wood") + boxes(volumes, 2, "painting", exponent=0.5)


def potted_plant(rng, sides, cards, radius):
    pot, leaves = MeshBuilder(), MeshBuilder(textured=True)
    lathe(pot, [(0.18, 0), (0.28, 0.45), (0.3, 0.5), (0.0, 0.5)], sides, sides // 2 + 2)
    leaf_cards(leaves, rng, cards, (0, 0.5 + radius, 0), (radius, radius, radius), 0.3)
    return [(pot, "terracotta"), (leaves, "leaf")]


def planter_tree(rng, sides, cards):
    planter = MeshBuilder()
    lathe(planter, [(0.9, 0), (0.9, 0.6), (1.0, 0.65), (0.0, 0.7)], sides, 6)
    return [(planter, "stone")] + tree(rng, cards, 3.0, 1.6)


def interior_meshes(rng, rooms, detail):
    """The interior's meshes by kind, each a list of (primitive, material); `detail` scales their triangle counts."""
    def n(value, least=1):
        return max(least, round(value * detail))

    column = [(0.35, 0), (0.35, 0.3), (0.25, 0.4), (0.22, STOREY - SLAB - 0.5), (0.35, STOREY - SLAB - 0.2),
              (0.4, STOREY - SLAB), (0.0, STOREY - SLAB)]
    return {
        "shell": [room_shell(n(6, 2), n(16, 2)), hall_shell(rooms * ROOM, n(16, 2))],
        "furniture": [chair(n(4, 2)), table(n(6, 2)), bookcase(rng, n(3, 2), n(40, 5)),
                      boxes([((0.4, 0.4, 0.4), (0, 0.4, 0))], n(6, 2), "wood", exponent=0.1),             # crate
                      lathe_prop([(0.3, 0), (0.36, 0.45), (0.3, 0.9), (0.0, 0.9)], n(32, 4), n(16, 3), "wood"),
                      lathe_prop([(0.1, 0), (0.25, 0.3), (0.12, 0.7), (0.16, 0.8), (0.0, 0.8)], n(48, 4), n(40, 3),
                                 "terracotta"),                                                             # urn
                      lathe_prop([(0.2, 0), (0.03, 0.1), (0.03, 1.6), (0.25, 1.7), (0.0, 1.9)], n(32, 4), n(24, 3)),
                      bench(n(12, 2))],
        "column": [lathe_prop(column, n(24, 4), n(16, 3), "stone")],
        "plant": [potted_plant(rng, n(24, 4), n(c, 2), r) for c, r in ((300, 0.35), (900, 0.6))] +
                 [planter_tree(rng, n(32, 4), n(4000, 2))],
    }


def interior_layout(rng, rooms):
    """Instances as (kind, index, translation, yaw, scale): two storeys of `rooms` rooms on each side of the hall,
    each room furnished at random; the hall's columns on both storeys, benches, lamps and trees on its floor, plants
    along the galleries."""
    length = rooms * ROOM
    placed = [("shell", 1, (0, 0, 0), 0.0, 1.0)]
    for storey in range(2):
        y = storey * STOREY
        for side in (-1, 1):
            yaw = 0.0 if side < 0 else math.pi  # the room's open side toward the hall
            for r in range(rooms):
                cx, cz = -length / 2 + ROOM * (r + 0.5), side * (HALL / 2 + ROOM / 2)
                placed.append(("shell", 0, (cx, y, cz), yaw, 1.0))

                def at(u, v):  # room coordinates (u across, v from the back wall toward the hall)
                    return (cx + u, y, cz + side * (ROOM / 2 - v))

                tu, tv = 2 * rng.random() - 1, 3.5 + rng.random()
                placed.append(("furniture", 1, at(tu, tv), 0.0, 1.0))
                for du, dv, turn in ((-0.5, -0.8, 0), (0.5, -0.8, 0), (-0.5, 0.8, 1), (0.5, 0.8, 1)):
                    if rng.random() < 0.85:
                        placed.append(("furniture", 0, at(tu + du, tv + dv), yaw + math.pi * turn +
                                       0.3 * (rng.random() - 0.5), 1.0))
                for s in range(rng.randrange(1, 4)):
                    placed.append(("furniture", 2, at(-2.8 + 2 * s, 0.4), yaw + math.pi, 1.0))
                for corner in (-1, 1):
                    placed.append(("plant", rng.randrange(2), at(corner * 3.4, 7.0 if corner < 0 else 1.0),
                                   2 * math.pi * rng.random(), 0.8 + 0.4 * rng.random()))
                for _ in range(rng.randrange(4)):
                    k = rng.choice([3, 4, 5])
                    placed.append(("furniture", k, at(3.2 - 1.2 * rng.random(), 2.5 + 3 * rng.random()),
                                   2 * math.pi * rng.random(), 1.0))
                if rng.random() < 0.5:
                    placed.append(("furniture", 6, at(-3.2, 3.0 + 2 * rng.random()), 0.0, 1.0))
        edge = HALL / 2 - GALLERY
        for c in range(2 * rooms + 1):
            x = -length / 2 + ROOM / 2 * c
            for z in (-edge, edge):
                placed.append(("column", 0, (x, y, z), 0.0, 1.0))
            if storey == 1 and c < 2 * rooms and rng.random() < 0.6:
                placed.append(("plant", rng.randrange(2), (x + ROOM / 4, y, rng.choice([-1, 1]) * (edge + 1.0)),
                               2 * math.pi * rng.random(), 1.0))
    for r in range(rooms):
        x = -length / 2 + ROOM * (r + 0.5)
        if r % 2 == 0:
            placed.append(("plant", 2, (x, 0, 0), 2 * math.pi * rng.random(), 1.0))
        else:
            for z in (-2.5, 2.5):
                placed.append(("furniture", 7, (x, 0, z), 0.0 if z < 0 else math.pi, 1.0))
        placed.append(("furniture", 6, (x + ROOM / 2, 0, rng.choice([-1, 1]) * 2.0), 0.0, 1.0))
    return placed


def interior(path, rooms=8, detail=1.0):
    """A two-storey interior as one .glb (docs: scenes/README.md): rooms on both sides of a hall with galleries.
    Returns (instances, meshes, unique triangles, instanced triangles)."""
    mesh_rng, layout_rng = random.Random(31), random.Random(3131)
    meshes = interior_meshes(mesh_rng, rooms, detail)
    return write_instanced_glb(path, meshes, INTERIOR_MATERIALS, interior_layout(layout_rng, rooms))


def interior_main(argv):
    parser = argparse.ArgumentParser(prog="generate_scenes.py --interior",
                                     description="Writes the interior scene (a .glb of instanced meshes), the "
                                                 "stand-in workload of `hwbvh machine reproduce`.")
    parser.add_argument("output", type=Path, help="the .glb file to write")
    parser.add_argument("--rooms", type=int, default=8,
                        help="rooms per side of the hall on each storey (default 8: 32 rooms)")
    parser.add_argument("--detail", type=float, default=1.0,
                        help="scale of every mesh's triangle count (default 1)")
    args = parser.parse_args(argv)
    if not 1 <= args.rooms <= 64 or not 0 < args.detail <= 4:
        parser.error("--rooms must be in 1..64 and --detail in (0, 4]")
    instances, meshes, unique, instanced = interior(args.output, args.rooms, args.detail)
    print(f"{args.output}: {instances:,} instances of {meshes} meshes, {unique:,} unique triangles, "
          f"{instanced:,} instanced triangles")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--city":
        city_main(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--interior":
        interior_main(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--mask-cards":
        if len(sys.argv) != 4:
            sys.exit("usage: generate_scenes.py --mask-cards MASK_FOLDER OUTPUT_FOLDER")
        mask_cards(sys.argv[2], Path(sys.argv[3]))
        return
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        # An option this form does not take (--help among them) is not a folder to write into.
        print(__doc__.strip(), file=sys.stderr if sys.argv[1] not in ("-h", "--help") else sys.stdout)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "scenes"
    out.mkdir(parents=True, exist_ok=True)
    cornell_box(out)
    rotated_objects(out)
    alpha_cards(out)
    overflow_fan(out)
    instanced_garden(out)
    thousand_rocks(out)


if __name__ == "__main__":
    main()
