"""A small message catalog: everything the package prints or shows, in every language of
``attnlab.languages`` (vi, zh, en).

The words live in data files, ``attnlab/messages/<domain>.json``, one object per file:
``{"key": {"vi": "...", "zh": "...", "en": "..."}}`` (the languages side by side).
They are loaded when this module is imported. ``t(key, **fields)`` formats one message in
the current language (``set_language``) or an explicit ``lang=``; a message that lacks that
language is shown in ``FALLBACK`` (English), so a new language can be added one file at a time
(``missing()`` lists what is left; the course languages must have everything, tests/test_i18n.py).
``register({...})`` adds entries from code (the tests use it).
"""
from __future__ import annotations

import json
import numbers
import string
from pathlib import Path

from .languages import COURSE_LANGUAGES, FALLBACK, LANGUAGES  # noqa: F401  (re-exported)

_current = FALLBACK
CATALOG: dict[str, dict[str, str]] = {}


def set_language(lang: str) -> None:
    """Choose the language of printed messages and figure titles: one of ``LANGUAGES``."""
    global _current
    _current = _normalize(lang)


def get_language() -> str:
    return _current


def _normalize(lang: str | None) -> str:
    if lang is None:
        return _current
    code = str(lang).lower().split("-")[0].split("_")[0]
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; choose one of {', '.join(LANGUAGES)}")
    return code


def register(entries: dict[str, dict[str, str]]) -> None:
    """Add messages; each key needs a text in ``FALLBACK`` (English), and the same {fields} in
    every language it has; a language it lacks falls back to English (``missing()`` lists them)."""
    for key, texts in entries.items():
        if FALLBACK not in texts:
            raise ValueError(f"message {key!r} lacks {FALLBACK}, the language every message falls back to")
        unknown = [lang for lang in texts if lang not in LANGUAGES]
        if unknown:
            raise ValueError(f"message {key!r} has unknown languages {', '.join(unknown)} "
                             f"(the languages are in attnlab/data/languages.json)")
        fields = {lang: _fields(text) for lang, text in texts.items()}
        if len({frozenset(f) for f in fields.values()}) != 1:
            raise ValueError(f"message {key!r} uses different fields per language: {fields}")
        if key in CATALOG and CATALOG[key] != texts:
            raise ValueError(f"message {key!r} is registered twice with different texts")
        CATALOG[key] = dict(texts)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def num(value, spec: str = ",", lang: str | None = None) -> str:
    """``value`` formatted with the format ``spec`` in the conventions of ``lang``.

    en and zh write 124,439,808 and 3.9485; vi writes 124.439.808 and 3,9485 (the
    grouping and decimal marks swap), in scientific notation too: -3,4028e+38.
    ``num(124439808)``, ``num(3.94851, ".4f")``, ``num(-3.4028e38, ".4e")``.
    ``t()`` formats number fields of messages the same way.
    """
    return _localize(format(value, spec), _normalize(lang))


def _localize(text: str, lang: str) -> str:
    if lang == "vi":
        cut = next((i for i, c in enumerate(text) if c in "eE"), len(text))   # 1.5e-06: only the mantissa
        text = text[:cut].translate(_VI_MARKS) + text[cut:]
    return text


_VI_MARKS = str.maketrans({",": ".", ".": ","})


class _Formatter(string.Formatter):
    """str.format where a number field ({n:,}, {x:.4f}, {x:.2e}) follows the language's convention."""

    def __init__(self, lang: str):
        self.lang = lang

    def format_field(self, value, format_spec):
        if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):   # a 0-d tensor or array: its number
            value = value.item()
        text = super().format_field(value, format_spec)
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            text = _localize(text, self.lang)
        return text


MESSAGES_DIR = Path(__file__).resolve().parent.parent / "messages"


def load_message_files(directory: Path = MESSAGES_DIR) -> list[Path]:
    """Register every ``*.json`` message file in ``directory``; return the files read."""
    files = sorted(directory.glob("*.json")) if directory.is_dir() else []
    for path in files:
        with open(path, encoding="utf-8") as fh:
            entries = json.load(fh)
        try:
            register(entries)
        except ValueError as err:
            raise ValueError(f"{path.name}: {err}") from None
    return files


def missing(languages=LANGUAGES) -> dict[str, list[str]]:
    """{language: the keys it has no text for (shown in English)}, languages with gaps only."""
    gaps = {lang: sorted(k for k, texts in CATALOG.items() if lang not in texts) for lang in languages}
    return {lang: keys for lang, keys in gaps.items() if keys}


def t(key: str, lang: str | None = None, **fields) -> str:
    """The message ``key`` in ``lang`` (default: the current language), formatted with ``fields``;
    number fields follow the language's convention (vi: {n:,} -> 124.439.808, {x:.4f} -> 3,9485)."""
    try:
        texts = CATALOG[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in the catalog") from None
    lang = _normalize(lang)
    return _Formatter(lang).format(texts.get(lang, texts[FALLBACK]), **fields)


def fmt(template: str, *values, lang: str | None = None, **fields) -> str:
    """``template.format(*values, **fields)`` with every number in the reader's format.

    The lessons' print lines: ``print(attnlab.fmt("Loss {:.3f} after {:,} steps", loss, steps))``
    prints ``Loss 1,618 after 2.000 steps`` in Vietnamese and ``Loss 1.618 after 2,000 steps`` in
    Chinese and English (the format specs are Python's own; a 0-d tensor counts as its number).
    ``lang``: the language (default: the current one).
    """
    return _Formatter(_normalize(lang)).format(template, *values, **fields)


load_message_files()
