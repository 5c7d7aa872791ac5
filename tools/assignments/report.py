"""Read what nbgrader found (its gradebook, the graded notebook) into rows of grades.csv,
and write the feedback page of one submission in the student's language."""
from __future__ import annotations

import html
import json
from pathlib import Path

WORDS = json.loads((Path(__file__).with_name("words.json")).read_text(encoding="utf-8"))
TIMEOUT = ("CellTimeoutError", "KeyboardInterrupt")      # nbgrader interrupts a cell at its time limit
CONTEXT_CELLS = ("setup", "language", "context")


def word(key: str, lang: str, **fields) -> str:
    return WORDS[key].get(lang, WORDS[key]["en"]).format(**fields)


def exercises(source_nb) -> list[dict]:
    """The graded cells of a source notebook, in order: grade_id, max points, the exercise's heading."""
    found, heading = [], ""
    for cell in source_nb.cells:
        if cell.cell_type == "markdown":
            lines = [ln.lstrip("#").strip() for ln in cell.source.splitlines() if ln.startswith("###")]
            heading = lines[0] if lines else heading
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            found.append({"grade_id": meta["grade_id"], "max": float(meta["points"]), "title": heading})
    return found


def _error(output) -> str:
    value = str(output.get("evalue", "")).strip().splitlines()
    return output.get("ename", "Error") + (f": {value[0]}" if value else "")


def cell_outputs(graded_nb) -> dict:
    """grade_id -> (printed text, error text or None) in the graded notebook."""
    out = {}
    for cell in graded_nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if not gid or cell.cell_type != "code":
            continue
        text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        out[gid] = (text.strip(), errors[0] if errors else None)
    return out


def notes_for(ex_id: str, outputs: dict, edited, timeout: int) -> list[tuple]:
    """(word key, fields) describing what went wrong around one exercise, beyond a wrong answer.
    ``edited``: the locked cells the student changed (their originals were graded instead)."""
    notes = []
    if ex_id in edited or set(edited) & set(CONTEXT_CELLS):
        notes.append(("restored", {}))
    _, answer_error = outputs.get(f"{ex_id}-answer", ("", None))
    if answer_error is not None:
        notes.append(("timeout", {"seconds": timeout}) if answer_error.get("ename") in TIMEOUT
                     else ("answer_error", {"error": _error(answer_error)}))
    _, error = outputs.get(ex_id, ("", None))
    if error is not None and answer_error is None and error.get("ename") != "AssertionError":     # AssertionError: the checker said no
        notes.append(("timeout", {"seconds": timeout}) if error.get("ename") in TIMEOUT
                     else ("error", {"error": _error(error)}))
    return notes


def feedback_page(student: str, lesson_title: str, lang: str, rows: list[dict]) -> str:
    """One HTML page: the exercises, the points and the checker's words, in the student's language."""
    esc = html.escape
    total = sum(r["points"] for r in rows)
    top = sum(r["max_points"] for r in rows)
    body = []
    for r in rows:
        notes = "".join(f"<p class='note'>{esc(word(k, lang, **f))}</p>" for k, f in r["notes"])
        body.append(f"<tr data-exercise='{esc(r['exercise'])}'><td>{esc(r['title'] or r['exercise'])}</td><td class='pts'>{r['points']:g} / "
                    f"{r['max_points']:g}</td><td><pre>{esc(r['feedback'] or word('nothing', lang))}</pre>"
                    f"{notes}</td></tr>")
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(lesson_title)} · {esc(student)}</title>
<style>body{{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:56rem;margin:1rem auto;padding:0 1rem}}
table{{border-collapse:collapse;width:100%}}td,th{{border:1px solid #ccc;padding:.4rem;vertical-align:top;text-align:left}}
pre{{white-space:pre-wrap;margin:0;font-family:inherit}}.pts{{white-space:nowrap}}.note{{color:#a40;margin:.3rem 0 0}}</style>
</head><body>
<h1>{esc(word('title', lang))}: {esc(lesson_title)}</h1>
<p>{esc(word('student', lang))}: <b>{esc(student)}</b> · {esc(word('total', lang))}: <b>{total:g} / {top:g}</b></p>
<p>{esc(word('rule', lang))}</p>
<table><tr><th>{esc(word('exercise', lang))}</th><th>{esc(word('points', lang))}</th><th>{esc(word('feedback', lang))}</th></tr>
{chr(10).join(body)}
</table></body></html>
"""
