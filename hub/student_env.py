"""Prepare the hub's folders and the students' environment (as root; ``make hub-install``).

    python hub/student_env.py [--python /usr/bin/python3.12]

1. The folders of hub/layout.py with their owners and modes: ``private/`` root only, homes 0700,
   nbgrader's exchange with the modes nbgrader needs (``prepare_exchange``), the checkout's
   ``solutions/`` closed to others.
2. ``STATE/env``: a virtual environment owned by root, that students can run and read but not
   write: the pinned set (constraints*.txt for its Python, hub/requirements-student.txt) and the
   course package installed from its wheel, built from this checkout — not the editable checkout
   the instructor's ``.venv`` points to. With it: the hub's start script for each student
   (hub/singleuser.py), the kernel connection that names the memory limit (hub/memory_notice.py),
   nbgrader's settings (hub/nbgrader_config.py, in the environment's etc/jupyter, which every
   student's server reads). Git's ``safe.directory`` for the root-owned course repository is the
   hub's own ``STATE/gitconfig`` (one environment can serve several hubs: the tests share one).
3. The interpreter must be one that every user can run. When the given one cannot be run by an
   unprivileged user (a pyenv Python under /root), its installation (the interpreter, libpython,
   the standard library) is copied beside the environment first (``STATE/env-python``).
4. The course is published into ``STATE/course`` (hub/publish_course.py).

Nothing is reinstalled when nothing changed (a stamp of the inputs' hashes in each part).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HUB = pathlib.Path(__file__).resolve().parent
ROOT = HUB.parent
sys.path.insert(0, str(HUB))
from layout import Layout  # noqa: E402

NOBODY = 65534
COURSE_ID = "attnlab"             # nbgrader's course id (hub/nbgrader_config.py)
STAMP = ".attnlab-stamp"
MODULES = {"singleuser.py": "attnlab_hub_singleuser.py", "memory_notice.py": "attnlab_hub_notice.py"}
# Every student's server reads it (a folder of Jupyter's config path in their environment).
SERVER_CONFIG = '''# Written by hub/student_env.py: each kernel talks to its server over Unix sockets next to its
# connection file, in the student's own runtime folder (inside their 0700 home), instead of five
# loopback TCP ports: no other user can reach them, and no port of a starting kernel is taken by
# another process meanwhile (on a busy machine that stopped kernels from starting).
# The sockets are RUNTIME/k-1, k-2, ... (the default name, the connection file's plus "-ipc-N",
# passes the 107 characters a socket path may have).
import os
from jupyter_core.paths import jupyter_runtime_dir
c.KernelManager.transport = "ipc"
c.KernelManager.ip = os.path.join(jupyter_runtime_dir(), "k")
'''
_SKIP_STDLIB = shutil.ignore_patterns("site-packages", "test", "idlelib", "tkinter", "turtledemo",
                                      "__pycache__")


class EnvError(Exception):
    """Something the operator must fix; the message says what."""


def say(message: str) -> None:
    print(f"[attnlab hub] {message}", file=sys.stderr, flush=True)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise EnvError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                       f"{(done.stdout + done.stderr).strip()[-3000:]}")
    return done


def as_nobody(cmd, env=None) -> subprocess.CompletedProcess:
    """Run a command as an unprivileged user (what a student's process could do)."""
    def drop():
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd="/",
                          preexec_fn=drop, env=env, timeout=300)


