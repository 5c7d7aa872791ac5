"""Fresh virtual environments for the tests that install the course as a student would
(tests/test_setup_cell.py, tests/test_wheel.py).

torch alone is ~700 MB, so a fresh venv does not copy this environment's packages: it sees them
through symbolic links in one directory that a .pth file adds to sys.path ("lent" packages, the
pinned set of constraints.txt), minus the course's own distribution and every .pth file (so the
editable install of attnlab stays invisible). pip, run in such a venv, resolves requirements
against the lent packages and installs only what is missing into the venv itself."""
from __future__ import annotations

import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

SITE = pathlib.Path(sysconfig.get_paths()["purelib"])


def run(cmd, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("timeout", 600)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def venv_python(venv: pathlib.Path) -> pathlib.Path:
    """The interpreter of a venv: bin/python on Linux and macOS, Scripts\\python.exe on Windows."""
    scripts = pathlib.Path(sysconfig.get_path("scripts", vars={"base": str(venv), "platbase": str(venv)}))
    name = "python.exe" if os.name == "nt" else "python"
    for candidate in (scripts / name, venv / "Scripts" / name, venv / "bin" / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"no interpreter in {venv}")


def symlinks_allowed(tmp: pathlib.Path) -> str | None:
    """None if this OS lets us create symbolic links here, else the reason it does not."""
    try:
        (tmp / "link-probe").symlink_to(SITE, target_is_directory=True)
    except (OSError, NotImplementedError) as err:
        return f"cannot create symbolic links here ({type(err).__name__}: {err}); on Windows enable Developer Mode"
    return None


def is_course_entry(name: str) -> bool:
    """attnlab, attnlab_server and their distribution's metadata (editable or not)."""
    return "attnlab" in name.lower()


def fresh_venv_with_lent_packages(tmp: pathlib.Path, name: str) -> pathlib.Path:
    """A new venv (no pip of its own: pip is lent too) that sees this environment's packages
    except the course's; returns its interpreter."""
    lent = tmp / f"{name}-lent-site"
    lent.mkdir()
    for entry in SITE.iterdir():
        if is_course_entry(entry.name) or entry.suffix == ".pth":
            continue
        (lent / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    venv = tmp / name
    r = run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert r.returncode == 0, r.stderr
    python = venv_python(venv)
    (own_site(python) / "lent_packages.pth").write_text(str(lent) + "\n")
    return python


def own_site(python: pathlib.Path) -> pathlib.Path:
    """The venv's own site-packages (where pip installs)."""
    r = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    assert r.returncode == 0, r.stderr
    return pathlib.Path(r.stdout.strip())


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would put the repository on sys.path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def offline_prefix() -> list[str] | None:
    """A command prefix that runs a program with no network but loopback, or None."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    prefix = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    probe = run([*prefix, sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9), 1)"],
                timeout=30)
    # Connection refused on loopback (not "permission denied" from unshare) means the namespace works.
    return prefix if "ConnectionRefusedError" in probe.stderr else None


def shared_tmp(tmp_path_factory) -> pathlib.Path:
    """A folder this pytest run's xdist workers share (the run's base temp; one level up under xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def release_files(root: pathlib.Path) -> list[str] | str:
    """The tracked and untracked-but-not-ignored files a release is built from, or the reason there
    are none to tell (not a git checkout)."""
    listed = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root)
    if listed.returncode != 0:
        return "not a git checkout: cannot tell the tracked files"
    return sorted(n for n in listed.stdout.splitlines() if (root / n).is_file())


def built_dist(root: pathlib.Path, cache: pathlib.Path) -> pathlib.Path | str:
    """sdist and wheel built (`python -m build`, the wheel from the sdist) from a copy of the tracked
    and untracked-but-not-ignored files, as a release would be; a reason string if this is no git
    checkout. Built once per content: the folder is cache/<sha256 of every file's name and bytes>,
    under a lock, so the test modules that need the wheel (test_wheel.py, test_install_docs.py),
    even on two xdist workers, share one build."""
    names = release_files(root)
    if isinstance(names, str):
        return names
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    cache.mkdir(parents=True, exist_ok=True)
    out = cache / digest.hexdigest()[:16]
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (out / "done").is_file():
            return out / "dist"
        shutil.rmtree(out, ignore_errors=True)
        src = out / "src"
        for name in names:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, src / name)
        r = run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out / "dist"), str(src)])
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        shutil.rmtree(src)
        (out / "done").write_text("")
    return out / "dist"
