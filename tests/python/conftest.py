"""Shared helpers of the Python module's tests (tests/python/, run by CTest).

CTest sets PYTHONPATH to the folder of the built module (build/python) and
EDDY_CLI to eddy-cli, whose output some tests compare with the module's.
"""
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Small cases that keep the suite affordable on 2 CPU cores (PoCL).
SPH_SMALL = {"spacing": 0.005}          # the dam break with 506 particles
NBODY_N = 257                            # a prime: no multiple of any work-group


def cli_path():
    path = os.environ.get("EDDY_CLI", str(REPO / "build" / "app" / "eddy-cli"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"eddy-cli not found at {path}: build first, or set EDDY_CLI")
    return path


def run_cli(*args, check=True):
    """Runs eddy-cli; returns (exit code, stdout, stderr)."""
    p = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"eddy-cli {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return p.returncode, p.stdout, p.stderr


def cli_error(*args):
    """The message of a failing eddy-cli command ("eddy-cli: error: MESSAGE")."""
    code, _, err = run_cli(*args, check=False)
    assert code in (1, 2), f"expected eddy-cli to fail, got exit {code}: {err}"
    for line in err.splitlines():
        if line.startswith("eddy-cli: error: "):
            return code, line[len("eddy-cli: error: "):]
    raise AssertionError(f"no error line in: {err}")


@pytest.fixture(scope="session")
def eddy():
    import eddy as module
    return module
