"""Write the course-wide setup cell (from attnlab.course) into every notebook, as its first
code cell. Run after changing the repository URL: ``make sync`` (then ``make execute``)."""
from __future__ import annotations

import pathlib
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))
from attnlab.course import NOTEBOOK_DIRS, SETUP_CELL  # noqa: E402


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
    print(f"{changed} notebook(s) updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
