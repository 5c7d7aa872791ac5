"""The course's languages, lesson folders and html ``lang`` codes: the one source of truth,
read from ``attnlab/data/languages.json`` (add a language there first; CONTRIBUTING.md, "Add a
language", lists the other steps).

``LANGUAGES``: every language of the package's messages (vi, zh, en). ``COURSE_LANGUAGES``: those
with lessons (vi, zh), in the order the course lists them. ``FALLBACK``: the language a message
missing in another one is shown in (en).
"""
from __future__ import annotations

import json
from pathlib import Path

_DATA = json.loads(Path(__file__).resolve().parent.parent.joinpath("data").joinpath("languages.json").read_text(encoding="utf-8"))
_INFO: dict[str, dict] = _DATA["languages"]

LANGUAGES: tuple[str, ...] = tuple(_INFO)
COURSE_LANGUAGES: tuple[str, ...] = tuple(code for code, info in _INFO.items() if info.get("lessons"))
FALLBACK: str = _DATA["fallback"]
HTML_LANG: dict[str, str] = {code: info["html"] for code, info in _INFO.items()}
LESSON_DIRS: dict[str, str] = {code: _INFO[code]["lessons"] for code in COURSE_LANGUAGES}
NAMES: dict[str, str] = {code: info["name"] for code, info in _INFO.items()}


def lesson_dir(lang: str) -> str:
    """'vi' -> 'lessons_vi': the folder of a course language's lessons."""
    try:
        return LESSON_DIRS[lang]
    except KeyError:
        raise ValueError(f"no lessons in {lang!r}; the course languages are {', '.join(COURSE_LANGUAGES)}") from None


def word_separator(lang: str) -> str:
    """What goes between two words: ' ' in Vietnamese, nothing in Chinese."""
    return _INFO[lang]["word_separator"]
