"""Fresh virtual environments for the tests that install the course as a student would
(tests/test_setup_cell.py, tests/test_wheel.py).

torch alone is ~700 MB, so a fresh venv does not copy this environment's packages: it sees them
through symbolic links in one directory that a .pth file adds to sys.path ("lent" packages, the
pinned set of constraints.txt), minus the course's own distribution and every .pth file (so the
editable install of attnlab stays invisible). pip, run in such a venv, resolves requirements
against the lent packages and installs only what is missing into the venv itself."""
from __future__ import annotations

import os
import pathlib
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
