"""Build the course's nbgrader assignments from the lessons (``make assignments``).

    python -m tools.assignments.build [--out assignments] [--check]

For each lesson with exercises and each language, one assignment ``<lesson>_<lang>`` holding one
notebook ``<lesson>.ipynb``: the lesson's title, setup and language cells, the imports (and the
trained model, loaded from the package checkpoint) the exercises need, then each exercise's
instructions, its TODO cell (what the student edits) and its checker cell. The checker cell holds
a hidden test, ``assert attnlab.exercises.lNN.evaluate_x(...).ok``: the lesson's own checker decides
the points (all or nothing per exercise). ``assignments/source`` is nbgrader's source version (with
the hidden tests), ``assignments/release`` what students get (written by nbgrader's
generate_assignment: hidden tests removed, checksums added). ``--check`` rebuilds into a temporary
folder and exits 1 if a committed file differs (a lesson changed: run ``make assignments``).
"""
from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

from . import settings
from .lesson_cells import CONTEXT, Lesson, read_lesson
from .report import word

ROOT = Path(__file__).resolve().parents[2]
LESSON_DIR = {"vi": "lessons_vi", "zh": "lessons_zh"}


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(cell_id: str, source: str, meta: dict):
    cell = nbformat.v4.new_code_cell(source, metadata=meta)
    cell.id = cell_id
    return cell


def _copy(cell):
    """A lesson cell without nbgrader metadata; links to the repository's licence files made absolute
    (the assignment travels without the repository)."""
    from attnlab.course import BRANCH, REPO_URL

    new = nbformat.from_dict(dict(cell))
    new.source = new.source.replace("](../LICENSE", f"]({REPO_URL}/blob/{BRANCH}/LICENSE")
    new.metadata = {k: v for k, v in cell.metadata.items() if k != "nbgrader"}
    return new


def hidden_test(ex) -> str:
    """The checker cell: the lesson's lines above the call (if any), the call, then the hidden test."""
    shown = f"{ex.prelude}\n{ex.call}" if ex.prelude else ex.call
    if not ex.graded:
        return shown
    return (f"{shown}\n### BEGIN HIDDEN TESTS\n"
            f"assert attnlab.exercises.{ex.module}.{ex.evaluate}({ex.args}).ok   "
            f"# {settings.POINTS} point(s) if the checker above says correct, else 0\n"
            f"### END HIDDEN TESTS")


def source_notebook(lesson: Lesson, lesson_nb, lang: str):
    """The nbgrader source version of one lesson's exercises, in ``lang``."""
    cells = [_copy(c) for c in lesson.title]
    intro = word("intro", lang) + (" " + word("intro_model", lang) if lesson.stem in CONTEXT else "")
    cells.append(nbformat.v4.new_markdown_cell(intro, id="assignment"))
    cells.append(_code("setup", lesson.setup, _meta("setup", locked=True)))
    cells.append(_code("language", lesson.language, _meta("language", locked=True)))
    cells.append(_code("context", lesson.context, _meta("context", locked=True)))
    for ex in lesson.exercises:
        cells += [_copy(c) for c in ex.markdown]
        if ex.answer:
            cells.append(_code(f"{ex.grade_id}-answer", ex.answer, _meta(f"{ex.grade_id}-answer", solution=True)))
        cells += [_copy(c) for c in ex.between]
        cells.append(_code(ex.grade_id, hidden_test(ex),
                           _meta(ex.grade_id, grade=True, locked=True, points=settings.POINTS) if ex.graded
                           else _meta(ex.grade_id, locked=True)))
    cells += [_copy(c) for c in lesson.license]
    nb = nbformat.v4.new_notebook(cells=cells, metadata=dict(lesson_nb.metadata))
    nb.nbformat_minor = lesson_nb.nbformat_minor
    return nb


def lessons() -> list[str]:
    """The lesson stems present in every language folder."""
    stems = [{p.stem for p in (ROOT / d).glob("*.ipynb")} for d in LESSON_DIR.values()]
    return sorted(set.intersection(*stems))


def has_exercises(path: Path) -> bool:
    return "attnlab.exercises" in path.read_text(encoding="utf-8") and ".check_" in path.read_text(encoding="utf-8")


def build(out: Path) -> list[str]:
    """Write ``out/source`` and ``out/release``; return the assignment ids."""
    ids = []
    with tempfile.TemporaryDirectory() as tmp:
        course = Path(tmp)
        for stem in lessons():
            for lang in settings.LANGUAGES:
                path = ROOT / LESSON_DIR[lang] / f"{stem}.ipynb"
                if not has_exercises(path):
                    continue
                nb = nbformat.read(path, as_version=4)
                aid = settings.assignment_id(stem, lang)
                dest = course / "source" / aid / f"{stem}.ipynb"
                dest.parent.mkdir(parents=True)
                nbformat.write(source_notebook(read_lesson(nb, stem), nb, lang), dest)
                ids.append(aid)
        settings.generate_assignments(course, ids)
        for part in ("source", "release"):
            shutil.rmtree(out / part, ignore_errors=True)
            shutil.copytree(course / part, out / part)
    return ids


def differences(a: Path, b: Path) -> list[str]:
    """Relative paths of the files that differ between two trees (or exist in one only)."""
    files = lambda root: {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    fa, fb = files(a), files(b)
    return sorted((fa ^ fb) | {f for f in fa & fb if not filecmp.cmp(a / f, b / f, shallow=False)})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "assignments")
    ap.add_argument("--check", action="store_true", help="compare a fresh build with --out; change nothing")
    args = ap.parse_args(argv)
    settings.use_venv_tools()
    if not args.check:
        ids = build(args.out)
        print(f"{len(ids)} assignments in {os.path.relpath(args.out)}: source/ (instructor), release/ (students)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        diff = [f for part in ("source", "release") for f in
                differences(Path(tmp) / part, args.out / part)] if (args.out / "release").is_dir() else ["(no build)"]
    if diff:
        print("assignments are out of date (run `make assignments`):\n  " + "\n  ".join(diff), file=sys.stderr)
        return 1
    print("assignments are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
