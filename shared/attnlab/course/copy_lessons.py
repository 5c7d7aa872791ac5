"""The course's notebooks from the installed package, for students who cannot reach GitHub.

    attnlab-lessons [FOLDER] [--lang vi|zh|en]                 (default FOLDER: ./attention-course)
    python -m attnlab.course.copy_lessons [FOLDER] [--lang vi|zh|en]   (the same, where the command is not on PATH)

`pip install attnlab-course` (from PyPI or a university's mirror) installs the notebooks of
``course.NOTEBOOK_DIRS`` beside the package (under <prefix>/share/attnlab-course/).
``update_lessons`` brings a folder up to date with them, with the rules of the hub's course update
(docs/hub.md), so running the command again after `pip install -U attnlab-course` is safe:

- a file the folder lacks is copied: a new lesson arrives, a lesson the student deleted comes back fresh;
- a file the student never changed (its bytes are the ones written last time, recorded in
  FOLDER/.attnlab-course.json) is replaced by the newer version: corrected lessons arrive;
- a file the student changed (edited, or ran and saved) is never overwritten; when the course has a
  newer version of it, that version is written beside it, once, as NAME.v<version>.ipynb.

Nothing is ever deleted. Then ``jupyter lab FOLDER``; each notebook's setup cell finds the installed package.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.metadata
import json
import locale
import os
import pathlib
import re
import shutil
import sys
import unicodedata
from typing import Mapping

from . import DISTRIBUTION, NOTEBOOK_DIRS, VERSION
from .i18n import LANGUAGES, t

SHARE = "share/attnlab-course"
MANIFEST = ".attnlab-course.json"      # in the student's folder: what update_lessons wrote there
COMMAND = "attnlab-lessons"            # pyproject.toml [project.scripts]


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


@dataclasses.dataclass
class LessonUpdate:
    """What update_lessons did, as relative file names."""
    added: list = dataclasses.field(default_factory=list)       # the folder did not have it
    restored: list = dataclasses.field(default_factory=list)    # written before, deleted by the student
    updated: list = dataclasses.field(default_factory=list)     # unchanged by the student: replaced by the newer version
    unchanged: list = dataclasses.field(default_factory=list)   # already the course's version
    kept: list = dataclasses.field(default_factory=list)        # changed by the student: left as it is
    beside: dict = dataclasses.field(default_factory=dict)      # kept name -> where the newer version was written


def _digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def beside_name(name: str, version: str) -> str:
    """lessons_vi/01_x.ipynb -> lessons_vi/01_x.v0.2.0.ipynb (the newer version of an edited file)."""
    path = pathlib.PurePosixPath(name)
    return str(path.with_name(f"{path.stem}.v{version}{path.suffix}"))


def read_manifest(folder: pathlib.Path) -> dict[str, str]:
    """{name: sha256 of the bytes update_lessons last wrote}; {} for a folder it never wrote to
    (or a manifest that is not ours)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(files, dict) else {}


def update_lessons(folder: pathlib.Path, sources: Mapping[str, pathlib.Path] | None = None,
                   version: str = VERSION) -> LessonUpdate:
    """Bring ``folder`` up to date with the course's files (``sources``: relative name -> file;
    default: the notebooks installed with the package), by the rules in this module's docstring.
    A file already there that this function did not write (no record of it) counts as changed by
    the student unless it is byte-identical to the course's version."""
    folder = pathlib.Path(folder)
    sources = installed_notebooks() if sources is None else sources
    written = read_manifest(folder)
    report = LessonUpdate()
    for name, source in sorted(sources.items()):
        target = folder / name
        new = _digest(source)
        if not target.exists():
            _copy(source, target)
            (report.restored if name in written else report.added).append(name)
            written[name] = new
            continue
        have = _digest(target)
        if have == new:
            report.unchanged.append(name)
            written[name] = new
        elif written.get(name) == have:           # the bytes we wrote: the student did not change it
            _copy(source, target)
            report.updated.append(name)
            written[name] = new
        else:                                     # the student's own version: never overwritten
            report.kept.append(name)
            other = beside_name(name, version)
            if not (folder / other).exists():
                _copy(source, folder / other)
            report.beside[name] = other
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps({"version": version, "files": written}, indent=1, sort_keys=True) + "\n",
                                   encoding="utf-8")
    return report


