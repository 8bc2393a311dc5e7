#!/usr/bin/env python3
"""Writes the small meshes of tests/data/ and data/meshes/obstacle.stl (issue 12).

Run from the repository root: python3 scripts/make_test_meshes.py
Deterministic (no randomness): running it again rewrites identical files.

tests/data/
  cube.stl              unit cube centred at the origin, ASCII STL, 12 triangles
  cube_binary.stl       the same cube, binary STL
  cube.obj, cube.ply    the same cube as Wavefront OBJ and ASCII PLY (shared vertices)
  icosphere.stl         icosphere of radius 0.5, 3 subdivisions (1280 triangles), binary
  inward_cube.stl       the cube with every triangle wound inwards (negative volume)
  open_box.stl          the cube without its top face (10 triangles): not closed
  flipped_face_cube.stl the cube with one triangle turned over: inconsistent orientation
  empty.stl             an ASCII STL with no triangles
  degenerate.stl        an ASCII STL whose 4 triangles all have zero area
data/meshes/
  obstacle.stl          a ramp with a rounded nose for the mesh_obstacle scene: x in
                        [-0.5, 0.5] (the ramp rises along +x), y in [0, 0.3] (it stands
                        on y = 0), z in [-0.3, 0.3]; closed, 792 triangles, binary STL
"""
import math
import os
import struct


def write_ascii_stl(path, tris, name="eddy"):
    with open(path, "w") as f:
        f.write(f"solid {name}\n")
        for a, b, c in tris:
            n = normal(a, b, c)
            f.write(f"  facet normal {n[0]:.9g} {n[1]:.9g} {n[2]:.9g}\n    outer loop\n")
            for v in (a, b, c):
                f.write(f"      vertex {v[0]:.9g} {v[1]:.9g} {v[2]:.9g}\n")
            f.write("    endloop\n  endfacet\n")
        f.write(f"endsolid {name}\n")


def write_binary_stl(path, tris):
    with open(path, "wb") as f:
        f.write(b"eddy binary STL".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for a, b, c in tris:
            f.write(struct.pack("<3f", *normal(a, b, c)))
            for v in (a, b, c):
                f.write(struct.pack("<3f", *v))
            f.write(struct.pack("<H", 0))


def normal(a, b, c):
    u = [b[i] - a[i] for i in range(3)]
    w = [c[i] - a[i] for i in range(3)]
    n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]]
    length = math.sqrt(sum(x * x for x in n))
    return [x / length for x in n] if length > 0 else [0.0, 0.0, 0.0]


# Unit cube centred at the origin: 8 corners, 12 outward (counter-clockwise) triangles.
CUBE_V = [(x, y, z) for z in (-0.5, 0.5) for y in (-0.5, 0.5) for x in (-0.5, 0.5)]
# index = x + 2y + 4z
CUBE_QUADS = [  # outward, counter-clockwise seen from outside
    (0, 4, 6, 2),  # x = -0.5
    (1, 3, 7, 5),  # x = +0.5
    (0, 1, 5, 4),  # y = -0.5
    (2, 6, 7, 3),  # y = +0.5
    (0, 2, 3, 1),  # z = -0.5
    (4, 5, 7, 6),  # z = +0.5
]
CUBE_F = [t for q in CUBE_QUADS for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))]


def cube_tris(faces=CUBE_F):
    return [tuple(CUBE_V[i] for i in f) for f in faces]


