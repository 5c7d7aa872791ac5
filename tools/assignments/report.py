"""The words of grades.csv's notes and of the feedback pages, and the pages themselves (one per
submission, in the student's language: the exercises, the points, the judge's words)."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

WORDS = json.loads((Path(__file__).with_name("words.json")).read_text(encoding="utf-8"))
CONTEXT_CELLS = ("setup", "language", "context")
INSTRUCTOR_ONLY = {"in_kernel", "log", "unsafe", "suspicious", "claim"}          # notes for grades.csv, not for the student's page
MATH = re.compile(r"\$([^$\n]+)\$")


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
