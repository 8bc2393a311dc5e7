"""The Python module's API (issue 16): every call, its arrays, its errors,
and its agreement with eddy-cli on the same run."""
import csv
import json
import math
import pathlib
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import NBODY_N, REPO, SPH_SMALL, cli_error, run_cli


# ---- module-level functions -------------------------------------------------

def test_module_functions(eddy):
    devs = eddy.devices()
    assert devs, "PoCL gives at least one device"
    for d in devs:
        assert set(d) == {"platform", "name", "type", "driver", "index", "compute_units",
                          "global_mem_bytes", "gl_sharing"}
        assert d["type"] in ("GPU", "CPU", "accelerator", "other")
        assert re.fullmatch(r"\d+:\d+", d["index"]), d["index"]
    assert eddy.simulations() == ["nbody", "sph"]
    assert eddy.scenes("sph")[0] == "dam_break"
    assert "plummer" in eddy.scenes("nbody")
    params = eddy.parameters("nbody")
    assert params["dt"]["type"] == "float" and params["dt"]["min"] > 0
    assert params["method"]["type"] == "choice" and "tree" in params["method"]["choices"]
    assert params["seed"]["type"] == "int" and params["seed"]["rebuild"]
    with pytest.raises(ValueError, match=r"sim='fluid': unknown simulation; known: nbody, sph"):
        eddy.scenes("fluid")
    with pytest.raises(ValueError, match="unknown simulation"):
        eddy.parameters("fluid")
    assert isinstance(eddy.__version__, str)
    assert issubclass(eddy.BlowUpError, eddy.Error) and issubclass(eddy.Error, RuntimeError)
    # An empty string is refused, not taken as the default (as the CLI's --sim '').
    for key in ("sim", "scene", "ic", "device"):
        with pytest.raises(ValueError, match=key + ": the string is empty"):
            eddy.Simulation(**{key: ""})


def test_parameters_and_devices_equal_eddy_cli_json(eddy):
    """eddy.parameters() and `eddy-cli params --json` give the same dicts;
    eddy.devices() has the same values as `eddy-cli devices --json`, which
    adds the device limits."""
    for sim in eddy.simulations():
        _, out, _ = run_cli("params", "--json", "--sim", sim)
        cli = {p["name"]: p for p in json.loads(out)["params"]}
        assert cli == eddy.parameters(sim), sim
    _, out, _ = run_cli("devices", "--json")
    cli = json.loads(out)["devices"]
    devs = eddy.devices()
    assert len(cli) == len(devs)
    for c, d in zip(cli, devs):
        assert {k: c[k] for k in d} == d


# ---- construction, properties, arrays ---------------------------------------

def test_sph_arrays_shapes_dtypes(eddy):
    s = eddy.Simulation(sim="sph", scene="dam_break", params=SPH_SMALL)
    assert s.sim == "sph" and s.scene == "dam_break"
    assert s.steps == 0 and s.time == 0.0
    n = s.n
    assert n > 0
    # device=None picks as eddy-cli does: the first GPU, else the first CPU device.
    devs = eddy.devices()
    first = next((d for d in devs if d["type"] == "GPU"), None) or \
        next((d for d in devs if d["type"] == "CPU"), devs[0])
    assert s.device == first
    s.step()
    s.step(4)
    assert s.steps == 5 and s.time > 0
    pos, vel = s.positions(), s.velocities()
    assert pos.shape == (n, 3) and pos.dtype == np.float32 and pos.flags["C_CONTIGUOUS"]
    assert vel.shape == (n, 3) and vel.dtype == np.float32
    assert s.fields() == ["velocity", "density", "pressure"]
    rho, p = s.density(), s.pressure()
    assert rho.shape == (n,) and rho.dtype == np.float32 and p.dtype == np.float32
    np.testing.assert_array_equal(rho, s.field("density"))
    st = s.state()
    assert st["step"] == 5 and st["time"] == pytest.approx(s.time)
    for k in ("positions", "velocity", "density", "pressure"):
        assert st[k].dtype == np.float32 and st[k].shape[0] == n
    np.testing.assert_array_equal(st["positions"], pos)
    assert np.all(np.isfinite(pos)) and np.all(rho > 0)
    with pytest.raises(ValueError, match="field 'mass': not a per-particle field.*density"):
        s.field("mass")
    with pytest.raises(AttributeError):
        s.mass()
    # The arrays are the caller's: changing one changes nothing in the simulation.
    pos[:] = 0
    assert np.any(s.positions() != 0)


def test_default_simulation_is_the_sph_dam_break(eddy):
    s = eddy.Simulation(params=SPH_SMALL)
    assert s.sim == "sph" and s.scene == "dam_break"
    assert "n=" in repr(s) and "sph" in repr(s)


def test_nbody_arrays_and_mass(eddy):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    assert s.n == NBODY_N
    assert s.fields() == ["velocity", "mass"]
    m = s.mass()
    assert m.shape == (NBODY_N,) and m.dtype == np.float32
    assert math.isclose(float(m.astype(np.float64).sum()), 1.0, rel_tol=1e-5)  # Henon units
    s.step(3)
    assert s.steps == 3
    assert s.time == pytest.approx(3 * s.params["dt"])


@pytest.mark.parametrize("solver", ["wcsph", "dfsph"])
def test_reading_between_steps_changes_nothing(eddy, solver):
    # Reading (state, diagnostics) re-runs the density phase so that density and
    # pressure belong to the positions; the run must go on with the same bits.
    a = eddy.Simulation(params={**SPH_SMALL, "solver": solver})
    b = eddy.Simulation(params={**SPH_SMALL, "solver": solver})
    for _ in range(3):
        a.step(4)
        a.state()
        a.diagnostics()
        a.time
    b.step(12)
    sa, sb = a.state(), b.state()
    assert sa["time"] == sb["time"]
    for k in ("positions", "velocity", "density", "pressure"):
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)


