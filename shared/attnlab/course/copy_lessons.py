"""The course's notebooks from the installed package, for students who cannot reach GitHub.

    python -m attnlab.course.copy_lessons [FOLDER] [--lang vi|zh|en]     (default: ./attention-course)

`pip install attnlab-course` (from PyPI or a university's mirror) installs the notebooks of
``course.NOTEBOOK_DIRS`` beside the package (under <prefix>/share/attnlab-course/). This copies
them into FOLDER, keeping every file that is already there: a notebook a student has edited is
never overwritten, a lesson added by a newer version arrives. Then ``jupyter lab FOLDER``; each
notebook's setup cell finds the installed package.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import pathlib
import shutil
import sys

from . import DISTRIBUTION, NOTEBOOK_DIRS
from .i18n import LANGUAGES, t

SHARE = "share/attnlab-course"


def installed_notebooks() -> dict[str, pathlib.Path]:
    """'lessons_vi/01_self_attention.ipynb' -> where pip put it; empty for a source checkout."""
    try:
        files = importlib.metadata.files(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    found = {}
    for entry in files:
        parts = entry.as_posix().split(f"{SHARE}/", 1)
        if len(parts) == 2 and parts[1].split("/", 1)[0] in NOTEBOOK_DIRS:
            found[parts[1]] = pathlib.Path(entry.locate())
    return found


def copy_lessons(folder: pathlib.Path) -> tuple[list[str], list[str]]:
    """Copy the installed notebooks into ``folder``; returns (copied, kept) relative names."""
    copied, kept = [], []
    for name, source in sorted(installed_notebooks().items()):
        target = folder / name
        if target.exists():
            kept.append(name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied.append(name)
    return copied, kept


def language_from_environment() -> str:
    """vi or zh from the system's locale (LANG=vi_VN.UTF-8, zh_CN.UTF-8, ...), else en."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        code = os.environ.get(var, "")[:2].lower()
        if code:
            return code if code in LANGUAGES else "en"
    return "en"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnlab.course.copy_lessons", description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="attention-course", type=pathlib.Path)
    parser.add_argument("--lang", choices=LANGUAGES, default=language_from_environment())
    args = parser.parse_args(argv)
    if not installed_notebooks():
        print(t("lessons.none", args.lang, package=DISTRIBUTION, folders=("、" if args.lang == "zh" else ", ").join(NOTEBOOK_DIRS)), file=sys.stderr)
        return 1
    copied, kept = copy_lessons(args.folder)
    print(t("lessons.copied", args.lang, folder=args.folder, copied=len(copied), kept=len(kept)))
    print(t("lessons.open", args.lang, folder=args.folder))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
