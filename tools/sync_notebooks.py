"""Write what is built from attnlab.course into the repository: the setup cell (the first code
cell of every notebook), the course map with Colab badges in each lessons_<lang>/README.md and
the lesson table of README.md. Run after changing the repository URL or the lesson list: ``make sync``, then
``make execute``."""
from __future__ import annotations

import pathlib
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))
from attnlab.course import (  # noqa: E402
    MAP_END, MAP_START, NOTEBOOK_DIRS, README_END, README_START, SETUP_CELL, course_map, readme_lessons,
)
from attnlab.course.languages import COURSE_LANGUAGES, lesson_dir  # noqa: E402


def main() -> int:
    changed = 0
    for d in NOTEBOOK_DIRS:
        for path in sorted((ROOT / d).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            code = [c for c in nb.cells if c.cell_type == "code"]
            if code and code[0].source != SETUP_CELL:
                code[0].source = SETUP_CELL
                nbformat.write(nb, path)
                changed += 1
                print(f"updated {path.relative_to(ROOT)}")
    for lang in COURSE_LANGUAGES:
        readme = ROOT / lesson_dir(lang) / "README.md"
        text = readme.read_text(encoding="utf-8")
        start, end = text.index(MAP_START), text.index(MAP_END) + len(MAP_END)
        stems = {p.stem for p in readme.parent.glob("*.ipynb")}
        new = text[:start] + course_map(lang, stems) + text[end:]
        if new != text:
            readme.write_text(new, encoding="utf-8")
            changed += 1
            print(f"updated {readme.relative_to(ROOT)}")
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(README_START), text.index(README_END) + len(README_END)
    new = text[:start] + readme_lessons() + text[end:]
    if new != text:
        readme.write_text(new, encoding="utf-8")
        changed += 1
        print("updated README.md")
    print(f"{changed} file(s) updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