def icosphere(levels, radius):
    t = (1 + math.sqrt(5)) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    v = [tuple(x / math.sqrt(sum(c * c for c in p)) for x in p) for p in v]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
         (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
         (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        mid = {}

        def midpoint(a, b):
            key = (min(a, b), max(a, b))
            if key not in mid:
                p = [(v[a][i] + v[b][i]) / 2 for i in range(3)]
                n = math.sqrt(sum(c * c for c in p))
                v.append(tuple(c / n for c in p))
                mid[key] = len(v) - 1
            return mid[key]

        nf = []
        for a, b, c in f:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            nf += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        f = nf
    return [tuple(tuple(radius * x for x in v[i]) for i in tri) for tri in f]


def obstacle():
    """A ramp with a rounded nose, extruded along z: profile (x, y) counter-clockwise."""
    prof = []
    for i in range(10):  # bottom, x from -0.5 to 0.2
        prof.append((-0.5 + 0.7 * i / 10, 0.0))
    for i in range(24):  # quarter circle, centre (0.2, 0), radius 0.3, from (0.5, 0) up to (0.2, 0.3)
        a = 0.5 * math.pi * i / 24
        prof.append((0.2 + 0.3 * math.cos(a), 0.3 * math.sin(a)))
    for i in range(10):  # the ramp, from (0.2, 0.3) down to (-0.5, 0)
        s = i / 10
        prof.append((0.2 - 0.7 * s, 0.3 - 0.3 * s))
    nz, z0, z1 = 8, -0.3, 0.3
    zs = [z0 + (z1 - z0) * k / nz for k in range(nz + 1)]
    tris = []
    n = len(prof)
    for i in range(n):
        (xa, ya), (xb, yb) = prof[i], prof[(i + 1) % n]
        for k in range(nz):
            # quad a(z_k), b(z_k), b(z_k+1), a(z_k+1): outward normal (dy, -dx) for a counter-clockwise profile
            p00, p10 = (xa, ya, zs[k]), (xb, yb, zs[k])
            p11, p01 = (xb, yb, zs[k + 1]), (xa, ya, zs[k + 1])
            tris += [(p00, p10, p11), (p00, p11, p01)]
    cx = sum(p[0] for p in prof) / n
    cy = sum(p[1] for p in prof) / n
    for i in range(n):  # caps: fans from the profile's mean point (the profile is convex)
        (xa, ya), (xb, yb) = prof[i], prof[(i + 1) % n]
        tris.append(((cx, cy, z1), (xa, ya, z1), (xb, yb, z1)))  # +z cap
        tris.append(((cx, cy, z0), (xb, yb, z0), (xa, ya, z0)))  # -z cap
    return tris


def main():
    os.makedirs("tests/data", exist_ok=True)
    os.makedirs("data/meshes", exist_ok=True)
    write_ascii_stl("tests/data/cube.stl", cube_tris(), "cube")
    write_binary_stl("tests/data/cube_binary.stl", cube_tris())
    with open("tests/data/cube.obj", "w") as f:
        f.write("# unit cube centred at the origin (eddy scripts/make_test_meshes.py)\n")
        for p in CUBE_V:
            f.write(f"v {p[0]} {p[1]} {p[2]}\n")
        for q in CUBE_QUADS:  # quads: Assimp triangulates them
            f.write("f " + " ".join(str(i + 1) for i in q) + "\n")
    with open("tests/data/cube.ply", "w") as f:
        f.write("ply\nformat ascii 1.0\ncomment unit cube centred at the origin (eddy)\n")
        f.write(f"element vertex {len(CUBE_V)}\nproperty float x\nproperty float y\nproperty float z\n")
        f.write(f"element face {len(CUBE_F)}\nproperty list uchar int vertex_indices\nend_header\n")
        for p in CUBE_V:
            f.write(f"{p[0]} {p[1]} {p[2]}\n")
        for t in CUBE_F:
            f.write(f"3 {t[0]} {t[1]} {t[2]}\n")
    write_binary_stl("tests/data/icosphere.stl", icosphere(3, 0.5))
    write_ascii_stl("tests/data/inward_cube.stl", [(a, c, b) for a, b, c in cube_tris()], "inward")
    write_ascii_stl("tests/data/open_box.stl", cube_tris([f for f in CUBE_F if f not in CUBE_F[6:8]]), "open")
    flipped = list(CUBE_F)
    flipped[0] = (flipped[0][0], flipped[0][2], flipped[0][1])
    write_ascii_stl("tests/data/flipped_face_cube.stl", cube_tris(flipped), "flipped")
    write_ascii_stl("tests/data/empty.stl", [], "empty")
    degenerate = [((0, 0, 0), (1, 0, 0), (2, 0, 0)), ((0, 0, 0), (0, 1, 0), (0, 3, 0)),
                  ((1, 1, 1), (1, 1, 1), (2, 2, 2)), ((0, 0, 1), (0, 0, 1), (0, 0, 1))]
    write_ascii_stl("tests/data/degenerate.stl", degenerate, "degenerate")
    write_binary_stl("data/meshes/obstacle.stl", obstacle())


if __name__ == "__main__":
    main()