def digest(*parts: pathlib.Path | str) -> str:
    """A hash of strings and of files' contents (folders: every file in them, by name)."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, str):
            h.update(part.encode())
        elif part.is_dir():
            for f in sorted(x for x in part.rglob("*") if x.is_file() and "__pycache__" not in x.parts):
                h.update(str(f.relative_to(part)).encode() + f.read_bytes())
        else:
            h.update(part.read_bytes())
    return h.hexdigest()


def up_to_date(folder: pathlib.Path, name: str, value: str) -> bool:
    """True when ``folder`` was made from the inputs whose digest is ``value``."""
    stamp = folder / f"{STAMP}-{name}"
    return stamp.is_file() and stamp.read_text() == value


def mark(folder: pathlib.Path, name: str, value: str) -> None:
    (folder / f"{STAMP}-{name}").write_text(value)


# ------------------------------------------------------------------ 1. folders and modes

def prepare_folders(layout: Layout) -> None:
    from accounts import ensure_group
    ensure_group(layout.group)
    for path, mode in ((layout.state, 0o755), (layout.private, 0o700), (layout.homes, 0o755)):
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, 0, 0)
        os.chmod(path, mode)
    prepare_exchange(layout.exchange)
    (layout.state / "gitconfig").write_text(      # this hub's, not the (shareable) environment's
        "# git for the students' servers (GIT_CONFIG_SYSTEM): the course repository is root's\n"
        f"[safe]\n\tdirectory = {layout.course}\n\tdirectory = {layout.course}/.git\n"
        "[include]\n\tpath = /etc/gitconfig\n")
    os.chmod(layout.state / "gitconfig", 0o644)
    for secret in layout.private.iterdir():
        os.chown(secret, 0, 0)
        os.chmod(secret, 0o600 if secret.is_file() else 0o700)
    close_to_others(ROOT / "solutions")
    close_to_others(HUB / ".state")          # a trial hub's state from before this layout


def prepare_exchange(root: pathlib.Path, course_id: str = COURSE_ID) -> None:
    """nbgrader's exchange as nbgrader needs it, and no more.

    nbgrader requires its root to be mode 777 (every student's `nbgrader list` checks it can
    write there; `release_assignment` resets any other mode); the sticky bit (1777, like /tmp) keeps
    anyone from removing or renaming what another user made. The course's folder is made here,
    by root, with nbgrader's own modes, so that no student can claim it before the first release:
    outbound 755 (released assignments: read by all, written by the instructor, root), inbound
    2733 (students hand in, nobody lists or reads another's: each submission's name holds a
    random string), feedback 711."""
    course = root / course_id
    for path, mode in ((root, 0o1777), (course, 0o755), (course / "outbound", 0o755),
                       (course / "inbound", 0o2733), (course / "feedback", 0o711)):
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, 0, 0)
        os.chmod(path, mode)


def close_to_others(path: pathlib.Path) -> None:
    """chmod -R go-rwx: the instructor's solutions are not for students' eyes."""
    if not path.exists():
        return
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, p.stat().st_mode & 0o700)


def check_traversable(path: pathlib.Path) -> None:
    """Every folder above ``path`` must let other users pass, or students cannot reach it."""
    for parent in [path, *path.parents]:
        if parent.exists() and not parent.stat().st_mode & 0o001:
            raise EnvError(f"{parent} is not open to other users (mode "
                           f"{oct(parent.stat().st_mode & 0o777)}): students could not reach "
                           f"{path}. Choose ATTNLAB_HUB_STATE elsewhere (e.g. /var/lib/attnlab-hub).")


# ------------------------------------------------------------------ 2-3. the environment

def runnable_by_others(python: pathlib.Path, env=None) -> bool:
    try:
        done = as_nobody([python, "-c", "import sys, encodings, json; print(sys.version)"], env=env)
    except PermissionError:         # the interpreter's file or a folder above it is closed
        return False
    return done.returncode == 0


def student_python(layout: Layout, python: pathlib.Path) -> tuple[pathlib.Path, dict]:
    """An interpreter every user can run (a copy of ``python``'s installation if need be), and
    the environment variables it needs (LD_LIBRARY_PATH for a copied libpython)."""
    if runnable_by_others(python):
        return python, {}
    info = run([python, "-c", "import sys, sysconfig; print(sys.base_prefix); "
                "print(sysconfig.get_config_var('LDVERSION')); print(sysconfig.get_path('stdlib'))"])
    base, ldversion, stdlib = info.stdout.split()
    base = pathlib.Path(base)
    version = pathlib.Path(stdlib).name                          # python3.11
    copy = layout.env_python
    extra = {"LD_LIBRARY_PATH": str(copy / "lib")}
    key = digest(str(base), str(pathlib.Path(base, "bin", version).stat().st_mtime))
    exe = copy / "bin" / version
    if not up_to_date(copy, "python", key):
        say(f"{python} cannot be run by other users: copying its installation to {copy}")
        shutil.rmtree(copy, ignore_errors=True)
        (copy / "bin").mkdir(parents=True)
        shutil.copy2(base / "bin" / version, exe)
        os.symlink(version, copy / "bin" / "python3")
        (copy / "lib").mkdir()
        for lib in (base / "lib").glob(f"libpython{ldversion}*"):
            shutil.copy2(lib, copy / "lib" / lib.name, follow_symlinks=False)
        for lib in (base / "lib").glob("libpython3.so"):
            shutil.copy2(lib, copy / "lib" / lib.name)
        shutil.copytree(stdlib, copy / "lib" / version, ignore=_SKIP_STDLIB, symlinks=True)
        (copy / "lib" / version / "site-packages").mkdir()
        open_to_reading(copy)
        mark(copy, "python", key)
    if not runnable_by_others(exe, env={**extra, "PATH": "/usr/bin:/bin"}):
        raise EnvError(f"neither {python} nor its copy {exe} can be run by an unprivileged user; "
                       "give the hub a Python every user can run: --python /usr/bin/python3.X")
    return exe, extra


def put(dest: pathlib.Path, content: bytes) -> None:
    """Write a file in one step (servers of a running hub may be reading it), if it changed."""
    if dest.exists() and dest.read_bytes() == content:
        return
    tmp = dest.with_name(dest.name + ".new")
    tmp.write_bytes(content)
    os.chmod(tmp, 0o644)
    os.replace(tmp, dest)


def open_to_reading(path: pathlib.Path) -> None:
    """root-owned, readable and runnable by all, writable by root only."""
    for p in [path, *path.rglob("*")]:
        if p.is_symlink():
            continue
        os.chown(p, 0, 0)
        mode = p.stat().st_mode
        os.chmod(p, (mode & 0o755) | 0o444 | (0o111 if p.is_dir() or mode & 0o100 else 0))


def build_env(layout: Layout, python: pathlib.Path, torch_index: str | None = None,
              packages_only: bool = False) -> dict:
    """STATE/env; returns the environment variables the students' servers need. One build at a
    time (a lock beside the environment: test modules running in parallel share one).
    ``packages_only``: the venv and its pinned packages, not the course package (whose wheel is
    built with ``build``, which the instructor's venv has): ``make test`` installs them while it
    makes that venv."""
    import fcntl
    check_traversable(layout.env.parent)
    layout.env.parent.mkdir(parents=True, exist_ok=True)
    with open(layout.env.with_name(layout.env.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_env(layout, python, torch_index, packages_only)


def _build_env(layout: Layout, python: pathlib.Path, torch_index: str | None, packages_only: bool = False) -> dict:
    python, extra = student_python(layout, python)
    env_dir = layout.env
    version = run([python, "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"],
                  env={**os.environ, **extra}).stdout.strip()
    constraints = ROOT / ("constraints.txt" if version == "3.11" else f"constraints-py{version}.txt")
    if not constraints.is_file():
        raise EnvError(f"no {constraints.name}: the course pins no set for Python {version}")
    requirements = HUB / "requirements-student.txt"
    pyenv = {**os.environ, **extra}
    key = digest(str(python), constraints, requirements, ROOT / "requirements.txt")
    if not up_to_date(env_dir, "packages", key):
        say(f"installing the students' environment into {env_dir} (Python {version}, {constraints.name})")
        if not up_to_date(env_dir, "python", str(python)):   # another interpreter: start afresh
            shutil.rmtree(env_dir, ignore_errors=True)
            run([python, "-m", "venv", env_dir], env=pyenv)
            mark(env_dir, "python", str(python))
        pip = [env_dir / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        run([*pip, "--upgrade", "pip>=23.1"], env=pyenv)
        if torch_index:
            run([*pip, "--index-url", torch_index, "-c", constraints, "torch"], env=pyenv)
        run([*pip, "-c", constraints, "-r", requirements], env=pyenv, cwd=ROOT)
        mark(env_dir, "packages", key)
    if packages_only:
        return server_environment(layout)
    install_course_package(env_dir, pyenv)
    site = pathlib.Path(run([env_dir / "bin" / "python", "-c",
                             "import sysconfig; print(sysconfig.get_path('purelib'))"],
                            env=pyenv).stdout.strip())
    for src, dest in MODULES.items():
        put(site / dest, (HUB / src).read_bytes())
    etc = env_dir / "etc" / "jupyter"
    etc.mkdir(parents=True, exist_ok=True)
    put(etc / "nbgrader_config.py", (HUB / "nbgrader_config.py").read_bytes())
    put(etc / "jupyter_server_config.py", SERVER_CONFIG.encode())
    open_to_reading(env_dir)
    return server_environment(layout)


def server_environment(layout: Layout) -> dict:
    """The variables a student's server needs from the hub to use STATE/env (hub config)."""
    env = {"PATH": f"{layout.env / 'bin'}:/usr/local/bin:/usr/bin:/bin",
           "GIT_CONFIG_SYSTEM": str(layout.state / "gitconfig")}
    if (layout.env_python / "lib").is_dir():      # a copied interpreter: its libpython
        env["LD_LIBRARY_PATH"] = str(layout.env_python / "lib")
    return env


def install_course_package(env_dir: pathlib.Path, pyenv: dict) -> None:
    """The course package from a wheel built from this checkout (never editable)."""
    key = digest(ROOT / "shared" / "attnlab", ROOT / "shared" / "attnlab_server", ROOT / "pyproject.toml",
                 *[ROOT / d for d in ("lessons_vi", "lessons_zh", "notebooks")])
    if up_to_date(env_dir, "course", key):
        return
    with tempfile.TemporaryDirectory(prefix="attnlab-wheel-") as out:
        run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, ROOT])
        wheel = next(pathlib.Path(out).glob("attnlab_course-*.whl"))
        run([env_dir / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
             "--no-deps", "--force-reinstall", wheel], env=pyenv)
    mark(env_dir, "course", key)


