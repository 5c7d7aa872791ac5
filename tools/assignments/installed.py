"""The course package as the sandbox sees it: the wheel, built from this checkout and installed
(not editable) into a folder of this grading run, owned by the grader, mounted read-only.

A submission therefore never runs the checkout's own files (``make setup`` installs them editable,
so one cell could rewrite ``shared/attnlab/exercises/l01.py`` for every later run), and the folder
is new for each run (an earlier run, sandboxed or not, cannot have left anything in it).
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class InstallError(RuntimeError):
    """The wheel could not be built or installed (the message has pip's last lines)."""


def _pip(*args: str, cwd: Path | None = None) -> None:
    r = subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    if r.returncode:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-8:])
        raise InstallError(f"pip {args[0]} failed:\n{tail}")


def local_changes() -> list[str]:
    """Files of the package that differ from the last commit (``git status``; [] outside git)."""
    r = subprocess.run(["git", "status", "--porcelain", "--", "shared/attnlab"], cwd=ROOT, capture_output=True,
                       text=True)
    return [ln[3:] for ln in r.stdout.splitlines()] if r.returncode == 0 else []


# What the wheel is built from (pyproject.toml's readme, licence files, packages and data files):
# copied first, so that the build writes nothing into the checkout and two runs never share a build/.
SOURCES = ("shared", "lessons_vi", "lessons_zh", "notebooks")


def _source_copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for top in ROOT.iterdir():
        if top.is_file() and (top.suffix in (".toml", ".cfg", ".py", ".in", ".md") or top.name.startswith("LICENSE")):
            shutil.copy2(top, dest / top.name)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints"))
    return dest


def install(where: Path) -> Path:
    """Build the wheel of this checkout and install it into ``where``/site (no dependencies: they
    are the grading venv's, read-only in the sandbox). Returns the folder to put on PYTHONPATH."""
    wheels = where / "wheel"
    site = where / "site"
    src = _source_copy(where / "src")
    _pip("wheel", "--no-deps", "--no-build-isolation", "--quiet", "--wheel-dir", str(wheels), str(src), cwd=where)
    shutil.rmtree(src)
    found = glob.glob(str(wheels / "attnlab_course-*.whl"))
    if len(found) != 1:
        raise InstallError(f"expected one attnlab_course wheel in {wheels}, found {found}")
    _pip("install", "--no-deps", "--no-index", "--quiet", "--target", str(site), found[0], cwd=where)
    for dirpath, dirnames, filenames in os.walk(site):        # read-only for everyone, even before the mount
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)
    return site


def matplotlib_cache(where: Path) -> dict:
    """matplotlib's font list, made once by a fresh process (each sandbox copies it into its home)."""
    cache = where / "matplotlib"
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], capture_output=True,
                   env={**os.environ, "MPLCONFIGDIR": str(cache)}, check=False)
    return {p.name: p.read_text(encoding="utf-8") for p in cache.glob("fontlist-*.json")}


if __name__ == "__main__":            # python -m tools.assignments.installed: build one and say where
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps({"site": str(install(Path(tmp))), "changes": local_changes()}))
