"""The instructor's three jobs on the hub, through JupyterHub's REST API (docs/hub.md).

    python hub/admin.py add students.txt --group course-vi   # one user name a line
    python hub/admin.py list                                   # who is running, idle since when
    python hub/admin.py stop an.nguyen                         # stop one student's server
    python hub/admin.py stop-all                               # every server (the hub leaves them
                                                               # running when it stops or restarts)

The token: ``JUPYTERHUB_API_TOKEN`` (make one as the instructor on the hub's /hub/token page);
the hub: ``--hub URL``, by default the address hub/jupyterhub_config.py listens on
(``ATTNLAB_HUB_IP``/``ATTNLAB_HUB_PORT``, http://127.0.0.1:8000 when unset). Adding a student
also creates their system user on the hub's machine. The hub's own /hub/admin page does the
same by hand; this is for a list of 300 students.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys

import requests

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from layout import Layout  # noqa: E402

NAME = re.compile(r"^[a-z0-9][a-z0-9._@-]{0,63}$")   # what JupyterHub accepts, lowercased


class HubAdmin:
    """A thin client of /hub/api for an admin token."""

    def __init__(self, hub: str, token: str, timeout: float = 60):
        self.api = hub.rstrip("/") + "/hub/api"
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {token}"
        self.timeout = timeout

    def _call(self, method: str, path: str, **kw):
        r = self.http.request(method, self.api + path, timeout=self.timeout, **kw)
        if r.status_code >= 400:
            raise RuntimeError(f"{method} {path}: HTTP {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    def users(self) -> list[dict]:
        return self._call("GET", "/users", params={"limit": 10000})

    def running(self) -> dict[str, dict]:
        """{user name: their default server's model} for every server that is running."""
        return {u["name"]: u["servers"][""] for u in self.users()
                if u.get("servers", {}).get("", {}).get("ready")}

    def stop(self, name: str) -> None:
        self._call("DELETE", f"/users/{name}/server")

    def add_users(self, names: list[str], group: str | None = None) -> list[str]:
        """Create the users who do not exist yet (all at once); put all of them in ``group``."""
        bad = [n for n in names if not NAME.match(n)]
        if bad:
            raise ValueError(f"not a user name JupyterHub accepts: {', '.join(bad[:5])}")
        existing = {u["name"] for u in self.users()}
        new = [n for n in dict.fromkeys(names) if n not in existing]
        if new:
            self._call("POST", "/users", json={"usernames": new})
        if group:
            if group not in {g["name"] for g in self._call("GET", "/groups")}:
                self._call("POST", f"/groups/{group}")
            self._call("POST", f"/groups/{group}/users", json={"users": list(dict.fromkeys(names))})
        return new


def read_names(path: pathlib.Path) -> list[str]:
    """One user name a line; blank lines and # comments skipped; names lowercased."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [s.strip().lower() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hub", default=None,
                    help="the hub's URL (default: from ATTNLAB_HUB_IP and ATTNLAB_HUB_PORT)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    add = sub.add_parser("add", help="add the students listed in a file")
    add.add_argument("file", type=pathlib.Path)
    add.add_argument("--group", choices=["course-vi", "course-zh"],
                     help="their course language (JupyterLab's language and first page)")
    sub.add_parser("list", help="running servers")
    stop = sub.add_parser("stop", help="stop a student's server")
    stop.add_argument("name")
    sub.add_parser("stop-all", help="stop every running server")
    a = ap.parse_args(argv)
    token = os.environ.get("JUPYTERHUB_API_TOKEN")
    if not token:
        print("admin.py: set JUPYTERHUB_API_TOKEN (the hub's /hub/token page, as the instructor)",
              file=sys.stderr)
        return 2
    try:
        return run(HubAdmin(a.hub or Layout.from_env().url, token), a)
    except (RuntimeError, ValueError, OSError, requests.RequestException) as err:
        print(f"admin.py: {err}", file=sys.stderr)
        return 1


def run(hub: HubAdmin, a) -> int:
    if a.cmd == "add":
        names = read_names(a.file)
        new = hub.add_users(names, a.group)
        print(f"{len(new)} new of {len(names)} listed" + (f"; all in {a.group}" if a.group else ""))
    elif a.cmd == "list":
        for name, server in sorted(hub.running().items()):
            print(f"{name}\tstarted {server['started']}\tlast activity {server['last_activity']}")
    elif a.cmd == "stop-all":
        running = sorted(hub.running())
        for name in running:
            hub.stop(name)
        print(f"stopped {len(running)} servers" + (f": {', '.join(running)}" if running else ""))
    else:
        hub.stop(a.name)
        print(f"stopped {a.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
