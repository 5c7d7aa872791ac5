"""The words of grades.csv's notes and of the feedback pages, and the pages themselves (one per
submission, in the student's language: the exercises, the points, the judge's words)."""
from __future__ import annotations

import csv
import html
import json
import os
import re
from pathlib import Path

from . import settings

WORDS = json.loads((Path(__file__).with_name("words.json")).read_text(encoding="utf-8"))
CONTEXT_CELLS = ("setup", "language", "context")
INSTRUCTOR_ONLY = {"in_kernel", "log", "unsafe", "suspicious", "claim"}          # notes for grades.csv, not for the student's page
MATH = re.compile(r"\$([^$\n]+)\$")
FIELDS = ("student", "lesson", "language", "exercise", "points", "max_points", "note")


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


def with_math(text: str) -> str:
    """HTML of ``text`` with each ``$…$`` as MathML (browsers draw it; nothing to download), the rest escaped."""
    try:
        from latex2mathml.converter import convert
    except ImportError:                       # pragma: no cover - latex2mathml is in requirements-dev.txt
        convert = None
    out, at = [], 0
    for m in MATH.finditer(text):
        out.append(html.escape(text[at:m.start()]))
        try:
            out.append(convert(m.group(1)) if convert else html.escape(m.group(1)))
        except Exception:                     # not LaTeX latex2mathml knows: the text as written
            out.append(html.escape(m.group(0)))
        at = m.end()
    return "".join(out) + html.escape(text[at:])


def _colon(lang: str) -> str:
    return "：" if lang == "zh" else ": "


_STYLE = """<style>body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:56rem;margin:1rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.4rem;vertical-align:top;text-align:left}
pre{white-space:pre-wrap;margin:0;font-family:inherit}.pts{white-space:nowrap}.note{color:#a40;margin:.3rem 0 0}</style>"""


def _notes(notes, lang: str) -> str:
    return "".join(f"<p class='note'>{html.escape(word(k, lang, **f))}</p>" for k, f in notes if k not in INSTRUCTOR_ONLY)


def feedback_page(student: str, lesson_title: str, lang: str, rows: list[dict]) -> str:
    """One HTML page: the exercises, the points and the judge's words, in the student's language."""
    esc = html.escape
    total = sum(r["points"] for r in rows)
    top = sum(r["max_points"] for r in rows)
    body = []
    for r in rows:
        body.append(f"<tr data-exercise='{esc(r['exercise'])}'><td>{with_math(r['title'] or r['exercise'])}</td>"
                    f"<td class='pts'>{r['points']:g} / {r['max_points']:g}</td>"
                    f"<td><pre>{esc(r['feedback'] or word('nothing', lang))}</pre>{_notes(r['notes'], lang)}</td></tr>")
    c = _colon(lang)
    return f"""<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(lesson_title)} · {esc(student)}</title>
{_STYLE}
</head><body>
<h1>{esc(word('title', lang))}{c}{esc(lesson_title)}</h1>
<p>{esc(word('student', lang))}{c}<b>{esc(student)}</b> · {esc(word('total', lang))}{c}<b>{total:g} / {top:g}</b></p>
<p>{esc(word('rule', lang))}</p>
<table><tr><th>{esc(word('exercise', lang))}</th><th>{esc(word('points', lang))}</th><th>{esc(word('feedback', lang))}</th></tr>
{chr(10).join(body)}
</table></body></html>
"""


def layout_page(student: str, lang: str | None, notes: list) -> str:
    """The page of a notebook handed in at the wrong place: what to rename (both languages if unknown)."""
    esc = html.escape
    langs = [lang] if lang else ["vi", "zh"]
    parts = "".join(f"<section lang='{l}'><h1>{esc(word('layout_title', l))}</h1>"
                    f"<p>{esc(word('student', l))}{_colon(l)}<b>{esc(student)}</b></p>{_notes(notes, l)}</section>"
                    for l in langs)
    return f"""<!DOCTYPE html>
<html lang="{langs[0]}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(student)}</title>
{_STYLE}
</head><body>
{parts}
</body></html>
"""


# ------------------------------------------------------------------ grades.csv and the pages
def rows_for(student, aid, info, result, problem, timeout, unsafe: bool) -> list[dict]:
    stem, lang = settings.split_assignment_id(aid) if info else (aid, "")    # "": not an assignment
    rows = []
    for ex in info["exercises"] if info else [{"grade_id": "", "max": 0.0, "title": ""}]:
        gid = ex["grade_id"]
        if problem:
            notes, points, feedback = [problem], 0.0, ""
        else:
            notes = []
            touched = set(result["edited"]) | set(result.get("changed", ()))
            if result.get("note"):                                # the other language's notebook: nothing edited
                touched = set()
            if {gid, f"{gid}-answer"} & touched or touched & set(CONTEXT_CELLS):
                notes.append(("restored", {}))
            if result.get("note"):
                notes.append(tuple(result["note"]))
            notes += result["notes"].get(gid, [])
            if gid in result.get("claims", ()):
                notes.append(("claim", {}))
            if result.get("suspicious"):
                notes.append(("suspicious", {"what": ", ".join(result["suspicious"][:12])}))
            points = result["points"].get(gid, 0.0)
            feedback = result["feedback"].get(gid, "")
            if result["error"] or gid not in result["points"]:      # the grader itself failed: say so on every row
                notes.append(("failed", {"detail": "; ".join(result["error"]) or "no grade recorded"}))
            if result.get("log"):
                notes.append(("log", {"path": result["log"]}))
        if unsafe:
            notes.append(("unsafe", {}))
        rows.append({"student": student, "lesson": stem, "language": lang, "exercise": gid.replace("-", "."),
                     "points": points, "max_points": ex["max"], "notes": notes, "feedback": feedback,
                     "title": ex["title"]})
    return rows


def _old_rows(path: Path) -> list[dict]:
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def write(rows: list[dict], out: Path, merge: bool = True) -> int:
    """grades.csv (merged with the one there unless ``merge`` is False: the rows of a submission graded
    now replace its old rows) and the feedback pages. Returns how many old rows were kept."""
    from attnlab.course import LESSONS

    out.mkdir(parents=True, exist_ok=True)
    new = {(r["student"], r["lesson"], r["language"]) for r in rows}
    old = [r for r in _old_rows(out / "grades.csv") if (r["student"], r["lesson"], r["language"]) not in new] \
        if merge else []
    lines = old + [{**{k: r[k] for k in FIELDS if k != "note"},
                    "note": "; ".join(word(k, "en", **fl) for k, fl in r["notes"])} for r in rows]
    lines.sort(key=lambda r: (r["student"], r["lesson"], r["language"], r["exercise"]))
    tmp = out / ".grades.csv.new"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(lines)
    os.replace(tmp, out / "grades.csv")
    pages = {}
    for r in rows:
        pages.setdefault((r["student"], r["lesson"], r["language"]), []).append(r)
    for (student, stem, lang), page_rows in pages.items():
        if not lang:                # not in an assignment folder: a page that says what to rename
            fields = dict(page_rows[0]["notes"][0][1])
            lang = settings.split_assignment_id(fields.get("assignment") or "x_")[1] or None
            page = out / "feedback" / student / f"{Path(Path(fields.get('found', stem)).parts[-1]).stem}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(layout_page(student, lang, page_rows[0]["notes"]), encoding="utf-8")
            continue
        title = LESSONS.get(stem, {}).get(lang, stem)
        page = out / "feedback" / student / f"{settings.assignment_id(stem, lang)}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(feedback_page(student, title, lang, page_rows), encoding="utf-8")
    return len(old)