def test_diagnostics_and_profile(eddy):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    s.step(5)
    d = s.diagnostics()
    assert list(d) == ["step", "time", "kinetic", "potential", "total", "px", "py", "pz",
                       "lx", "ly", "lz"]
    assert d["step"] == 5 and d["total"] == pytest.approx(d["kinetic"] + d["potential"])
    prof = s.profile()
    assert {"drift", "gravity"} <= set(prof)
    g = prof["gravity"]
    assert set(g) == {"last_ms", "mean_ms", "min_ms", "max_ms", "total_ms", "launches"}
    assert g["launches"] >= 5 and g["min_ms"] <= g["mean_ms"] <= g["max_ms"]
    s.profile(reset=True)
    assert s.profile() == {} or all(v["launches"] == 0 for v in s.profile().values())
    s.step(2)
    assert s.profile()["gravity"]["launches"] == 2
    sph = eddy.Simulation(params=SPH_SMALL)
    assert "front_x" in sph.diagnostics() and "density_error" in sph.diagnostics()


# ---- agreement with eddy-cli --------------------------------------------------

def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]])


@pytest.mark.parametrize("case", ["nbody", "sph"])
def test_positions_match_cli_out_bit_for_bit(eddy, tmp_path, case):
    out = tmp_path / "final.csv"
    if case == "nbody":
        s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N, params={"dt": 0.002})
        cli = ["--sim", "nbody", "--scene", "plummer", "--n", NBODY_N, "--set", "dt=0.002"]
        fields = [("vx", "velocity", 0), ("vy", "velocity", 1), ("vz", "velocity", 2),
                  ("m", "mass", None)]
    else:
        s = eddy.Simulation(sim="sph", params=SPH_SMALL)
        cli = ["--sim", "sph", "--set", f"spacing={SPH_SMALL['spacing']}"]
        fields = [("vx", "velocity", 0), ("vy", "velocity", 1), ("vz", "velocity", 2),
                  ("density", "density", None), ("pressure", "pressure", None)]
    s.step(20)
    run_cli("run", *cli, "--steps", 20, "--out", out, "--quiet")
    header, rows = read_csv(out)
    st = s.state()
    assert rows.shape[0] == s.n
    # The CSV holds each float's shortest round-trip text: equal as float64 means equal bits.
    for k, name in enumerate("xyz"):
        np.testing.assert_array_equal(st["positions"][:, k].astype(np.float64),
                                      rows[:, header.index(name)])
    for col, field, comp in fields:
        a = st[field] if comp is None else st[field][:, comp]
        np.testing.assert_array_equal(a.astype(np.float64), rows[:, header.index(col)])


# ---- params ---------------------------------------------------------------

def test_params_view(eddy):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    p = s.params
    assert "dt" in p and "nope" not in p and 3 not in p
    assert len(p) == len(list(p)) == len(p.keys()) == len(eddy.parameters("nbody"))
    assert dict(p) == p.to_dict() == dict(p.items())
    assert list(p.values()) == [p[k] for k in p]
    assert isinstance(p["dt"], float) and isinstance(p["seed"], int) and p["method"] == "auto"
    assert p.get("nope", 7) == 7 and p.get("dt") == p["dt"]
    assert p.info("theta")["description"] and p.info("dt")["unit"] == "model time"
    with pytest.raises(KeyError, match="unknown parameter 'nope'"):
        p["nope"]
    with pytest.raises(TypeError):
        del p["dt"]
    p["dt"] = 0.002                      # a float
    p["theta"] = "0.7"                   # text, read as --set reads it
    p["method"] = "direct"               # an enum by its choice's name
    p["energy_warning"] = np.float32(0.5)  # a NumPy scalar
    assert (p["dt"], p["theta"], p["method"], p["energy_warning"]) == (0.002, 0.7, "direct", 0.5)
    assert "eddy.Params(" in repr(p)
    p["seed"] = p["seed"]                # a rebuild parameter may be "set" to its own value
    p.update({"dt": 0.003, "G": 2})
    assert (p["dt"], p["G"]) == (0.003, 2.0)
    with pytest.raises(ValueError, match="'dt' = 5 is out of range"):
        p.update({"G": 3, "dt": 5})
    assert p["G"] == 2.0, "update() sets nothing when one value is refused"


def test_param_errors_carry_the_cli_messages(eddy):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    cases = [("dt", 5, "dt=5"),                   # out of range
             ("nope", 1, "nope=1"),               # unknown key
             ("dt", "abc", "dt=abc"),             # not a number
             ("method", "fastest", "method=fastest"),  # not a choice
             ("seed", 1.5, "seed=1.5")]           # not a whole number
    for key, value, assignment in cases:
        with pytest.raises(ValueError) as e:
            s.params[key] = value
        code, cli = cli_error("run", "--sim", "nbody", "--n", 16, "--steps", 1, "--set", assignment)
        assert code == 2
        assert cli == f"--set {assignment}: {e.value}", (cli, str(e.value))
    # Wrong Python types: the config file's words.
    with pytest.raises(ValueError, match=r"parameter 'dt': expected a number, got an object of type list"):
        s.params["dt"] = [1]
    with pytest.raises(ValueError, match=r"parameter 'method': expected a string, one of: direct, tree, auto, got a number"):
        s.params["method"] = 1
    with pytest.raises(ValueError, match=r"parameter 'dt': expected a number, got a bool"):
        s.params["dt"] = True
    with pytest.raises(ValueError, match=r"parameter 'dt': value must be a finite number"):
        s.params["dt"] = float("nan")
    with pytest.raises(ValueError, match=r"parameter 'seed' applies only when the scene is built"):
        s.params["seed"] = 5
    # Constructor params are checked the same way, before the device is opened.
    with pytest.raises(ValueError, match=r"parameter 'dt' = 5 is out of range"):
        eddy.Simulation(sim="nbody", n=16, params={"dt": 5})
    with pytest.raises(ValueError, match=r"params: expected a dict"):
        eddy.Simulation(sim="nbody", n=16, params=[("dt", 0.1)])


