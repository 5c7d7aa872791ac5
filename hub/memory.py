"""A memory limit per student, enforced by the kernel's cgroup memory controller.

Where systemd is PID 1, SystemdSpawner sets ``MemoryMax`` on each student's unit (docs/hub.md).
Everywhere else (a container, CI, this machine) hub/spawner.py puts each student's server, and so
every kernel it starts, into a cgroup of its own with a memory limit. A student who allocates
past it loses the largest process in their cgroup (their kernel: the OOM killer acts inside the
cgroup only); every other student's processes are not touched.

Both kinds of cgroup exist in the world:

- **v1** (a ``cgroup`` mount with the ``memory`` controller, e.g. /sys/fs/cgroup/memory):
  ``memory.limit_in_bytes``, and ``memory.memsw.limit_in_bytes`` where swap is accounted.
- **v2** (a ``cgroup2`` mount whose ``cgroup.controllers`` lists ``memory``): ``memory.max`` and
  ``memory.swap.max``, after ``+memory`` in the parent's ``cgroup.subtree_control``.

``find()`` picks the one that has the memory controller; ``None`` (with the reason in
``unavailable_reason()``) when none is mounted writable.
"""
from __future__ import annotations

import os
import pathlib
import signal
import time

MOUNTS = "/proc/self/mounts"
SELF = "/proc/self/cgroup"


class MemoryCgroups:
    """The course's cgroups: ``base`` (one per hub) holding one cgroup per student."""

    version = 0

    def __init__(self, base: pathlib.Path):
        self.base = pathlib.Path(base)

    def path(self, name: str) -> pathlib.Path:
        return self.base / name

    def create(self, name: str, limit: int) -> pathlib.Path:
        raise NotImplementedError

    def procs(self, name: str) -> list[int]:
        try:
            text = (self.path(name) / "cgroup.procs").read_text()
        except FileNotFoundError:
            return []
        return [int(p) for p in text.split()]

    def join(self, name: str, pid: int = 0) -> None:
        """Move a process (0: the calling one) into the student's cgroup."""
        with open(self.path(name) / "cgroup.procs", "w") as f:
            f.write(str(pid or os.getpid()))

    def oom_kills(self, name: str) -> int:
        raise NotImplementedError

    def remove(self, name: str, timeout: float = 10) -> None:
        """Kill whatever is left in the student's cgroup (a stopped server leaves nothing
        running), then remove the cgroup."""
        path = self.path(name)
        end = time.monotonic() + timeout
        while path.exists():
            for pid in self.procs(name):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                path.rmdir()
                return
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.1)

    def remove_base(self) -> None:
        for child in list(self.base.iterdir()) if self.base.exists() else []:
            if child.is_dir():
                self.remove(child.name)
        if self.base.exists():
            self.base.rmdir()


class CgroupV1(MemoryCgroups):
    version = 1

    def create(self, name, limit):
        path = self.path(name)
        path.mkdir(parents=True, exist_ok=True)
        (path / "memory.limit_in_bytes").write_text(str(limit))
        memsw = path / "memory.memsw.limit_in_bytes"
        if memsw.exists():              # swap accounted: RAM + swap together, so no escape to swap
            memsw.write_text(str(limit))
        return path

    def oom_kills(self, name):
        for line in _read(self.path(name) / "memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0


class CgroupV2(MemoryCgroups):
    version = 2

    def create(self, name, limit):
        _enable_memory(self.base.parent)
        self.base.mkdir(exist_ok=True)
        _enable_memory(self.base)
        path = self.path(name)
        path.mkdir(exist_ok=True)
        (path / "memory.max").write_text(str(limit))
        swap = path / "memory.swap.max"
        if swap.exists():
            swap.write_text("0")
        return path

    def oom_kills(self, name):
        for line in _read(self.path(name) / "memory.events").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0


def _enable_memory(cgroup: pathlib.Path) -> None:
    control = cgroup / "cgroup.subtree_control"
    if "memory" not in control.read_text().split():
        control.write_text("+memory")


def _read(path: pathlib.Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _mounts(mounts: str = MOUNTS):
    with open(mounts) as f:
        for line in f:
            _, where, kind, options, *_ = line.split()
            yield where, kind, options.split(",")


def _own_cgroup(controller: str | None, self_file: str = SELF) -> str:
    """This process's cgroup path for a v1 controller (or the v2 one, controller None)."""
    with open(self_file) as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if (controller is None and controllers == "") or \
               (controller is not None and controller in controllers.split(",")):
                return path.lstrip("/")
    return ""


def find(name: str, mounts: str = MOUNTS, self_file: str = SELF) -> MemoryCgroups | None:
    """The course's cgroups named ``name``, inside this process's own cgroup, or None."""
    for where, kind, options in _mounts(mounts):
        if kind == "cgroup" and "memory" in options and "rw" in options:
            return CgroupV1(pathlib.Path(where) / _own_cgroup("memory", self_file) / name)
    for where, kind, options in _mounts(mounts):
        controllers = pathlib.Path(where) / "cgroup.controllers"
        if kind == "cgroup2" and "rw" in options and "memory" in _read(controllers).split():
            return CgroupV2(pathlib.Path(where) / _own_cgroup(None, self_file) / name)
    return None


def unavailable_reason(mounts: str = MOUNTS) -> str:
    """Why ``find()`` found nothing, in words an operator can act on."""
    seen = []
    for where, kind, options in _mounts(mounts):
        if kind == "cgroup" and "memory" in options:
            seen.append(f"{where} (cgroup v1, memory) is mounted read-only")
        elif kind == "cgroup2":
            ctl = _read(pathlib.Path(where) / "cgroup.controllers").split()
            seen.append(f"{where} (cgroup v2) " + ("is mounted read-only" if "rw" not in options
                        else f"offers no memory controller (only: {' '.join(ctl) or 'none'})"))
    return "; ".join(seen) or "no cgroup file system is mounted"
