"""Colab and Binder links are built from the one configured repository URL and point at real files."""
import pathlib
import re

from attnlab.course import MAP_END, MAP_START, REPO, binder_url, colab_url, course_map
from attnlab.course.languages import COURSE_LANGUAGES, lesson_dir

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_lesson_readmes_have_the_generated_course_map():
    for lang in COURSE_LANGUAGES:
        readme = ROOT / lesson_dir(lang) / "README.md"
        text = readme.read_text(encoding="utf-8")
        stems = {p.stem for p in readme.parent.glob("*.ipynb")}
        block = text[text.index(MAP_START): text.index(MAP_END) + len(MAP_END)]
        assert block == course_map(lang, stems), f"{readme}: run `make sync`"
        for stem in stems:
            assert colab_url(f"{lesson_dir(lang)}/{stem}.ipynb") in block


def test_every_colab_link_points_to_an_existing_notebook():
    pattern = re.compile(r"https://colab\.research\.google\.com/github/([^/]+/[^/]+)/blob/[^/]+/([^)\s]+)")
    files = [ROOT / "README.md", *(ROOT / lesson_dir(lang) / "README.md" for lang in COURSE_LANGUAGES)]
    found = 0
    for f in files:
        for repo, path in pattern.findall(f.read_text(encoding="utf-8")):
            assert repo == REPO, f"{f.name}: link to {repo}, configured {REPO}"
            assert (ROOT / path).is_file(), f"{f.name}: {path} does not exist"
            found += 1
    assert found >= 2


def test_readme_has_binder_badge_from_the_configured_url():
    assert binder_url() in (ROOT / "README.md").read_text(encoding="utf-8")