def test_param_assignment_takes_effect_at_the_next_step(eddy):
    a = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    b = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    a.step(3)
    b.step(3)
    before = a.positions()
    a.params["G"] = 0.0                   # no gravity from the next step on
    a.params["dt"] = 0.004
    assert a.time == pytest.approx(0.003) and a.steps == 3
    np.testing.assert_array_equal(a.positions(), before)  # nothing happens until a step
    np.testing.assert_array_equal(a.positions(), b.positions())
    va = a.velocities()
    a.step(1)
    b.step(1)
    assert a.time == pytest.approx(0.003 + 0.004)
    assert not np.array_equal(a.positions(), b.positions())
    # With G = 0 the closing half kick is zero; the opening one used the stored
    # accelerations, recomputed with G = 0: velocities do not change at all.
    np.testing.assert_array_equal(a.velocities(), va)


def test_enum_parameter_switches_live(eddy):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N, params={"method": "direct"})
    s.step(2)
    s.params["method"] = "tree"
    s.step(2)
    assert "walk" in s.profile()


# ---- construction errors ------------------------------------------------------

def test_construction_errors_carry_the_cli_messages(eddy):
    with pytest.raises(ValueError) as e:
        eddy.Simulation(sim="nbody", scene="nope")
    _, cli = cli_error("run", "--sim", "nbody", "--scene", "nope")
    assert str(e.value) == "scene='nope'" + cli[len("--scene 'nope'"):]
    with pytest.raises(ValueError) as e:
        eddy.Simulation(sim="fluid")
    _, cli = cli_error("run", "--sim", "fluid")
    assert str(e.value) == "sim='fluid'" + cli[len("--sim 'fluid'"):]
    with pytest.raises(ValueError) as e:
        eddy.Simulation(sim="nbody", n=0)
    _, cli = cli_error("run", "--sim", "nbody", "--n", 0)
    assert str(e.value) == "n" + cli[len("--n"):]
    with pytest.raises(ValueError, match=r"n is not used by sim='sph': the particle count follows from the scene \(e.g. params=\{'spacing': 0.002\}\)"):
        eddy.Simulation(sim="sph", n=100)
    with pytest.raises(ValueError, match=r"n: expected a whole number"):
        eddy.Simulation(sim="nbody", n=2.5)
    with pytest.raises(ValueError, match="ic is only for sim=nbody"):
        eddy.Simulation(sim="sph", ic="bodies.csv")
    with pytest.raises(ValueError) as e:
        eddy.Simulation(sim="nbody", device="fast")
    _, cli = cli_error("run", "--sim", "nbody", "--device", "fast")
    assert str(e.value) == "device" + cli[len("--device"):]
    with pytest.raises(eddy.Error) as e:
        eddy.Simulation(sim="nbody", n=16, device="7:7")
    code, cli = cli_error("run", "--sim", "nbody", "--n", 16, "--device", "7:7")
    assert code == 1 and str(e.value).splitlines()[0] == cli


def test_step_and_run_until_argument_errors(eddy):
    s = eddy.Simulation(sim="nbody", n=16)
    with pytest.raises(ValueError, match=r"step: -1 is out of range"):
        s.step(-1)
    with pytest.raises(ValueError, match=r"step: expected a whole number"):
        s.step(1.5)
    with pytest.raises(ValueError, match=r"run_until: -1 is out of range \[0, 1e\+12\]"):
        s.run_until(-1)
    with pytest.raises(ValueError, match=r"run_until: nan is out of range"):
        s.run_until(float("nan"))
    s.step(0)
    assert s.steps == 0
    s.step(np.int64(2))
    assert s.steps == 2


def test_run_until(eddy):
    s = eddy.Simulation(params=SPH_SMALL)
    s.run_until(0.002)
    t, steps = s.time, s.steps
    assert t >= 0.002 and steps > 1
    # The first step with t >= T: one step less would not have reached it.
    assert t - s.diagnostics()["dt"] < 0.002
    s.run_until(0.001)  # already past: nothing to do
    assert s.steps == steps


def test_initial_conditions_and_blow_up(eddy, tmp_path):
    # A body at 3e38 per time unit with dt = 0.5 reaches infinity at step 3
    # (tests/test_robustness.cpp): the run stops with the CLI's message.
    ic = tmp_path / "boom.csv"
    ic.write_text("x,y,z,vx,vy,vz,m\n0,0,0,3e38,0,0,1\n5,0,0,0,0,0,1\n-5,0,0,0,0,0,1\n")
    s = eddy.Simulation(sim="nbody", ic=str(ic), params={"dt": 0.5})
    assert s.n == 3 and s.scene == f"ic:{ic}"
    with pytest.raises(eddy.BlowUpError) as e:
        s.step(5)
    code, cli = cli_error("run", "--ic", ic, "--set", "dt=0.5", "--steps", 5, "--quiet")
    assert code == 1 and str(e.value) == cli
    assert "blew up: 3 of 3 particles" in str(e.value)
    with pytest.raises(ValueError, match="ic replaces the scene"):
        eddy.Simulation(sim="nbody", ic=str(ic), n=3)
    with pytest.raises(eddy.Error, match="cannot open initial-conditions file"):
        eddy.Simulation(sim="nbody", ic=str(tmp_path / "missing.csv"))


