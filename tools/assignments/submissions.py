"""What was handed in: the folder of submissions read (``scan``), each notebook checked against the
released assignment (``check_submission``: not a notebook, another lesson, the other language, the
locked cells edited), and its nbgrader metadata put back before nbgrader reads it (``restore_metadata``).
Nothing here runs a notebook: it is JSON, read in the grader's process."""
from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from . import report, runner, settings

NOTEBOOK_CAP = 32 << 20          # bytes: a bigger file is not read (not a notebook a student wrote)


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


def restore_metadata(nb, release_nb) -> set:
    """Give every cell the nbgrader metadata the release gave it, before nbgrader reads the notebook
    (a flipped ``grade`` flag makes nbgrader fail on the whole notebook): a cell with a known id gets
    the release's metadata, a cell claiming an unknown or a repeated id loses it, and a deleted locked
    cell comes back after the released cell before it. Returns the ids of the cells changed."""
    released = {c.metadata["nbgrader"]["grade_id"]: c for c in release_nb.cells if "nbgrader" in c.metadata}
    changed, seen = set(), set()
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        if gid in released and gid not in seen and cell.cell_type == released[gid].cell_type:
            if meta != released[gid].metadata["nbgrader"]:
                cell.metadata["nbgrader"] = copy.deepcopy(released[gid].metadata["nbgrader"])
                changed.add(gid)
            seen.add(gid)
        else:
            del cell.metadata["nbgrader"]
            changed.add(str(gid))
    order = list(released)
    for gid in order:
        if gid in seen or not released[gid].metadata["nbgrader"].get("locked"):
            continue
        before = [g for g in order[:order.index(gid)] if g in seen]
        at = len(nb.cells)
        if before:
            at = 1 + next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == before[-1])
        nb.cells.insert(at, copy.deepcopy(released[gid]))
        seen.add(gid)
        changed.add(gid)
    return changed


def _read(path: Path):
    if path.stat().st_size > NOTEBOOK_CAP:
        raise ValueError(f"larger than {NOTEBOOK_CAP >> 20} MiB")
    text = path.read_text(encoding="utf-8-sig")          # a UTF-8 BOM (Windows editors) is not an error
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    return nb


def check_submission(path: Path, aid: str, ids: dict) -> tuple:
    """(why ``path`` cannot be graded as ``aid``: a word key and its fields, or None; the edited locked cells;
    the note on a notebook of the same lesson in the other language, or None)."""
    try:
        nb = _read(path)
    except Exception as e:          # not JSON, not a notebook: say which, briefly
        return ("invalid", {"detail": f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"}), set(), None
    mine = _grade_ids(nb) & ids[aid]["grade_ids"]
    stem = settings.split_assignment_id(aid)[0]
    others = sorted(a for a, v in ids.items() if a != aid and (_grade_ids(nb) & v["grade_ids"])
                    and settings.split_assignment_id(a)[0] != stem)
    if not mine and others:
        return ("other_lesson", {"other": ", ".join(others)}), set(), None
    twin = next((a for a in ids if a != aid and settings.split_assignment_id(a)[0] == stem
                 and not edited_cells(nb, ids[a]["locked"])), None)
    if twin:                        # the other language's notebook of this lesson, untouched: not tampering
        return None, set(), ("other_language", {"other": twin, "aid": aid})
    return None, edited_cells(nb, ids[aid]["locked"]), None


def _layout_hint(path: Path, submissions: Path, ids: dict) -> dict:
    """Fields of the 'layout' note: where the file is, and where it should be."""
    rel = path.relative_to(submissions)
    student = rel.parts[0] if len(rel.parts) > 1 else rel.stem
    guess = None
    try:
        nb = _read(path)
        lang = "zh" if 'set_language("zh")' in "".join(c.source for c in nb.cells) else "vi"
        guess = next((a for a, v in ids.items() if _grade_ids(nb) & v["grade_ids"]
                      and settings.split_assignment_id(a)[1] == lang), None)
    except Exception:
        pass
    want = f"{student}/{guess}/{ids[guess]['notebook']}" if guess else f"{student}/<assignment>/<notebook>.ipynb"
    return {"found": str(rel), "want": want, "assignment": guess or ""}


def scan(submissions: Path, ids: dict) -> tuple[list, list, dict]:
    """(gradable (student, aid, notebook path), problems (student, aid, word key, fields),
    {(student, aid): (the locked cells the student edited, a note or None)})."""
    jobs, problems, edits = [], [], {}
    for stray in sorted(submissions.glob("*.ipynb")) + sorted(submissions.glob("*/*.ipynb")):
        student = stray.parent.name if stray.parent != submissions else stray.stem
        problems.append((student, "-", "layout", _layout_hint(stray, submissions, ids)))
    folders = lambda d: sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))  # not .ipynb_checkpoints
    for student_dir in folders(submissions):
        for adir in folders(student_dir):
            student, aid = student_dir.name, adir.name
            if aid not in ids:
                for nb_path in sorted(adir.glob("*.ipynb"))[:1] or [adir]:
                    hint = _layout_hint(nb_path, submissions, ids) if nb_path.is_file() else \
                        {"found": str(adir.relative_to(submissions)), "want": f"{student}/<assignment>/<notebook>.ipynb",
                         "assignment": ""}
                    problems.append((student, aid, "layout", hint))
                continue
            name = ids[aid]["notebook"]
            path = adir / name
            if not path.is_file():
                found = ", ".join(sorted(p.name for p in adir.glob("*.ipynb"))) or "-"
                problems.append((student, aid, "missing", {"name": name, "found": found}))
                continue
            problem, edited, note = check_submission(path, aid, ids)
            if problem:
                problems.append((student, aid, *problem))
            else:
                jobs.append((student, aid, str(path)))
                edits[(student, aid)] = (edited, note)
    return jobs, problems, edits


def known_assignments(assignments: Path) -> dict:
    ids = {}
    for nb_path in sorted((assignments / "source").glob("*/*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        released = nbformat.read(assignments / "release" / nb_path.parent.name / nb_path.name, as_version=4)
        locked = {c.metadata["nbgrader"]["grade_id"]: (c.source, c.metadata["nbgrader"].get("points"),
                                                       c.metadata["nbgrader"]["grade"], True)
                  for c in released.cells if c.metadata.get("nbgrader", {}).get("locked")}
        exercises = report.exercises(nb)
        calls = {c.metadata["nbgrader"]["grade_id"]: runner.hidden_call(c.source) for c in nb.cells
                 if c.metadata.get("nbgrader", {}).get("grade")}
        graded = {ex["grade_id"]: {"key": calls[ex["grade_id"]][0], "args": calls[ex["grade_id"]][1], "max": ex["max"]}
                  for ex in exercises if calls.get(ex["grade_id"])}
        ids[nb_path.parent.name] = {"notebook": nb_path.name, "grade_ids": _grade_ids(nb),
                                    "exercises": exercises, "locked": locked, "graded": graded}
    return ids
