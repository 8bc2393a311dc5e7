#!/usr/bin/env python3
"""Dam break: the surge front of each SPH solver against Martin & Moyce (1952).

The experiment's water column (width a = 2.25 in, height 2a) collapses in a
closed tank; the front's distance z from the back wall is plotted as
Z = z / a against T = t sqrt(2 g / a), with the measurements (their Table 2,
two transcriptions in tests/data/). The same case as
scripts/dam_break_validation.sh (a thin slab 4 particles deep between
free-slip walls), run from Python for every solver of the `solver` parameter.

    PYTHONPATH=build/python python3 docs/examples/dam_break.py              # docs/plot-dam-break.png
    PYTHONPATH=build/python python3 docs/examples/dam_break.py --resolution 40 --out big.png
    PYTHONPATH=build/python python3 docs/examples/dam_break.py --quick --out /tmp/t.png

--resolution K: particles across the column's width (default 16: 2 048
particles, about a minute for both solvers on 2 CPU cores with PoCL; the
cost grows like K^4 for WCSPH).
"""
import argparse
import math
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
try:
    import eddy
except ImportError:  # run from a checkout without PYTHONPATH: the build tree's module
    sys.path.insert(0, str(REPO / "build" / "python"))
    import eddy

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

A = 0.05715   # column width a (m): 2.25 in
G = 9.81      # gravity (m/s^2), eddy's default
DATA = [("mm1952_front_n2eq2_a2.25in_table2_ocellaris.csv", "Martin & Moyce 1952 (Table 2)", "ko"),
        ("mm1952_front_n2eq2_lethe.csv", "Martin & Moyce 1952 (as in Lethe)", "k^")]


def read_experiment(path):
    """T, Z columns of a validation CSV (lines starting with # are its source notes)."""
    t, z = [], []
    for line in path.read_text().splitlines():
        if not line or line.startswith("#") or line.startswith("T"):
            continue
        a, b = line.split(",")[:2]
        t.append(float(a))
        z.append(float(b))
    return t, z


def run(solver, per_a, t_end_dimensionless, samples, device):
    dx = A / per_a
    params = {"solver": solver, "spacing": dx, "column_width": A, "column_height": 2 * A,
              "depth": 4 * dx, "tank_length": 4.5 * A, "tank_height": 1.3 * 2 * A}
    s = eddy.Simulation(sim="sph", scene="dam_break", params=params, device=device)
    scale = math.sqrt(2 * G / A)  # T = t * scale
    T, Z = [0.0], [s.diagnostics()["front_x"] / A]
    wall = time.perf_counter()
    for k in range(1, samples + 1):
        s.run_until(t_end_dimensionless * k / samples / scale)
        d = s.diagnostics()
        T.append(d["time"] * scale)
        Z.append(d["front_x"] / A)
    wall = time.perf_counter() - wall
    print(f"{solver}: {s.n} particles, {s.steps} steps to t = {s.time:.4f} s "
          f"in {wall:.1f} s on {s.device['name']}", flush=True)
    return T, Z, s.n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "plot-dam-break.png"), help="PNG to write")
    ap.add_argument("--resolution", type=int, default=16,
                    help="particles across the column width a (default 16; 40 for a finer run)")
    ap.add_argument("--solvers", default=None,
                    help="comma-separated solvers (default: every choice of the solver parameter)")
    ap.add_argument("--until", type=float, default=3.0, help="end time T = t sqrt(2g/a) (default 3)")
    ap.add_argument("--samples", type=int, default=60, help="front samples per run (default 60)")
    ap.add_argument("--device", default=None, help="gpu, cpu or P:D (default: a GPU, else a CPU)")
    ap.add_argument("--data", default=str(REPO / "tests" / "data"),
                    help="folder with the Martin & Moyce CSVs (default tests/data)")
    ap.add_argument("--quick", action="store_true",
                    help="a small, short run (tests): resolution 6, T up to 1, 10 samples")
    args = ap.parse_args()
    if args.quick:
        args.resolution, args.until, args.samples = 6, 1.0, 10
    solvers = (args.solvers.split(",") if args.solvers
               else eddy.parameters("sph")["solver"]["choices"])

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for name, label, style in DATA:
        path = pathlib.Path(args.data) / name
        if path.exists():
            t, z = read_experiment(path)
            ax.plot(t, z, style, mfc="none", label=label)
    n = 0
    for solver in solvers:
        T, Z, n = run(solver, args.resolution, args.until, args.samples, args.device)
        ax.plot(T, Z, "-", lw=1.8, label=f"eddy {solver}")
    ax.set_xlabel(r"$T = t\,\sqrt{2g/a}$")
    ax.set_ylabel(r"surge front $Z = z/a$")
    ax.set_title(f"Dam break, column 2a x a, a/dx = {args.resolution} ({n} particles)")
    ax.set_xlim(0, args.until)
    ax.text(0.98, 0.03, "the column is released at T = 0; the experiment's gate took time\n"
            "(Lethe's example shifts its curve by T = 0.175)",
            transform=ax.transAxes, ha="right", va="bottom", fontsize=8, color="0.35")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