# ---- files --------------------------------------------------------------------

@pytest.mark.parametrize("case", ["nbody", "nbody-tree", "wcsph", "dfsph"])
def test_save_load_continues_bit_identically(eddy, tmp_path, case):
    if case.startswith("nbody"):
        params = {"method": "tree"} if case == "nbody-tree" else {}
        s = eddy.Simulation(sim="nbody", scene="galaxies", n=NBODY_N, params=params)
    else:
        s = eddy.Simulation(sim="sph", params={**SPH_SMALL, "solver": case})
    s.step(7)
    path = tmp_path / "mid.snap"
    s.save(path)                     # a pathlib.Path works as a str
    s.step(13)
    straight = s.state()
    r = eddy.Simulation.load(str(path))
    assert r.steps == 7 and r.sim == s.sim and r.n == s.n
    assert r.params.to_dict() == {**s.params.to_dict()}
    r.step(13)
    again = r.state()
    assert again["step"] == straight["step"] == 20
    assert again["time"] == straight["time"]
    for k in straight:
        if isinstance(straight[k], np.ndarray):
            np.testing.assert_array_equal(again[k], straight[k], err_msg=k)


def test_load_and_save_errors(eddy, tmp_path):
    with pytest.raises(eddy.Error) as e:
        eddy.Simulation.load(tmp_path / "missing.snap")
    code, cli = cli_error("run", "--load", tmp_path / "missing.snap")
    assert code == 1 and str(e.value) == cli
    bad = tmp_path / "bad.snap"
    bad.write_bytes(b"EDDYSNAP not really")
    with pytest.raises(eddy.Error, match="bad.snap"):
        eddy.Simulation.load(bad)
    s = eddy.Simulation(sim="nbody", n=16)
    with pytest.raises(ValueError) as e:
        s.save(tmp_path / "no" / "such" / "dir.snap")
    code, cli = cli_error("run", "--sim", "nbody", "--n", 16, "--save", tmp_path / "no" / "such" / "dir.snap")
    assert code == 2 and str(e.value) == "save" + cli[len("--save"):]
    with pytest.raises(ValueError, match="expected a path"):
        s.save(None)


def test_export_vtk(eddy, tmp_path):
    s = eddy.Simulation(sim="nbody", scene="plummer", n=NBODY_N)
    out = tmp_path / "frames"
    pvd = s.export_vtk(out)
    s.step(5)
    assert s.export_vtk(out) == pvd
    assert pathlib.Path(pvd) == out / "eddy.pvd"
    frames = sorted(p.name for p in out.glob("step_*.vtp"))
    assert frames == ["step_000000000.vtp", "step_000000005.vtp"]
    times = [float(d.get("timestep")) for d in ET.parse(pvd).getroot().iter("DataSet")]
    assert times == [0.0, pytest.approx(s.time)]
    # A folder that holds other files is refused, as eddy-cli run --export refuses it.
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="the folder is not empty.*overwrite=True"):
        s.export_vtk(other)
    s.export_vtk(other, overwrite=True)
    assert (other / "notes.txt").exists() and (other / "eddy.pvd").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="cannot write to this folder"):
        s.export_vtk(tmp_path / "file")


def test_export_vtk_read_back_by_vtk(eddy, tmp_path):
    vtk = pytest.importorskip("vtk")  # python3-vtk9 (scripts/install-deps.sh)
    from vtk.util.numpy_support import vtk_to_numpy
    s = eddy.Simulation(params=SPH_SMALL)
    s.step(3)
    s.export_vtk(tmp_path)
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(str(tmp_path / "step_000000003.vtp"))
    r.Update()
    poly = r.GetOutput()
    np.testing.assert_array_equal(vtk_to_numpy(poly.GetPoints().GetData()), s.positions())
    np.testing.assert_array_equal(vtk_to_numpy(poly.GetPointData().GetArray("density")), s.density())


def test_from_config_file_and_dict(eddy, tmp_path):
    cfg = {"sim": "nbody", "scene": "plummer", "n": NBODY_N, "params": {"dt": 0.002, "method": "direct"},
           "steps": 10, "diag": "d.csv"}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(cfg))
    s = eddy.Simulation.from_config(path)
    assert (s.sim, s.scene, s.n, s.params["dt"], s.params["method"]) == ("nbody", "plummer", NBODY_N, 0.002, "direct")
    assert s.config["steps"] == 10 and s.config["diag"] == "d.csv"
    d = eddy.Simulation.from_config(cfg)
    assert d.params.to_dict() == s.params.to_dict()
    s.step(4)
    d.step(4)
    np.testing.assert_array_equal(s.positions(), d.positions())
    assert eddy.Simulation(sim="nbody", n=16).config is None
    # Config errors: the messages of eddy-cli run --config (a usage error there).
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sim": "nbody", "params": {"dt": 7}}))
    with pytest.raises(ValueError) as e:
        eddy.Simulation.from_config(bad)
    code, cli = cli_error("run", "--config", bad)
    assert code == 2 and cli == f"--config: {e.value}"
    with pytest.raises(ValueError, match=r"config: key 'scnee'|unknown key 'scnee'"):
        eddy.Simulation.from_config({"scnee": "plummer"})
    with pytest.raises(ValueError, match="cannot open config file"):
        eddy.Simulation.from_config(tmp_path / "missing.json")
    for bad in ([1], 3, b"c.json"):  # neither a path nor a dict
        with pytest.raises(ValueError, match="from_config: expected a path or a dict, got "):
            eddy.Simulation.from_config(bad)