def _copy(source: pathlib.Path, target: pathlib.Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


# ---- the command -----------------------------------------------------------------------------

def language_from_environment(environ: Mapping[str, str] = os.environ) -> str:
    """vi or zh from the system's locale (LANG=vi_VN.UTF-8, zh_CN.UTF-8; on Windows the user's
    locale, e.g. 'Chinese (Simplified)_China'), else en."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = environ.get(var, "")
        if value:
            return _code(value)
    try:
        return _code(locale.getlocale()[0] or "")
    except ValueError:
        return "en"


def _code(name: str) -> str:
    name = name.lower()
    for lang, words in (("vi", ("vi", "vietnamese")), ("zh", ("zh", "chinese"))):
        if any(name.startswith(w) for w in words):
            return lang
    return "en"


def requested_language(argv: list[str], environ: Mapping[str, str] = os.environ) -> str:
    """The --lang of the command line (so that --help is already in it), else the locale's."""
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--lang=") else (
            argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None)
        if value in LANGUAGES:
            return value
    return language_from_environment(environ)


class _Formatter(argparse.HelpFormatter):
    usage_word = "usage: "

    def add_usage(self, usage, actions, groups, prefix=None):
        return super().add_usage(usage, actions, groups, self.usage_word if prefix is None else prefix)

    def _split_lines(self, text, width):
        return wrap(text, width)

    def _fill_text(self, text, width, indent):
        return "\n".join(indent + line for line in wrap(text, width - len(indent)))


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` terminal columns (a Chinese character takes two), broken at spaces
    or between Chinese characters, never inside a Latin word or a file name (no break at "-"), and
    never before Chinese closing punctuation."""
    cjk, opening, closing = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef", "（“《", "，。；：、）”》！？"
    tokens = re.findall(rf"\s+|[{opening}]*[^\s{cjk}]+[{closing}]*|[{opening}]*[{cjk}][{closing}]*", " ".join(text.split()))
    lines, line = [], ""
    for token in tokens:
        if line and _width(line + token.rstrip()) > width:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line += token
    return lines + ([line.rstrip()] if line.strip() else [])


class _Parser(argparse.ArgumentParser):
    lang = "en"

    def format_help(self):
        text = super().format_help()
        if self.lang == "zh":        # a Chinese heading ends with a full-width colon
            text = re.sub(r"^(\S.*[^\x00-\x7f]):$", r"\1：", text, flags=re.M)
        for action in self._actions:  # argparse pads by characters: a wide metavar takes fewer spaces
            name = action.metavar if isinstance(action.metavar, str) else None
            extra = _width(name) - len(name) if name else 0
            if extra > 0:
                text = re.sub(rf"^(\s+{re.escape(name)}) {{{extra}}}", r"\1", text, flags=re.M)
        return text

    def error(self, message):          # argparse's own reason stays English (Python has no vi/zh for it)
        self.print_usage(sys.stderr)
        self.exit(2, t("lessons.error", self.lang, prog=self.prog, reason=message) + "\n")


def parser(lang: str) -> argparse.ArgumentParser:
    word = t("lessons.usage", lang)
    formatter = type("Formatter", (_Formatter,), {"usage_word": word if word.endswith("：") else word + " "})
    example = beside_name("01_self_attention.ipynb", VERSION)
    p = _Parser(prog=COMMAND, description=t("lessons.about", lang),
                epilog=t("lessons.rules", lang, manifest=MANIFEST, example=example),
                formatter_class=formatter, add_help=False)
    p.lang = lang
    where = p.add_argument_group(t("lessons.arguments", lang))
    where.add_argument("folder", nargs="?", default="attention-course", type=pathlib.Path,
                       metavar=t("lessons.folder_word", lang), help=t("lessons.folder_help", lang))
    where.add_argument("--lang", choices=LANGUAGES, default=lang, help=t("lessons.lang_help", lang))
    where.add_argument("-h", "--help", action="help", help=t("lessons.help_help", lang))
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser(requested_language(argv)).parse_args(argv)
    lang = args.lang
    if not installed_notebooks():
        print(t("lessons.none", lang, package=DISTRIBUTION, folders=("、" if lang == "zh" else ", ").join(NOTEBOOK_DIRS)),
              file=sys.stderr)
        return 1
    print(describe(update_lessons(args.folder), args.folder, lang))
    print(t("lessons.open", lang, folder=args.folder))
    return 0


def describe(report: LessonUpdate, folder: pathlib.Path, lang: str) -> str:
    """What update_lessons did, in the student's language: one summary line, then each kept file."""
    lines = [t("lessons.summary", lang, folder=folder, added=len(report.added) + len(report.restored),
               updated=len(report.updated), unchanged=len(report.unchanged), kept=len(report.kept))]
    lines += ["  " + t("lessons.kept_one", lang, name=name, beside=report.beside[name]) for name in report.kept]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
