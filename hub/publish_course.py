"""Publish the course for the hub: copy the student-facing folders into a git repository.

Every student's server pulls this repository into their home when it starts (hub/singleuser.py,
with nbgitpuller's rules: a notebook the student edited is kept, new and updated files arrive).
"Updating the course" is running this script again after ``git pull`` in the instructor's
checkout; it commits only when something changed::

    python hub/publish_course.py [--to DIR]     # default: the hub's STATE/course (hub/layout.py)

The repository is a plain git repository on the hub's disk (``file://`` URL). A department that
already mirrors the course in its own git server can point ``ATTNLAB_COURSE_URL`` there instead.
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "hub"))
from layout import Layout  # noqa: E402

# What a student sees in their home: both languages' lessons and the instructor's explorer.
COURSE_PATHS = ("lessons_vi", "lessons_zh", "notebooks")
BRANCH = "main"
_GIT_ID = ["-c", "user.name=attnlab hub", "-c", "user.email=hub@attnlab.invalid"]
_SKIP = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")


def _git(repo: pathlib.Path, *args: str) -> str:
    done = subprocess.run(["git", *_GIT_ID, *args], cwd=repo, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def publish(dest: pathlib.Path, source: pathlib.Path = ROOT, paths=COURSE_PATHS,
            message: str = "course update") -> bool:
    """Make ``dest`` (a git repository, created if missing) hold ``paths`` of ``source``.

    Returns True when a new commit was made, False when the course was already up to date.
    """
    dest = pathlib.Path(dest)
    missing = [p for p in paths if not (source / p).exists()]
    if missing:
        raise FileNotFoundError(f"publish_course: {source} has no {', '.join(missing)}")
    if not (dest / ".git").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        _git(dest, "init", "-q", "-b", BRANCH)
    for p in paths:
        target = dest / p
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        if (source / p).is_dir():
            shutil.copytree(source / p, target, ignore=_SKIP)
        else:
            shutil.copy2(source / p, target)
    _git(dest, "add", "-A", "--", *paths)
    if not _git(dest, "status", "--porcelain", "--", *paths).strip():
        return False
    _git(dest, "commit", "-q", "-m", message)
    return True


def open_to_reading(dest: pathlib.Path) -> None:
    """Every student pulls from it (as their own user): readable by all, writable by its owner."""
    for p in [dest, *dest.rglob("*")]:
        if not p.is_symlink():
            p.chmod((p.stat().st_mode & 0o755) | 0o444 | (0o111 if p.is_dir() else 0))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--to", type=pathlib.Path, default=Layout.from_env().course,
                    help="the course repository the students pull from (default: where the hub "
                         "reads it, $ATTNLAB_HUB_STATE/course)")
    ap.add_argument("-m", "--message", default="course update")
    a = ap.parse_args(argv)
    changed = publish(a.to, message=a.message)
    open_to_reading(a.to)
    head = _git(a.to, "rev-parse", "--short", "HEAD").strip()
    print(f"course {'published' if changed else 'already up to date'}: {a.to} at {head}")


if __name__ == "__main__":
    main()
