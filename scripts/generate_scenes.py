#!/usr/bin/env python3
"""Writes the project's own small test scenes into scenes/ (see scenes/README.md).

Deterministic: fixed seeds, fixed number formatting, and a PNG written with stored (uncompressed) deflate
blocks, so running it again reproduces every file byte for byte, whatever the zlib version. Python 3 standard
library only.

    python3 scripts/generate_scenes.py [output-folder]     (default: scenes/ next to this script's folder)
    python3 scripts/generate_scenes.py --mask-cards MASK_FOLDER OUTPUT_FOLDER

The second form writes only mask-cards.obj and mask-cards.mtl: the alpha-cards layout with one material per
*.png mask in MASK_FOLDER (e.g. ../shared/scenes/masks), referenced by absolute path, so the files belong to
this machine and are not committed.
"""

import math
import random
import struct
import sys
import zlib
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


def png_grey8(width, height, rows):
    """An 8-bit greyscale PNG; the zlib stream uses stored blocks so the bytes never depend on zlib."""
    raw = b"".join(b"\x00" + bytes(row) for row in rows)  # filter type 0 on every row
    blocks = []
    for start in range(0, len(raw), 65535):
        block = raw[start:start + 65535]
        final = 1 if start + 65535 >= len(raw) else 0
        blocks.append(struct.pack("<BHH", final, len(block), 0xFFFF ^ len(block)) + block)
    stream = b"\x78\x01" + b"".join(blocks) + struct.pack(">I", zlib.adler32(raw))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


def alpha_cards(out):
    size, samples = 128, 4
    rows = []
    for py in range(size):
        row = []
        for px in range(size):
            covered = sum(leaf_coverage((px + (i + 0.5) / samples) / size, (py + (j + 0.5) / samples) / size)
                          for i in range(samples) for j in range(samples))
            row.append(round(255 * covered / (samples * samples)))
        rows.append(row)
    (out / "alpha-cards-mask.png").write_bytes(png_grey8(size, size, rows))

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


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--mask-cards":
        if len(sys.argv) != 4:
            sys.exit("usage: generate_scenes.py --mask-cards MASK_FOLDER OUTPUT_FOLDER")
        mask_cards(sys.argv[2], Path(sys.argv[3]))
        return
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "scenes"
    out.mkdir(parents=True, exist_ok=True)
    cornell_box(out)
    rotated_objects(out)
    alpha_cards(out)
    overflow_fan(out)


if __name__ == "__main__":
    main()
