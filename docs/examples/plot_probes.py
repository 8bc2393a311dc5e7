#!/usr/bin/env python3
"""Plots a probe CSV (eddy-cli run --probe-out, header step,time,NAME,...).

    python3 docs/examples/plot_probes.py probes.csv --config docs/examples/stl_obstacle_probes.json --out probes.png
    python3 docs/examples/plot_probes.py probes.csv --level G1 G2 --out probes.png

Pressure probes (Pa) go in the upper panel, level gauges (m) in the lower
one. Which column is which comes from the config's "probes" (--config) or
from --level NAME ...; without either, every column is drawn in one panel.
A scene's built-in probes are named in docs/USAGE.md ("Probes"): give their
kinds with --level (e.g. H1 H2 H3 H4). Needs only matplotlib.
"""
import argparse
import csv
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402


def probe_kinds(config_path):
    """NAME -> "pressure" | "level", from a config file's "probes"."""
    with open(config_path) as f:
        probes = json.load(f).get("probes", [])
    kinds = {}
    for p in probes:
        if isinstance(p, str):  # "pressure:NAME:x,y,z" or "level:NAME:x,z"
            kind, name = p.split(":")[:2]
        else:
            kind, name = p["type"], p["name"]
        kinds[name] = kind
    return kinds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="the probe CSV (--probe-out)")
    ap.add_argument("--config", help="the run's config file: the probes' kinds")
    ap.add_argument("--level", nargs="*", default=[], metavar="NAME", help="level gauges (m)")
    ap.add_argument("--out", default="probes.png", help="the PNG to write (default probes.png)")
    a = ap.parse_args()

    with open(a.csv, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if not header or header[:2] != ["step", "time"]:
            sys.exit(f"{a.csv}: not a probe CSV (its header must start with step,time)")
        rows = [r for r in reader if r]
    if not rows:
        sys.exit(f"{a.csv}: no samples")
    names = header[2:]
    cols = {n: [float(r[i + 2]) for r in rows] for i, n in enumerate(names)}
    t = [float(r[1]) for r in rows]

    kinds = probe_kinds(a.config) if a.config else {}
    kinds.update({n: "level" for n in a.level})
    unknown = [n for n in a.level if n not in cols]
    if unknown:
        sys.exit(f"--level {' '.join(unknown)}: no such column in {a.csv} (columns: {', '.join(names)})")
    levels = [n for n in names if kinds.get(n) == "level"]
    pressures = [n for n in names if n not in levels]

    panels = [(pressures, "pressure (Pa)"), (levels, "water level (m)")] if kinds else [(names, "value")]
    panels = [p for p in panels if p[0]]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(8, 3.2 * len(panels)), squeeze=False)
    for ax, (group, label) in zip(axes[:, 0], panels):
        for n in group:
            ax.plot(t, cols[n], label=n, lw=1.2)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", ncol=min(4, len(group)), fontsize=8)
    axes[-1, 0].set_xlabel("t (s)")
    fig.suptitle(f"{a.csv}: {len(rows)} samples, t = {t[0]:.3g} .. {t[-1]:.3g} s")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    peak = {n: max(cols[n]) for n in names if all(math.isfinite(v) for v in cols[n])}
    print(f"wrote {a.out}: " + ", ".join(f"{n} max {v:.4g}" for n, v in peak.items()))


if __name__ == "__main__":
    main()