# ---- probes, obstacles and bodies (issue 12 through the module) -------------

PROBES = ["pressure:P:0.02,0.01,0.004", "level:L:0.03,0.004"]


def test_probes_equal_the_cli_csv(eddy, tmp_path):
    # The same run, with the same probes and cadence: the module's samples are
    # the --probe-out CSV's rows, value for value.
    s = eddy.Simulation(sim="sph", scene="dam_break", params=SPH_SMALL, probes=PROBES, probe_every=5)
    assert s.probe_specs == PROBES
    s.step(20)
    got = s.probes()
    assert list(got) == ["step", "time", "P", "L"]
    out = tmp_path / "p.csv"
    run_cli("run", "--sim", "sph", "--scene", "dam_break", "--set", "spacing=0.005", "--steps", 20,
            *[a for p in PROBES for a in ("--probe", p)], "--probe-out", out, "--probe-every", 5)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == list(got["step"]) == [0, 5, 10, 15, 20]
    for name in ("time", "P", "L"):
        np.testing.assert_array_equal(got[name], np.array([float(r[name]) for r in rows]))
    # Physics, not only agreement: at the start the water stands still, the
    # probe 1 cm above the floor reads about rho g (column - 1 cm), the gauge
    # the column's height.
    assert got["P"][0] == pytest.approx(1000 * 9.81 * (0.1143 - 0.01), rel=0.15)
    assert got["L"][0] == pytest.approx(0.1143, abs=0.005)
    # More steps extend the same series; a second call does not repeat rows.
    s.step(5)
    again = s.probes()
    assert list(again["step"]) == [0, 5, 10, 15, 20, 25]


def test_probe_cadence_in_time_and_scene_probes(eddy):
    s = eddy.Simulation(sim="sph", scene="lobovsky_dam_break", params={"spacing": 0.03},
                        probes=[{"type": "level", "name": "G", "x": 0.1, "z": 0.01}], probe_dt=0.002)
    names = [p.split(":")[1] for p in s.probe_specs]
    assert names == ["S1", "S2", "S3", "S4", "H1", "H2", "H3", "H4", "G"]
    s.run_until(0.01)
    got = s.probes()
    t = got["time"]
    assert t[0] == 0 and len(t) >= 5
    # one sample at the first step at or after each multiple of 2 ms
    assert all(np.floor(t[1:] / 0.002 + 1e-6) > np.floor(t[:-1] / 0.002 + 1e-6))
    assert got["H1"][0] == pytest.approx(0.3, abs=0.03)  # the column's height at x = 0.3 m


def test_probe_errors(eddy):
    with pytest.raises(ValueError, match=r"probes\[0\]: .*"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes=["pressure:P:1,2"])
    with pytest.raises(ValueError, match=r"probes\[1\]: key 'kind': unknown key"):
        eddy.Simulation(sim="sph", params=SPH_SMALL,
                        probes=["level:A:0.1,0.004", {"kind": "level", "name": "B", "x": 0.1, "z": 0}])
    # Bad probe dicts: the config file's checks (probeSpecFromJson), worded
    # "probes[i]: ..." for the probe and "probes[i]: key 'KEY': ..." for a key.
    bad_dicts = [
        ({"type": "level", "name": "B", "x": 0.1}, r"probes\[0\]: the probe has no \"z\""),
        ({"type": "pressure", "name": "B", "x": 0.1, "z": 0}, r"probes\[0\]: a pressure probe needs \"y\""),
        ({"type": "level", "name": "B", "x": 0.1, "y": 0.1, "z": 0}, r"probes\[0\]: key 'y': a level probe has no"),
        ({"type": "speed", "name": "B", "x": 0.1, "z": 0}, r"probes\[0\]: key 'type': unknown probe type 'speed'"),
        ({"type": "level", "name": "B", "x": "0.1", "z": 0}, r"probes\[0\]: key 'x': expected a number, got a string"),
        ({"type": "level", "name": "", "x": 0.1, "z": 0}, r"probes\[0\]: key 'name': must not be empty"),
    ]
    for probe, message in bad_dicts:
        with pytest.raises(ValueError, match=message):
            eddy.Simulation(sim="sph", params=SPH_SMALL, probes=[probe])
    with pytest.raises(ValueError, match="given twice|twice"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes=["level:A:0.1,0.004", "level:A:0.2,0.004"])
    with pytest.raises(ValueError, match="outside"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes=["pressure:P:5,0.01,0.004"])
    with pytest.raises(ValueError, match="nbody has no probes"):
        eddy.Simulation(sim="nbody", n=NBODY_N, probes=["level:A:0.1,0.004"])
    with pytest.raises(ValueError, match="either probe_every or probe_dt"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes=PROBES, probe_every=2, probe_dt=0.1)
    with pytest.raises(ValueError, match="probe_every: there are no probes"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probe_every=2)
    with pytest.raises(ValueError, match="probe_dt: .* must be > 0"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes=PROBES, probe_dt=-1)
    with pytest.raises(ValueError, match="probe_dt: inf is out of range"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes=PROBES, probe_dt=float("inf"))
    with pytest.raises(ValueError, match="probes: expected a list"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, probes="level:A:0.1,0.004")
    s = eddy.Simulation(sim="sph", params=SPH_SMALL)
    assert s.probe_specs == [] and list(s.probes()) == ["step", "time"]


