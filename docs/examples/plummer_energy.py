#!/usr/bin/env python3
"""Plummer sphere: relative energy error against time, direct summation and tree code.

A Plummer sphere in Henon units (G = M = 1, E = -1/4) integrated with the
kick-drift-kick leapfrog, once with every pair summed (method=direct) and
once with the Barnes-Hut tree (method=tree, theta 0.5 by default). The
leapfrog keeps the energy error bounded; with few bodies both errors sit near
1e-6 (float32 sums and close encounters), with more bodies or a larger theta
the tree's force errors show (N = 2 048 to t = 4: direct 4.5e-7, tree 7.1e-6
at the end on PoCL).

    PYTHONPATH=build/python python3 docs/examples/plummer_energy.py          # docs/plot-plummer-energy.png
    PYTHONPATH=build/python python3 docs/examples/plummer_energy.py --n 65536 --device gpu --out big.png
    PYTHONPATH=build/python python3 docs/examples/plummer_energy.py --quick --out /tmp/t.png

Default: 1 024 bodies to t = 4 (about a minute on 2 CPU cores with PoCL).
"""
import argparse
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


def run(method, n, dt, softening, theta, t_end, samples, device, seed):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=n, device=device,
                        params={"method": method, "dt": dt, "softening": softening,
                                "theta": theta, "seed": seed})
    e0 = s.diagnostics()["total"]
    t, err = [], []
    wall = time.perf_counter()
    for k in range(1, samples + 1):
        s.run_until(t_end * k / samples)
        d = s.diagnostics()
        t.append(d["time"])
        err.append(abs((d["total"] - e0) / e0))
    wall = time.perf_counter() - wall
    print(f"{method}: N = {s.n}, {s.steps} steps to t = {s.time:.3f} in {wall:.1f} s, "
          f"|dE/E| at the end {err[-1]:.2e} (E0 = {e0:.6f})", flush=True)
    return t, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "plot-plummer-energy.png"), help="PNG to write")
    ap.add_argument("--n", type=int, default=1024, help="bodies (default 1024)")
    ap.add_argument("--dt", type=float, default=0.002, help="time step (default 0.002)")
    ap.add_argument("--softening", type=float, default=0.01, help="Plummer softening (default 0.01)")
    ap.add_argument("--theta", type=float, default=0.5, help="tree opening angle (default 0.5)")
    ap.add_argument("--until", type=float, default=4.0, help="end time (default 4, Henon units)")
    ap.add_argument("--samples", type=int, default=40, help="energy samples per run (default 40)")
    ap.add_argument("--seed", type=int, default=1, help="the scene's random seed")
    ap.add_argument("--device", default=None, help="gpu, cpu or P:D (default: a GPU, else a CPU)")
    ap.add_argument("--quick", action="store_true", help="a small, short run (tests): N 256 to t = 0.2")
    args = ap.parse_args()
    if args.quick:
        args.n, args.until, args.samples = 256, 0.2, 5

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for method, style in (("direct", "-"), ("tree", "--")):
        t, err = run(method, args.n, args.dt, args.softening, args.theta, args.until,
                     args.samples, args.device, args.seed)
        label = f"method={method}" + (f" (theta {args.theta:g})" if method == "tree" else "")
        ax.semilogy(t, [max(e, 1e-12) for e in err], style, lw=1.8, label=label)
    ax.set_xlabel("time (Henon units)")
    ax.set_ylabel(r"$|E(t) - E_0| \,/\, |E_0|$")
    ax.set_title(f"Plummer sphere, N = {args.n}, dt = {args.dt:g}, softening {args.softening:g}")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
