"""Create the course's virtual environment, or refuse with a clear message.

    python3.X tools/venvs.py VENV [--requirements FILE] [--constraints FILE|auto|none]
                                  [--torch-index URL] [--editable]

Run it with the interpreter the venv should use (the Makefile runs it with $(PYTHON)).
- The Python must be one of SUPPORTED; the constraints file must be the one made for it
  (constraints.txt: Python 3.11; constraints-py3.X.txt: the others, written by tools/matrix.py
  from an environment that passed the matrix). Anything else stops before pip runs, with a message.
- A failed setup removes the venv: the next run never reuses a half-built one. The stamp file
  (VENV/.installed-stamp, holding the Python version) is written only after a successful install;
  an existing venv is reused only if its stamp names the same Python version.
- --torch-index installs torch alone from that index first (e.g. PyTorch's CPU-only wheels,
  https://download.pytorch.org/whl/cpu), then everything else from the usual index.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SUPPORTED = ("3.9", "3.10", "3.11", "3.12", "3.13")
PINNED = "3.11"        # constraints.txt, the stored notebook outputs and CI
STAMP = ".installed-stamp"


class SetupError(Exception):
    """A setup that cannot work here; the message says why and what to do."""


def python_version(info=sys.version_info) -> str:
    return f"{info[0]}.{info[1]}"


def default_constraints(version: str, root: pathlib.Path = ROOT) -> pathlib.Path:
    return root / ("constraints.txt" if version == PINNED else f"constraints-py{version}.txt")


def check_python(version: str, constraints: pathlib.Path | None) -> None:
    """Raise SetupError unless this Python is supported and the constraints were made for it."""
    here = f"Python {version} ({sys.executable})"
    if version not in SUPPORTED:
        raise SetupError(
            f"{here} is not supported: the course is tested on Python {', '.join(SUPPORTED)}.\n"
            f"Choose one, e.g.  make lab PYTHON=python{PINNED}")
    if constraints is None:
        return
    if not constraints.is_file():
        raise SetupError(f"{here}: no constraints file {constraints.name} for this Python.\n"
                         f"Use  make lab PYTHON=python{PINNED}  (the pinned environment).")
    made_for = pinned_python(constraints)
    if made_for is not None and made_for != version:
        raise SetupError(
            f"{constraints.name} pins versions for Python {made_for}, but this is {here}:\n"
            f"those pins cannot all be installed here. Use PYTHON=python{made_for}, or drop\n"
            f"CONSTRAINTS= to get the file made for Python {version} ({default_constraints(version).name}).")


def pinned_python(constraints: pathlib.Path) -> str | None:
    """The Python a constraints file was made for: its '# python: 3.X' header line."""
    for line in constraints.read_text(encoding="utf-8").splitlines():
        if line.startswith("# python:"):
            return line.split(":", 1)[1].strip()
    return None


def venv_python(venv: pathlib.Path) -> pathlib.Path:
    scripts = "Scripts" if os.name == "nt" else "bin"
    return venv / scripts / ("python.exe" if os.name == "nt" else "python")


def reusable(venv: pathlib.Path, version: str) -> bool:
    stamp = venv / STAMP
    return stamp.is_file() and stamp.read_text(encoding="utf-8").split()[:1] == [version] \
        and venv_python(venv).exists()


def pip(python: pathlib.Path, *args: str, installer: str = "pip") -> None:
    if installer == "uv":   # the same requests, installed by uv (much faster: parallel, cached)
        cmd = [shutil.which("uv") or "uv", "pip", "install", "-q", "--python", str(python), *args]
    else:
        cmd = [str(python), "-m", "pip", "install", "-q", *args]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd)
    if r.returncode != 0:
        raise SetupError(f"pip failed (exit {r.returncode}) on: pip install {' '.join(args)}")


def create(venv: pathlib.Path, requirements: list[str], constraints: pathlib.Path | None,
           torch_index: str | None = None, editable: bool = True, installer: str = "pip") -> None:
    version = python_version()
    check_python(version, constraints)
    venv = venv.resolve()
    if not reusable(venv, version):
        shutil.rmtree(venv, ignore_errors=True)
    else:
        (venv / STAMP).unlink()
    try:
        if not venv_python(venv).exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv_python(venv)
        if installer == "pip":
            pip(python, "--upgrade", "pip>=23.1")
        cons = ["-c", str(constraints)] if constraints else []
        if torch_index:
            pip(python, "--index-url", torch_index, *cons, "torch", installer=installer)
        reqs = [x for r in requirements for x in ("-r", r)]
        pip(python, *cons, *reqs, *(["-e", str(ROOT)] if editable else []), installer=installer)
    except (SetupError, subprocess.CalledProcessError, KeyboardInterrupt):
        shutil.rmtree(venv, ignore_errors=True)
        print(f"setup failed: removed {venv} so that no half-built environment is reused",
              file=sys.stderr)
        raise
    (venv / STAMP).write_text(f"{version} {platform.python_implementation()} {sys.executable}\n",
                              encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("venv", type=pathlib.Path)
    ap.add_argument("--requirements", "-r", action="append", default=None)
    ap.add_argument("--constraints", default="auto",
                    help="a file, 'auto' (the file made for this Python) or 'none' (ranges only)")
    ap.add_argument("--torch-index", default=os.environ.get("TORCH_INDEX") or None)
    ap.add_argument("--no-editable", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="only check that VENV was built with this Python (make setup runs it)")
    ap.add_argument("--installer", choices=("pip", "uv"), default="pip",
                    help="uv: the same install done by uv (tools/matrix.py uses it when uv is on PATH)")
    a = ap.parse_args(argv)
    if a.check:
        stamp = a.venv / STAMP
        built = stamp.read_text(encoding="utf-8").split()[:1] if stamp.is_file() else []
        if built and built != [python_version()]:
            print(f"\nerror: {a.venv} was built with Python {built[0]}, but PYTHON is Python "
                  f"{python_version()} ({sys.executable}).\nRun `make clean` first, then make again.\n",
                  file=sys.stderr)
            return 2
        return 0
    cons = {"auto": default_constraints(python_version()), "none": None}.get(a.constraints)
    if a.constraints not in ("auto", "none"):
        cons = pathlib.Path(a.constraints).resolve()
    try:
        create(a.venv, [str(ROOT / r) if not os.path.isabs(r) else r
                        for r in (a.requirements or ["requirements-dev.txt"])],
               cons, a.torch_index, editable=not a.no_editable, installer=a.installer)
    except SetupError as err:
        print(f"\nerror: {err}\n", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as err:
        print(f"\nerror: {err}\n", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
