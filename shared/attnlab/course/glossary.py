"""The course glossary: one term per concept in each language (en / vi / zh).

The data live in ``attnlab/data/glossary.json``: ``GLOSSARY[concept] = {"en", "vi", "zh"}``;
``D2L[lang][concept]`` is the term of d2l-vi / d2l-zh where it differs; ``CORE`` are the
concepts every set of lessons must name; ``AVOID[lang]`` maps a regular expression of a wrong
or competing translation to its concept (e.g. "phím", a keyboard key), and ``AVOID_SHOWN[lang]``
maps it to the words a reader is shown for it (the pattern itself when it is plain words; the
glossary data gives them beside every other pattern, see ``shown_avoid``); ``NOTATION`` lists
(regular expression, the notation to use) for the LaTeX of the lessons ($W_Q$, not $W_q$).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

_DATA = json.loads(Path(__file__).resolve().parent.parent.joinpath("data").joinpath("glossary.json").read_text(encoding="utf-8"))

GLOSSARY: dict[str, dict[str, str]] = _DATA["terms"]
D2L: dict[str, dict[str, str]] = _DATA["d2l"]
CORE: list[str] = _DATA["core"]
# What each README's glossary table shows (see table()); every concept stays in GLOSSARY.
README: dict[str, dict] = {lang: v for lang, v in _DATA.get("readme", {}).items() if not lang.startswith("_")}
AVOID: dict[str, dict[str, str]] = {lang: {entry[0]: entry[1] for entry in entries}
                                    for lang, entries in _DATA["avoid"].items()}
_PLAIN = re.compile(r"[^\\()\[\]?|*+{}^$.]+")          # words only: no regular-expression syntax


def is_plain(pattern: str) -> bool:
    """A pattern that is just the words it matches (shown as it is)."""
    return bool(_PLAIN.fullmatch(pattern))


AVOID_SHOWN: dict[str, dict[str, list[str]]] = {
    lang: {entry[0]: list(entry[2]) if len(entry) > 2 else [entry[0]] for entry in entries}
    for lang, entries in _DATA["avoid"].items()}
NOTATION: list[tuple[str, str]] = [tuple(pair) for pair in _DATA.get("notation", [])]
_LANG_NAMES = {"vi": "Tiếng Việt", "zh": "中文"}


def term(concept: str, lang: str) -> str:
    return GLOSSARY[concept][lang]


def _pattern(wrong: str, lang: str) -> re.Pattern:
    # Vietnamese: whole words only ("lô" is not the start of "lông"); Chinese has no word boundaries.
    return re.compile(r"(?<![\w-])(?:" + wrong + r")(?![\w-])" if lang == "vi" else wrong, re.IGNORECASE)


_PATTERNS = {lang: [(_pattern(w, lang), w, c) for w, c in pairs.items()] for lang, pairs in AVOID.items()}


def avoided_terms(text: str, lang: str) -> list[tuple[str, str]]:
    """(the text found, the glossary term to use instead) for each avoided term in ``text``."""
    found = []
    for pattern, _, concept in _PATTERNS[lang]:
        for m in pattern.finditer(text):
            found.append((m.group(0), GLOSSARY[concept][lang]))
    return found


def shown_avoid(lang: str, concept: str) -> list[str]:
    """The avoided words of ``concept`` in ``lang`` as a reader sees them (the website's glossary):
    never a regular expression."""
    return [word for pattern, c in AVOID.get(lang, {}).items() if c == concept for word in AVOID_SHOWN[lang][pattern]]


def notation_slips(latex: str) -> list[tuple[str, str]]:
    """(the notation found, the notation to use) for each avoided notation in the LaTeX ``latex``."""
    return [(m.group(0), right) for wrong, right in NOTATION for m in re.finditer(wrong, latex)]


def table(lang: str) -> str:
    """The glossary as a Markdown table for lessons_<lang>/README.md (with the d2l term where it differs):
    the rows this language's readers need (README[lang]["hide"] leaves out house-style notes and the other
    language's verse terms, which the tests still enforce), with the English gloss meant for them."""
    head = {"vi": "| Tiếng Việt | English | d2l-vi |", "zh": "| 中文 | English | d2l-zh |"}[lang]
    shown = README.get(lang, {})
    hide, gloss = set(shown.get("hide", ())), shown.get("en", {})
    rows = [head, "|---|---|---|"]
    for concept, terms in GLOSSARY.items():
        if concept not in hide:
            rows.append(f"| {terms[lang]} | {gloss.get(concept, terms['en'])} | {D2L[lang].get(concept, '')} |")
    return "\n".join(rows)