def verify(layout: Layout, env: dict) -> str:
    """As an unprivileged user: the environment runs, attnlab is the installed copy, read-only."""
    check = ("import os, attnlab, attnlab_server, attnlab_hub_notice, attnlab_hub_singleuser, "
             "jupyterhub.singleuser; p = os.path.dirname(attnlab.__file__); "
             "print(p, os.access(p, os.W_OK))")
    done = as_nobody([layout.env / "bin" / "python", "-c", check], env={**env, "HOME": "/"})
    if done.returncode != 0:
        raise EnvError(f"the students' environment does not run for an unprivileged user:\n"
                       f"{done.stderr.strip()[-2000:]}")
    where, writable = done.stdout.split()
    if not where.startswith(str(layout.env)) or writable != "False":
        raise EnvError(f"attnlab for students is {where} (writable: {writable}), not a read-only "
                       f"copy in {layout.env}")
    return where


def require_root() -> None:
    if os.geteuid() != 0:
        raise EnvError("the hub runs each student as their own system user: run this as root")


def install(layout: Layout, python: pathlib.Path, torch_index: str | None = None,
            env_only: bool = False) -> dict:
    """Everything the hub needs before it starts (``env_only``: the environment alone)."""
    require_root()
    env = build_env(layout, python, torch_index)
    verify(layout, env)
    if env_only:
        return env
    check_traversable(layout.state)
    check_traversable(layout.homes)
    prepare_folders(layout)
    import publish_course
    publish_course.publish(layout.course)
    publish_course.open_to_reading(layout.course)
    return env


