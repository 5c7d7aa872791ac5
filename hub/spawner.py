"""Each student's server as their own system user, in a memory cgroup of their own.

``CourseSpawner`` is JupyterHub's LocalProcessSpawner (the hub runs as root and starts each
server with setuid/setgid to the student's system user, hub/accounts.py) with three changes:

- the system user is ``user_prefix + hub name`` (``jupyter-an``), and must be a member of the
  course's group: a server is never started as an account the hub did not make;
- before the server's process starts, it joins the student's memory cgroup (hub/memory.py), with
  the limit ``mem_limit``; the kernels it starts inherit it. Without a writable cgroup memory
  controller the hub refuses to start, unless ``mem_limit`` is 0 (no limit, said in the log);
- stopping the server also ends whatever the student left running in their cgroup.
"""
from __future__ import annotations

import asyncio
import pwd

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Any, Unicode

from accounts import is_course_account


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
        return await super().start()

    async def stop(self, now=False):
        await super().stop(now=now)
        if self.cgroups is not None:
            await asyncio.get_running_loop().run_in_executor(
                None, self.cgroups.remove, self.system_name)