def test_load_goes_on_with_the_snapshots_probes(eddy, tmp_path):
    # A snapshot keeps the probes and their running means: loaded without
    # probes=, the rows after the restart step are the uninterrupted run's.
    a = eddy.Simulation(sim="sph", params=SPH_SMALL, probes=PROBES, probe_every=4)
    b = eddy.Simulation(sim="sph", params=SPH_SMALL, probes=PROBES, probe_every=4)
    a.step(30)
    b.step(14)
    snap = tmp_path / "p.snap"
    b.save(snap)
    first = b.probes()
    r = eddy.Simulation.load(snap)
    assert r.probe_specs == PROBES
    r.step(16)
    rest = r.probes()
    assert list(rest["step"]) == [16, 20, 24, 28]
    straight = a.probes()
    for key in straight:
        np.testing.assert_array_equal(np.concatenate([first[key], rest[key]]), straight[key])
    # Given again, a kept probe is that probe; another with its name is refused.
    assert eddy.Simulation.load(snap, probes=[PROBES[1]]).probe_specs == PROBES
    with pytest.raises(ValueError, match="the name 'L' is taken by one of the simulation's own probes"):
        eddy.Simulation.load(snap, probes=["level:L:0.05,0.004"])


BOX = "box:size=0.02,0.03,0.02:pos=0.03,0.015,0.02"  # in the water column
BODY = {"shape": "box", "size": [0.02, 0.02, 0.02], "position": [0.3, 0.12, 0.02], "density": 500}


def test_obstacles_and_bodies_as_keywords_and_config(eddy, tmp_path):
    params = {"spacing": 0.005, "depth": 0.04}
    a = eddy.Simulation(sim="sph", params=params, obstacles=[BOX], bodies=[BODY])
    cfg = {"sim": "sph", "params": params, "bodies": [BODY], "probes": PROBES, "probe_every": 4,
           "obstacles": [{"shape": "box", "size": [0.02, 0.03, 0.02], "position": [0.03, 0.015, 0.02]}]}
    b = eddy.Simulation.from_config(cfg)
    assert a.n == b.n and a.n < eddy.Simulation(sim="sph", params=params).n  # no fluid in the box
    assert a.diagnostics()["penetrations"] == 0
    a.step(12)
    b.step(12)
    np.testing.assert_array_equal(a.positions(), b.positions())
    bodies = a.bodies()
    assert list(bodies)[:4] == ["body", "x", "y", "z"] and len(bodies["x"]) == 1
    assert bodies["body"].dtype == np.int64 and list(bodies["body"]) == [0]  # an index
    assert bodies["x"].dtype == np.float64
    assert bodies["y"][0] < 0.12  # falling
    np.testing.assert_array_equal(bodies["y"], b.bodies()["y"])
    assert list(b.probes()["step"]) == [0, 4, 8, 12]
    # The snapshot keeps obstacles and bodies; probes are given again.
    snap = tmp_path / "s.snap"
    a.save(snap)
    r = eddy.Simulation.load(snap, probes=PROBES)
    assert r.probe_specs == PROBES and list(r.probes()["step"]) == [12]
    a.step(3)
    r.step(3)
    np.testing.assert_array_equal(a.positions(), r.positions())
    np.testing.assert_array_equal(a.bodies()["x"], r.bodies()["x"])
    assert eddy.Simulation(sim="sph", params=SPH_SMALL).bodies() == {}
    with pytest.raises(ValueError, match="nbody' has no obstacles"):
        eddy.Simulation(sim="nbody", n=NBODY_N, obstacles=[BOX])
    with pytest.raises(ValueError, match=r"obstacles\[0\]: key 'radius'"):
        eddy.Simulation(sim="sph", params=params, obstacles=[{"shape": "box", "radius": 1}])
    with pytest.raises(ValueError, match=r"bodies\[0\]: "):
        eddy.Simulation(sim="sph", params=params, bodies=["box:size=0.02,0.02,0.02:pos=0.3,0.1,0.02"])
    with pytest.raises(ValueError, match=r"obstacles\[0\]: expected a string or a dict, got int"):
        eddy.Simulation(sim="sph", params=params, obstacles=[3])




# ---- hostile input to the SPH features (solvers, solids, probes) ------------

def test_scene_checks_are_value_errors_before_the_device(eddy, tmp_path):
    # eddy-cli refuses these with exit 2 before it opens a device; the module
    # raised eddy.Error (a RuntimeError) from the device's build, without the
    # keyword and item.
    params = {"spacing": 0.005, "depth": 0.04}
    cases = [
        (dict(bodies=["box:size=0.02:pos=3,0.1,0.02:density=500"]),
         r"^bodies\[0\]: body box:.* does not fit in the tank"),
        (dict(bodies=[BODY, {"shape": "box", "size": [0.002, 0.02, 0.02], "position": [0.1, 0.1, 0.02],
                             "density": 500}]),
         r"^bodies\[1\]: .*at least 1 particle spacing across"),
        (dict(obstacles=[BOX, "sphere:d=0.02:pos=3,3,3"]), r"^obstacles\[1\]: .*entirely outside the tank"),
        (dict(obstacles=[{"shape": "mesh", "file": str(tmp_path / "missing.stl")}]),
         r"^obstacles\[0\]: .*missing\.stl: cannot read mesh: no such file"),
        (dict(obstacles=["mesh:file=" + str(REPO / "tests/data/empty.stl")]),
         r"^obstacles\[0\]: .*empty\.stl: "),
        (dict(bodies=["mesh:file=" + str(tmp_path) + ":density=500"]), r"^bodies\[0\]: .*cannot read mesh"),
        (dict(params={**params, "solver": "dfsph", "min_dt": 0.001, "max_dt": 0.0001}),
         r"min_dt = 0.001 and max_dt = 1e-04 contradict each other"),
        (dict(params={**params, "min_iterations": 50, "max_iterations": 10}),
         r"min_iterations = 50 and max_iterations = 10 contradict"),
        (dict(scene="wave_tank", params={"spacing": 0.1}),
         r"wave_tank: bodies = 4 .*at least 1 particle spacing across"),
    ]
    for kwargs, message in cases:
        kwargs = {"params": params, **kwargs}
        with pytest.raises(ValueError, match=message):
            eddy.Simulation(sim="sph", **kwargs)
    cfg = {"sim": "sph", "params": params, "bodies": [BODY, {**BODY, "position": [0.3, 0.5, 0.02]}]}
    with pytest.raises(ValueError, match=r"^config: key 'bodies\[1\]': body .* y extent"):
        eddy.Simulation.from_config(cfg)


