"""Grade a folder of submissions with nbgrader (``make grade SUBMISSIONS=dir``).

    python -m tools.assignments.grade SUBMISSIONS [--out build/grades] [-j N] [--timeout 60]

SUBMISSIONS has nbgrader's layout, ``<student>/<assignment>/<notebook>.ipynb`` (what ``nbgrader
collect`` writes under ``submitted/``, or a folder filled any other way), assignments as built by
``make assignments`` (``01_self_attention_vi``, ...). Writes ``grades.csv`` (student, lesson,
language, exercise, points, max_points, note) and ``feedback/<student>/<assignment>.html``.
A submission that cannot be graded (not a notebook, a missing or foreign notebook) gets 0 points
with the reason in ``note``; it never stops the others. Workers grade in parallel, each in its own
nbgrader course folder (nbgrader's SQLite gradebook is not for concurrent writers).
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import shutil
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from . import report, settings

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("student", "lesson", "language", "exercise", "points", "max_points", "note")


def _grade_ids(nb) -> set:
    """The ids of a notebook's exercise cells (setup, language, context: the same in every assignment)."""
    return {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells} - {None, *report.CONTEXT_CELLS}


def edited_cells(nb, released: dict) -> set:
    """grade_ids of the locked cells (setup, context, tests) the student changed: source, points or kind."""
    edited = set(released) - {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}   # deleted
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id")
        if gid in released and (cell.source, meta.get("points"), meta.get("grade"), meta.get("locked")) != released[gid]:
            edited.add(gid)
    return edited


def check_submission(path: Path, aid: str, ids: dict) -> tuple:
    """(why ``path`` cannot be graded as ``aid``: a word key and its fields, or None; the edited locked cells)."""
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as e:          # not JSON, not a notebook: say which, briefly
        return ("invalid", {"detail": f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"}), set()
    mine = _grade_ids(nb) & ids[aid]["grade_ids"]
    others = sorted(a for a, v in ids.items() if a != aid and (_grade_ids(nb) & v["grade_ids"])
                    and settings.split_assignment_id(a)[0] != settings.split_assignment_id(aid)[0])
    if not mine and others:
        return ("other_lesson", {"other": ", ".join(others)}), set()
    return None, edited_cells(nb, ids[aid]["locked"])


def scan(submissions: Path, ids: dict) -> tuple[list, list, dict]:
    """(gradable (student, aid, notebook path), problems (student, aid, word key, fields),
    {(student, aid): the locked cells the student edited})."""
    jobs, problems, edits = [], [], {}
    layout = "expected <student>/<assignment>/<notebook>.ipynb"
    for stray in sorted(submissions.glob("*.ipynb")) + sorted(submissions.glob("*/*.ipynb")):
        student = stray.parent.name if stray.parent != submissions else stray.stem
        problems.append((student, "-", "failed", {"detail": f"{stray.relative_to(submissions)}: {layout}"}))
    folders = lambda d: sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))  # not .ipynb_checkpoints
    for student_dir in folders(submissions):
        for adir in folders(student_dir):
            student, aid = student_dir.name, adir.name
            if aid not in ids:
                problems.append((student, aid, "failed", {"detail": f"unknown assignment folder {aid!r}"}))
                continue
            name = ids[aid]["notebook"]
            path = adir / name
            if not path.is_file():
                found = ", ".join(sorted(p.name for p in adir.glob("*.ipynb"))) or "-"
                problems.append((student, aid, "missing", {"name": name, "found": found}))
                continue
            problem, edited = check_submission(path, aid, ids)
            if problem:
                problems.append((student, aid, *problem))
            else:
                jobs.append((student, aid, str(path)))
                edits[(student, aid)] = edited
    return jobs, problems, edits


def _course(template: Path, where: Path) -> Path:
    shutil.copytree(template, where)
    return where


