"""Each notebook executes under nbval once per `make test` (conftest.py, SharedExecutions): the
lessons that tests/test_wheel.py runs against the installed wheel leave the checkout's nbval run
only where that test is selected and can run, with the checkout's own nbval options."""
from __future__ import annotations

import pathlib
import re
import shlex
import subprocess
import sys

import pytest

import test_wheel
from attnlab.course import NOTEBOOK_DIRS

ROOT = pathlib.Path(__file__).resolve().parents[1]


def collected(*args: str) -> set[str]:
    """The notebooks whose nbval items a session with these arguments would run."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:xdist", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return {line.split("::")[0] for line in r.stdout.splitlines() if ".ipynb::" in line}


def test_the_wheel_runs_its_lessons_with_the_checkouts_nbval_options():
    addopts = re.search(r'^addopts = "([^"]*)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert addopts, "pyproject.toml: no addopts line"
    assert sorted(test_wheel.NBVAL_ARGS) == sorted(shlex.split(addopts.group(1)))
    every = {f"{d}/{p.name}" for d in NOTEBOOK_DIRS for p in (ROOT / d).glob("*.ipynb")}
    assert set(test_wheel.WHEEL_NOTEBOOKS) < every


@pytest.mark.slow                   # two collections in fresh processes
def test_a_session_with_the_wheel_test_leaves_its_notebooks_to_it(tmp_path):
    if test_wheel.why_the_lessons_cannot_run(tmp_path) is not None:
        pytest.skip("the wheel's lesson test skips here: the checkout keeps every notebook")
    notebooks = [*test_wheel.WHEEL_NOTEBOOKS, "lessons_vi/02_multi_head_attention.ipynb"]
    wheel = "tests/test_wheel.py::test_lessons_run_against_the_installed_package"
    assert collected(wheel, *notebooks) == {"lessons_vi/02_multi_head_attention.ipynb"}
    # The wheel's test deselected (as `make test-fast` would, with -m): the notebooks stay.
    assert collected("-m", "not slow", "tests/test_wheel.py", *notebooks) == set(notebooks)
