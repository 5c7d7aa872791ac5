"""The checklists of CONTRIBUTING.md ("Add a lesson", "Add a language") are true: every lesson
and every course language is in each place they name, in the order they name them."""
import json
import pathlib
import re

import nbformat
import pytest

from attnlab import course
from attnlab.translator import numwords
from attnlab.course.glossary import GLOSSARY
from attnlab.course.i18n import missing
from attnlab.course.languages import COURSE_LANGUAGES, FALLBACK, HTML_LANG, LANGUAGES, LESSON_DIRS, NAMES, word_separator

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "shared" / "attnlab"
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
EXERCISE_CALL = re.compile(r"\bexercises\.(l\d\d|capstone)\b|from attnlab\.exercises import (l\d\d|capstone)\b")


def checklist(title: str) -> list[str]:
    """The numbered steps under '## <title>' in CONTRIBUTING.md, in order."""
    section = CONTRIBUTING.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. (.+)$", section, re.M)


def exercise_modules(nb) -> set[str]:
    return {a or b for c in nb.cells if c.cell_type == "code" for a, b in EXERCISE_CALL.findall(c.source)}


LESSON_STEPS = [   # (a word each step of "Add a lesson" names, in order), checked below one by one
    "course/__init__.py", "lessons_", "setup cell", "exercises/", "messages/", "solutions/", "tests/test_exercises_",
    "make sync", "execute_notebooks.py",
]
LANGUAGE_STEPS = [
    "languages.json", "messages/", "glossary.json", "numwords", "course/__init__.py", "lessons_", "test_language.py",
    "train_translator_checkpoint.py", "execute_notebooks.py",
]


@pytest.mark.parametrize("title,steps", [("Add a lesson", LESSON_STEPS), ("Add a language", LANGUAGE_STEPS)])
def test_the_checklists_name_the_places_in_order(title, steps):
    items = checklist(title)
    assert len(items) == len(steps), items
    for item, place in zip(items, steps):
        assert place in item, f"step {item!r} should name {place!r}"


def test_every_lesson_is_in_every_place_of_the_lesson_checklist():
    on_disk = {p.stem for d in LESSON_DIRS.values() for p in (ROOT / d).glob("*.ipynb")}
    assert on_disk == set(course.LESSONS), "a notebook without a course.LESSONS entry, or the reverse"
    for stem, titles in course.LESSONS.items():
        assert re.fullmatch(r"\d\d_[a-z0-9_]+", stem), stem
        assert set(titles) >= set(COURSE_LANGUAGES), f"{stem}: a title per course language"
        for lang in COURSE_LANGUAGES:
            path = ROOT / LESSON_DIRS[lang] / f"{stem}.ipynb"
            assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
            nb = nbformat.read(path, as_version=4)
            code = [c for c in nb.cells if c.cell_type == "code"]
            assert code[0].source == course.SETUP_CELL, f"{path.name}: run `make sync`"
            for module in exercise_modules(nb):
                for place in (PACKAGE / "exercises" / f"{module}.py", PACKAGE / "messages" / f"{module}.json",
                              ROOT / "solutions" / f"{module}.py", ROOT / "tests" / f"test_exercises_{module}.py"):
                    assert place.is_file(), f"{stem} calls exercises.{module}: {place.relative_to(ROOT)} is missing"
            top = (ROOT / "README.md").read_text(encoding="utf-8")
            assert course.readme_lessons() in top, "README.md: the lesson table is out of date, run `make sync`"
            readme = (ROOT / LESSON_DIRS[lang] / "README.md").read_text(encoding="utf-8")
            assert f"({stem}.ipynb)" in readme, f"{LESSON_DIRS[lang]}/README.md: run `make sync`"
            unexecuted = [i for i, c in enumerate(code) if c.source.strip() and c.execution_count is None]
            assert not unexecuted, f"{path.relative_to(ROOT)}: cells {unexecuted} have no stored output (execute it)"


def test_every_course_language_is_in_every_place_of_the_language_checklist():
    data = json.loads((PACKAGE / "data" / "languages.json").read_text(encoding="utf-8"))
    assert FALLBACK in LANGUAGES and set(COURSE_LANGUAGES) <= set(LANGUAGES)
    for lang in LANGUAGES:
        assert NAMES[lang] and HTML_LANG[lang] and isinstance(word_separator(lang), str), lang
    assert not missing((*COURSE_LANGUAGES, FALLBACK)), "messages missing: see tests/test_i18n.py"
    test_language = (ROOT / "tests" / "test_language.py").read_text(encoding="utf-8")
    for lang in COURSE_LANGUAGES:
        assert data["languages"][lang]["lessons"] == f"lessons_{lang}"
        assert all(lang in terms for terms in GLOSSARY.values()), f"glossary.json: terms in {lang}"
        assert lang in numwords.LANGUAGES, f"numwords: number words in {lang} (lesson 08)"
        assert (ROOT / LESSON_DIRS[lang] / "README.md").is_file()
        assert re.search(rf'^\s+"{lang}": \[', test_language, re.M), f"tests/test_language.py: typography of {lang}"
        assert (PACKAGE / "translator" / f"checkpoint_{lang}.pt").is_file(), f"translator checkpoint for {lang}"
