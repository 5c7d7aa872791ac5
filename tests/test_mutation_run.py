"""`tools/mutation.py --check` (docs/checkers.md): a fresh mutmut run over the reference solutions,
each exercise's checker as the test, gives exactly the stored results and the docs table. A test of
its own (it used to follow pytest in `make test`), so that under xdist it runs beside the other
modules, in the time they wait, instead of after them. About 2 minutes of one core.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_fresh_mutmut_run_gives_the_stored_results():
    pytest.importorskip("mutmut", reason="mutmut 3 (a dev dependency) needs Python 3.10 or newer")
    # mutmut runs pytest itself: nothing of this xdist worker's pytest leaks into it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["OMP_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "mutation.py"), "--check"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
