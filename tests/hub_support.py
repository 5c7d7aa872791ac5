"""The hub the hub tests share: started as root on loopback in a fresh state folder, stopped at the
end, and nothing it made (a process, a student's system user) left behind."""
from __future__ import annotations

import contextlib
import os
import pathlib
import pwd
import shutil
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
HUB = ROOT / "hub"
sys.path.insert(0, str(HUB))
import classroom  # noqa: E402

STUDENT_ENV = ROOT / ".venv-hub"          # the students' environment the hub tests share (make test)


@contextlib.contextmanager
def local_hub(which: str, prefix: str, **settings):
    """A ``classroom.LocalHub`` (``settings``: its auth and ATTNLAB_* variables), running. It fails,
    never skips, without root or without the proxy: ``which`` names the tests in that message."""
    if os.geteuid() != 0:
        pytest.fail(f"{which} need root: the hub makes each student a system user "
                    "(CI runs as root; here: sudo make test)")
    proxy = HUB / "node_modules" / ".bin" / "configurable-http-proxy"
    if not proxy.exists():
        pytest.fail(f"{proxy} is missing: `make hub-proxy` (npm ci in hub/) installs it")
    state = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(state, 0o755)                 # the students' servers read the course under it
    h = classroom.LocalHub(state, STUDENT_ENV, **settings)
    try:
        h.install()
        h.start(timeout=180)
        yield h
    finally:
        left = h.stop()
        log = h.log_tail(60)
        shutil.rmtree(state, ignore_errors=True)
    assert not left, f"processes left running after the hub stopped: {left}\n{log}"
    users = [p.pw_name for p in pwd.getpwall() if p.pw_name.startswith(h.layout.user_prefix)]
    assert not users, f"students' system users left after the hub stopped: {users}"
