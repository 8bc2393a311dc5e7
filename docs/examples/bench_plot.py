#!/usr/bin/env python3
"""Benchmark plots from `eddy-cli bench ... --json` output.

Reads one or more JSON files written by `eddy-cli bench realtime|nbody|sph
--json` and draws, against N (log-log):

  realtime  the real-time factor (simulated s per wall s) and steps/s, per solver
  nbody     pair interactions/s (the tree's direct-equivalent N^2 / t) and ms per
            gravity evaluation, per force method
  sph       particle-steps/s and device ms per step, per neighbour-search mode

    build/app/eddy-cli bench realtime --n 6612,51984 --json > rt.json
    python3 docs/examples/bench_plot.py rt.json --out rt.png
    python3 docs/examples/bench_plot.py docs/bench/h200-realtime.json --out docs/plot-bench-realtime.png

Several files of one kind are drawn together, labelled by device. No eddy
module is needed: this reads files only.
"""
import argparse
import json
import pathlib
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

# kind -> (group-by key, [(y key or function, y label)], title)
KINDS = {
    "realtime": ("solver", [("realtime_factor", "real-time factor (simulated s / wall s)"),
                            ("steps_per_s", "steps / s")],
                 "SPH dam break (bench realtime)"),
    "nbody": ("method", [("pair_interactions_per_s", "pair interactions / s (tree: N² / t)"),
                         ("gravity_ms", "ms per gravity evaluation")],
              "N-body gravity, Plummer sphere (bench nbody)"),
    "sph": ("mode", [("particle_steps_per_s", "particle-steps / s"),
                     ("step_ms", "device ms per step")],
            "SPH step, dam-break block at rest (bench sph)"),
}


def load(paths):
    """kind -> list of (device label, rows)."""
    found = defaultdict(list)
    for p in paths:
        doc = json.loads(pathlib.Path(p).read_text())
        if not isinstance(doc, dict):
            raise SystemExit(f"{p}: expected a JSON object from eddy-cli bench --json")
        dev = doc.get("device", {}).get("name", "unknown device")
        kinds = [k for k in KINDS if k in doc]
        if not kinds:
            raise SystemExit(f"{p}: no {', '.join(KINDS)} rows (eddy-cli bench realtime|nbody|sph --json)")
        for k in kinds:
            found[k].append((dev, doc[k]))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="+", help="output of eddy-cli bench ... --json")
    ap.add_argument("--out", required=True, help="PNG to write")
    ap.add_argument("--title", default=None, help="figure title (default: the benchmark's)")
    args = ap.parse_args()
    found = load(args.json)
    panels = [(k, y) for k in KINDS if k in found for y in KINDS[k][1]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), dpi=120, squeeze=False)
    several = sum(len(v) for v in found.values()) > 1
    for ax, (kind, (ykey, ylabel)) in zip(axes[0], panels):
        group_key = KINDS[kind][0]
        for dev, rows in found[kind]:
            groups = defaultdict(list)
            for r in rows:
                if ykey in r and "n" in r:
                    groups[r.get(group_key, "")].append((r["n"], r[ykey]))
            for name, pts in groups.items():
                pts.sort()
                label = f"{name} ({dev})" if several else str(name)
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
        ax.set_xlabel("N (particles / bodies)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        ax.legend()
    devices = sorted({dev for v in found.values() for dev, _ in v})
    title = args.title or "; ".join(KINDS[k][2] for k in KINDS if k in found) + " on " + ", ".join(devices)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