def grade_chunk(jobs: list, template: str, workdir: str, timeout: int) -> list[dict]:
    """Grade some submissions in a private copy of the course folder; one dict per submission."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    settings.use_venv_tools()
    warnings.filterwarnings("ignore", module="nbgrader")     # its SQLAlchemy session warnings: not ours to fix
    course = _course(Path(template), Path(workdir))
    for student, aid, path in jobs:
        dest = course / "submitted" / student / aid
        dest.mkdir(parents=True)
        shutil.copy(path, dest / Path(path).name)
        if (Path(path).parent / "timestamp.txt").is_file():
            shutil.copy(Path(path).parent / "timestamp.txt", dest)
    cfg = settings.config(course, timeout=timeout)
    coursedir = CourseDirectory(config=cfg)
    api = NbGraderAPI(coursedir=coursedir, config=cfg)
    return [_grade_one(api, coursedir, course, *job) for job in jobs]


def _grade_one(api, coursedir, course: Path, student: str, aid: str, path: str) -> dict:
    """nbgrader autograde of one submission, then its scores and the graded cells' outputs."""
    from nbgrader.api import Gradebook

    result = {"student": student, "aid": aid, "error": [], "scores": {}, "outputs": {}}
    try:
        run = api.autograde(aid, student)
        if not run["success"]:
            result["error"] = (run.get("error") or "nbgrader autograde failed").strip().splitlines()[-1:]
        stem = Path(path).stem
        graded = course / "autograded" / student / aid / f"{stem}.ipynb"
        if graded.is_file():
            outputs = report.cell_outputs(nbformat.read(graded, as_version=4))
            result["outputs"] = {k: (t, dict(e) if e else None) for k, (t, e) in outputs.items()}
        with Gradebook(coursedir.db_url, settings.COURSE_ID) as gb:
            nb = gb.find_submission_notebook(stem, aid, student)
            result["scores"] = {g.name: float(g.score or 0) for g in nb.grades}
    except Exception as e:                       # this submission only; the batch goes on
        result["error"] = [f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"]
    return result


def make_template(aids: list, assignments: Path, where: Path) -> None:
    """A course folder with the assignments' source and a gradebook (nbgrader generate_assignment)."""
    for aid in aids:
        shutil.copytree(assignments / "source" / aid, where / "source" / aid)
    settings.generate_assignments(where, aids)
    shutil.rmtree(where / "release", ignore_errors=True)


def known_assignments(assignments: Path) -> dict:
    ids = {}
    for nb_path in sorted((assignments / "source").glob("*/*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        released = nbformat.read(assignments / "release" / nb_path.parent.name / nb_path.name, as_version=4)
        locked = {c.metadata["nbgrader"]["grade_id"]: (c.source, c.metadata["nbgrader"].get("points"),
                                                       c.metadata["nbgrader"]["grade"], True)
                  for c in released.cells if c.metadata.get("nbgrader", {}).get("locked")}
        ids[nb_path.parent.name] = {"notebook": nb_path.name, "grade_ids": _grade_ids(nb),
                                    "exercises": report.exercises(nb), "locked": locked}
    return ids


def rows_for(student, aid, info, result, problem, timeout) -> list[dict]:
    stem, lang = settings.split_assignment_id(aid) if info else (aid, "")    # "": not an assignment
    rows = []
    for ex in info["exercises"] if info else [{"grade_id": "", "max": 0.0, "title": ""}]:
        gid = ex["grade_id"]
        if problem:
            notes, points, feedback = [problem], 0.0, ""
        else:
            notes = report.notes_for(gid, result["outputs"], result["edited"], timeout)
            points = result["scores"].get(gid, 0.0)
            feedback = result["outputs"].get(gid, ("", None))[0]
            if result["error"] or gid not in result["scores"]:      # nbgrader itself failed: say so on every row
                notes.append(("failed", {"detail": "; ".join(result["error"]) or "no grade recorded"}))
        rows.append({"student": student, "lesson": stem, "language": lang, "exercise": gid.replace("-", "."),
                     "points": points, "max_points": ex["max"], "notes": notes, "feedback": feedback,
                     "title": ex["title"]})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("submissions", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    ap.add_argument("--assignments", type=Path, default=ROOT / "assignments")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=int, default=settings.CELL_TIMEOUT, help="seconds per cell")
    args = ap.parse_args(argv)
    settings.use_venv_tools()
    if not args.submissions.is_dir():
        print(f"grade: {args.submissions} is not a folder of submissions (<student>/<assignment>/<notebook>.ipynb)",
              file=sys.stderr)
        return 2
    ids = known_assignments(args.assignments)
    if not ids:
        print(f"grade: no assignments in {args.assignments}/source: run `make assignments`", file=sys.stderr)
        return 2
    jobs, problems, edits = scan(args.submissions, ids)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        make_template(sorted({aid for _, aid, _ in jobs}), args.assignments, template)
        size = max(1, math.ceil(len(jobs) / (3 * args.jobs)))
        chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, len(chunks)))) as pool:
            futures = [pool.submit(grade_chunk, chunk, str(template), f"{tmp}/w{n}", args.timeout)
                       for n, chunk in enumerate(chunks)]
            for f, chunk in zip(futures, chunks):
                try:
                    done = f.result()
                except Exception as e:            # a worker died (out of memory, killed): its chunk only
                    done = [{"student": s, "aid": a, "error": [f"grading worker failed: {type(e).__name__}"],
                             "scores": {}, "outputs": {}} for s, a, _ in chunk]
                for r in done:
                    results[(r["student"], r["aid"])] = r
    rows = []
    for student, aid, _ in jobs:
        results[(student, aid)]["edited"] = sorted(edits[(student, aid)])
        rows += rows_for(student, aid, ids[aid], results[(student, aid)], None, args.timeout)
    for student, aid, key, fields in problems:
        rows += rows_for(student, aid, ids.get(aid), None, (key, fields), args.timeout)
    rows.sort(key=lambda r: (r["student"], r["lesson"], r["language"]))
    write(rows, args.out)
    graded = {(r["student"], r["lesson"], r["language"]) for r in rows}
    print(f"graded {len(graded)} submissions of {len({r['student'] for r in rows})} students "
          f"({len(problems)} with a problem, see note): {args.out / 'grades.csv'}")
    return 0


def write(rows: list[dict], out: Path) -> None:
    from attnlab.course import LESSONS

    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({**{k: r[k] for k in FIELDS if k != "note"},
                        "note": "; ".join(report.word(k, "en", **fl) for k, fl in r["notes"])})
    pages = {}
    for r in rows:
        pages.setdefault((r["student"], r["lesson"], r["language"]), []).append(r)
    for (student, stem, lang), page_rows in pages.items():
        if not lang:                # not an assignment (a stray file): grades.csv says so, no page
            continue
        title = LESSONS.get(stem, {}).get(lang, stem)
        page = out / "feedback" / student / f"{settings.assignment_id(stem, lang)}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(report.feedback_page(student, title, lang, page_rows), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
