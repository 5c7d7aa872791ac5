"""A hub on loopback and simulated students, for tests/test_hub.py and benchmarks/bench_hub.py.

``LocalHub`` runs hub/jupyterhub_config.py as root in a state folder of its own on free loopback
ports, with system users and a group unique to it, and removes everything it made. ``Student``
does what a student's browser does, over HTTP: signs up (or uses the class password), logs in,
starts their server, opens a notebook and runs its cells one by one through a real kernel (the
server's REST API and the kernel websocket), saves it.
``student_memory`` reads a student's server + kernels from /proc (Linux).
"""
from __future__ import annotations

import json
import os
import re
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid

import nbformat
import requests
import websocket

HUB_DIR = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HUB_DIR))
import accounts  # noqa: E402
import memory  # noqa: E402
import student_env  # noqa: E402
from layout import Layout  # noqa: E402

CONFIG = HUB_DIR / "jupyterhub_config.py"
ADMIN = "instructor"
_CPU_SECONDS = ("import resource as _r; _u = _r.getrusage(_r.RUSAGE_SELF); "
                "print(_u.ru_utime + _u.ru_stime); del _r, _u")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, every: float = 0.5):
    """Call check() until it returns something true; TimeoutError naming ``what`` after timeout."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        time.sleep(every)


class LocalHub:
    """The course's hub with its own state folder, ports, system group, passwords and admin token.

    As a real hub it runs as root and makes a system user for each student; unlike one, every name
    it makes is unique to this hub (user prefix ``t<hex>-``, group ``attnlab-t<hex>``), and
    ``stop()`` removes all of it again: servers, processes, memory cgroups, users, homes, group.
    The students' environment (``env``, hub/student_env.py) is shared between hubs; it is built
    if missing or out of date."""

    def __init__(self, state: pathlib.Path, env: pathlib.Path, auth: str = "sign-up", **settings: str):
        if os.geteuid() != 0:
            raise PermissionError("the course's hub starts each student as their own system user: "
                                  "it (and its tests) must run as root")
        self.state = pathlib.Path(state).resolve()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        tag = secrets.token_hex(3)
        self.env = dict(os.environ, ATTNLAB_HUB_STATE=str(self.state), ATTNLAB_HUB_IP="127.0.0.1",
                        ATTNLAB_HUB_ENV=str(pathlib.Path(env).resolve()),
                        ATTNLAB_HUB_PORT=str(self.port), ATTNLAB_HUB_API_PORT=str(free_port()),
                        ATTNLAB_PROXY_API_PORT=str(free_port()), ATTNLAB_HUB_AUTH=auth,
                        ATTNLAB_HUB_USER_PREFIX=f"t{tag}-", ATTNLAB_HUB_GROUP=f"attnlab-t{tag}",
                        ATTNLAB_HUB_ADMIN_TOKEN=self.token, ATTNLAB_HUB_ADMINS=ADMIN,
                        **settings)
        self.layout = Layout.from_env(self.env)
        self.proc = None
        self.log = self.state / "jupyterhub.log"

    @property
    def password(self) -> str:
        """The class password (workshop mode), as the hub wrote it into its private folder."""
        return (self.layout.private / "attnlab_hub_password").read_text().strip()

    @property
    def admin_password(self) -> str:
        """The instructor's password, from the hub's private folder (as `make hub` prints it)."""
        return (self.layout.private / "attnlab_hub_admin_password").read_text().strip()

    def install(self) -> "LocalHub":
        """What `make hub` does before the hub starts (hub/student_env.py): folders, modes, the
        students' environment, the published course."""
        student_env.install(self.layout, student_env.default_python())
        return self

    def start(self, timeout: float = 120) -> "LocalHub":
        self.state.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)], cwd=self.state,
                env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the hub exited ({self.proc.returncode}):\n{self.log_tail()}")
            try:
                return requests.get(self.url + "/hub/api/", timeout=5).status_code == 200
            except requests.ConnectionError:
                return False
        wait_for("the hub answering on " + self.url, up, timeout)
        return self

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])

    def api(self, method: str, path: str, timeout: float = 60, **kw):
        r = requests.request(method, f"{self.url}/hub/api{path}", timeout=timeout,
                             headers={"Authorization": f"token {self.token}"}, **kw)
        r.raise_for_status()
        return r.json() if r.content else None

    def uids(self) -> set[int]:
        """The uids of the system users this hub made."""
        import pwd
        return {p.pw_uid for p in pwd.getpwall() if p.pw_name.startswith(self.layout.user_prefix)}

    def our_processes(self):
        """Every live process of this hub: working in its state folder (the hub, its proxy,
        culler, the servers and kernels) or run by one of its system users."""
        import psutil
        found, uids = [], self.uids()
        for p in psutil.process_iter(["cwd", "uids"]):
            cwd = p.info.get("cwd") or ""
            uid = p.info["uids"].real if p.info.get("uids") else None
            if cwd == str(self.state) or cwd.startswith(str(self.state) + os.sep) or uid in uids:
                found.append(p)
        return found

    def stop_hub(self, timeout: float = 60) -> None:
        """Stop the hub process alone (its proxy and culler go with it; the students' servers
        stay: cleanup_servers is False)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)

    def stop(self, timeout: float = 60) -> list[int]:
        """Stop every server, the hub, and remove what it made on the machine.

        Returns the pids that had to be killed (a clean stop returns [])."""
        import psutil
        if self.proc is not None and self.proc.poll() is None:
            try:
                for user in self.api("GET", "/users"):
                    if user.get("servers"):
                        self.api("DELETE", f"/users/{user['name']}/server")
                wait_for("every server stopping", lambda: not any(
                    u.get("servers") for u in self.api("GET", "/users")), timeout)
            except Exception as err:     # the hub is broken: kill below, and say so in the log
                with open(self.log, "a") as log:
                    log.write(f"[LocalHub.stop] stopping servers through the API failed: {err}\n")
        self.stop_hub(timeout)
        left = [p for p in self.our_processes() if p.pid != os.getpid()]
        for p in left:
            p.kill()
        psutil.wait_procs(left, timeout=10)
        cgroups = memory.find(f"attnlab-hub-{self.layout.group}")
        if cgroups is not None:
            cgroups.remove_base()
        import pwd
        for p in pwd.getpwall():
            if p.pw_name.startswith(self.layout.user_prefix):
                accounts.delete_account(p.pw_name)
        accounts.delete_group(self.layout.group)
        return [p.pid for p in left]


class Student:
    """One student's browser, reduced to HTTP requests and one kernel websocket at a time."""

    def __init__(self, hub_url: str, name: str, timeout: float = 60):
        self.hub, self.name, self.timeout = hub_url, name, timeout
        self.http = requests.Session()
        self.token = None

    def _form(self, page: str, fields: dict):
        """GET a hub page (for its _xsrf cookie), then POST its form as a browser would."""
        self.http.get(f"{self.hub}/hub/{page}", timeout=self.timeout)
        return self.http.post(f"{self.hub}/hub/{page}", timeout=self.timeout, allow_redirects=False,
                              data={**fields, "_xsrf": self.http.cookies.get("_xsrf")})

    def sign_up(self, password: str) -> str:
        """NativeAuthenticator's sign-up form; returns the page's answer (its alert text)."""
        r = self._form("signup", {"username": self.name, "signup_password": password,
                                  "signup_password_confirmation": password, "email": ""})
        found = re.search(r'<div class="alert[^"]*"[^>]*>(.*?)</div>', r.text, re.S)
        return " ".join(found.group(1).split()) if found else f"HTTP {r.status_code}"

    def approve(self, name: str) -> None:
        """The instructor approves a sign-up (NativeAuthenticator's /hub/authorize page)."""
        listed = self.http.get(f"{self.hub}/hub/authorize", timeout=self.timeout)
        listed.raise_for_status()
        if f"/authorize/{name}" not in listed.text:
            raise RuntimeError(f"{name} has not signed up")
        self.http.get(f"{self.hub}/hub/authorize/{name}", timeout=self.timeout).raise_for_status()

    def login(self, password: str) -> bool:
        """The login form, as a browser posts it; True when the hub let us in."""
        r = self._form("login?next=/hub/home", {"username": self.name, "password": password})
        if r.status_code != 302:
            return False
        # A token for the API calls a browser's JavaScript would make with the cookie.
        r = self.http.post(f"{self.hub}/hub/api/users/{self.name}/tokens", timeout=self.timeout,
                           headers={"X-XSRFToken": self.http.cookies.get("_xsrf")},
                           json={"note": "simulated student", "expires_in": 86400})
        r.raise_for_status()
        self.token = r.json()["token"]
        self.http.headers["Authorization"] = f"token {self.token}"
        return True

    def hub_model(self) -> dict:
        r = self.http.get(f"{self.hub}/hub/api/users/{self.name}", timeout=self.timeout)
        r.raise_for_status()
        return r.json()

    def running(self) -> bool:
        return bool(self.hub_model().get("servers", {}).get("", {}).get("ready"))

    def start_server(self, timeout: float = 300) -> float:
        """Ask for the server and wait until it is ready; returns the seconds it took."""
        t0 = time.monotonic()
        r = self.http.post(f"{self.hub}/hub/api/users/{self.name}/server", timeout=self.timeout)
        if r.status_code not in (201, 202, 400):       # 400: already running
            raise RuntimeError(f"{self.name}: start: HTTP {r.status_code} {r.text[:300]}")
        wait_for(f"{self.name}'s server", self.running, timeout, every=0.5)
        return time.monotonic() - t0

    def stop_server(self, timeout: float = 120) -> None:
        self.http.delete(f"{self.hub}/hub/api/users/{self.name}/server", timeout=self.timeout)
        wait_for(f"{self.name}'s server stopping", lambda: not self.running(), timeout)

    # ---- the student's own server (Jupyter Server's REST API behind the proxy)
    def server(self, method: str, path: str, **kw):
        kw.setdefault("timeout", self.timeout)
        r = self.http.request(method, f"{self.hub}/user/{self.name}/api/{path}", **kw)
        if r.status_code >= 400:
            raise RuntimeError(f"{self.name}: {method} {path}: HTTP {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    def read_notebook(self, path: str):
        model = self.server("GET", f"contents/{path}", params={"content": "1"})
        return nbformat.from_dict(model["content"])

    def save_notebook(self, path: str, nb) -> None:
        self.server("PUT", f"contents/{path}", json={"type": "notebook", "format": "json",
                                                      "content": nb})

    def open_kernel(self, path: str) -> "Kernel":
        """A session for the notebook at ``path`` (its kernel works in the notebook's folder)."""
        s = self.server("POST", "sessions", json={"path": path, "type": "notebook", "name": "",
                                                  "kernel": {"name": "python3"}})
        return Kernel(self, s["id"], s["kernel"]["id"])

    def run_notebook(self, path: str, cell_timeout: float = 600, save: bool = True) -> dict:
        """Open, run every code cell top to bottom, save.

        Returns {'seconds', 'cells' (code cells run), 'error' (None or a message), 'notebook',
        'cpu_s' (CPU seconds the kernel used, from its own getrusage; None if it could not say)}."""
        nb = self.read_notebook(path)
        t0 = time.monotonic()
        error, ran, cpu = None, 0, None
        kernel = self.open_kernel(path)
        try:
            for cell in nb.cells:
                if cell.cell_type != "code":
                    continue
                cell.outputs, reply = kernel.execute(cell.source, cell_timeout)
                ran += 1
                if reply.get("status") != "ok":
                    error = f"cell {ran}: {reply.get('ename')}: {reply.get('evalue')}"
                    break
            seconds = time.monotonic() - t0
            outputs, _ = kernel.execute(_CPU_SECONDS, cell_timeout)
            cpu = float(outputs[0]["text"]) if outputs and outputs[0].get("text") else None
        except Exception as err:   # a timeout or a closed websocket: a message, never a hang
            error = error or f"cell {ran + 1}: {type(err).__name__}: {err}"
            seconds = time.monotonic() - t0
        finally:
            kernel.close()
        if save:
            self.save_notebook(path, nb)
        return {"seconds": seconds, "cells": ran, "error": error, "notebook": nb, "cpu_s": cpu}


class Kernel:
    """A kernel websocket (Jupyter's JSON message protocol, one execution at a time)."""

    def __init__(self, student: Student, session_id: str, kernel_id: str):
        self.student, self.session_id, self.kernel_id = student, session_id, kernel_id
        url = student.hub.replace("http", "ws", 1)
        self.ws = websocket.create_connection(
            f"{url}/user/{student.name}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4().hex}",
            header=[f"Authorization: token {student.token}"], timeout=student.timeout)

    def execute(self, code: str, timeout: float = 600):
        """Run code; returns (nbformat outputs, execute_reply content)."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.student.name,
                       "session": self.session_id, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
        outputs, reply, idle = [], None, False
        end = time.monotonic() + timeout
        while reply is None or not idle:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from the kernel after {timeout:.0f} s")
            self.ws.settimeout(min(left, 30))
            try:
                msg = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if msg["channel"] == "shell" and kind == "execute_reply":
                reply = msg["content"]
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
            elif kind in ("stream", "display_data", "execute_result", "error"):
                outputs.append(nbformat.v4.output_from_msg(msg))
        return outputs, reply

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.student.server("DELETE", f"sessions/{self.session_id}")


def _rollup(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in bytes, from /proc/PID/smaps_rollup; (0, 0) once it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return rss, pss


def student_memory(hub: LocalHub) -> dict[str, tuple[int, int]]:
    """{student: (RSS, PSS)} of their server and all its children (kernels), in bytes."""
    import psutil
    home = str(hub.layout.homes) + os.sep
    out: dict[str, tuple[int, int]] = {}
    for p in hub.our_processes():
        try:
            cwd = p.cwd()
            if not cwd.startswith(home) or "jupyterhub.singleuser" not in " ".join(p.cmdline()):
                continue
            name = cwd[len(home):].split(os.sep)[0]
            procs = [p, *p.children(recursive=True)]
        except psutil.Error:
            continue
        rss = pss = 0
        for q in procs:
            r, s = _rollup(q.pid)
            rss, pss = rss + r, pss + s
        out[name] = (rss, pss)
    return out


def hub_memory(hub: LocalHub) -> tuple[int, int]:
    """(RSS, PSS) of the hub's own processes (hub, proxy, culler), everything not a student's."""
    home = str(hub.layout.homes) + os.sep
    rss = pss = 0
    for p in hub.our_processes():
        try:
            if p.cwd().startswith(home):
                continue
        except Exception:
            continue
        r, s = _rollup(p.pid)
        rss, pss = rss + r, pss + s
    return rss, pss