def test_relative_mesh_paths_survive_a_change_of_folder(eddy, tmp_path, monkeypatch):
    # As eddy-cli's --obstacle/--body: a relative mesh path is made absolute,
    # so that a snapshot loaded from another folder finds the file.
    monkeypatch.chdir(REPO)
    s = eddy.Simulation(sim="sph", params={"spacing": 0.005, "depth": 0.04},
                        obstacles=[{"shape": "mesh", "file": "tests/data/cube.stl", "scale": 0.02,
                                    "position": [0.2, 0.01, 0.02]}],
                        bodies=["mesh:file=tests/data/icosphere.stl:scale=0.01:pos=0.3,0.1,0.02:density=500"])
    s.step(2)
    snap = tmp_path / "mesh.snap"
    s.save(snap)
    monkeypatch.chdir(tmp_path)
    r = eddy.Simulation.load(snap)
    s.step(2)
    r.step(2)
    np.testing.assert_array_equal(s.positions(), r.positions())


def test_contradicting_parameters_are_refused_live(eddy):
    # Building a scene refuses min_dt > max_dt; a live change let it through,
    # and the device clamped dt to an empty range.
    s = eddy.Simulation(sim="sph", params={**SPH_SMALL, "solver": "dfsph"})
    with pytest.raises(ValueError, match="min_dt = 0.01 and max_dt = 0.001 contradict each other"):
        s.params["min_dt"] = 0.01
    with pytest.raises(ValueError, match="max_iterations = 1 contradict"):
        s.params.update({"max_iterations": 1, "viscosity": 0.02})
    assert s.params["min_dt"] == 1e-6 and s.params["max_iterations"] == 100
    s.params.update({"min_dt": 0.0005, "max_dt": 0.0006})  # both at once is fine
    s.step(2)
    assert 0.0005 <= s.diagnostics()["dt"] <= 0.0006 * (1 + 1e-6)


def test_spec_dicts_with_non_finite_or_numpy_numbers(eddy):
    # NaN/inf went through json.dumps as NaN/Infinity, which the JSON parser
    # refused with a parse error naming neither key nor problem; NumPy scalars
    # and arrays were "not JSON-serialisable".
    bad = [
        (dict(obstacles=[{"shape": "box", "size": [0.02, float("nan"), 0.02]}]),
         r"^obstacles\[0\]: key 'size\[1\]': nan is not a finite number$"),
        (dict(probes=[{"type": "level", "name": "A", "x": float("inf"), "z": 0.004}]),
         r"^probes\[0\]: key 'x': inf is not a finite number$"),
        (dict(bodies=[{"shape": "box", "size": [0.02] * 3, "position": [0.3, 0.1, 0.005],
                       "motion": {"piston": {"amplitude": -math.inf, "period": 1}}}]),
         r"^bodies\[0\]: key 'motion.piston.amplitude': -inf is not a finite number$"),
        (dict(obstacles=[{"shape": object()}]), r"^obstacles\[0\]: key 'shape': expected a number, .* got object"),
        (dict(obstacles=[{1: "box"}]), r"^obstacles\[0\]: keys must be strings, got int"),
    ]
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=message):
            eddy.Simulation(sim="sph", params=SPH_SMALL, **kwargs)
    loop = {"shape": "box"}
    loop["size"] = loop
    with pytest.raises(ValueError, match="nested deeper than 32 levels"):
        eddy.Simulation(sim="sph", params=SPH_SMALL, obstacles=[loop])
    with pytest.raises(ValueError, match=r"^config: key 'params.spacing': nan is not a finite number$"):
        eddy.Simulation.from_config({"sim": "sph", "params": {"spacing": float("nan")}})
    # NumPy values are numbers and lists.
    params = {"spacing": 0.005, "depth": 0.04}
    a = eddy.Simulation(sim="sph", params=params, obstacles=[BOX],
                        probes=[{"type": "level", "name": "L", "x": np.float32(0.25), "z": np.float64(0.02)}])
    b = eddy.Simulation(sim="sph", params=params, probe_every=np.int64(10),
                        obstacles=[{"shape": "box", "size": np.array([0.02, 0.03, 0.02]),
                                    "position": np.array([0.03, 0.015, 0.02])}],
                        probes=["level:L:0.25,0.02"])
    assert a.n == b.n and a.probe_specs == b.probe_specs


