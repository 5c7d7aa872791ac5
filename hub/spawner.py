"""Each student's server as their own system user, in a memory cgroup of their own.

``CourseSpawner`` is JupyterHub's LocalProcessSpawner (the hub runs as root and starts each
server with setuid/setgid to the student's system user, hub/accounts.py) with three changes:

- the system user is ``user_prefix + hub name`` (``jupyter-an``), and must be a member of the
  course's group: a server is never started as an account the hub did not make;
- before the server's process starts, it joins the student's memory cgroup (hub/memory.py), with
  the limit ``mem_limit``; the kernels it starts inherit it. Without a writable cgroup memory
  controller the hub refuses to start, unless ``mem_limit`` is 0 (no limit, said in the log);
- stopping the server also ends whatever the student left running in their cgroup;
- the server's port comes from below the ephemeral range (``server_port``).
"""
from __future__ import annotations

import asyncio
import pwd
import random
import socket

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Any, Unicode

from accounts import is_course_account


_TAKEN: set[int] = set()      # ports given to servers of this hub that are starting or running


def ephemeral_ports(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> tuple[int, int]:
    try:
        low, high = map(int, open(path).read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def server_port(tries: int = 200) -> int:
    """A free loopback port for a student's server, below the kernel's ephemeral range.

    JupyterHub's own choice (bind to port 0) comes from the ephemeral range, where every other
    random bind and outgoing connection on the machine takes its ports too: with 20 servers
    starting at once on a busy machine, one server found its port taken minutes later, when it
    finally bound it, and never started. Below that range only these servers pick ports."""
    low, _ = ephemeral_ports()
    for _ in range(tries):
        port = random.randint(max(1024, low - 10000), low - 1)
        if port in _TAKEN:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _TAKEN.add(port)
        return port
    raise RuntimeError(f"no free port for a server below {low} after {tries} tries")


class CourseSpawner(LocalProcessSpawner):

    user_prefix = Unicode("jupyter-", config=True, help="system user = prefix + hub name")
    user_group = Unicode("jupyterhub-users", config=True, help="the system group of every hub user")
    cgroups = Any(None, config=True, help="hub/memory.py's MemoryCgroups, or None: no limit")

    @property
    def system_name(self) -> str:
        return self.user_prefix + self.user.name

    def _account(self) -> pwd.struct_passwd:
        if not is_course_account(self.system_name, self.user_group):
            raise PermissionError(f"{self.system_name} is not a system user of the course "
                                  f"(group {self.user_group}); its server is not started")
        return pwd.getpwnam(self.system_name)

    def make_preexec_fn(self, name):
        become = set_user_setuid(self.system_name)
        cgroups, cgroup = self.cgroups, self.system_name

        def preexec():
            if cgroups is not None:       # still root here: join the cgroup, then drop to the user
                cgroups.join(cgroup)
            become()
        return preexec

    def user_env(self, env):
        account = self._account()
        env["USER"] = env["LOGNAME"] = account.pw_name
        env["HOME"] = account.pw_dir
        env["SHELL"] = account.pw_shell or "/bin/sh"
        return env

    async def start(self):
        self._account()
        if self.cgroups is not None:
            self.cgroups.create(self.system_name, int(self.mem_limit))
        if not self.port:
            self.port = server_port()
        return await super().start()

    async def stop(self, now=False):
        await super().stop(now=now)
        _TAKEN.discard(self.port)
        if self.cgroups is not None:
            await asyncio.get_running_loop().run_in_executor(
                None, self.cgroups.remove, self.system_name)