def default_python() -> pathlib.Path:
    """This interpreter's base, its links resolved: the same Python named ``python3`` (make's
    ``$(PYTHON)``) or ``python3.11`` (a venv's base) is one students' environment, not two."""
    return pathlib.Path(getattr(sys, "_base_executable", sys.executable) or sys.executable).resolve()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", type=pathlib.Path, default=default_python(),
                    help="the interpreter of the students' environment (default: this one's base)")
    ap.add_argument("--torch-index", default=os.environ.get("TORCH_INDEX") or None)
    ap.add_argument("--env-only", action="store_true",
                    help="only the students' environment (ATTNLAB_HUB_ENV): what the tests share")
    ap.add_argument("--packages-only", action="store_true",
                    help="only that environment's pinned packages, without the course package (the first "
                         "half of --env-only; runs without the instructor's venv)")
    a = ap.parse_args(argv)
    layout = Layout.from_env()
    try:
        if a.packages_only:
            require_root()
            build_env(layout, a.python, a.torch_index, packages_only=True)
            say(f"the students' environment's packages are installed: {layout.env}")
            return 0
        install(layout, a.python, a.torch_index, env_only=a.env_only)
    except EnvError as err:
        print(f"student_env.py: {err}", file=sys.stderr)
        return 1
    say(f"students' environment ready: {layout.env}" +
        ("" if a.env_only else f"; folders in {layout.state}, course published in {layout.course}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
