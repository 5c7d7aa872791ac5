"""Where the course's hub keeps everything, and on which ports it listens: one place for all of it.

hub/jupyterhub_config.py, hub/publish_course.py, hub/student_env.py, hub/admin.py and the tests
read their paths and ports from ``Layout.from_env()``, so that setting ``ATTNLAB_HUB_STATE`` moves
all of them together (before, ``make hub`` published the course where the hub did not look).

Everything lives under the state folder ``ATTNLAB_HUB_STATE`` (default /var/lib/attnlab-hub),
owned by root::

    STATE/            0755  students pass through it, cannot list what root keeps private
      private/        0700  the hub's database, cookie secret, passwords, proxy pid: root only
      env/            0755  the students' Python environment, read-only for them (student_env.py;
                            elsewhere with ATTNLAB_HUB_ENV: the tests share one across runs)
      course/         0755  the published course, a git repository students pull from, read-only
      home/           0755  one home per student, 0700, owned by the student (ATTNLAB_HUB_HOMES)
      exchange/       1777  nbgrader's exchange; its course folder made by root (student_env.py)
      gitconfig       0644  safe.directory for course/, the students' servers' GIT_CONFIG_SYSTEM

Each hub user ``NAME`` is the system user ``ATTNLAB_HUB_USER_PREFIX`` + NAME (default ``jupyter-``,
as in The Littlest JupyterHub), a member of the system group ``ATTNLAB_HUB_GROUP``
(default ``jupyterhub-users``), created when the instructor adds them.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib

DEFAULT_STATE = "/var/lib/attnlab-hub"
MAX_SYSTEM_NAME = 32     # Linux user names: useradd refuses longer ones


@dataclasses.dataclass(frozen=True)
class Layout:
    state: pathlib.Path
    homes: pathlib.Path
    exchange: pathlib.Path
    env: pathlib.Path
    ip: str = "127.0.0.1"
    port: int = 8000
    hub_api_port: int = 8081
    proxy_api_port: int = 8001
    user_prefix: str = "jupyter-"
    group: str = "jupyterhub-users"

    @classmethod
    def from_env(cls, environ=None) -> "Layout":
        env = os.environ if environ is None else environ
        state = pathlib.Path(env.get("ATTNLAB_HUB_STATE") or DEFAULT_STATE).absolute()
        return cls(state=state,
                   homes=pathlib.Path(env.get("ATTNLAB_HUB_HOMES") or state / "home").absolute(),
                   exchange=pathlib.Path(env.get("ATTNLAB_EXCHANGE") or state / "exchange").absolute(),
                   env=pathlib.Path(env.get("ATTNLAB_HUB_ENV") or state / "env").absolute(),
                   ip=env.get("ATTNLAB_HUB_IP", "127.0.0.1"),
                   port=_port(env, "ATTNLAB_HUB_PORT", 8000),
                   hub_api_port=_port(env, "ATTNLAB_HUB_API_PORT", 8081),
                   proxy_api_port=_port(env, "ATTNLAB_PROXY_API_PORT", 8001),
                   user_prefix=env.get("ATTNLAB_HUB_USER_PREFIX", "jupyter-"),
                   group=env.get("ATTNLAB_HUB_GROUP", "jupyterhub-users"))

    # ---- the folders
    @property
    def private(self) -> pathlib.Path:
        return self.state / "private"

    @property
    def env_python(self) -> pathlib.Path:
        """Where student_env.py copies an interpreter that other users could not run."""
        return self.env.with_name(self.env.name + "-python")

    @property
    def course(self) -> pathlib.Path:
        return self.state / "course"

    @property
    def url(self) -> str:
        """The hub's address as the instructor's scripts reach it (hub/admin.py's default)."""
        host = "127.0.0.1" if self.ip in ("", "0.0.0.0") else self.ip
        return f"http://{host}:{self.port}"

    # ---- the students as system users
    def system_name(self, hub_name: str) -> str:
        return self.user_prefix + hub_name

    def home(self, hub_name: str) -> pathlib.Path:
        return self.homes / hub_name


def _port(env, name: str, default: int) -> int:
    value = env.get(name)
    if value in (None, ""):
        return default
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise ValueError(f"{name}={value!r} is not a port number (1-65535)")
    return int(value)