def test_a_simulation_never_made_raises_instead_of_crashing(eddy, tmp_path):
    # Simulation.__new__ without __init__: pybind11 handed the methods
    # uninitialised memory (save() segfaulted).
    u = eddy.Simulation.__new__(eddy.Simulation)
    for call in (lambda: u.step(), lambda: u.save(tmp_path / "x.snap"), lambda: u.positions(),
                 lambda: u.probes(), lambda: u.bodies(), lambda: u.params, lambda: u.time, lambda: repr(u),
                 lambda: u.probe_specs):
        with pytest.raises(eddy.Error, match="never made"):
            call()
    # A field by name is an attribute: AttributeError, so hasattr() says False.
    with pytest.raises(AttributeError, match=r"no attribute 'density' \(this eddy.Simulation was never made\)"):
        u.density
    assert not hasattr(u, "density")
    # __init__ makes it then; a second __init__ is an error (pybind11 ignored
    # it: the object stayed what it was, whatever the arguments said).
    u.__init__(sim="nbody", n=16)
    assert u.n == 16
    with pytest.raises(eddy.Error, match="already made; create a new eddy.Simulation"):
        u.__init__(sim="nbody", n=32)
    assert u.n == 16
    assert "sim: object = None" in eddy.Simulation.__init__.__doc__


def test_a_nul_in_a_path_or_name_is_refused(eddy, tmp_path, monkeypatch):
    # Cut at the NUL, "notes.txt\0.snap" wrote over notes.txt (as Python's
    # open(): ValueError "embedded null character").
    monkeypatch.chdir(tmp_path)
    s = eddy.Simulation(sim="nbody", n=16)
    (tmp_path / "notes.txt").write_text("keep me")
    s.save(tmp_path / "a.snap")
    calls = {"save": lambda: s.save("notes.txt\x00.snap"),
             "load": lambda: eddy.Simulation.load(str(tmp_path / "a.snap") + "\x00zzz"),
             "export_vtk": lambda: s.export_vtk("ex\x00zz"),
             "ic": lambda: eddy.Simulation(sim="nbody", ic="x\x00y"),
             "from_config": lambda: eddy.Simulation.from_config("c.json\x00"),
             "scene": lambda: eddy.Simulation(sim="sph", scene="dam_break\x00")}
    for what, call in calls.items():
        with pytest.raises(ValueError, match=what + r": embedded null character in .*\\x00"):
            call()
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "ex").exists()


def test_numbers_beyond_a_double_and_non_numbers_name_their_key(eddy):
    with pytest.raises(ValueError, match=r"config: key 'n': an integer beyond the range of a number"):
        eddy.Simulation.from_config({"sim": "nbody", "n": 10**400})
    with pytest.raises(ValueError, match=r"key 'params.G': a negative integer beyond the range"):
        eddy.Simulation.from_config({"sim": "nbody", "params": {"G": -10**400}})
    with pytest.raises(ValueError, match=r"obstacles\[0\]: key 'pos\[2\]': an integer beyond the range"):
        eddy.Simulation(params=SPH_SMALL, obstacles=[{"shape": "box", "size": [0.1, 0.1, 0.1],
                                                      "pos": [0.1, 0.1, 10**400]}])
    with pytest.raises(ValueError, match=r"parameter 'seed'"):
        eddy.Simulation(sim="nbody", n=8, params={"seed": 10**400})
    with pytest.raises(ValueError, match=r"params: a parameter name is empty"):
        eddy.Simulation(sim="nbody", n=8, params={"": 1})
    for bad, kind in ((1j, "complex"), (np.array([0.1, 0.2]), "numpy.ndarray"), (True, "bool")):
        with pytest.raises(ValueError, match=r"probe_dt: expected a number of simulated seconds, got " + kind):
            eddy.Simulation(params=SPH_SMALL, probes=["level:L:0.02,0.004"], probe_dt=bad)
    s = eddy.Simulation(sim="nbody", n=16)
    with pytest.raises(ValueError, match=r"run_until: expected a number of simulated seconds, got bool"):
        s.run_until(True)
    with pytest.raises(ValueError, match=r"run_until: inf is out of range"):
        s.run_until(10**400)
    s.run_until(np.float32(0.001))
    assert s.steps > 0


def test_params_update_takes_a_dict_and_keywords(eddy):
    s = eddy.Simulation(sim="nbody", n=16)
    s.params.update(dt=0.002)
    assert s.params["dt"] == 0.002
    s.params.update({"dt": 0.003}, softening=0.02)
    assert (s.params["dt"], s.params["softening"]) == (0.003, 0.02)
    with pytest.raises(ValueError):  # all or nothing: the keyword's range
        s.params.update({"dt": 0.004}, softening=-1)
    assert s.params["dt"] == 0.003
    s.params.update()


def test_the_first_step_counts_escapes_as_the_cli(eddy):
    # Every particle leaves the tank every step (dt 0.1 s at g = 1000): the
    # CLI stops with a blow-up; so must the first step() of a new simulation
    # (it had no baseline for the escape count and ran on).
    P = {"spacing": 0.01, "solver": "dfsph", "gravity": 1000, "min_dt": 0.1, "max_dt": 0.1}
    with pytest.raises(eddy.BlowUpError, match="particles left the tank") as e:
        eddy.Simulation(params=P).step(5)
    code, cli = cli_error("run", "--sim", "sph", *[a for k, v in P.items() for a in ("--set", f"{k}={v}")],
                          "--steps", 5, "--quiet")
    assert code == 1 and str(e.value) == cli
    with pytest.raises(eddy.BlowUpError, match="particles left the tank"):
        eddy.Simulation(params=P).run_until(0.3)


def test_hasattr_is_false_for_what_is_not_a_field(eddy):
    s = eddy.Simulation(sim="nbody", n=16)
    assert not hasattr(s, "foo")
    assert hasattr(s, "mass") and s.mass().shape == (16,)
