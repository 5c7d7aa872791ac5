"""The explorer's tests again under ipywidgets 7.7 (Google Colab ships 7.7.1).

Runs only when ATTNLAB_W7_PYTHON is the python of an environment with ipywidgets 7.7 and
the course's other dependencies; otherwise SKIPPED. One way to build it (Linux, from the
repository root, with the course's .venv set up):

    python3 -m venv /tmp/w7
    echo "import site; site.addsitedir('$PWD/.venv/lib/python3.11/site-packages')" \\
        > /tmp/w7/lib/python3.11/site-packages/zz_course_venv.pth
    /tmp/w7/bin/pip install -q "ipywidgets==7.7.1"
    ATTNLAB_W7_PYTHON=/tmp/w7/bin/python .venv/bin/python -m pytest tests/test_explorer_ipywidgets7.py

(the .pth file lends /tmp/w7 the course venv's packages, torch included; ipywidgets 7.7.1
in /tmp/w7's own site-packages comes first on sys.path.)
"""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("ATTNLAB_W7_PYTHON")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not PYTHON, reason="ATTNLAB_W7_PYTHON is not set: no ipywidgets 7.7 environment to test the explorer in")]


def test_explorer_tests_pass_under_ipywidgets_7():
    version = subprocess.run([PYTHON, "-c", "import ipywidgets; print(ipywidgets.__version__)"],
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0, version.stderr[-2000:]
    assert version.stdout.strip().startswith("7."), (
        f"ATTNLAB_W7_PYTHON={PYTHON} has ipywidgets {version.stdout.strip()}, expected 7.x")
    env = dict(os.environ, ATTNLAB_EXPECT_IPYWIDGETS="7", PYTHONHASHSEED="0")
    run = subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:xdist",
                          "tests/test_explorer.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]
