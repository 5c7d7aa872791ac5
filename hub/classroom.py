"""A hub on loopback and simulated students, for tests/test_hub.py and benchmarks/bench_hub.py.

``LocalHub`` runs hub/jupyterhub_config.py as root in a state folder of its own on free loopback
ports, with system users and a group unique to it, and removes everything it made. ``Student``
does what a student's browser does, over HTTP: signs up (or uses the class password), logs in,
starts their server, opens a notebook and runs its cells one by one through a real kernel (the
server's REST API and the kernel websocket), saves it (``Student`` and ``Kernel`` live in
hub/student_client.py). ``student_memory`` reads a student's server and kernels from /proc (Linux).
"""
from __future__ import annotations

import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys

import requests

HUB_DIR = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HUB_DIR))
import accounts  # noqa: E402
import memory  # noqa: E402
import student_env  # noqa: E402
from layout import Layout  # noqa: E402
from student_client import Kernel, Student, wait_for  # noqa: E402,F401 (the tests use them from here)

CONFIG = HUB_DIR / "jupyterhub_config.py"
ADMIN = "instructor"


def reserve_ports(n: int) -> tuple[list[int], list]:
    """``n`` distinct free loopback ports for one hub, and the locks that keep them its own.

    They are drawn below the kernel's ephemeral range (net.ipv4.ip_local_port_range), where a port
    asked of the kernel (``bind(0)``: what jupyter_client does for each kernel's five ports, and the
    spawners and the tests' servers) never lands. So nothing started meanwhile takes one between this
    choice and the hub's bind, as it could with a port from ``bind(0)``. A lock file per port (held
    until the hub's stop()) keeps two hubs started at once apart."""
    import fcntl
    import random
    import tempfile
    try:
        low = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    choices = range(max(1024, low - 12000), low)
    ports, locks = [], []
    pick = random.SystemRandom()
    for _ in range(1000):
        if len(ports) == n:
            return ports, locks
        port = pick.choice(choices)
        if port in ports:
            continue
        lock = open(pathlib.Path(tempfile.gettempdir()) / f"attnlab-hub-port-{port}.lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
        except OSError:                       # another hub holds it, or something listens there
            lock.close()
            continue
        ports.append(port)
        locks.append(lock)
    for lock in locks:
        lock.close()
    raise RuntimeError(f"no {n} free ports found in {choices.start}-{choices.stop - 1}")


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
        (self.port, api_port, proxy_api_port), self._port_locks = reserve_ports(3)
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        tag = secrets.token_hex(3)
        self.env = dict(os.environ, ATTNLAB_HUB_STATE=str(self.state), ATTNLAB_HUB_IP="127.0.0.1",
                        ATTNLAB_HUB_ENV=str(pathlib.Path(env).resolve()),
                        ATTNLAB_HUB_PORT=str(self.port), ATTNLAB_HUB_API_PORT=str(api_port),
                        ATTNLAB_PROXY_API_PORT=str(proxy_api_port), ATTNLAB_HUB_AUTH=auth,
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
        for lock in self._port_locks:         # the ports are free for another hub again
            lock.close()
        return [p.pid for p in left]


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
    """(RSS, PSS) of the hub's own processes (hub, proxy, culler): those not run by a student."""
    import psutil
    students = hub.uids()
    rss = pss = 0
    for p in hub.our_processes():
        try:
            if p.uids().real in students:
                continue
        except psutil.Error:
            continue
        r, s = _rollup(p.pid)
        rss, pss = rss + r, pss + s
    return rss, pss
