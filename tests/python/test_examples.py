"""The examples in docs/examples/ run as they are and write their PNGs
(issue 16), each on a small case (--quick)."""
import json
import os
import subprocess
import sys

import matplotlib.image as mpimg
import numpy as np
import pytest

from conftest import REPO, run_cli

EXAMPLES = REPO / "docs" / "examples"


def run_example(script, *args):
    p = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                       capture_output=True, text=True, timeout=600, env=os.environ.copy())
    assert p.returncode == 0, f"{script} failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def check_png(path):
    assert path.exists(), path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert np.ptp(img[..., :3]) > 0.5, "a plot, not a blank image"


def test_dam_break_example(tmp_path):
    out = tmp_path / "dam.png"
    text = run_example("dam_break.py", "--quick", "--out", out)
    check_png(out)
    # every solver ran
    for solver in ("wcsph", "dfsph"):
        assert f"{solver}: " in text, text


def test_plummer_energy_example(tmp_path):
    out = tmp_path / "plummer.png"
    text = run_example("plummer_energy.py", "--quick", "--out", out)
    check_png(out)
    assert "direct: N = 256" in text and "tree: N = 256" in text, text


def test_bench_plot_example_from_cli_json(tmp_path):
    _, rt, _ = run_cli("bench", "realtime", "--n", 300, "--until", 0.002, "--json")
    (tmp_path / "rt.json").write_text(rt)
    _, nb, _ = run_cli("bench", "nbody", "--n", 256, "--steps", 2, "--json")
    (tmp_path / "nb.json").write_text(nb)
    out = tmp_path / "bench.png"
    run_example("bench_plot.py", tmp_path / "rt.json", tmp_path / "nb.json", "--out", out)
    check_png(out)


@pytest.mark.parametrize("name", ["h200-realtime.json", "h200-nbody.json"])
def test_bench_plot_of_the_recorded_figures(tmp_path, name):
    src = REPO / "docs" / "bench" / name
    json.loads(src.read_text())
    out = tmp_path / "recorded.png"
    run_example("bench_plot.py", src, "--out", out)
    check_png(out)


def test_bench_plot_refuses_other_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"something": []}')
    p = subprocess.run([sys.executable, str(EXAMPLES / "bench_plot.py"), str(bad), "--out",
                        str(tmp_path / "x.png")], capture_output=True, text=True)
    assert p.returncode != 0 and "no realtime, nbody, sph rows" in p.stderr


def test_stl_obstacle_probes_walkthrough(tmp_path):
    # docs/USAGE.md, "A case with an STL obstacle and probes": the shipped
    # config (a relative mesh path, probes as strings and objects) runs as
    # written, only coarser and shorter, and its probe CSV plots.
    cfg = EXAMPLES / "stl_obstacle_probes.json"
    probes, diag = tmp_path / "probes.csv", tmp_path / "diag.csv"
    _, out, _ = run_cli("run", "--config", cfg, "--set", "spacing=0.04", "--until", 0.05,
                        "--probe-out", probes, "--diag", diag, "--json")
    r = json.loads(out)
    assert r["boundary_particles"] > 0 and r["final"]["penetrations"] == 0 and r["final"]["escaped"] == 0
    header = probes.read_text().splitlines()[0]
    assert header == "step,time,F1,W1,W2,G1,G2,G3"
    assert r["probes"]["G1"] > 0.1  # the column still stands at x = 0.15 m after 0.05 s
    png = tmp_path / "probes.png"
    text = run_example("plot_probes.py", probes, "--config", cfg, "--out", png)
    check_png(png)
    assert "G1 max" in text and "W1 max" in text, text
    # a file that is not a probe CSV is refused with its name
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n")
    p = subprocess.run([sys.executable, str(EXAMPLES / "plot_probes.py"), str(bad), "--out", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "not a probe CSV" in p.stderr
