#!/usr/bin/python3
"""Reads eddy's ParaView export back with VTK's own reader (Debian's
python3-vtk9) and compares every value with what eddy computed.

Run by CTest (tests/CMakeLists.txt): check_vtk.py EDDY_CLI WORKDIR

1. Makes fresh random initial conditions (a prime body count), runs
   `eddy-cli run --ic ... --export DIR --export-every 7 --steps 30 --out final.csv`.
2. Parses DIR/eddy.pvd (plain XML, as ParaView does): the frames are steps
   0, 7, 14, 21, 28, 30 with timestep = step * dt.
3. Reads every .vtp with vtkXMLPolyDataReader: N points, N vertex cells,
   point data "velocity" (3) and "mass" (1), field data TimeValue.
4. Frame 0 equals the initial conditions (as float32); frame 30 equals
   final.csv exactly; frame 14 equals a separate 14-step run's --out.
"""
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def read_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = np.array([[float(c) for c in line.split(",")] for line in f if line.strip()])
    assert header == ["x", "y", "z", "vx", "vy", "vz", "m"], header
    return rows


def read_vtp(path):
    r = vtkXMLPolyDataReader()
    r.SetFileName(path)
    r.Update()
    check(r.GetErrorCode() == 0, f"{path}: reader error {r.GetErrorCode()}")
    return r.GetOutput()


def main():
    cli, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    seed = int(os.environ.get("EDDY_TEST_SEED", random.randrange(1 << 30)))
    print("seed", seed)
    rng = np.random.default_rng(seed)
    n, dt, steps, every = 131, 0.003, 30, 7
    ic = os.path.join(work, "ic.csv")
    pos = rng.normal(size=(n, 3))
    vel = 0.3 * rng.normal(size=(n, 3))
    mass = rng.uniform(0.5, 1.5, size=n) / n
    with open(ic, "w") as f:
        f.write("x,y,z,vx,vy,vz,m\n")
        for i in range(n):
            f.write(",".join(repr(float(v)) for v in (*pos[i], *vel[i], mass[i])) + "\n")
    out_dir = os.path.join(work, "frames")
    final = os.path.join(work, "final.csv")
    common = [cli, "run", "--device", "cpu", "--ic", ic, "--set", f"dt={dt}",
              "--set", "softening=0.05", "--quiet"]
    subprocess.run(common + ["--steps", str(steps), "--export", out_dir,
                             "--export-every", str(every), "--out", final,
                             "--overwrite"], check=True)
    mid = os.path.join(work, "mid.csv")
    subprocess.run(common + ["--steps", "14", "--out", mid], check=True)

    tree = ET.parse(os.path.join(out_dir, "eddy.pvd"))
    root = tree.getroot()
    check(root.get("type") == "Collection", "pvd type")
    sets = root.find("Collection").findall("DataSet")
    want_steps = [0, 7, 14, 21, 28, 30]
    check([int(s.get("file")[5:14]) for s in sets] == want_steps,
          f"pvd frames {[s.get('file') for s in sets]}")
    frames = {}
    for s, step in zip(sets, want_steps):
        t = float(s.get("timestep"))
        check(abs(t - step * dt) <= 1e-12, f"timestep {t} for step {step}")
        data = read_vtp(os.path.join(out_dir, s.get("file")))
        check(data.GetNumberOfPoints() == n, f"step {step}: {data.GetNumberOfPoints()} points")
        check(data.GetNumberOfVerts() == n, f"step {step}: {data.GetNumberOfVerts()} verts")
        tv = vtk_to_numpy(data.GetFieldData().GetArray("TimeValue"))
        check(tv.shape == (1,) and tv[0] == t, f"step {step}: TimeValue {tv} vs pvd {t}")
        p = vtk_to_numpy(data.GetPoints().GetData())
        v = vtk_to_numpy(data.GetPointData().GetArray("velocity"))
        m = vtk_to_numpy(data.GetPointData().GetArray("mass"))
        check(p.shape == (n, 3) and v.shape == (n, 3) and m.shape == (n,), f"step {step}: shapes")
        check(p.dtype == np.float32 and v.dtype == np.float32, "float32 arrays")
        frames[step] = (p, v, m)

    p, v, m = frames[0]
    check(np.array_equal(p, pos.astype(np.float32)), "frame 0 positions == initial conditions")
    check(np.array_equal(v, vel.astype(np.float32)), "frame 0 velocities == initial conditions")
    check(np.array_equal(m, mass.astype(np.float32)), "frame 0 masses == initial conditions")
    for step, path in ((30, final), (14, mid)):
        ref = read_csv(path).astype(np.float32)  # eddy wrote float32 values as exact doubles
        p, v, m = frames[step]
        check(np.array_equal(p, ref[:, 0:3]), f"frame {step} positions == --out")
        check(np.array_equal(v, ref[:, 3:6]), f"frame {step} velocities == --out")
        check(np.array_equal(m, ref[:, 6]), f"frame {step} masses == --out")
    check(not np.array_equal(frames[30][0], frames[0][0]), "the bodies moved")
    print(f"{len(frames)} frames checked; {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
